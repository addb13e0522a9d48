using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using System.Text.Json;
using Courier.Testing;

namespace Courier.Load.Soak;

/// <summary>
/// The courier process under soak: always the same client port, monitoring port and store
/// directory, so that a kill -9 and a restart look to clients like a server that came back.
/// </summary>
/// <remarks>Only the process this class started is ever killed, by its PID.</remarks>
internal sealed class SoakServer : IDisposable
{
    private readonly string _root;
    private readonly string _dir;
    private readonly HttpClient _http = new() { Timeout = TimeSpan.FromSeconds(5) };
    private Process? _process;
    private volatile int _pid; // read by the sampler while a restart replaces _process
    private StreamWriter? _log;

    public SoakServer(string root)
    {
        _root = root;
        _dir = Directory.CreateTempSubdirectory("courier-soak-").FullName;
        Port = LoopbackPorts.Next();
        MonitorPort = LoopbackPorts.Next();
        File.WriteAllText(ConfigPath, "max_connections: 100000\n");
    }

    public int Port { get; }

    public int MonitorPort { get; }

    /// <summary>The store, logs and ports files of every incarnation.</summary>
    public string Folder => _dir;

    public string StoreDir => Path.Combine(_dir, "store");

    public int Pid => _pid;

    /// <summary>Restarts so far (kill -9 then start on the same store).</summary>
    public int Incarnation { get; private set; }

    private string ConfigPath => Path.Combine(_dir, "soak.conf");

    /// <summary>Starts the server and waits (bounded) until it writes its ports file.</summary>
    public TimeSpan Start()
    {
        var dll = ServerProcess.CourierDll(_root);
        if (!File.Exists(dll))
        {
            throw new FileNotFoundException("build Courier in Release first: dotnet build -c Release Courier.slnx", dll);
        }

        Incarnation++;
        _log?.Dispose();
        _log = new StreamWriter(Path.Combine(_dir, $"server-{Incarnation}.log")) { AutoFlush = true };
        var log = _log;
        var args = $"{dll} -a 127.0.0.1 -p {Port} -m {MonitorPort} -js -sd {StoreDir} --ports_file_dir {_dir} -c {ConfigPath}";
        var started = Stopwatch.StartNew();
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (true)
        {
            var psi = new ProcessStartInfo("dotnet", args) { RedirectStandardOutput = true, RedirectStandardError = true };
            var process = Process.Start(psi) ?? throw new InvalidOperationException("could not start courier");
            process.OutputDataReceived += (_, e) => Write(log, e.Data);
            process.ErrorDataReceived += (_, e) => Write(log, e.Data);
            process.BeginOutputReadLine();
            process.BeginErrorReadLine();
            var ports = Path.Combine(_dir, $"nats-server_{process.Id}.ports");
            while (DateTime.UtcNow < deadline && !process.HasExited)
            {
                if (File.Exists(ports))
                {
                    _process = process;
                    _pid = process.Id;
                    return started.Elapsed;
                }

                Thread.Sleep(20);
            }

            if (!process.HasExited)
            {
                process.Kill();
            }

            process.Dispose();
            if (DateTime.UtcNow >= deadline)
            {
                throw new TimeoutException($"courier did not start within 60 s; see {_dir}");
            }

            Thread.Sleep(500); // the port may still be held by the killed incarnation: try again
        }
    }

    private static void Write(StreamWriter log, string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (log)
        {
            try
            {
                log.WriteLine(line);
            }
            catch (ObjectDisposedException)
            {
                // The incarnation's log was closed on restart.
            }
        }
    }

    /// <summary>kill -9 of the process this soak started (SIGKILL by PID), waiting until it is gone.</summary>
    public void Kill()
    {
        if (_process is null)
        {
            return;
        }

        _pid = 0;
        if (!_process.HasExited)
        {
            _process.Kill(); // SIGKILL on Linux
            _process.WaitForExit(30_000);
        }

        _process.Dispose();
        _process = null;
    }

    /// <summary>RSS bytes, open fds, threads of the server; zeros when it is not running.</summary>
    public (long Rss, int Fds, int Threads) ProcessStats()
    {
        var pid = Pid;
        if (pid == 0)
        {
            return (0, 0, 0);
        }

        try
        {
            long rss = 0;
            var threads = 0;
            foreach (var line in File.ReadLines($"/proc/{pid}/status"))
            {
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
                {
                    rss = long.Parse(line["VmRSS:".Length..].Trim().Split(' ')[0], CultureInfo.InvariantCulture) * 1024;
                }
                else if (line.StartsWith("Threads:", StringComparison.Ordinal))
                {
                    threads = int.Parse(line["Threads:".Length..].Trim(), CultureInfo.InvariantCulture);
                }
            }

            var fds = Directory.GetFileSystemEntries($"/proc/{pid}/fd").Length;
            return (rss, fds, threads);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return (0, 0, 0); // exited between the check and the read
        }
    }

    /// <summary>The server's own count of client connections (/varz <c>connections</c>), -1 if it does not answer.</summary>
    public async Task<int> ConnectionsAsync()
    {
        try
        {
            using var doc = await _http.GetFromJsonAsync<JsonDocument>($"http://127.0.0.1:{MonitorPort}/varz").ConfigureAwait(false);
            return doc!.RootElement.GetProperty("connections").GetInt32();
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException or JsonException or InvalidOperationException)
        {
            return -1;
        }
    }


    public void Dispose()
    {
        Kill();
        _log?.Dispose();
        _http.Dispose();
    }
}
