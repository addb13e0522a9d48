using System.Diagnostics;
using System.Text.Json;
using Courier.Testing;

namespace Courier.Load;

/// <summary>A server under test (courier, nats-server, or for the MQTT rows mosquitto) started fresh on a random loopback port.</summary>
internal sealed class ServerProcess : IDisposable
{
    private readonly Process? _process;
    private readonly string? _dir;

    /// <summary>A server started elsewhere (for profiling): nothing to stop.</summary>
    public static ServerProcess External(int port) => new(null, null, port);

    private ServerProcess(Process? process, string? dir, int port, int webSocketPort = 0, int mqttPort = 0, TimeSpan toPortsFile = default)
    {
        TimeToPortsFile = toPortsFile;
        _process = process;
        _dir = dir;
        Port = port;
        WebSocketPort = webSocketPort;
        MqttPort = mqttPort;
    }

    /// <summary>The MQTT port when the scenario asked for an MQTT listener, else 0.</summary>
    public int MqttPort { get; }

    public int Port { get; }

    /// <summary>From just before the process was started to its ports file being readable (polled every 2 ms).</summary>
    public TimeSpan TimeToPortsFile { get; }

    /// <summary>The WebSocket port when the config has a websocket block, else 0.</summary>
    public int WebSocketPort { get; }

    /// <summary>The server process's CPU time so far, user and system (zero for an external server).</summary>
    public TimeSpan CpuTime()
    {
        if (_process is null)
        {
            return TimeSpan.Zero;
        }

        _process.Refresh();
        return _process.TotalProcessorTime;
    }

    /// <summary>Resident set size of the server process, in bytes (Linux /proc).</summary>
    public long ResidentBytes()
    {
        if (_process is null)
        {
            return 0;
        }

        foreach (var line in File.ReadLines($"/proc/{_process.Id}/status"))
        {
            if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                var kb = long.Parse(line["VmRSS:".Length..].Trim().Split(' ')[0], System.Globalization.CultureInfo.InvariantCulture);
                return kb * 1024;
            }
        }

