using System.Collections.Concurrent;
using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace Courier.Cluster.Tests.Infrastructure;

/// <summary>
/// A TCP forwarder on loopback in front of one listening port of one node (its route port, or its
/// Akka.Remote port), through which the test makes a partition: <see cref="Cut"/> closes every
/// connection that goes to or comes from a cut-off node and refuses new ones until
/// <see cref="Heal"/>. Each node advertises its proxies' addresses (<c>cluster.advertise</c>,
/// <c>cluster.akka_advertise</c>) and names its peers by them in <c>routes</c>, so every link
/// between two nodes passes through exactly one proxy, the one in front of the node that
/// accepted it. Which node dialled is learned from Linux's <c>/proc</c>: the accepted socket's
/// peer port names a socket (<c>/proc/net/tcp[6]</c>) whose inode one node process holds open
/// (<c>/proc/&lt;pid&gt;/fd</c>). No privileges or network namespaces are needed, so this runs in
/// any CI container; everything stays on 127.0.0.1.
/// </summary>
public sealed class PartitionProxy : IAsyncDisposable
{
    private readonly TcpListener _listener;
    private readonly ConcurrentDictionary<Pipe, byte> _pipes = new();
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _acceptLoop;
    private volatile int[] _pids = [];
    private volatile int _cut; // the cut-off node's index + 1; 0: no cut

    private PartitionProxy(TcpListener listener, int targetIndex)
    {
        _listener = listener;
        TargetIndex = targetIndex;
        _acceptLoop = Task.Run(AcceptLoopAsync);
    }

    /// <summary>The port the proxy listens on (what the node advertises).</summary>
    public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

    /// <summary>The port connections are forwarded to (the node's own listener); set before the node dials anything.</summary>
    public int TargetPort { get; set; }

    /// <summary>Which node (index) the proxy fronts.</summary>
    public int TargetIndex { get; }

    /// <summary>The node processes' ids by index (to tell which node dialled); set once they run.</summary>
    public IReadOnlyList<int> NodePids
    {
        set => _pids = [.. value];
    }

    /// <summary>Connections refused because they crossed the cut.</summary>
    public int Refused => Volatile.Read(ref _refused);

    private int _refused;

    /// <summary>Starts a proxy on a free loopback port in front of node <paramref name="targetIndex"/>.</summary>
    public static PartitionProxy Start(int targetIndex)
    {
        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return new PartitionProxy(listener, targetIndex);
    }

    /// <summary>Cuts node <paramref name="index"/> off: closes its connections through this proxy and refuses new ones.</summary>
    public void Cut(int index)
    {
        _cut = index + 1;
        foreach (var pipe in _pipes.Keys)
        {
            if (Crosses(pipe.SourceIndex))
            {
                pipe.Close();
            }
        }
    }

    /// <summary>Lets connections through again.</summary>
    public void Heal() => _cut = 0;

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        foreach (var pipe in _pipes.Keys)
        {
            pipe.Close();
        }

        try
        {
            await _acceptLoop;
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // Stopped.
        }

        _stop.Dispose();
    }

    // Whether a connection from node sourceIndex (-1: not a node) to this proxy's node crosses the cut.
    private bool Crosses(int sourceIndex)
    {
        var cut = _cut - 1;
        return cut >= 0 && (cut == TargetIndex || cut == sourceIndex || sourceIndex < 0);
    }

    private async Task AcceptLoopAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            Socket inbound;
            try
            {
                inbound = await _listener.AcceptSocketAsync(_stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }

            _ = Task.Run(() => ServeAsync(inbound));
        }
    }

    private async Task ServeAsync(Socket inbound)
    {
        var source = SourceIndex(((IPEndPoint)inbound.RemoteEndPoint!).Port);
        if (Crosses(source) || TargetPort == 0)
        {
            Interlocked.Increment(ref _refused);
            inbound.Dispose();
            return;
        }

        var outbound = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(2));
            await outbound.ConnectAsync(new IPEndPoint(IPAddress.Loopback, TargetPort), timeout.Token);
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException)
        {
            outbound.Dispose();
            inbound.Dispose();
            return;
        }

        inbound.NoDelay = true;
        var pipe = new Pipe(inbound, outbound, source);
        _pipes[pipe] = 0;
        if (Crosses(source))
        {
            pipe.Close(); // cut while connecting
        }

        await pipe.RunAsync();
        _pipes.TryRemove(pipe, out _);
    }

    // The index of the node process that holds the client end of a connection whose client port is sourcePort, or -1.
    private int SourceIndex(int sourcePort)
    {
        var pids = _pids;
        for (var attempt = 0; attempt < 3; attempt++)
        {
            if (SocketInode(sourcePort) is { } inode)
            {
                var link = $"socket:[{inode}]";
                for (var i = 0; i < pids.Length; i++)
                {
                    if (HoldsSocket(pids[i], link))
                    {
                        return i;
                    }
                }
            }

            Thread.Sleep(5);
        }

        return -1;
    }

    // The inode of the loopback socket whose local port is localPort and remote port is this proxy's.
    private string? SocketInode(int localPort)
    {
        var local = ":" + localPort.ToString("X4", CultureInfo.InvariantCulture);
        var remote = ":" + Port.ToString("X4", CultureInfo.InvariantCulture);
        foreach (var table in (string[])["/proc/net/tcp", "/proc/net/tcp6"])
        {
            string[] lines;
            try
            {
                lines = File.ReadAllLines(table);
            }
            catch (IOException)
            {
                continue;
            }

            foreach (var line in lines)
            {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
                var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                if (fields.Length > 9 && fields[1].EndsWith(local, StringComparison.Ordinal) && fields[2].EndsWith(remote, StringComparison.Ordinal))
                {
                    return fields[9];
                }
            }
        }

        return null;
    }

    private static bool HoldsSocket(int pid, string link)
    {
        try
        {
            foreach (var fd in Directory.EnumerateFileSystemEntries($"/proc/{pid}/fd"))
            {
                try
                {
                    if (new FileInfo(fd).LinkTarget == link)
                    {
                        return true;
                    }
                }
                catch (IOException)
                {
                    // The fd closed meanwhile.
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // The process is gone.
        }

        return false;
    }

    /// <summary>One forwarded connection: bytes copied both ways until either side closes or the test cuts it.</summary>
    private sealed class Pipe(Socket inbound, Socket outbound, int sourceIndex)
    {
        private int _closed;

        public int SourceIndex { get; } = sourceIndex;

        public async Task RunAsync()
        {
            await Task.WhenAny(CopyAsync(inbound, outbound), CopyAsync(outbound, inbound));
            Close();
        }

        public void Close()
        {
            if (Interlocked.Exchange(ref _closed, 1) != 0)
            {
                return;
            }

            // An abortive close (RST), as a cut cable looks to a peer that writes next.
            foreach (var socket in (Socket[])[inbound, outbound])
            {
                try
                {
                    socket.LingerState = new LingerOption(true, 0);
                }
                catch (SocketException)
                {
                    // Reset by the peer already.
                }
            }

            inbound.Dispose();
            outbound.Dispose();
        }

        private static async Task CopyAsync(Socket from, Socket to)
        {
            var buffer = new byte[16 * 1024];
            try
            {
                while (true)
                {
                    var read = await from.ReceiveAsync(buffer, SocketFlags.None);
                    if (read == 0)
                    {
                        return;
                    }

                    await to.SendAsync(buffer.AsMemory(0, read), SocketFlags.None);
                }
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                // Closed by the other direction, the peer, or a cut.
            }
        }
    }
}
