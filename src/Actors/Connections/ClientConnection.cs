using System.Net;
using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Mqtt;
using Courier.Actors.Server;
using Courier.Actors.Server.Authentication;
using Courier.Protocols.Nats;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

/// <summary>
/// One client connection's data path: the read pump (parse, authorize, publish, subscribe) and the
/// outbound buffer with its write pump. Its <see cref="ConnectionActor"/> owns its lifetime: the
/// pumps report to the actor, and the actor shuts the connection down.
/// </summary>
internal sealed partial class ClientConnection
{
    private readonly Broker _broker;
    private readonly Socket? _socket;
    private Stream _stream; // replaced once by the SslStream after a TLS handshake, before the pumps start
    private readonly IActorRef _owner;
    private readonly ILogger _log;
    private readonly NatsParser _parser;
    private readonly int _msgTemplateSize;
    private readonly long _startedTick;
    private int _closed;
    private long _lastActivityTick;
    private Account _account; // the global account until CONNECT names another; read on every publish
    private Task _readPump = Task.CompletedTask;
    private Task _writePump = Task.CompletedTask;

    public ClientConnection(Broker broker, Stream stream, Socket? socket, ulong id, IActorRef owner, bool mqtt = false, Cluster.RouteLink? route = null)
    {
        _broker = broker;
        _stream = stream;
        _socket = socket;
        _owner = owner;
        _log = broker.Logger;
        _account = broker.Accounts.Global;
        Id = id;
        var options = broker.Options;
        _parser = new NatsParser(options.MaxControlLine, options.MaxPayload);
        Outbound = new Outbound(options.MaxPending, inProcess: socket is null);
        Outbound.SlowConsumerDetected = OnSlowConsumer;
        _msgTemplateSize = (options.MaxControlLine * 2) + 64; // two control lines' worth of subject and reply
        if (socket?.RemoteEndPoint is IPEndPoint remote)
        {
            RemoteIp = remote.Address.IsIPv4MappedToIPv6 ? remote.Address.MapToIPv4().ToString() : remote.Address.ToString();
            RemotePort = remote.Port;
        }

        if (mqtt)
        {
            // A PUBLISH may carry max_payload bytes plus its topic (up to 65535 + 2 bytes) and packet id.
            _mqtt = new MqttConnectionState(options.MaxPayload + ushort.MaxValue + 4)
            {
                Inflight = new MqttInflight(Outbound, options.Mqtt?.MaxAckPending ?? 0),
            };
        }

        if (route is not null)
        {
            // A route: no verbose or pedantic mode, its own parser (RS+/RS-/RMSG), messages up to the
            // largest payload nats-server can be configured for (a peer may allow more than we do).
            _route = route;
            _routeParser = new RouteParser(options.MaxControlLine, Math.Max(options.MaxPayload, RouteParser.DefaultMaxPayload));
            _verbose = false;
            _pedantic = false;
        }

        Started = DateTime.UtcNow;
        _startedTick = Environment.TickCount64;
        _lastActivityTick = _startedTick;
    }

    /// <summary>The client id (INFO <c>client_id</c>, connz <c>cid</c>).</summary>
    public ulong Id { get; }

    public Outbound Outbound { get; }

    /// <summary>A client over WebSocket (its stream unframes reads and frames write batches).</summary>
    public bool IsWebSocket => _stream is WebSocketStream;

    /// <summary>An in-process connection of one of Courier's own services (no socket: <see cref="InProcessClient"/>).</summary>
    public bool IsInternal => _socket is null;

    /// <summary>
    /// The in-process client of a JetStream API (<see cref="InProcessRole.JetStream"/>): unlike Courier's
    /// other services its subscriptions (streams, acks, flow control, cluster forwarding) are told to
    /// routes, all but the API's own node-local ones.
    /// </summary>
    public bool IsJetStream { get; private set; }

    /// <summary>The actor that owns this connection's lifetime.</summary>
    public IActorRef Owner => _owner;

    public string RemoteIp { get; } = "";

    public int RemotePort { get; }

    public DateTime Started { get; }

    /// <summary>
    /// When the last read batch was processed. Kept as the cheap monotonic millisecond tick (one per
    /// read batch on the hot path), turned into a time only when monitoring asks.
    /// </summary>
    public DateTime LastActivity => Started.AddMilliseconds(Volatile.Read(ref _lastActivityTick) - _startedTick);

