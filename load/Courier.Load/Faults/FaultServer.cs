using System.Diagnostics;
using System.Text.Json;

namespace Courier.Load.Faults;

/// <summary>
/// One incarnation of a server under a fault run (courier or Debian's nats-server) on a store
/// directory that outlives it: started with <c>-js -sd</c>, its log kept, killed with kill -9 or
/// stopped with SIGTERM, only ever by its own PID.
/// </summary>
internal sealed class FaultServer : IDisposable
{
    private readonly Process _process;
    private readonly List<string> _log = [];

    private FaultServer(Process process, int port)
    {
        _process = process;
        Port = port;
    }

    public int Port { get; }

    public string Url => $"nats://127.0.0.1:{Port}";

    /// <summary>Every line the server wrote so far (stdout and stderr).</summary>
    public string[] Log()
    {
        lock (_log)
        {
            return [.. _log];
        }
    }

    /// <summary>The server's kind as the tables name it: "courier" or "nats-server".</summary>
    public static string Binary(string kind) => kind.StartsWith("courier", StringComparison.Ordinal) ? "courier" : "nats-server";

    /// <summary>
    /// Starts <paramref name="kind"/> on <paramref name="storeDir"/> and waits (up to 90 s: recovery on a
    /// loaded machine) for its ports file. Null, with the log in <paramref name="failure"/>, when the
    /// process exits or never listens: a server that cannot restart on what the fault left.
    /// </summary>
    public static FaultServer? Start(string kind, string root, string storeDir, string workDir, string? configText, out string failure)
    {
        failure = "";
        var args = $"-a 127.0.0.1 -p -1 --ports_file_dir {workDir} -js -sd {storeDir}";
        if (configText is not null)
        {
            var config = Path.Combine(workDir, $"{kind}.conf");
            File.WriteAllText(config, configText);
            args += $" -c {config}";
        }

        var psi = Binary(kind) == "courier"
            ? new ProcessStartInfo("dotnet", $"{ServerProcess.CourierDll(root)} {args}")
            : new ProcessStartInfo("nats-server", args);
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        var process = Process.Start(psi) ?? throw new InvalidOperationException($"could not start {kind}");
        var lines = new List<string>();
        process.OutputDataReceived += (_, e) => Add(lines, e.Data);
        process.ErrorDataReceived += (_, e) => Add(lines, e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var file = Path.Combine(workDir, $"nats-server_{process.Id}.ports");
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < TimeSpan.FromSeconds(90) && !process.HasExited)
        {
            if (File.Exists(file))
            {
                try
                {
                    using var doc = JsonDocument.Parse(File.ReadAllText(file));
                    var port = new Uri(doc.RootElement.GetProperty("nats")[0].GetString()!).Port;
                    var server = new FaultServer(process, port);
                    lock (lines)
                    {
                        server._log.AddRange(lines);
                        process.OutputDataReceived += (_, e) => Add(server._log, e.Data);
                        process.ErrorDataReceived += (_, e) => Add(server._log, e.Data);
                    }

                    return server;
                }
                catch (JsonException)
                {
                    // Still being written.
                }
            }

            Thread.Sleep(20);
        }

        if (!process.HasExited)
        {
            process.Kill();
        }

        process.WaitForExit(10_000);
        lock (lines)
        {
            failure = string.Join('\n', lines.TakeLast(15));
        }

        process.Dispose();
        return null;
    }

    private static void Add(List<string> lines, string? line)
    {
        if (line is not null)
        {
            lock (lines)
            {
                lines.Add(line);
            }
        }
    }

    /// <summary>kill -9, and wait until the process is gone (its files are closed).</summary>
    public void Kill9()
    {
        if (!_process.HasExited)
        {
            _process.Kill();
        }

        _process.WaitForExit(30_000);
    }

    /// <summary>A clean stop: SIGTERM, then (after 30 s) kill -9.</summary>
    public void Stop()
    {
        if (!_process.HasExited)
        {
            using var term = Process.Start(new ProcessStartInfo("kill", $"-TERM {_process.Id}"));
            term?.WaitForExit(5_000);
        }

        if (!_process.WaitForExit(30_000))
        {
            Kill9();
        }

        _process.WaitForExit(); // drains the log readers
    }

    public void Dispose()
    {
        Kill9();
        _process.Dispose();
    }
}