        return 0;
    }

    /// <summary>The first line of the server's <c>-v</c>.</summary>
    public static string Version(string kind, string repoRoot)
    {
        var psi = kind switch
        {
            "courier" => new ProcessStartInfo("dotnet", $"{CourierDll(repoRoot)} -v"),
            "mosquitto" => new ProcessStartInfo(Mosquitto, "-h"),
            _ => new ProcessStartInfo("nats-server", "-v"),
        };
        psi.RedirectStandardOutput = true;
        using var process = Process.Start(psi)!;
        var line = process.StandardOutput.ReadLine() ?? "";
        process.WaitForExit(10_000);
        return line.Trim();
    }

    // The precompiled (ReadyToRun) copy a Release build writes, as users run it; else the plain build output.
    internal static string CourierDll(string repoRoot) =>
        File.Exists(Path.Combine(repoRoot, "src/Gateway/bin/Release/net10.0/r2r/courier.dll"))
            ? Path.Combine(repoRoot, "src/Gateway/bin/Release/net10.0/r2r/courier.dll")
            : Path.Combine(repoRoot, "src/Gateway/bin/Release/net10.0/courier.dll");

    private const string Mosquitto = "/usr/sbin/mosquitto"; // Debian's package

    /// <summary>
    /// Starts a fresh server of <paramref name="kind"/>; <paramref name="configText"/>, when given, is its
    /// <c>-c</c> file. With <paramref name="mqtt"/> a NATS server also gets an <c>mqtt {}</c> listener on
    /// a free loopback port (and the server name MQTT requires); mosquitto always listens for MQTT only.
    /// With <paramref name="jetStream"/> false it runs without JetStream (the route row's cluster nodes).
    /// </summary>
    public static ServerProcess Start(string kind, string repoRoot, string? configText = null, bool mqtt = false, bool jetStream = true, string? storeDir = null, int port = -1)
    {
        if (kind == "mosquitto")
        {
            return StartMosquitto();
        }

        var mqttPort = 0;
        if (mqtt)
        {
            mqttPort = LoopbackPorts.Next();
            configText = $"{configText}\nserver_name: bench\nmqtt {{ host: 127.0.0.1, port: {mqttPort} }}\n";
        }

        if (kind == "courier" && !File.Exists(CourierDll(repoRoot)))
        {
            throw new FileNotFoundException("build Courier in Release first: dotnet build -c Release Courier.slnx", CourierDll(repoRoot));
        }

        var dir = storeDir ?? Directory.CreateTempSubdirectory("courier-load-").FullName;
        var args = $"-a 127.0.0.1 -p {port} --ports_file_dir {dir}" + (jetStream ? $" -js -sd {dir}" : "");
        if (configText is not null)
        {
            var config = Path.Combine(dir, "server.conf");
            File.WriteAllText(config, configText);
            args += $" -c {config}";
        }

        var psi = kind == "courier"
            ? new ProcessStartInfo("dotnet", $"{CourierDll(repoRoot)} {args}")
            : new ProcessStartInfo("nats-server", args);
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        var started = Stopwatch.StartNew();
        var process = Process.Start(psi) ?? throw new InvalidOperationException($"could not start {kind}");
        var output = new OutputTail(process); // the last lines, for the error when the server does not come up
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var file = Path.Combine(dir, $"nats-server_{process.Id}.ports");
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (DateTime.UtcNow < deadline)
        {
            if (File.Exists(file))
            {
                try
                {
                    using var doc = JsonDocument.Parse(File.ReadAllText(file));
                    var url = doc.RootElement.GetProperty("nats")[0].GetString()!;
                    var webSocket = doc.RootElement.TryGetProperty("websocket", out var ws) ? new Uri(ws[0].GetString()!).Port : 0;
                    return new ServerProcess(process, dir, new Uri(url).Port, webSocket, mqttPort, started.Elapsed);
                }
                catch (JsonException)
                {
                    // Still being written.
                }
            }

            if (process.HasExited)
            {
                break;
            }

            Thread.Sleep(2);
        }

        var exited = process.HasExited ? $"exited with {process.ExitCode}" : "still running after 30 s";
        if (!process.HasExited)
        {
            process.Kill();
        }

        throw new TimeoutException($"{kind} did not write its ports file ({exited}, {args}); its last output:{Environment.NewLine}{output}");
    }

    private static ServerProcess StartMosquitto()
    {
        var dir = Directory.CreateTempSubdirectory("courier-load-").FullName;
        var port = LoopbackPorts.Next();
        var config = Path.Combine(dir, "mosquitto.conf");
        // set_tcp_nodelay: as Courier and nats-server do; mosquitto's default (Nagle on) caps a windowed
        // QoS 1 publisher at one window per delayed ACK (~2K msgs/s here), which would measure TCP, not mosquitto.
        File.WriteAllText(config, $"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nset_tcp_nodelay true\n");
        var psi = new ProcessStartInfo(Mosquitto, $"-c {config}") { RedirectStandardOutput = true, RedirectStandardError = true };
        var process = Process.Start(psi) ?? throw new InvalidOperationException("could not start mosquitto (apt-get install mosquitto)");
        var output = new OutputTail(process); // the last lines, for the error when the server does not come up
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (DateTime.UtcNow < deadline)
        {
            try
            {
                using var probe = new System.Net.Sockets.TcpClient();
                probe.Connect("127.0.0.1", port);
                return new ServerProcess(process, dir, 0, mqttPort: port);
            }
            catch (System.Net.Sockets.SocketException)
            {
                Thread.Sleep(50);
            }
        }

        process.Kill();
        throw new TimeoutException($"mosquitto did not listen; its last output:{Environment.NewLine}{output}");
    }


    /// <summary>The directory of its store, config and ports file (a restart reuses it).</summary>
    public string? StoreDirectory => _dir;

    /// <summary>kill -9, keeping its directory (the replicated rows restart it on its store).</summary>
    public void Kill()
    {
        if (_process is { HasExited: false })
        {
            _process.Kill();
            _process.WaitForExit(10_000);
        }
    }

    public void Dispose()
    {
        if (_process is null || _dir is null)
        {
            return;
        }

        if (!_process.HasExited)
        {
            _process.Kill();
            _process.WaitForExit(10_000);
        }

        _process.Dispose();
        try
        {
            Directory.Delete(_dir, recursive: true);
        }
        catch (IOException)
        {
            // A store file still being released: the temp folder is cleaned up by the OS.
        }
    }
}

/// <summary>A started process's last 20 lines of output (stdout and stderr), for the error when it does not come up.</summary>
internal sealed class OutputTail
{
    private const int Lines = 20;
    private readonly Queue<string> _lines = new();

    public OutputTail(Process process)
    {
        process.OutputDataReceived += (_, e) => Keep(e.Data);
        process.ErrorDataReceived += (_, e) => Keep(e.Data);
    }

    public override string ToString()
    {
        lock (_lines)
        {
            return string.Join(Environment.NewLine, _lines);
        }
    }

    private void Keep(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_lines)
        {
            _lines.Enqueue(line);
            if (_lines.Count > Lines)
            {
                _lines.Dequeue();
            }
        }
    }
}
