using Courier.Actors.Hosting;
using Courier.Actors.Server;
using Courier.Gateway.Listeners;
using Courier.Gateway.Monitoring;
using Microsoft.Extensions.Logging;

namespace Courier.Gateway;

/// <summary>
/// The running server: the broker, the client listener, monitoring, and the ports and pid files.
/// Used by <c>Program</c> and by tests that embed a server in-process.
/// </summary>
internal sealed partial class ServerHost : IAsyncDisposable
{
    private readonly ServerOptions _options;
    private readonly ILoggerFactory _loggerFactory;
    private readonly ILogger _log;
    private readonly MonitoringPages _pages;
    private NatsListener? _listener;
    private WebSocketListener? _webSocket;
    private NatsListener? _mqttListener;
    private TcpAcceptor? _routeListener;
    private TcpAcceptor? _leafListener;
    private TcpAcceptor? _gatewayListener;
    private MonitoringServer? _monitoring;
    private SystemAccountService? _systemAccount;
    private string? _portsFile;

    public ServerHost(ServerOptions options, ILoggerFactory loggerFactory)
    {
        _options = options;
        _loggerFactory = loggerFactory;
        _log = loggerFactory.CreateLogger("courier");
        Broker = new Broker(options, loggerFactory);
        _pages = new MonitoringPages(Broker);
    }

    public Broker Broker { get; }

    /// <summary>The client port actually bound.</summary>
    public int Port => _listener?.LocalEndPoint.Port ?? 0;

    /// <summary>The WebSocket port actually bound, or 0.</summary>
    public int WebSocketPort => _webSocket?.LocalEndPoint.Port ?? 0;

    /// <summary>The MQTT port actually bound, or 0 without an MQTT listener.</summary>
    public int MqttPort => _mqttListener?.LocalEndPoint.Port ?? 0;

    /// <summary>The route port actually bound, or 0 without a cluster.</summary>
    public int ClusterPort => _routeListener?.LocalEndPoint.Port ?? 0;

    /// <summary>The leaf node port actually listened on (0 without one).</summary>
    public int LeafNodePort => _leafListener?.LocalEndPoint.Port ?? 0;

    /// <summary>The gateway port listened on (0 without <c>gateway { }</c> or a port).</summary>
    public int GatewayPort => _gatewayListener?.LocalEndPoint.Port ?? 0;

    /// <summary>The monitoring port actually bound, or 0.</summary>
    public int MonitorPort => _monitoring?.LocalEndPoint?.Port ?? 0;

