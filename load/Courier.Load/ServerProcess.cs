using System.Diagnostics;
using System.Text.Json;

namespace Courier.Load;

/// <summary>A server under test (courier or nats-server) started fresh on a random loopback port.</summary>
internal sealed class ServerProcess : IDisposable
{
    private readonly Process? _process;
    private readonly string? _dir;

    /// <summary>A server started elsewhere (for profiling): nothing to stop.</summary>
    public static ServerProcess External(int port) => new(null, null, port);

    private ServerProcess(Process? process, string? dir, int port, int webSocketPort = 0)
    {
        _process = process;
        _dir = dir;
        Port = port;
        WebSocketPort = webSocketPort;
    }

    public int Port { get; }

    /// <summary>The WebSocket port when the config has a websocket block, else 0.</summary>
    public int WebSocketPort { get; }

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
        var psi = kind == "courier"
            ? new ProcessStartInfo("dotnet", $"{CourierDll(repoRoot)} -v")
            : new ProcessStartInfo("nats-server", "-v");
        psi.RedirectStandardOutput = true;
        using var process = Process.Start(psi)!;
        var line = process.StandardOutput.ReadLine() ?? "";
        process.WaitForExit(10_000);
        return line.Trim();
    }

    // The precompiled (ReadyToRun) copy a Release build writes, as users run it; else the plain build output.
    private static string CourierDll(string repoRoot) =>
        File.Exists(Path.Combine(repoRoot, "src/Gateway/bin/Release/net10.0/r2r/courier.dll"))
            ? Path.Combine(repoRoot, "src/Gateway/bin/Release/net10.0/r2r/courier.dll")
            : Path.Combine(repoRoot, "src/Gateway/bin/Release/net10.0/courier.dll");

    /// <summary>Starts a fresh server of <paramref name="kind"/>; <paramref name="configText"/>, when given, is its <c>-c</c> file.</summary>
    public static ServerProcess Start(string kind, string repoRoot, string? configText = null)
    {
        if (kind == "courier" && !File.Exists(CourierDll(repoRoot)))
        {
            throw new FileNotFoundException("build Courier in Release first: dotnet build -c Release Courier.slnx", CourierDll(repoRoot));
        }

        var dir = Directory.CreateTempSubdirectory("courier-load-").FullName;
        var args = $"-a 127.0.0.1 -p -1 --ports_file_dir {dir} -js -sd {dir}";
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
        var process = Process.Start(psi) ?? throw new InvalidOperationException($"could not start {kind}");
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, _) => { };
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
                    return new ServerProcess(process, dir, new Uri(url).Port, webSocket);
                }
                catch (JsonException)
                {
                    // Still being written.
                }
            }

            Thread.Sleep(50);
        }

        process.Kill();
        throw new TimeoutException($"{kind} did not write its ports file");
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
