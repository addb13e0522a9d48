using System.Net;
using Courier.Actors.Server;
using Microsoft.Extensions.Logging;

namespace Courier.Gateway.Listeners;

/// <summary>
/// Accepts client connections on the configured address and hands each socket to the broker: NATS
/// clients, or MQTT clients for the <c>mqtt { }</c> listener (<see cref="ForMqtt"/>).
/// </summary>
internal sealed partial class NatsListener : IAsyncDisposable
{
    private readonly ILogger _log;
    private readonly TcpAcceptor _acceptor;
    private readonly bool _mqtt;
    private readonly bool _tls;

    public NatsListener(Broker broker, string host, int port, ILogger log)
        : this(broker, host, port, log, mqtt: false)
    {
    }

    private NatsListener(Broker broker, string host, int port, ILogger log, bool mqtt)
    {
        _log = log;
        _mqtt = mqtt;
        _tls = mqtt && broker.MqttTls is not null;
        _acceptor = new TcpAcceptor(host, port, mqtt ? broker.AcceptMqtt : broker.Accept, error => Log.AcceptError(log, error));
    }

    /// <summary>Where it listens (the actual port when -1 asked for a random one).</summary>
    public IPEndPoint LocalEndPoint => _acceptor.LocalEndPoint;

    /// <summary>The MQTT listener (<c>mqtt { host, port }</c>).</summary>
    public static NatsListener ForMqtt(Broker broker, string host, int port, ILogger log) => new(broker, host, port, log, mqtt: true);

    public void Start()
    {
        _acceptor.Start();
        if (_mqtt)
        {
            Log.ListeningMqtt(_log, _tls ? "tls" : "mqtt", LocalEndPoint.Address.ToString(), LocalEndPoint.Port);
        }
        else
        {
            Log.Listening(_log, LocalEndPoint.ToString());
        }
    }

    public ValueTask DisposeAsync() => _acceptor.DisposeAsync();

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Information, Message = "Listening for client connections on {EndPoint}")]
        public static partial void Listening(ILogger logger, string endPoint);

        [LoggerMessage(Level = LogLevel.Information, Message = "Listening for MQTT clients on {Scheme}://{Host}:{Port}")]
        public static partial void ListeningMqtt(ILogger logger, string scheme, string host, int port);

        [LoggerMessage(Level = LogLevel.Error, Message = "Error accepting client connection: {Error}")]
        public static partial void AcceptError(ILogger logger, string error);
    }
}