    public async Task StartAsync()
    {
        Log.Starting(_log, Broker.CourierVersion, _options.NatsServerVersion, Broker.ServerId, Broker.ServerName);
        if (_options.ConfigFile is { } file)
        {
            Log.UsingConfig(_log, file);
        }

        if (_options.JetStream)
        {
            Log.JetStream(_log, _options.EffectiveStoreDir, Limit(_options.MaxMemoryStore), Limit(_options.MaxFileStore), _options.JetStreamSync.ToString());
            if (_options.JetStreamEncryption is { } encryption)
            {
                Log.Encryption(_log, encryption.CipherName); // nats-server's banner line "Encryption: AES-GCM"
            }

            if (!_options.JetStreamSync.IsAlways)
            {
                Log.SyncInterval(_log, _options.JetStreamSync.ToString());
            }
        }

        if (_options.Cluster.Enabled)
        {
            // Bound (not yet accepting) before the actor system starts: its Akka.Cluster roles name the route port.
            _routeListener = new TcpAcceptor(_options.Cluster.Host, _options.Cluster.Port, Broker.AcceptRoute, error => Log.RouteAcceptError(_log, error));
            Broker.ClusterView.SetRoutePort(_routeListener.LocalEndPoint.Port);
        }

        if (_options.LeafNodes.Enabled)
        {
            _leafListener = new TcpAcceptor(_options.LeafNodes.Host, _options.LeafNodes.Port, Broker.AcceptLeaf, error => Log.LeafAcceptError(_log, error));
            _pages.LeafListenPort = _leafListener.LocalEndPoint.Port;
        }

        if (_options.Gateway.Enabled && _options.Gateway.Port != 0)
        {
            _gatewayListener = new TcpAcceptor(_options.Gateway.Host, _options.Gateway.Port, Broker.AcceptGateway, error => Log.GatewayAcceptError(_log, error));
            Broker.Gateways!.ListenPort = _gatewayListener.LocalEndPoint.Port;
        }

        // Cheap wake-ups for latency-bound traffic (request/reply, synchronous JetStream publishes); see IdlePoll.
        IdlePoll.Configure(_options.IdlePoll);

        // The actor system starts on another thread while the listeners bind and monitoring starts;
        // clients are accepted only once both are done.
        var actors = Broker.StartAsync();
        try
        {
            _listener = new NatsListener(Broker, _options.Host, _options.Port, _log);
            Broker.SetListenPort(_listener.LocalEndPoint.Port);
            if (_options.WebSocket is { Port: not 0 } webSocket)
            {
                _webSocket = new WebSocketListener(Broker, webSocket, _log);
                _pages.WebSocketListenPort = _webSocket.LocalEndPoint.Port;
            }

            if (_options.Mqtt is { Port: not 0 } mqtt)
            {
                // ServerConfiguration refused the options unless JetStream is on, as nats-server.
                _mqttListener = NatsListener.ForMqtt(Broker, mqtt.Host ?? _options.Host, mqtt.Port, _log);
                _pages.MqttListenPort = _mqttListener.LocalEndPoint.Port;
            }

            if (_options.HttpPort != 0)
            {
                _monitoring = new MonitoringServer(Broker, _pages, _options.HttpHost ?? _options.Host, _options.HttpPort, _loggerFactory);
                await _monitoring.StartAsync().ConfigureAwait(false);
                Log.Monitoring(_log, _monitoring.LocalEndPoint!.ToString());
            }
            else if (_options.HttpsPort != 0 && Broker.Tls is { } tls)
            {
                _monitoring = new MonitoringServer(Broker, _pages, _options.HttpHost ?? _options.Host, _options.HttpsPort, _loggerFactory, tls);
                await _monitoring.StartAsync().ConfigureAwait(false);
                Log.HttpsMonitoring(_log, _monitoring.LocalEndPoint!.ToString());
            }
        }
        finally
        {
            await actors.ConfigureAwait(false);
        }

        _systemAccount = await SystemAccountService.StartAsync(Broker, _pages, _log, () => ReloadWithStartArguments is { } reload ? reload() : "config reload not available").ConfigureAwait(false);
        _listener.Start();
        if (_options.Tls is { } clientTls)
        {
            Log.TlsRequired(_log, clientTls.CertFile, clientTls.Verify ? (clientTls.MapCertificateToUser ? "verify_and_map" : "verify") : "none", clientTls.HandshakeFirst);
        }

        _webSocket?.Start();
        _mqttListener?.Start();
        if (_routeListener is not null)
        {
            var cluster = Broker.Routes!;
            Log.ClusterName(_log, cluster.ClusterName);
            if (cluster.Dynamic)
            {
                Log.DynamicClusterName(_log);
            }

            _routeListener.Start();
            Log.RouteListening(_log, _routeListener.LocalEndPoint.ToString());
            Broker.StartRouting(_routeListener.LocalEndPoint.Port);
        }

        if (_leafListener is not null)
        {
            _leafListener.Start();
            Log.LeafListening(_log, _leafListener.LocalEndPoint.ToString());
        }

        Broker.StartLeafNodes();

        if (_gatewayListener is not null)
        {
            _gatewayListener.Start();
            Log.GatewayListening(_log, _gatewayListener.LocalEndPoint.ToString());
        }

        Broker.StartGateways();

        if (_options.PidFile is { } pidFile)
        {
            await File.WriteAllTextAsync(pidFile, Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture)).ConfigureAwait(false);
        }

        if (_options.PortsFileDir is { } dir)
        {
            _portsFile = new PortsFile
            {
                Client = ListenAddress.Urls("nats", _listener.LocalEndPoint),
                Monitoring = _monitoring?.LocalEndPoint is { } m ? ListenAddress.Urls(_options.HttpPort == 0 ? "https" : "http", m) : null,
                WebSocket = _webSocket is { } ws ? ListenAddress.Urls(_options.WebSocket?.Tls is null ? "ws" : "wss", ws.LocalEndPoint) : null,
                Cluster = _routeListener is { } routes ? ListenAddress.Urls("nats", routes.LocalEndPoint) : null,
                LeafNodes = _leafListener is { } leafs ? ListenAddress.Urls("nats", leafs.LocalEndPoint) : null,
            }.Write(dir);
        }