    /// <summary>
    /// The round-trip time, estimated as nats-server does at CONNECT: from the connection's start to its
    /// CONNECT (the INFO went out and the CONNECT came back). Zero before CONNECT.
    /// </summary>
    public TimeSpan Rtt { get; private set; }

    /// <summary>The CONNECT options; null until CONNECT.</summary>
    public ConnectOptions? ConnectOptions { get; private set; }

    /// <summary>
    /// The client's account: its publishes and subscriptions reach this account's subject space only.
    /// The global account until CONNECT authenticates a user of another (set once, by the read pump).
    /// </summary>
    public Account Account => _account;

    /// <summary>The authenticated user name (an nkey user's or a JWT user's public key), if any.</summary>
    public string? AuthorizedUser { get; private set; }

    /// <summary>The nonce of this client's INFO (raw URL-safe base64), when nkey users or operator mode need one.</summary>
    public string? Nonce { get; private set; }

    /// <summary>When the client's user JWT expires (the connection is closed then); null when it does not.</summary>
    public DateTimeOffset? AuthExpires { get; private set; }

    /// <summary>The operator-mode account (public key) the client's user JWT belongs to; null otherwise.</summary>
    public string? JwtAccount { get; private set; }

    /// <summary>Messages received from this client (written only by its read pump).</summary>
    public long InMsgs { get; private set; }

    /// <summary>Payload bytes received from this client.</summary>
    public long InBytes { get; private set; }

    /// <summary>Server PINGs sent without a PONG back.</summary>
    public int PingsOut => Volatile.Read(ref _pingsOut);

    public bool IsClosed => Volatile.Read(ref _closed) != 0;

    /// <summary>Why the connection closed, for logs and monitoring.</summary>
    public string? CloseReason { get; private set; }

    /// <summary>Sends INFO (NATS) and starts the read and write pumps (after the TLS handshake on a TLS client listener).</summary>
    public void Start()
    {
        if (_route is not null)
        {
            StartRoute();
            return;
        }

        if (_mqtt is null && _broker.Authentication.NonceRequired)
        {
            // nkey users or operator mode: the client signs this nonce of its INFO.
            Nonce = Authenticator.NewNonce();
        }

        if (_stream is WebSocketStream { Tls: { } wss })
        {
            // wss: the listener ran the handshake before the upgrade; its certificate may name the
            // user (verify_and_map). Like nats-server 2.9, connz shows no TLS version for these clients.
            ClientCertificate = wss.RemoteCertificate as System.Security.Cryptography.X509Certificates.X509Certificate2;
        }

        if (_mqtt is not null && _socket is not null && !IsWebSocket && _broker.MqttTls is { } mqttTls)
        {
            // mqtt.tls: the handshake first (over WebSocket the listener's wss did it).
            _readPump = Task.Run(() => SecureMqttAndRunAsync(mqttTls));
            return;
        }

        if (_mqtt is not null)
        {
            // MQTT: the server says nothing before the client's CONNECT.
            _writePump = Task.Run(RunWritePumpAsync);
            _readPump = Task.Run(RunMqttReadPumpAsync);
            return;
        }

        if (_socket is not null && !IsWebSocket && _broker.Tls is { } tls)
        {
            // The client listener's tls {} block: WebSocket clients have their own listener and block.
            _readPump = Task.Run(() => SecureAndRunAsync(tls));
            return;
        }

        // INFO is formatted in place: no per-connection JSON serialization or garbage.
        Span<byte> info = stackalloc byte[2048]; // bytes: the INFO line is a few hundred
        var length = _broker.Info.Format(info, Id, RemoteIp, IsWebSocket, Nonce);
        if (length > 0)
        {
            Outbound.Write(info[..length]);
        }
        else
        {
            Outbound.Write(ProtocolWriter.Info(_broker.Info.Create(this)));
        }

        Outbound.Signal();

        // Both pumps start on this thread rather than through the thread pool: the write pump sends the
        // INFO at once (a non-blocking socket send) and the read pump runs to its first pending read, so
        // a connection costs no thread-pool hand-over before the client sees INFO (a connection storm
        // opens thousands a second). Everything after their first await runs where the socket completes.
        _writePump = RunWritePumpAsync();
        _readPump = RunReadPumpAsync();
    }

