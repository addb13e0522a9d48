using System.Diagnostics;
using System.Text.Json;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>
/// One server process on a random loopback port, started with nats-server's flags:
/// <c>-a 127.0.0.1 -p -1 -m -1 --ports_file_dir &lt;dir&gt; [-c &lt;conf&gt;] [extra]</c>.
/// The ports are read from the <c>nats-server_&lt;pid&gt;.ports</c> file the server writes.
/// Disposing kills the process by its id and waits for it to exit.
/// </summary>
public sealed class ServerProcess : IAsyncDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(20); // courier's first start JITs
    private static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(25);

    private readonly Process _process;
    private readonly string _directory;
    private int _disposed;

    private ServerProcess(ServerKind kind, Process process, string directory, ProcessLog log, string commandLine)
    {
        Kind = kind;
        _process = process;
        _directory = directory;
        Log = log;
        CommandLine = commandLine;
        Pid = process.Id;
    }

    /// <summary>Which server this is.</summary>
    public ServerKind Kind { get; }

    /// <summary>The process id.</summary>
    public int Pid { get; }

    /// <summary>The client port on 127.0.0.1.</summary>
    public int Port { get; private set; }

    /// <summary>The HTTP monitoring port on 127.0.0.1.</summary>
    public int MonitorPort { get; private set; }

    /// <summary>The WebSocket port on 127.0.0.1, or 0 when the config has no <c>websocket</c> block.</summary>
    public int WebSocketPort { get; private set; }

    /// <summary>The WebSocket URL, e.g. <c>ws://127.0.0.1:8080</c>.</summary>
    public string WebSocketUrl => $"ws://127.0.0.1:{WebSocketPort}";

    /// <summary>The client URL, e.g. <c>nats://127.0.0.1:4222</c>.</summary>
    public string Url => $"nats://127.0.0.1:{Port}";

    /// <summary>The monitoring base address, e.g. <c>http://127.0.0.1:8222/</c>.</summary>
    public Uri MonitorUri => new($"http://127.0.0.1:{MonitorPort}/");

    /// <summary>What the server wrote to stdout and stderr.</summary>
    public ProcessLog Log { get; }

    /// <summary>The command that started it.</summary>
    public string CommandLine { get; }

    /// <summary>Whether the process has ended.</summary>
    public bool HasExited => _process.HasExited;

    /// <summary>A description and the log tail, for assertion messages.</summary>
    public string Diagnostics(int lines = 30) =>
        $"{Kind} pid {Pid} on {Url} (monitor {MonitorPort}){(HasExited ? $", EXITED with {_process.ExitCode}" : string.Empty)}\n" +
        $"command: {CommandLine}\n--- server log tail ---\n{Log.Tail(lines)}";

    /// <summary>
    /// Starts a server of <paramref name="kind"/>; with <paramref name="configText"/> it is written to a
    /// temporary <c>server.conf</c> and passed with <c>-c</c>. Returns once the ports file is there.
    /// </summary>
    public static Task<ServerProcess> StartAsync(ServerKind kind, string? configText = null, params string[] extraArgs) =>
        StartCoreAsync(kind, configText, extraArgs, ignoredSignals: []);

    /// <summary>
    /// Starts a server of <paramref name="kind"/> with <paramref name="ignoredSignals"/> (e.g. <c>INT</c>)
    /// ignored, as a shell starts a script's background job (SIGINT, SIGQUIT) or <c>nohup</c> starts its
    /// command (SIGHUP): <c>/bin/sh</c> traps them to nothing and execs the server, which keeps the pid.
    /// </summary>
    public static Task<ServerProcess> StartWithSignalsIgnoredAsync(ServerKind kind, IReadOnlyList<string> ignoredSignals, string? configText = null) =>
        StartCoreAsync(kind, configText, [], ignoredSignals);

    private static async Task<ServerProcess> StartCoreAsync(ServerKind kind, string? configText, string[] extraArgs, IReadOnlyList<string> ignoredSignals)
    {
        var executable = ServerExecutable.For(kind);
        var directory = Directory.CreateTempSubdirectory("courier-it-").FullName;
        var args = new List<string>(executable.LeadingArguments)
        {
            "-a", "127.0.0.1", "-p", "-1", "-m", "-1", "--ports_file_dir", directory,
        };
        if (configText is not null)
        {
            var configPath = Path.Combine(directory, "server.conf");
            await File.WriteAllTextAsync(configPath, configText);
            args.Add("-c");
            args.Add(configPath);
        }

        args.AddRange(extraArgs);

        var startInfo = ignoredSignals.Count == 0
            ? new ProcessStartInfo(executable.FileName, args)
            : new ProcessStartInfo("/bin/sh", ["-c", $"trap '' {string.Join(' ', ignoredSignals)}; exec \"$0\" \"$@\"", executable.FileName, .. args]);
        startInfo.UseShellExecute = false;
        var process = new Process { StartInfo = startInfo };
        var log = new ProcessLog();
        log.Attach(process);
        var commandLine = (ignoredSignals.Count == 0 ? string.Empty : $"(signals ignored: {string.Join(' ', ignoredSignals)}) ") +
            $"{executable.FileName} {string.Join(' ', args)}";
        if (!process.Start())
        {
            throw new InvalidOperationException($"could not start: {commandLine}");
        }

        ProcessLog.BeginReading(process);
        var server = new ServerProcess(kind, process, directory, log, commandLine);
        try
        {
            await server.WaitForPortsAsync();
            return server;
        }
        catch
        {
            await server.DisposeAsync();
            throw;
        }
    }

    private async Task WaitForPortsAsync()
    {
        var portsFile = Path.Combine(_directory, $"nats-server_{Pid}.ports");
        var clock = Stopwatch.StartNew();
        string? lastProblem = null;
        while (clock.Elapsed < StartTimeout)
        {
            if (_process.HasExited)
            {
                _process.WaitForExit(); // flush the redirected streams into the log
                throw new InvalidOperationException(
                    $"server exited with code {_process.ExitCode} before writing {portsFile}\n{Diagnostics(60)}");
            }

            if (File.Exists(portsFile))
            {
                // The file may be seen half-written; parse until it is complete.
                if (TryReadPorts(await File.ReadAllTextAsync(portsFile), out var port, out var monitorPort, out var webSocketPort, out lastProblem))
                {
                    Port = port;
                    MonitorPort = monitorPort;
                    WebSocketPort = webSocketPort;
                    return;
                }
            }

            await Task.Delay(PollInterval);
        }

        var others = string.Join(", ", Directory.GetFiles(_directory, "*.ports").Select(Path.GetFileName));
        throw new InvalidOperationException(
            $"no usable {portsFile} after {StartTimeout.TotalSeconds} s ({lastProblem ?? "file missing"}; other ports files: [{others}])\n{Diagnostics(60)}");
    }

    // {"nats":["nats://127.0.0.1:4222"],"monitoring":["http://127.0.0.1:8222"]}
    // (nats-server 2.9 names the client listener "nats"; the key "client" is accepted too.)
    private static bool TryReadPorts(string json, out int port, out int monitorPort, out int webSocketPort, out string? problem)
    {
        port = monitorPort = webSocketPort = 0;
        try
        {
            using var doc = JsonDocument.Parse(json);
            var root = doc.RootElement;
            if (!(root.TryGetProperty("nats", out var client) || root.TryGetProperty("client", out client)))
            {
                problem = $"no \"nats\" or \"client\" entry in {json}";
                return false;
            }

            if (!root.TryGetProperty("monitoring", out var monitoring))
            {
                problem = $"no \"monitoring\" entry in {json}";
                return false;
            }

            port = new Uri(client[0].GetString()!).Port;
            monitorPort = new Uri(monitoring[0].GetString()!).Port;
            if (root.TryGetProperty("websocket", out var webSocket))
            {
                webSocketPort = new Uri(webSocket[0].GetString()!).Port;
            }

            problem = null;
            return port > 0 && monitorPort > 0;
        }
        catch (Exception e) when (e is JsonException or InvalidOperationException or IndexOutOfRangeException or UriFormatException or ArgumentNullException)
        {
            problem = $"unreadable ports file ({e.Message}): {json}";
            return false;
        }
    }

    /// <summary>The server's temporary folder (its ports file and config), deleted on dispose.</summary>
    public string Folder => _directory;

    /// <summary>Sends <paramref name="signal"/> (e.g. <c>USR2</c>) to this process with the shell's <c>kill -s</c>
    /// (a builtin of every POSIX sh, so no package is needed).</summary>
    public async Task SignalAsync(string signal)
    {
        var command = $"kill -s {signal} {Pid.ToString(System.Globalization.CultureInfo.InvariantCulture)}";
        using var kill = Process.Start(new ProcessStartInfo("/bin/sh", ["-c", command]) { UseShellExecute = false })!;
        await kill.WaitForExitAsync();
        if (kill.ExitCode != 0)
        {
            throw new InvalidOperationException($"kill -s {signal} {Pid} exited with {kill.ExitCode}");
        }
    }

    /// <summary>Waits up to <paramref name="timeout"/> for the process to end by itself; returns its exit code, or null if it still runs.</summary>
    public async Task<int?> WaitForExitAsync(TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        try
        {
            await _process.WaitForExitAsync(cts.Token);
            return _process.ExitCode;
        }
        catch (OperationCanceledException)
        {
            return null;
        }
    }

    /// <summary>Runs this server's executable once more with <paramref name="args"/> (e.g. <c>--signal</c>); returns its exit code and output.</summary>
    public async Task<(int ExitCode, string Output)> RunCommandAsync(params string[] args)
    {
        var executable = ServerExecutable.For(Kind);
        var info = new ProcessStartInfo(executable.FileName, [.. executable.LeadingArguments, .. args])
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var process = Process.Start(info)!;
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEndAsync();
        using var cts = new CancellationTokenSource(StartTimeout);
        await process.WaitForExitAsync(cts.Token);
        return (process.ExitCode, await output + await error);
    }

    /// <summary>Kills the process (by its id), waits for it, removes the temporary folder.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
            }

            using var cts = new CancellationTokenSource(StopTimeout);
            await _process.WaitForExitAsync(cts.Token);
        }
        catch (Exception e) when (e is InvalidOperationException or OperationCanceledException or System.ComponentModel.Win32Exception)
        {
            // Already gone, or did not stop in time: nothing more we may do than report below.
        }
        finally
        {
            _process.Dispose();
            try
            {
                Directory.Delete(_directory, recursive: true);
            }
            catch (IOException)
            {
                // A leftover temp folder is harmless.
            }
        }
    }
}
