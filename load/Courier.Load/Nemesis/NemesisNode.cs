using System.Diagnostics;
using System.Globalization;
using System.Net.Sockets;

namespace Courier.Load.Nemesis;

/// <summary>
/// One server of the bench (courier or nats-server) in its own network namespace: clients on
/// <c>ADDRESS:4222</c>, monitoring on 8222, routes on 6222, its store on a lazyfs mount of its own when
/// power loss is among the faults. Killed with SIGKILL, paused with SIGSTOP, restarted on the same store.
/// </summary>
internal sealed class NemesisNode : IDisposable
{
    public const int ClientPort = 4222;
    public const int MonitorPort = 8222;
    public const int RoutePort = 6222;
    private readonly string _kind;
    private readonly string _root;
    private readonly string _dir;
    private readonly string _config;
    private Process? _process;
    private Process? _lazyfs;
    private int _starts;

    public NemesisNode(string kind, string root, string work, int index, int nodes, bool lazyfs)
    {
        _kind = kind;
        _root = root;
        Index = index;
        _dir = Path.Combine(work, $"n{index + 1}");
        Directory.CreateDirectory(_dir);
        if (lazyfs)
        {
            Mount = Path.Combine(_dir, "mnt");
            StartLazyfs();
        }

        Store = Path.Combine(Mount ?? _dir, "store");
        Directory.CreateDirectory(Store);
        var address = NemesisNet.Address(index);
        var routes = string.Join(", ", Enumerable.Range(0, nodes).Where(i => i != index).Select(i => $"\"nats-route://{NemesisNet.Address(i)}:{RoutePort}\""));
        _config = Path.Combine(_dir, "server.conf");
        File.WriteAllText(_config, $$"""
            server_name: n{{index + 1}}
            listen: "{{address}}:{{ClientPort}}"
            http: "{{address}}:{{MonitorPort}}"
            jetstream { store_dir: "{{Store}}" }
            cluster { name: nem, listen: "{{address}}:{{RoutePort}}", routes: [{{routes}}] }

            """);
    }

    public int Index { get; }

    public string Name => $"n{Index + 1}";

    public string Url => $"nats://{NemesisNet.Address(Index)}:{ClientPort}";

    public string MonitorUrl => $"http://{NemesisNet.Address(Index)}:{MonitorPort}";

    /// <summary>The lazyfs mount the store is on, or null when the run has no power loss.</summary>
    public string? Mount { get; }

    /// <summary>The server's store directory (its files are what corruption faults damage).</summary>
    public string Store { get; }

    public bool Running => _process is { HasExited: false };

    public bool Paused { get; private set; }

    /// <summary>The server's log of every start (appended).</summary>
    public string LogFile => Path.Combine(_dir, "server.log");

    public void Start()
    {
        if (Running)
        {
            return;
        }

        var server = _kind == "courier" ? $"dotnet {ServerProcess.CourierDll(_root)}" : "nats-server";
        var psi = new ProcessStartInfo("ip", $"netns exec {NemesisNet.Namespace(Index)} {server} -c {_config}")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        _starts++;
        var log = new StreamWriter(LogFile, append: true) { AutoFlush = true };
        log.WriteLine(string.Create(CultureInfo.InvariantCulture, $"==== start {_starts} at {DateTime.UtcNow:O}"));
        var process = Process.Start(psi) ?? throw new InvalidOperationException($"could not start {_kind} in {NemesisNet.Namespace(Index)}");
        process.OutputDataReceived += (_, e) => Write(log, e.Data);
        process.ErrorDataReceived += (_, e) => Write(log, e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        _process = process;
        Paused = false;
    }

    private static void Write(StreamWriter log, string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (log)
        {
            log.WriteLine(line);
        }
    }

    /// <summary>Waits until the client port answers (a restarted node may take a while on a damaged store); false after <paramref name="limit"/>.</summary>
    public bool AwaitListening(TimeSpan limit)
    {
        var deadline = Stopwatch.StartNew();
        while (deadline.Elapsed < limit)
        {
            if (!Running)
            {
                return false;
            }

            try
            {
                using var probe = new TcpClient();
                probe.Connect(NemesisNet.Address(Index), ClientPort);
                return true;
            }
            catch (SocketException)
            {
                Thread.Sleep(100);
            }
        }

        return false;
    }

    /// <summary>SIGKILL, and waits for the process to be gone.</summary>
    public void Kill()
    {
        if (_process is null)
        {
            return;
        }

        if (Paused)
        {
            Signal("CONT");
        }

        if (!_process.HasExited)
        {
            _process.Kill();
            _process.WaitForExit(10_000);
        }

        _process.Dispose();
        _process = null;
        Paused = false;
    }

    public void Pause()
    {
        if (Running && !Paused)
        {
            Signal("STOP");
            Paused = true;
        }
    }

    public void Resume()
    {
        if (Running && Paused)
        {
            Signal("CONT");
            Paused = false;
        }
    }

    private void Signal(string name) => NemesisNet.Run("kill", string.Create(CultureInfo.InvariantCulture, $"-{name} {_process!.Id}"), check: false);

    /// <summary>
    /// Power loss: the process killed, then lazyfs drops every write not yet fsynced (<c>crash</c>), as a
    /// machine that loses power and reboots. The node is left stopped.
    /// </summary>
    public void CutPower(int seed)
    {
        Kill();
        File.WriteAllText(Path.Combine(Mount!, ".lazyfs"), string.Create(CultureInfo.InvariantCulture, $"crash {seed}"));
    }

    /// <summary>Everything written so far made durable (lazyfs <c>sync</c>): the set-up is not what a power cut tests.</summary>
    public void SyncDisk()
    {
        if (Mount is not null)
        {
            File.WriteAllText(Path.Combine(Mount, ".lazyfs"), "sync");
        }
    }

    private void StartLazyfs()
    {
        var backing = Path.Combine(_dir, "backing");
        Directory.CreateDirectory(backing);
        Directory.CreateDirectory(Mount!);
        var psi = new ProcessStartInfo(Path.Combine(_root, "tools/lazyfs/lazyfs"), $"{backing} {Mount} -f")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        _lazyfs = Process.Start(psi) ?? throw new InvalidOperationException("could not start tools/lazyfs/lazyfs (make -C tools/lazyfs)");
        _lazyfs.BeginOutputReadLine();
        _lazyfs.BeginErrorReadLine();
        for (var i = 0; i < 100 && !File.Exists(Path.Combine(Mount!, ".lazyfs")); i++)
        {
            Thread.Sleep(100);
        }

        if (!File.Exists(Path.Combine(Mount!, ".lazyfs")))
        {
            throw new InvalidOperationException($"lazyfs did not mount on {Mount}");
        }
    }

    public void Dispose()
    {
        Kill();
        if (_lazyfs is not null)
        {
            NemesisNet.Run("fusermount3", $"-u {Mount}", check: false);
            if (!_lazyfs.WaitForExit(5_000))
            {
                _lazyfs.Kill();
            }

            _lazyfs.Dispose();
            _lazyfs = null;
        }
    }
}
