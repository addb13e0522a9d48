using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

/// <summary>What a connection is to the rest of the node (monitoring, events, the route table).</summary>
internal enum ConnectionKind
{
    /// <summary>A NATS client (<see cref="ClientConnection"/>), over TCP, TLS or WebSocket.</summary>
    Client,

    /// <summary>An MQTT client (<see cref="MqttConnection"/>).</summary>
    Mqtt,

    /// <summary>A route to a peer server (<see cref="RouteConnection"/>).</summary>
    Route,

    /// <summary>One of Courier's own services (<see cref="InProcessConnection"/>).</summary>
    InProcess,

    /// <summary>A leaf node link to a hub or from a leaf (<see cref="LeafConnection"/>).</summary>
    Leaf,

    /// <summary>A gateway link to or from another cluster of a super-cluster (<see cref="GatewayConnection"/>).</summary>
    Gateway,
}

/// <summary>
/// What every connection shares, whatever its protocol: its transport, the outbound buffer and its
/// write pump, the read pump's loop, the subscription table and the publisher that feeds the subject
/// space. A protocol is a subclass that parses a read batch (<see cref="Process"/>) and writes the
/// deliveries to it (<see cref="WriteMessage"/>): <see cref="ClientConnection"/> (NATS),
/// <see cref="RouteConnection"/>, <see cref="MqttConnection"/>, <see cref="InProcessConnection"/>. A
/// socket connection's actor owns its lifetime: the pumps report to the actor, and the actor shuts it down.
/// </summary>
internal abstract partial class Connection
{
    private protected readonly ConnectionContext _node;
    private protected readonly ILogger _log;
    private readonly IActorRef _owner;
    private readonly long _startedTick;
    private int _closed;
    private long _lastActivityTick;
    private int _pingsOut;
    private Account _account; // the global account until CONNECT names another
    private protected Task _readPump = Task.CompletedTask;
    private protected Task _writePump = Task.CompletedTask;

    private protected Connection(ConnectionContext node, Transport transport, ulong id, IActorRef owner, PublisherKind kind)
    {
        _node = node;
        Transport = transport;
        _owner = owner;
        _log = node.Logger;
        _account = node.Accounts.Global;
        Id = id;
        var options = node.Options;
        // A service's outbound, or one with no socket under it (tests, benchmarks), is written where it is signalled.
        Outbound = new Outbound(options.MaxPending, inProcess: kind == PublisherKind.Service || transport.Socket is null);
        Outbound.SlowConsumerDetected = OnSlowConsumer;
        Publisher = new Publisher(this, kind, _account, options.MaxControlLine) { Gateways = node.Gateways };
        Started = DateTime.UtcNow;
        _startedTick = Environment.TickCount64;
        _lastActivityTick = _startedTick;
    }

    /// <summary>The client id (INFO <c>client_id</c>, connz <c>cid</c>; a route's <c>rid</c>).</summary>
    public ulong Id { get; }

    /// <summary>What this connection is (its class's protocol).</summary>
    public abstract ConnectionKind Kind { get; }

    /// <summary>The byte stream under the protocol.</summary>
    public Transport Transport { get; }

    public Outbound Outbound { get; }

    /// <summary>This connection's way into the subject space: match, permissions' delivery side, delivery, deferred flush.</summary>
    public Publisher Publisher { get; }

    /// <summary>A route link to a peer server.</summary>
    public bool IsRoute => Kind == ConnectionKind.Route;

    /// <summary>A leaf node link (this node the hub or the leaf).</summary>
    public bool IsLeaf => Kind == ConnectionKind.Leaf;

    /// <summary>A link to another server (a route, a leaf node link or a gateway link), not a client.</summary>
    public bool IsServerLink => Kind is ConnectionKind.Route or ConnectionKind.Leaf or ConnectionKind.Gateway;

    /// <summary>An in-process connection of one of Courier's own services.</summary>
    public bool IsInternal => Kind == ConnectionKind.InProcess;

    /// <summary>An MQTT client.</summary>
    public bool IsMqtt => Kind == ConnectionKind.Mqtt;

    /// <summary>A client over WebSocket.</summary>
    public bool IsWebSocket => Transport.IsWebSocket;

    /// <summary>The actor that owns this connection's lifetime.</summary>
    public IActorRef Owner => _owner;

    public string RemoteIp => Transport.RemoteIp;

    public int RemotePort => Transport.RemotePort;

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
    public TimeSpan Rtt { get; private protected set; }

