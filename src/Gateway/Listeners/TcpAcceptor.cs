using System.Net;
using System.Net.Sockets;

namespace Courier.Gateway.Listeners;

/// <summary>
/// A bound, listening TCP socket and its accept loop, shared by the listeners (client, MQTT,
/// WebSocket): each accepted socket goes to <c>accepted</c>, which takes ownership of it.
/// </summary>
internal sealed class TcpAcceptor : IAsyncDisposable
{
    // Pending connections the kernel queues before accept (nats-server uses the Go default, SOMAXCONN).
    private const int Backlog = 4096;

    private readonly Socket _socket;
    private readonly Action<Socket> _accepted;
    private readonly Action<string> _acceptError;
    private readonly CancellationTokenSource _stopping = new();
    private Task _acceptLoop = Task.CompletedTask;

    /// <summary>Binds and listens on <c>host:port</c> (port -1: a random one); <c>accepted</c> gets each
    /// accepted socket, <c>acceptError</c> logs a failed accept (the loop backs off and goes on).</summary>
    public TcpAcceptor(string host, int port, Action<Socket> accepted, Action<string> acceptError)
    {
        _accepted = accepted;
        _acceptError = acceptError;
        var address = ListenAddress.Resolve(host);
        _socket = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        if (address.Equals(IPAddress.IPv6Any))
        {
            _socket.DualMode = true;
        }

        _socket.Bind(new IPEndPoint(address, port < 0 ? 0 : port));
        _socket.Listen(Backlog);
        LocalEndPoint = (IPEndPoint)_socket.LocalEndPoint!;
    }

    /// <summary>Where it listens (the actual port when -1 asked for a random one).</summary>
    public IPEndPoint LocalEndPoint { get; }

    public void Start() => _acceptLoop = Task.Run(AcceptLoopAsync);

    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        _socket.Dispose();
        await _acceptLoop.ConfigureAwait(false);
        _stopping.Dispose();
    }

    private async Task AcceptLoopAsync()
    {
        while (!_stopping.IsCancellationRequested)
        {
            Socket client;
            try
            {
                client = await _socket.AcceptAsync(_stopping.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException)
            {
                return;
            }
            catch (SocketException e)
            {
                // Temporary errors (e.g. out of file descriptors): back off briefly, as nats-server does.
                _acceptError(e.Message);
                await Task.Delay(TimeSpan.FromMilliseconds(100)).ConfigureAwait(false);
                continue;
            }

            _accepted(client);
        }
    }
}
