using System.Net;
using System.Net.Sockets;
using Courier.Actors.Server;
using Microsoft.Extensions.Logging;

namespace Courier.Gateway.Listeners;

/// <summary>
/// Accepts NATS client connections on the configured address and hands each socket to the broker.
/// </summary>
internal sealed partial class NatsListener : IAsyncDisposable
{
    // Pending connections the kernel queues before accept (nats-server uses the Go default, SOMAXCONN).
    private const int Backlog = 4096;

    private readonly Broker _broker;
    private readonly ILogger _log;
    private readonly Socket _socket;
    private readonly CancellationTokenSource _stopping = new();
    private Task _acceptLoop = Task.CompletedTask;

    public NatsListener(Broker broker, string host, int port, ILogger log)
    {
        _broker = broker;
        _log = log;
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

    public void Start()
    {
        _acceptLoop = Task.Run(AcceptLoopAsync);
        Log.Listening(_log, LocalEndPoint.ToString());
    }

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
                Log.AcceptError(_log, e.Message);
                await Task.Delay(TimeSpan.FromMilliseconds(100)).ConfigureAwait(false);
                continue;
            }

            _broker.Accept(client);
        }
    }

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Information, Message = "Listening for client connections on {EndPoint}")]
        public static partial void Listening(ILogger logger, string endPoint);

        [LoggerMessage(Level = LogLevel.Error, Message = "Error accepting client connection: {Error}")]
        public static partial void AcceptError(ILogger logger, string error);
    }
}
