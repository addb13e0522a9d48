using System.Net;
using System.Net.Sockets;
using Courier.Actors.Server;
using Microsoft.Extensions.Logging;

namespace Courier.Gateway.Listeners;

/// <summary>
/// Accepts client connections on the configured address and hands each socket to the broker: NATS
/// clients, or MQTT clients for the <c>mqtt { }</c> listener (<see cref="ForMqtt"/>).
/// </summary>
internal sealed partial class NatsListener : IAsyncDisposable
{
    // Pending connections the kernel queues before accept (nats-server uses the Go default, SOMAXCONN).
    private const int Backlog = 4096;

    private readonly Broker _broker;
    private readonly ILogger _log;
    private readonly Socket _socket;
    private readonly CancellationTokenSource _stopping = new();
    private readonly Action<Socket> _accept;
    private readonly bool _mqtt;
    private Task _acceptLoop = Task.CompletedTask;

    public NatsListener(Broker broker, string host, int port, ILogger log)
        : this(broker, host, port, log, mqtt: false)
    {
    }

    private NatsListener(Broker broker, string host, int port, ILogger log, bool mqtt)
    {
        _broker = broker;
        _log = log;
        _mqtt = mqtt;
        _accept = mqtt ? broker.AcceptMqtt : broker.Accept;
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

    /// <summary>The MQTT listener (<c>mqtt { host, port }</c>).</summary>
    public static NatsListener ForMqtt(Broker broker, string host, int port, ILogger log) => new(broker, host, port, log, mqtt: true);

    public void Start()
    {
        _acceptLoop = Task.Run(AcceptLoopAsync);
        if (_mqtt)
        {
            Log.ListeningMqtt(_log, LocalEndPoint.Address.ToString(), LocalEndPoint.Port);
        }
        else
        {
            Log.Listening(_log, LocalEndPoint.ToString());
        }
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

            _accept(client);
        }
    }

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Information, Message = "Listening for client connections on {EndPoint}")]
        public static partial void Listening(ILogger logger, string endPoint);

        [LoggerMessage(Level = LogLevel.Information, Message = "Listening for MQTT clients on mqtt://{Host}:{Port}")]
        public static partial void ListeningMqtt(ILogger logger, string host, int port);

        [LoggerMessage(Level = LogLevel.Error, Message = "Error accepting client connection: {Error}")]
        public static partial void AcceptError(ILogger logger, string error);
    }
}