    /// <summary>Queues <c>-ERR '&lt;text&gt;'</c> and flushes it.</summary>
    public void SendError(string text)
    {
        Outbound.Write(ProtocolWriter.Error(text));
        Outbound.Signal();
    }

    /// <summary>Sends a keepalive PING and counts it as outstanding.</summary>
    public void SendPing()
    {
        Interlocked.Increment(ref _pingsOut);
        Outbound.Write(ProtocolWriter.Ping);
        Outbound.Signal();
    }

    /// <summary>
    /// Ends the connection: unregisters its subscriptions, writes what is queued (so a final -ERR
    /// reaches the client), then closes the socket. Called by the owning actor when it stops.
    /// </summary>
    public void Shutdown(string reason)
    {
        if (Interlocked.Exchange(ref _closed, 1) != 0)
        {
            return;
        }

        CloseReason = reason;
        Log.Closed(_log, Id, reason);
        _mqtt?.Inflight.Close();
        if (_route is not null)
        {
            _broker.Routes?.Unregister(this);
        }

        var subscriptions = RemoveAllSubscriptions();
        _broker.Unregister(this, subscriptions);
        ReleaseAccountAdmission();
        if (!IsInternal && _route is null && ConnectOptions is not null && _mqtt is null)
        {
            _broker.Events?.ClientClosed(this); // the system account's DISCONNECT event
        }

        Outbound.Complete();
        _ = CloseTransportAsync();
    }

    private async Task CloseTransportAsync()
    {
        // Give the write pump a moment to flush a final -ERR; a stuck peer cannot hold us here. WaitAsync
        // drops its timer as soon as the pump ends (a Task.Delay would stay in the timer queue for the whole
        // second: a connection storm closing thousands a second kept thousands of timers there).
        await _writePump.WaitAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        var flushed = _writePump.IsCompleted;
        if (_stream is WebSocketStream webSocket && flushed)
        {
            // nats-server ends a WebSocket client with a close frame whose status says why; a peer
            // that reads nothing cannot hold the close here past the same second.
            try
            {
                await webSocket.CloseAsync(CloseReason ?? "Server Shutdown").AsTask().WaitAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
            }
        }

        try
        {
            _socket?.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
        }
        catch (ObjectDisposedException)
        {
        }

        await _stream.DisposeAsync().ConfigureAwait(false);
        _socket?.Dispose();
        if (!flushed)
        {
            Log.WriteDidNotFinish(_log, Id);
        }
    }

    private async Task RunWritePumpAsync()
    {
        try
        {
            await Outbound.RunWritePumpAsync(_stream).ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException)
        {
            RequestClose("Write Error");
        }
    }

    private void OnSlowConsumer()
    {
        _broker.Stats.CountSlowConsumer();
        Log.SlowConsumer(_log, Id, RemoteIp, RemotePort);
        RequestClose("Slow Consumer (Pending Bytes)");
    }

    /// <summary>Asks the owning actor to close this connection.</summary>
    public void RequestClose(string reason)
    {
        if (IsClosed)
        {
            return;
        }

        if (IsInternal)
        {
            Shutdown(reason); // an in-process connection has no actor: its client owns it
            return;
        }

        _owner.Tell(new ConnectionActor.Protocol.Close(reason));
    }

    public override string ToString() => $"cid:{Id} {RemoteIp}:{RemotePort}";

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Warning, Message = "cid:{Cid} - Slow Consumer Detected: MaxPending exceeded ({Ip}:{Port})")]
        public static partial void SlowConsumer(ILogger logger, ulong cid, string ip, int port);

        [LoggerMessage(Level = LogLevel.Debug, Message = "cid:{Cid} - closed before its last writes were flushed")]
        public static partial void WriteDidNotFinish(ILogger logger, ulong cid);

        [LoggerMessage(Level = LogLevel.Debug, Message = "cid:{Cid} - Client connection closed: {Reason}")]
        public static partial void Closed(ILogger logger, ulong cid, string reason);

        [LoggerMessage(Level = LogLevel.Error, Message = "cid:{Cid} - {Error}")]
        public static partial void ProtocolError(ILogger logger, ulong cid, string error);

        [LoggerMessage(Level = LogLevel.Trace, Message = "cid:{Cid} - <<- [{Op}]")]
        public static partial void TraceIn(ILogger logger, ulong cid, ClientOp op);
    }
}