    /// <summary>The CONNECT options (an MQTT client's as nats-server shows them); null until CONNECT.</summary>
    public ConnectOptions? ConnectOptions { get; private protected set; }

    /// <summary>
    /// The connection's account: its subscriptions live in this account's subject space. The global
    /// account until CONNECT authenticates a user of another (set once, by the read pump).
    /// </summary>
    public Account Account => _account;

    /// <summary>The authenticated user name (an nkey user's or a JWT user's public key), if any.</summary>
    public string? AuthorizedUser { get; private protected set; }

    /// <summary>When the client's user JWT expires (the connection is closed then); null when it does not.</summary>
    public DateTimeOffset? AuthExpires { get; private protected set; }

    /// <summary>The operator-mode account (public key) the client's user JWT belongs to; null otherwise.</summary>
    public string? JwtAccount { get; private protected set; }

    /// <summary>The certificate the peer presented in the TLS handshake, if any.</summary>
    public System.Security.Cryptography.X509Certificates.X509Certificate2? ClientCertificate => Transport.PeerCertificate;

    /// <summary>The TLS version as connz shows it; null on a plain connection.</summary>
    public string? TlsVersion => Transport.TlsVersion;

    /// <summary>The cipher suite by Go's name; null on a plain connection.</summary>
    public string? TlsCipherSuiteName => Transport.TlsCipherSuiteName;

    /// <summary>Messages received from this connection (written only by its reader).</summary>
    public long InMsgs => Publisher.InMsgs;

    /// <summary>Payload bytes received from this connection.</summary>
    public long InBytes => Publisher.InBytes;

    /// <summary>Server PINGs sent without a PONG back.</summary>
    public int PingsOut => Volatile.Read(ref _pingsOut);

    public bool IsClosed => Volatile.Read(ref _closed) != 0;

    /// <summary>Why the connection closed, for logs and monitoring.</summary>
    public string? CloseReason { get; private set; }

    /// <summary>The user's permissions (a NATS or MQTT client's); null: everything allowed.</summary>
    internal ClientPermissions? Permissions { get; private set; }

    /// <summary>Set when subscribe permissions deny subjects: publishers check each delivery against it.</summary>
    public ClientPermissions? DeliveryFilter { get; private set; }

    /// <summary>Starts the connection: its greeting (if the protocol has one), the handshakes, then the pumps.</summary>
    public abstract void Start();

    /// <summary>
    /// Writes one delivery to this connection, on the publisher's thread, in this protocol's framing:
    /// NATS MSG/HMSG, an MQTT PUBLISH, a call of an in-process service. False when it could not take it.
    /// </summary>
    internal abstract bool WriteMessage(Subscription sub, ref MsgTemplates templates, in System.Buffers.ReadOnlySequence<byte> payload, Publisher from);

    /// <summary>Whether a local subscription of this connection is interest to tell routes (RS+).</summary>
    internal virtual bool TellsRoutes(Subscription sub) => true;

    /// <summary>Queues <c>-ERR '&lt;text&gt;'</c> and flushes it (an MQTT client says it its own way).</summary>
    public virtual void SendError(string text)
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

    /// <summary>A PONG came back: nothing outstanding.</summary>
    private protected void ReceivedPong() => Volatile.Write(ref _pingsOut, 0);

    /// <summary>
    /// Ends the connection: unregisters its subscriptions, writes what is queued (so a final -ERR
    /// reaches the client), then closes the transport. Called by the owning actor when it stops.
    /// </summary>
    public void Shutdown(string reason)
    {
        if (Interlocked.Exchange(ref _closed, 1) != 0)
        {
            return;
        }

        CloseReason = reason;
        Log.Closed(_log, Id, reason);
        OnClosing();
        var subscriptions = RemoveAllSubscriptions();
        _node.Registry.Unregister(this, subscriptions);
        OnClosed();
        Outbound.Complete();
        _ = CloseTransportAsync();
    }

    /// <summary>Before the subscriptions go: what the protocol ends first (an MQTT window, a route's registration).</summary>
    private protected virtual void OnClosing()
    {
    }

    /// <summary>After the subscriptions went: what the protocol tells others (a client's DISCONNECT event).</summary>
    private protected virtual void OnClosed()
    {
    }