        Log.Ready(_log);
    }

    public async ValueTask DisposeAsync()
    {
        if (_listener is not null)
        {
            await _listener.DisposeAsync().ConfigureAwait(false);
        }

        if (_webSocket is not null)
        {
            await _webSocket.DisposeAsync().ConfigureAwait(false);
        }

        if (_mqttListener is not null)
        {
            await _mqttListener.DisposeAsync().ConfigureAwait(false);
        }

        if (_routeListener is not null)
        {
            await _routeListener.DisposeAsync().ConfigureAwait(false);
        }

        if (_leafListener is not null)
        {
            await _leafListener.DisposeAsync().ConfigureAwait(false);
        }

        if (_gatewayListener is not null)
        {
            await _gatewayListener.DisposeAsync().ConfigureAwait(false);
        }

        if (_monitoring is not null)
        {
            await _monitoring.DisposeAsync().ConfigureAwait(false);
        }

        await Broker.WarmUp.ConfigureAwait(false); // it may be writing in the store directory

        if (_systemAccount is not null)
        {
            await _systemAccount.DisposeAsync().ConfigureAwait(false);
        }

        await Broker.DisposeAsync().ConfigureAwait(false);
        if (_portsFile is not null)
        {
            File.Delete(_portsFile);
        }
    }

    private static string Limit(long bytes) => bytes < 0 ? "unlimited" : $"{bytes} B";

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Information, Message = "JetStream: store directory {StoreDir}, max memory {MaxMemory}, max storage {MaxStorage}, sync {Sync}")]
        public static partial void JetStream(ILogger logger, string storeDir, string maxMemory, string maxStorage, string sync);

        [LoggerMessage(Level = LogLevel.Information, Message = "  Encryption:      {Cipher}")]
        public static partial void Encryption(ILogger logger, string cipher);

        [LoggerMessage(Level = LogLevel.Warning, Message = "JetStream sync_interval is {Sync}: PubAcks go out before fsync, so a power loss (not a process crash) can lose up to that much acknowledged data")]
        public static partial void SyncInterval(ILogger logger, string sync);

        [LoggerMessage(Level = LogLevel.Information, Message = "Starting courier {CourierVersion} (implements nats-server {NatsVersion}), id {ServerId}, name {ServerName}")]
        public static partial void Starting(ILogger logger, string courierVersion, string natsVersion, string serverId, string serverName);

        [LoggerMessage(Level = LogLevel.Information, Message = "Using configuration file: {File}")]
        public static partial void UsingConfig(ILogger logger, string file);

        [LoggerMessage(Level = LogLevel.Information, Message = "Starting http monitor on {EndPoint}")]
        public static partial void Monitoring(ILogger logger, string endPoint);

        [LoggerMessage(Level = LogLevel.Information, Message = "Starting https monitor on {EndPoint}")]
        public static partial void HttpsMonitoring(ILogger logger, string endPoint);

        [LoggerMessage(Level = LogLevel.Information, Message = "TLS required for client connections (certificate {CertFile}, client certificates: {Verify}, handshake first: {HandshakeFirst})")]
        public static partial void TlsRequired(ILogger logger, string certFile, string verify, bool handshakeFirst);

        [LoggerMessage(Level = LogLevel.Information, Message = "Cluster name is {Name}")]
        public static partial void ClusterName(ILogger logger, string name);

        [LoggerMessage(Level = LogLevel.Warning, Message = "Cluster name was dynamically generated, consider setting one")]
        public static partial void DynamicClusterName(ILogger logger);

        [LoggerMessage(Level = LogLevel.Information, Message = "Listening for route connections on {EndPoint}")]
        public static partial void RouteListening(ILogger logger, string endPoint);

        [LoggerMessage(Level = LogLevel.Error, Message = "Error accepting route connection: {Error}")]
        public static partial void RouteAcceptError(ILogger logger, string error);

        [LoggerMessage(Level = LogLevel.Information, Message = "Listening for leafnode connections on {EndPoint}")]
        public static partial void LeafListening(ILogger logger, string endPoint);

        [LoggerMessage(Level = LogLevel.Error, Message = "Error accepting leafnode connection: {Error}")]
        public static partial void LeafAcceptError(ILogger logger, string error);

        [LoggerMessage(Level = LogLevel.Information, Message = "Listening for gateway connections on {EndPoint}")]
        public static partial void GatewayListening(ILogger logger, string endPoint);

        [LoggerMessage(Level = LogLevel.Error, Message = "Error accepting gateway connection: {Error}")]
        public static partial void GatewayAcceptError(ILogger logger, string error);

        [LoggerMessage(Level = LogLevel.Information, Message = "Server is ready")]
        public static partial void Ready(ILogger logger);
    }
}