    private async Task CloseTransportAsync()
    {
        // Give the write pump a moment to flush a final -ERR; a stuck peer cannot hold us here. WaitAsync
        // drops its timer as soon as the pump ends (a Task.Delay would stay in the timer queue for the whole
        // second: a connection storm closing thousands a second kept thousands of timers there).
        await _writePump.WaitAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        var flushed = _writePump.IsCompleted;
        await Transport.CloseAsync(CloseReason ?? "Server Shutdown", flushed).ConfigureAwait(false);
        if (!flushed)
        {
            Log.WriteDidNotFinish(_log, Id);
        }
    }

    private protected async Task RunWritePumpAsync()
    {
        try
        {
            await Outbound.RunWritePumpAsync(Transport.Stream).ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException)
        {
            RequestClose("Write Error");
        }
    }

    /// <summary>
    /// The TLS handshake of this connection's transport (as the server, or as the client of
    /// <paramref name="clientOf"/>); false when it failed: logged as nats-server logs it, close requested.
    /// </summary>
    private protected Task<bool> TrySecureAsync(TlsTransport tls, string tag, string errorPrefix, string? clientOf = null) =>
        TrySecureAsync(Transport.SecureAsync(tls, clientOf), tag, errorPrefix);

    /// <summary>The client handshake of a dialled link with a remote's own TLS settings; as <see cref="TrySecureAsync(TlsTransport, string, string, string?)"/>.</summary>
    private protected Task<bool> TrySecureAsync(TlsDialer dialer, string host, string tag, string errorPrefix) =>
        TrySecureAsync(Transport.SecureAsync(dialer, host), tag, errorPrefix);

    private async Task<bool> TrySecureAsync(Task handshake, string tag, string errorPrefix)
    {
        try
        {
            await handshake.ConfigureAwait(false);
        }
        catch (Exception e) when (Transport.IsHandshakeFailure(e))
        {
            if (!IsClosed)
            {
                Log.TlsHandshakeError(_log, RemoteIp, RemotePort, tag, Id, e is TimeoutException ? e.Message : $"{errorPrefix}: {Transport.Reason(e)}");
            }

            RequestClose("TLS Handshake Error");
            return false;
        }

        if (_log.IsEnabled(LogLevel.Debug) && Transport.TlsState is { } state)
        {
            Log.TlsHandshakeComplete(_log, Id, state.Protocol.ToString(), state.CipherSuite.ToString());
        }

        return true;
    }

    private void OnSlowConsumer()
    {
        _node.Stats.CountSlowConsumer();
        Log.SlowConsumer(_log, Id, RemoteIp, RemotePort);
        RequestClose("Slow Consumer (Pending Bytes)");
    }

    /// <summary>Asks the owning actor to close this connection.</summary>
    public virtual void RequestClose(string reason)
    {
        if (IsClosed)
        {
            return;
        }

        _owner.Tell(new ConnectionActor.Protocol.Close(reason));
    }

    /// <summary>Sets the user's permissions (CONNECT, a reload).</summary>
    private protected void SetPermissions(ClientPermissions? permissions)
    {
        Permissions = permissions;
        DeliveryFilter = permissions is { FiltersDeliveries: true } ? permissions : null;
    }

    /// <summary>Queues a frame for this connection itself; flushed with the read batch.</summary>
    private protected void WriteOwn(ReadOnlySpan<byte> frame)
    {
        Outbound.Write(frame);
        Publisher.Touch(Outbound);
    }

    /// <summary>Notes the read batch just processed (the idle and monitoring clocks).</summary>
    private protected void MarkActivity() => Volatile.Write(ref _lastActivityTick, Environment.TickCount64);

    private protected void LogProtocolError(string error) => Log.ProtocolError(_log, Id, error);

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

        [LoggerMessage(Level = LogLevel.Error, Message = "cid:{Cid} - closing the connection after an unexpected error handling its input")]
        public static partial void ReadPumpFault(ILogger logger, ulong cid, Exception error);

        // nats-server names a connection by its type: cid (NATS), mid (MQTT), rid (route).
        [LoggerMessage(Level = LogLevel.Error, Message = "{Ip}:{Port} - {Tag}:{Cid} - {Error}")]
        public static partial void TlsHandshakeError(ILogger logger, string ip, int port, string tag, ulong cid, string error);

        [LoggerMessage(Level = LogLevel.Debug, Message = "cid:{Cid} - TLS handshake complete: TLS version {Version}, cipher suite {CipherSuite}")]
        public static partial void TlsHandshakeComplete(ILogger logger, ulong cid, string version, string cipherSuite);
    }
}
