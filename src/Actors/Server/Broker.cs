using System.Buffers.Text;
using System.Globalization;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Text.Json;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Cluster;
using Courier.Actors.Connections;
using Courier.Actors.Hosting;
using Courier.Actors.JetStream;
using Courier.Actors.Routing;
using Courier.Actors.Server.Identity;
using Courier.Protocols.Nats;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Courier.Actors.Server;

/// <summary>
/// The broker of one node: its actor system, the subject routers and the connection actors.
/// Listeners hand it accepted sockets; monitoring reads its state. Created cheaply (no actors), then
/// <see cref="StartAsync"/> starts the actors, so a host can bind its listeners meanwhile.
/// </summary>
public sealed partial class Broker : IAsyncDisposable, IConnectionFactory
{
    /// <summary>Literal router shards (plus one for subscriptions starting with a wildcard).</summary>
    internal const int DefaultLiteralShards = 4;

    /// <summary>The Courier version, reported beside the nats-server version it implements.</summary>
    public static readonly string CourierVersion =
        typeof(Broker).Assembly.GetName().Version?.ToString(3) ?? "0.1.0";

    /// <summary>How long startup waits for the JetStream API (its streams recovered) before giving up.</summary>
    private static readonly TimeSpan JetStreamStartTimeout = TimeSpan.FromMinutes(5);

    private readonly ServerInfo _info;
    private readonly ILoggerFactory _loggerFactory;
    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, Task> _jetStreamStarts = new(StringComparer.Ordinal);
    private IActorRef _connections = ActorRefs.Nobody;
    private bool _ownsSystem;
    private byte[]? _infoJson;
    private byte[]? _webSocketInfoJson;

    public Broker(ServerOptions options, ILoggerFactory? loggerFactory = null, int literalShards = DefaultLiteralShards)
    {
        ArgumentNullException.ThrowIfNull(options);
        Options = options;
        _loggerFactory = loggerFactory ?? NullLoggerFactory.Instance;
        Logger = _loggerFactory.CreateLogger("courier");
        ServerId = NewServerId();
        ServerName = string.IsNullOrEmpty(options.ServerName) ? ServerId : options.ServerName;
        Registry = new ClientRegistry(Stats);
        Accounts = new AccountRegistry(literalShards, Registry);
        Trust = options.Operator is { } operatorMode ? new OperatorTrust(operatorMode) : null;

        // Operator mode: the accounts the resolver holds at startup, with their JWTs' exports and imports.
        Accounts.Configure(Trust is null ? options.Accounts : [.. options.Accounts, .. Trust.KnownAccounts()]);
        SystemAccount = SystemAccountName() is { } systemName ? Accounts.GetOrCreate(systemName) : null;
        Tls = options.Tls is { } tls ? new TlsTransport(tls) : null;
        MqttTls = options.Mqtt?.Tls is { } mqttTls ? new TlsTransport(mqttTls) : null;
        RouteTls = options.Cluster.Tls is { } routeTls ? new TlsTransport(routeTls) : null;
        _info = new ServerInfo
        {
            ServerId = ServerId,
            ServerName = ServerName,
            Version = options.NatsServerVersion,
            Proto = 1,
            Go = "courier " + CourierVersion,
            Host = options.Host,
            Port = options.Port,
            Headers = true,
            AuthRequired = options.AuthRequired && options.NoAuthUser is null, // nats-server: no_auth_user turns it off in INFO
            TlsRequired = options.Tls is not null,
            TlsVerify = options.Tls is { Verify: true },
            MaxPayload = options.MaxPayload,
            JetStream = options.JetStream,
        };
        if (options.Cluster.Enabled)
        {
            Routes = new RouteTable(ServerId, options.Cluster.Name);
            Routes.Changed += OnRoutesChanged;
        }
    }

    /// <summary>
    /// Starts the actors: the actor system (unless <paramref name="system"/> is given: tests host the
    /// broker in their TestKit's system, built from <see cref="ActorSystemConfig.Build"/>), the router
    /// shards, the connection supervisor and, with JetStream, the API actor with its streams recovered.
    /// Completes when a client can be accepted. The actor system is created on a thread-pool thread.
    /// </summary>
    public async Task StartAsync(ActorSystem? system = null)
    {
        if (System is not null)
        {
            throw new InvalidOperationException("the broker has started already");
        }

        _ownsSystem = system is null;
        System = system ?? await Task.Run(() => ActorSystemConfig.CreateSystem(ActorSystemConfig.Build(Options, ClusterMemberConfig()), _loggerFactory)).ConfigureAwait(false);
        // Every account's shards exist before any SUB can be routed to them.
        await Accounts.Start(System).ConfigureAwait(false);
        await StartImportsAsync().ConfigureAwait(false);
        _connections = System.ActorOf(ConnectionSupervisor.Props(Options, Registry, Stats, this), "connections");
        if (SystemAccount is { } systemAccount)
        {
            var events = new Events.SystemEvents(this, systemAccount);
            await events.StartAsync().ConfigureAwait(false);
            Events = events;
        }

        if (Options.JetStream)
        {
            await StartJetStreamAsync().ConfigureAwait(false);
        }

        if (Options.Mqtt is not null)
        {
            // Retained messages and persistent sessions come back from the journal before the MQTT
            // listener accepts: a subscriber gets what was retained, a session what was kept for it.
            MqttRetainedStore = System.ActorOf(Mqtt.MqttRetainedStore.Props(MqttRetained), "mqtt-retained");
            MqttSessions = System.ActorOf(Mqtt.MqttSessions.Props(() => new InProcessClient(this, InProcessRole.MqttCapture), MqttCaptures), "mqtt-sessions");
            await MqttRetainedStore.Ask<Readiness.Ready>(Readiness.AwaitReady.Instance, JetStreamStartTimeout).ConfigureAwait(false);
            await MqttSessions.Ask<Readiness.Ready>(Readiness.AwaitReady.Instance, JetStreamStartTimeout).ConfigureAwait(false);
        }

        if (Routes is not null)
        {
            RouteManager = System.ActorOf(Cluster.RouteManager.Props(this), "routes");
            if (System.Settings.ProviderClass.Contains("Cluster", StringComparison.Ordinal))
            {
                AkkaAddress = Akka.Cluster.Cluster.Get(System).SelfAddress.ToString();
                ClusterNode = System.ActorOf(Cluster.ClusterNode.Props(this), "cluster-node");
            }
        }
    }

    /// <summary>
    /// Gives each account with service imports or service exports its own in-process client, holding
    /// a subscription per imported service subject and one on its <c>_R_.</c> replies.
    /// </summary>
    private async Task StartImportsAsync()
    {
        var changes = new List<SubChange>();
        foreach (var account in Accounts.All)
        {
            if (account.ServiceImports.Count == 0 && account.Replies is null)
            {
                continue;
            }

            var client = AccountClient(account);
            foreach (var import in account.ServiceImports)
            {
                changes.Add(client.AddImportSubscription(import.To, ImportBinding.Request(import)));
            }

            if (account.Replies is { } replies)
            {
                changes.Add(client.AddImportSubscription(replies.Prefix + ">", ImportBinding.Response(account)));
            }
        }

        await ApplyAsync(changes).ConfigureAwait(false);
    }

    /// <summary>
    /// Starts JetStream: for the global account alone without <c>accounts { }</c>; with accounts, for
    /// each account whose entry enables it (its streams under <c>jetstream/&lt;account&gt;</c>, its
    /// limits), as nats-server's enableJetStreamAccounts. The other accounts answer
    /// <c>$JS.API.INFO</c> with "jetstream not enabled for account". Each API is ready (its
    /// subscription in effect, its streams recovered) before the listeners accept.
    /// </summary>
    private async Task StartJetStreamAsync()
    {
        // Clustered: streams are placed on one node each and $JS.API is answered on every node (JetStreamApi.Cluster.cs).
        var cluster = Routes is not null && System!.Settings.ProviderClass.Contains("Cluster", StringComparison.Ordinal)
            ? new JetStreamCluster(System, Routes)
            : null;
        JetStreamCluster = cluster;

        // Without accounts (and not in operator mode, whose accounts come from the resolver): one
        // JetStream, the global account's.
        if (Options.Accounts.Count == 0 && Trust is null)
        {
            var global = System!.ActorOf(JetStreamApi.Props(JetStreamSettings.From(Options) with { FirstRequest = StartWarmUp }, () => new InProcessClient(this, InProcessRole.JetStream), Space, cluster: cluster, account: Accounts.Global.Name), "jetstream");
            await global.Ask<Readiness.Ready>(Readiness.AwaitReady.Instance, JetStreamStartTimeout).ConfigureAwait(false);
            JetStream = global;
            Accounts.Global.JetStream = global;
            return;
        }

        var disabled = new List<SubChange>();
        var n = 0;
        foreach (var account in Accounts.All)
        {
            _jetStreamStarts[account.Name] = Task.CompletedTask; // an account first seen later: ActivateAccountAsync
            if (account.Options?.JetStream is not { } limits)
            {
                disabled.Add(AccountClient(account).AddImportSubscription(JetStreamApi.InfoSubject, ImportBinding.JetStreamDisabled()));
                continue;
            }

            var api = await StartAccountJetStreamAsync(account, limits, $"jetstream-{++n}").ConfigureAwait(false);
            JetStream ??= api;
        }

        await ApplyAsync(disabled).ConfigureAwait(false);
    }

    /// <summary>One account's JetStream API (its streams, its limits), started and ready; set as the account's.</summary>
    private async Task<IActorRef> StartAccountJetStreamAsync(Account account, AccountJetStreamLimits limits, string actorName)
    {
        var settings = JetStreamSettings.ForAccount(Options, account.Name, limits) with { FirstRequest = StartWarmUp };
        account.Streams = new LocalStreams(prefix => account.JetStreamExporterFor(prefix)?.Streams);
        var api = System!.ActorOf(JetStreamApi.Props(settings, () => new InProcessClient(this, InProcessRole.JetStream, account), account.Space, account.Streams, JetStreamCluster, account.Name), actorName);
        await api.Ask<Readiness.Ready>(Readiness.AwaitReady.Instance, JetStreamStartTimeout).ConfigureAwait(false);
        account.JetStream = api;
        return api;
    }

    /// <summary>
    /// Operator mode: JetStream for an account first seen after start (its JWT pushed to the full
    /// resolver, or fetched by the cache resolver), as nats-server enables it when it registers the
    /// account: its API when the JWT's limits enable JetStream, else the "not enabled" answer. Once
    /// per account; the connection that brought the account waits for it before its next command.
    /// Completed at once for the accounts known at start and outside operator mode.
    /// </summary>
    internal Task ActivateAccountAsync(Account account)
    {
        if (Trust is null || !Options.JetStream || System is null || ReferenceEquals(account, SystemAccount))
        {
            return Task.CompletedTask;
        }

        return _jetStreamStarts.TryGetValue(account.Name, out var started)
            ? started
            : _jetStreamStarts.GetOrAdd(account.Name, _ => StartLateJetStreamAsync(account));
    }

    private async Task StartLateJetStreamAsync(Account account)
    {
        try
        {
            if (Trust!.AccountOptionsFor(account.Name) is not { JetStream: { } limits } options)
            {
                await ApplyAsync([AccountClient(account).AddImportSubscription(JetStreamApi.InfoSubject, ImportBinding.JetStreamDisabled())]).ConfigureAwait(false);
                return;
            }

            account.Options ??= options;
            await StartAccountJetStreamAsync(account, limits, $"jetstream-{account.Name}").ConfigureAwait(false);
        }
        catch (Exception e) when (e is AskTimeoutException or InvalidActorNameException or IOException or UnauthorizedAccessException)
        {
            // The account's clients stay connected; its JetStream requests go unanswered, as when it failed at start.
            Logger.LogError("JetStream for account {Account} did not start: {Error}", account.Name, e.Message);
        }
    }

    // The account's own in-process client (imports, replies, the JetStream-disabled answer), made once.
    private ClientConnection AccountClient(Account account)
    {
        if (account.ImportClient is { } existing)
        {
            return existing;
        }

        var client = new ClientConnection(this, Stream.Null, null, NextClientId(), ActorRefs.Nobody);
        client.BindAccount(account);
        account.ImportClient = client;
        Register(client);
        return client;
    }

    /// <summary>
    /// The system account's name, as nats-server 2.9 picks it: the operator's (configured or in its
    /// JWT); else <c>system_account</c>; else an account named <c>$SYS</c>, made when not configured,
    /// unless <c>no_system_account</c>.
    /// </summary>
    private string? SystemAccountName() =>
        Trust?.SystemAccount is { Length: > 0 } operatorSystem ? operatorSystem
        : Options.SystemAccount is { Length: > 0 } configured ? configured
        : Options.NoSystemAccount ? null
        : DefaultSystemAccount;

    /// <summary>nats-server's DEFAULT_SYSTEM_ACCOUNT.</summary>
    internal const string DefaultSystemAccount = "$SYS";

    /// <summary>The system account; null with <c>no_system_account</c> or an operator without one.</summary>
    internal Account? SystemAccount { get; }

    /// <summary>The system account's events and its client; null until started, or without a system account.</summary>
    internal Events.SystemEvents? Events { get; private set; }

    /// <summary>This node's Akka.Cluster address (told to peers in the route INFO); null without a cluster.</summary>
    internal string? AkkaAddress { get; private set; }

    /// <summary>The membership actor; Nobody without a cluster.</summary>
    internal IActorRef ClusterNode { get; private set; } = ActorRefs.Nobody;

    /// <summary>The node's view of the cluster for JetStream (/jsz's meta_cluster); null without a <c>cluster { }</c> or JetStream.</summary>
    internal JetStreamCluster? JetStreamCluster { get; private set; }

    /// <summary>Whether this node is an Up member of the Akka cluster (for /healthz and /varz).</summary>
    public bool IsClusterMember => Volatile.Read(ref _member);

    private bool _member;
    private bool _everMember;

    /// <summary>
    /// Whether this node should be an Akka.Cluster member: it was one, or a Courier peer is routed
    /// (a lone node, or one routed to nats-server only, is healthy without membership).
    /// </summary>
    public bool ClusterPeersExpected
    {
        get
        {
            if (Volatile.Read(ref _everMember))
            {
                return true;
            }

            foreach (var route in Routes?.Routes ?? [])
            {
                if (route.Route?.RemoteInfo?.CourierAkka is not null)
                {
                    return true;
                }
            }

            return false;
        }
    }

    /// <summary>Membership of this node changed (Up, or removed).</summary>
    internal void OnMembershipChanged(bool member)
    {
        Volatile.Write(ref _member, member);
        if (member)
        {
            Volatile.Write(ref _everMember, true);
        }
    }

    /// <summary>The public host peers reach this node's route listener and Akka.Remote on.</summary>
    internal string ClusterPublicHost()
    {
        var cluster = Options.Cluster;
        if (cluster.Advertise is { } advertise)
        {
            var colon = advertise.LastIndexOf(':');
            return colon < 0 ? advertise : advertise[..colon];
        }

        if (cluster.Host is not ("0.0.0.0" or "::" or "[::]" or ""))
        {
            return cluster.Host;
        }

        var urls = OwnClientUrls();
        var first = urls[0];
        return first[..first.LastIndexOf(':')];
    }

    // Roles: the server id, its name and the route URL members dial (Cluster.ClusterNode).
    private ClusterMember? ClusterMemberConfig()
    {
        if (Routes is null)
        {
            return null;
        }

        var host = ClusterPublicHost();
        var bind = Options.Cluster.Host is "" or "::" or "[::]" ? "0.0.0.0" : Options.Cluster.Host;
        var routePort = _routePort;
        if (Options.Cluster.Advertise is { } advertise && advertise.LastIndexOf(':') is var colon and > 0
            && int.TryParse(advertise.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out var advertisedPort))
        {
            routePort = advertisedPort; // members dial the advertised route URL, as peers told of it in INFO do
        }

        // akka_advertise: peers reach Akka.Remote through another address (a proxy); by default the cluster host.
        var akkaHost = host;
        var akkaPublicPort = 0;
        if (Options.Cluster.AkkaAdvertise is { } akkaAdvertise && akkaAdvertise.LastIndexOf(':') is var akkaColon and > 0
            && int.TryParse(akkaAdvertise.AsSpan(akkaColon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out var akkaPort))
        {
            akkaHost = akkaAdvertise[..akkaColon];
            akkaPublicPort = akkaPort;
        }

        return new ClusterMember(bind, akkaHost,
        [
            Cluster.ClusterNode.ServerRole + ServerId,
            Cluster.ClusterNode.NameRole + ServerName,
            Cluster.ClusterNode.RouteRole + $"nats-route://{host}:{routePort}",
        ],
            Options.Cluster.AkkaPort,
            akkaPublicPort);
    }

    /// <summary>The route listener is bound on <paramref name="port"/> (before <see cref="StartAsync"/>: the Akka roles name it).</summary>
    public void SetRoutePort(int port)
    {
        _routePort = port;
        _routeInfoLine = null;
    }

    public ServerOptions Options { get; }

    public string ServerId { get; }

    public string ServerName { get; }

    public DateTime Started { get; } = DateTime.UtcNow;

    public ServerStats Stats { get; } = new();

    /// <summary>Client connections open now (Courier's own in-process connections excluded).</summary>
    public int ConnectionCount
    {
        get
        {
            var n = 0;
            foreach (var c in Registry.Clients)
            {
                n += c.IsInternal || c.IsRoute ? 0 : 1;
            }

            return n;
        }
    }

    /// <summary>Subscriptions held now, in every account.</summary>
    public int SubscriptionCount
    {
        get
        {
            var n = 0;
            foreach (var account in Accounts.All)
            {
                n += account.Space.Count;
            }

            return n;
        }
    }

    internal ILogger Logger { get; }

    /// <summary>The actor system; null until <see cref="StartAsync"/>.</summary>
    internal ActorSystem? System { get; private set; }

    /// <summary>The node's accounts, the global one among them.</summary>
    internal AccountRegistry Accounts { get; }

    /// <summary>The global account's subject space.</summary>
    internal SubjectSpace Space => Accounts.Global.Space;

    internal ClientRegistry Registry { get; }

    /// <summary>The global account's router shards.</summary>
    internal IReadOnlyList<IActorRef> Routers => Accounts.Global.Routers ?? [];

    /// <summary>The node's routes and the interest told to them; null without a <c>cluster { }</c>.</summary>
    internal RouteTable? Routes { get; }

    /// <summary>The route manager actor (listener hand-offs, dialling, reconnects); Nobody without a cluster.</summary>
    internal IActorRef RouteManager { get; private set; } = ActorRefs.Nobody;

    /// <summary>The JetStream API actor, when JetStream is enabled.</summary>
    internal IActorRef? JetStream { get; private set; }

    /// <summary>The MQTT session registry; <see cref="ActorRefs.Nobody"/> without an MQTT listener.</summary>
    internal IActorRef MqttSessions { get; private set; } = ActorRefs.Nobody;

    /// <summary>Journals the retained messages (<see cref="Mqtt.MqttRetainedStore"/>).</summary>
    internal IActorRef MqttRetainedStore { get; private set; } = ActorRefs.Nobody;

    /// <summary>The node's MQTT retained messages.</summary>
    internal Mqtt.MqttRetainedMessages MqttRetained { get; } = new();

    /// <summary>The persistent sessions' captured QoS 1/2 messages not yet journaled: PUBACK waits for them.</summary>
    internal Mqtt.MqttCaptureLedger MqttCaptures { get; } = new();

    internal ICollection<ClientConnection> Clients => Registry.Clients;

    /// <summary>Sets the port listeners actually bound (for INFO when the configured port was -1).</summary>
    public void SetListenPort(int port)
    {
        _info.Port = port;
        _infoJson = null;
        _webSocketInfoJson = null;
    }

    /// <summary>Takes ownership of an accepted MQTT client socket.</summary>
    public void AcceptMqtt(Socket socket)
    {
        socket.NoDelay = true;
        _connections.Tell(new ConnectionSupervisor.Protocol.AcceptMqtt(socket));
    }

    /// <summary>Takes ownership of an MQTT client's socket whose WebSocket handshake (path <c>/mqtt</c>) is done, and its stream.</summary>
    internal void AcceptMqttWebSocket(Socket socket, WebSocketStream stream)
    {
        socket.NoDelay = true;
        _connections.Tell(new ConnectionSupervisor.Protocol.AcceptMqtt(socket, stream));
    }

    /// <summary>Takes ownership of an accepted client socket.</summary>
    public void Accept(Socket socket)
    {
        socket.NoDelay = true;
        _connections.Tell(new ConnectionSupervisor.Protocol.Accept(socket));
    }

    /// <summary>Takes ownership of a client's socket whose WebSocket handshake is done, and its stream.</summary>
    internal void AcceptWebSocket(Socket socket, WebSocketStream stream)
    {
        socket.NoDelay = true;
        _connections.Tell(new ConnectionSupervisor.Protocol.Accept(socket, stream));
    }

    /// <summary>
    /// Starts routing once the route listener is bound on <paramref name="routePort"/>: the route INFO
    /// names that port, and the routes of <c>cluster.routes</c> are dialled.
    /// </summary>
    public void StartRouting(int routePort)
    {
        if (Routes is null)
        {
            return;
        }

        _routePort = routePort;
        _routeInfoLine = null;
        RouteManager.Tell(new RouteManager.Protocol.StartRouting(Options.Cluster.Routes));
    }

    /// <summary>Takes ownership of an accepted route socket.</summary>
    public void AcceptRoute(Socket socket)
    {
        socket.NoDelay = true;
        RouteManager.Tell(new RouteManager.Protocol.Accepted(socket));
    }

    /// <summary>The route listener's port (0 before <see cref="StartRouting"/>).</summary>
    public int RoutePort => _routePort;

    private int _routePort;
    private byte[]? _routeInfoLine;

    /// <summary>
    /// <c>INFO {json}\r\n</c> for a route, as nats-server's startRouteAcceptLoop fills it: id, name,
    /// the route listener's (or advertised) host and port, cluster name, headers, and unless
    /// <c>no_advertise</c> the client URLs. Cached until the cluster name or the URLs change.
    /// </summary>
    internal byte[] RouteInfoLine() => RouteInfoLine(lameDuck: false);

    /// <summary>
    /// As <see cref="RouteInfoLine()"/>; with <paramref name="lameDuck"/> the one INFO a node in lame duck
    /// mode sends its routes, with <c>"ldm":true</c> (nats-server's sendLDMToRoutes), never cached.
    /// </summary>
    internal byte[] RouteInfoLine(bool lameDuck)
    {
        if (!lameDuck && _routeInfoLine is { } line)
        {
            return line;
        }

        var cluster = Options.Cluster;
        var info = new RouteInfo
        {
            ServerId = ServerId,
            ServerName = ServerName,
            Version = Options.NatsServerVersion,
            Go = "courier " + CourierVersion,
            Host = cluster.Host,
            Port = _routePort,
            Headers = true,
            AuthRequired = cluster.Username is not null,
            TlsRequired = cluster.Tls is not null, // nats-server: both true with a cluster tls block
            TlsVerify = cluster.Tls is not null,
            MaxPayload = Options.MaxPayload,
            Proto = 2, // RouteProtoV2: accounts on RS+/RS-/RMSG
            Cluster = Routes!.ClusterName,
            Dynamic = Routes.Dynamic,
            Lnoc = true,
            ConnectUrls = cluster.NoAdvertise ? null : OwnClientUrls(),
            CourierAkka = AkkaAddress,
        };
        if (cluster.Advertise is { } advertise)
        {
            var colon = advertise.LastIndexOf(':');
            info.Host = colon < 0 ? advertise : advertise[..colon];
            info.Port = colon < 0 ? _routePort : int.Parse(advertise.AsSpan(colon + 1), global::System.Globalization.CultureInfo.InvariantCulture);
            info.Ip = $"nats-route://{info.Host}:{info.Port}/";
        }

        if (lameDuck)
        {
            info.LameDuckMode = true;
            return ProtocolWriter.Info(info);
        }

        return _routeInfoLine = ProtocolWriter.Info(info);
    }

    /// <summary>
    /// This node's client URLs (host:port) as nats-server's getClientConnectURLs: the listen host, or
    /// when it listens on every address, each non-loopback IPv4 address (loopback if there is no other).
    /// </summary>
    internal IReadOnlyList<string> OwnClientUrls()
    {
        var host = Options.Host;
        var port = _info.Port;
        if (host is not ("0.0.0.0" or "::" or "[::]"))
        {
            return [$"{host}:{port}"];
        }

        var urls = new List<string>();
        try
        {
            foreach (var nic in global::System.Net.NetworkInformation.NetworkInterface.GetAllNetworkInterfaces())
            {
                foreach (var address in nic.GetIPProperties().UnicastAddresses)
                {
                    if (address.Address.AddressFamily == AddressFamily.InterNetwork && !global::System.Net.IPAddress.IsLoopback(address.Address))
                    {
                        urls.Add($"{address.Address}:{port}");
                    }
                }
            }
        }
        catch (global::System.Net.NetworkInformation.NetworkInformationException)
        {
        }

        return urls.Count > 0 ? urls : [$"127.0.0.1:{port}"];
    }

    /// <summary>A peer told of a server it met (gossip): the route manager dials it unless it is known.</summary>
    internal void OnImplicitRoute(RouteInfo info) => RouteManager.Tell(new RouteManager.Protocol.ImplicitRoute(info));

    /// <summary>A route registered, went away, or sent new client URLs.</summary>
    internal void OnRoutesChanged()
    {
        _routeInfoLine = null;
        if (Routes is null)
        {
            return;
        }

        UpdateConnectUrls();
        if (ClusterNode.IsNobody())
        {
            return;
        }

        var peers = new List<string>();
        foreach (var route in Routes.Routes)
        {
            if (route.Route?.RemoteInfo?.CourierAkka is { } akka)
            {
                peers.Add(akka);
            }
        }

        ClusterNode.Tell(new ClusterNode.Protocol.PeersChanged(peers));
    }

    private readonly Lock _connectUrlsLock = new();

    /// <summary>
    /// INFO <c>connect_urls</c>: this node's client URLs and those its routes advertised, unless
    /// <c>no_advertise</c>. When they change, clients that understand async INFO (CONNECT protocol 1)
    /// get a new INFO, so they learn of nodes that came or went (nats-server's
    /// addConnectURLsAndSendINFOToClients). A node in lame duck mode leaves its own URLs out, and the
    /// URLs of a peer that said it is in lame duck mode are left out (nats-server's sendLDMToClients and
    /// removeConnectURLsAndSendINFOToClients), so clients move to the nodes that stay. With
    /// <paramref name="notify"/> false only the INFO is updated (lame duck mode sends its own).
    /// </summary>
    private void UpdateConnectUrls(bool notify = true)
    {
        if (Options.Cluster.NoAdvertise || Routes is null)
        {
            return;
        }

        // Computed, set and sent under one lock: two routes registering at once on different threads
        // must not let the one that read the routes first set (and send) its older list last, which
        // left a node advertising fewer URLs than it routes to. Route changes are rare; the lock is
        // held while INFO lines are queued on client outbounds, which never call back.
        lock (_connectUrlsLock)
        {
            var urls = IsLameDuck ? new List<string>() : new List<string>(OwnClientUrls());
            foreach (var route in Routes.Routes)
            {
                if (route.Route is { LameDuck: true })
                {
                    continue;
                }

                foreach (var url in route.Route?.ConnectUrls ?? [])
                {
                    if (!urls.Contains(url))
                    {
                        urls.Add(url);
                    }
                }
            }

            if (_info.ConnectUrls is { } current && current.SequenceEqual(urls))
            {
                return;
            }

            _info.ConnectUrls = urls;
            _infoJson = null;
            _webSocketInfoJson = null;
            if (notify)
            {
                SendInfoToClients();
            }
        }
    }

    /// <summary>An async INFO (the current one) to every client that understands it (CONNECT protocol 1).</summary>
    private void SendInfoToClients()
    {
        Span<byte> line = stackalloc byte[4096]; // bytes: an INFO with a few dozen URLs
        foreach (var client in Registry.Clients)
        {
            if (client.IsRoute || client.IsInternal || client.IsWebSocket || client.IsMqtt || client.ConnectOptions is not { Protocol: >= 1 })
            {
                continue;
            }

            var length = FormatInfo(line, client.Id, client.RemoteIp);
            if (length > 0)
            {
                client.Outbound.Write(line[..length]);
                client.Outbound.Signal();
            }
        }
    }

    /// <summary>The routes registered now, for /routez, by rid.</summary>
    public IReadOnlyList<RouteSummary> GetRoutes()
    {
        var list = new List<RouteSummary>();
        foreach (var c in Routes?.Routes ?? [])
        {
            var link = c.Route!;
            list.Add(new RouteSummary(
                c.Id, link.RemoteId ?? "", link.RemoteInfo?.ServerName ?? "", link.Solicited, link.Explicit, c.RemoteIp, c.RemotePort, c.Started,
                c.LastActivity, c.Outbound.PendingBytes, c.InMsgs, c.Outbound.OutMsgs, c.InBytes, c.Outbound.OutBytes, c.SubscriptionCount));
        }

        list.Sort((a, b) => a.Rid.CompareTo(b.Rid));
        return list;
    }

    /// <summary>The client URLs INFO advertises now (this node's first).</summary>
    public IReadOnlyList<string> ConnectUrls => _info.ConnectUrls ?? OwnClientUrls();

    /// <summary>Creates the data path of a route link (<see cref="Cluster.RouteActor"/>).</summary>
    internal ClientConnection CreateRoute(Stream stream, Socket socket, ulong id, IActorRef owner, RouteLink link) =>
        new(this, stream, socket, id, owner, route: link);

    /// <summary>The client port actually listened on.</summary>
    public int ListenPort => _info.Port;

    /// <summary>The connection of an in-process client (<see cref="InProcessClient"/>) in <paramref name="account"/> (null: the global account).</summary>
    internal ClientConnection ConnectInProcess(Account? account, InProcessRole role) =>
        ClientConnection.InProcess(this, Registry.NextClientId(), account ?? Accounts.Global, role);

    /// <inheritdoc />
    ClientConnection IConnectionFactory.Create(Stream stream, Socket? socket, ulong id, IActorRef owner) => new(this, stream, socket, id, owner);

    /// <inheritdoc />
    ClientConnection IConnectionFactory.CreateMqtt(Stream stream, Socket socket, ulong id, IActorRef owner) =>
        new(this, stream, socket, id, owner, mqtt: true);

    /// <inheritdoc />
    byte[] IConnectionFactory.RejectionInfo(ulong id) => ProtocolWriter.Info(CreateInfo(id, null));

    /// <summary>A snapshot of open (or recently closed) connections for monitoring, by cid.</summary>
    public IReadOnlyList<ConnectionInfo> GetConnections(bool closed = false)
    {
        var list = new List<ConnectionInfo>();
        if (closed)
        {
            list.AddRange(Registry.Closed);
        }
        else
        {
            foreach (var c in Registry.Clients)
            {
                if (!c.IsInternal && !c.IsRoute)
                {
                    list.Add(ClientRegistry.Describe(c, subscriptions: c.SubscriptionsSnapshot(), stop: null));
                }
            }
        }

        list.Sort((a, b) => a.Cid.CompareTo(b.Cid));
        return list;
    }

    /// <summary>The accounts for /accountz: their names, the global account's included.</summary>
    public IReadOnlyList<string> GetAccountNames()
    {
        var names = new List<string>();
        foreach (var account in Accounts.All)
        {
            names.Add(account.Name);
        }

        names.Sort(StringComparer.Ordinal);
        return names;
    }

    /// <summary>One account for <c>/accountz?acc=</c>; null when there is no such account.</summary>
    public AccountSummary? GetAccount(string name)
    {
        if (Accounts.Find(name) is not { } account)
        {
            return null;
        }

        var clients = 0;
        foreach (var c in Registry.Clients)
        {
            clients += !c.IsInternal && !c.IsRoute && ReferenceEquals(c.Account, account) ? 1 : 0;
        }

        var options = account.Options;
        return new AccountSummary(
            account.Name,
            clients,
            account.Space.Count,
            account.JetStream is not null,
            options?.Exports ?? [],
            options?.Imports ?? []);
    }

    /// <summary>JetStream usage for /jsz; null when JetStream is off.</summary>
    public async Task<JetStreamStats?> GetJetStreamStatsAsync()
    {
        if (JetStream is null)
        {
            return null;
        }

        return await JetStream.Ask<JetStreamStats>(JetStreamApi.Protocol.GetStats.Instance, TimeSpan.FromSeconds(10)).ConfigureAwait(false);
    }

    /// <summary>Totals over closed and open connections.</summary>
    public (long InMsgs, long InBytes, long OutMsgs, long OutBytes) GetTotals()
    {
        long inMsgs = Stats.InMsgs, inBytes = Stats.InBytes, outMsgs = Stats.OutMsgs, outBytes = Stats.OutBytes;
        foreach (var c in Registry.Clients)
        {
            inMsgs += c.InMsgs;
            inBytes += c.InBytes;
            outMsgs += c.Outbound.OutMsgs;
            outBytes += c.Outbound.OutBytes;
        }

        return (inMsgs, inBytes, outMsgs, outBytes);
    }

    /// <summary>Stops the actors (and the actor system, when the broker created it).</summary>
    public async ValueTask DisposeAsync()
    {
        if (System is not { } system)
        {
            return;
        }

        if (Events is { } events)
        {
            await events.DisposeAsync().ConfigureAwait(false);
        }

        if (_ownsSystem)
        {
            await system.Terminate().ConfigureAwait(false);
            return;
        }

        // A host's system (a test's) outlives the broker: stop just the broker's actors, children first.
        var jetStreams = Accounts.All.Select(a => a.JetStream).Where(j => j is not null && !ReferenceEquals(j, JetStream));
        foreach (var actor in new[] { JetStream }.Concat(jetStreams).Concat([ClusterNode, RouteManager, _connections]).Concat(Accounts.Supervisors))
        {
            if (actor is not null && !actor.IsNobody())
            {
                await actor.GracefulStop(TimeSpan.FromSeconds(30)).ConfigureAwait(false);
            }
        }
    }

    internal ulong NextClientId() => Registry.NextClientId();

    internal void Register(ClientConnection client) => Registry.Register(client);

    internal void Unregister(ClientConnection client, Subscription[] subscriptions) => Registry.Unregister(client, subscriptions);

    /// <summary>
    /// Writes <c>INFO {json}\r\n</c> for one client into <paramref name="destination"/>: the server's
    /// part is serialized once, only client_id and client_ip are added per connection. Returns the
    /// length, or -1 when the destination is too small.
    /// </summary>
    internal int FormatInfo(Span<byte> destination, ulong clientId, string? clientIp, bool webSocket = false, string? nonce = null)
    {
        var json = webSocket && Options.WebSocket is { AuthOverride: true } && !_info.AuthRequired
            ? _webSocketInfoJson ??= WebSocketInfoJson()
            : _infoJson ??= JsonSerializer.SerializeToUtf8Bytes(_info, NatsJsonContext.Default.ServerInfo);
        var p = 0;
        if (!Append(destination, ref p, "INFO "u8) || !Append(destination, ref p, json.AsSpan(0, json.Length - 1)) ||
            !Append(destination, ref p, ",\"client_id\":"u8) ||
            !Utf8Formatter.TryFormat(clientId, destination[p..], out var written))
        {
            return -1;
        }

        p += written;
        if (!string.IsNullOrEmpty(clientIp))
        {
            if (!Append(destination, ref p, ",\"client_ip\":\""u8) || destination.Length - p < clientIp.Length + 1)
            {
                return -1;
            }

            p += Encoding.ASCII.GetBytes(clientIp, destination[p..]); // an IP address: ASCII, nothing to escape
            destination[p++] = (byte)'"';
        }

        if (nonce is not null)
        {
            // Raw URL-safe base64: ASCII, nothing to escape.
            if (!Append(destination, ref p, ",\"nonce\":\""u8) || destination.Length - p < nonce.Length + 1)
            {
                return -1;
            }

            p += Encoding.ASCII.GetBytes(nonce, destination[p..]);
            destination[p++] = (byte)'"';
        }

        return Append(destination, ref p, "}\r\n"u8) ? p : -1;
    }

    private static bool Append(Span<byte> destination, ref int position, ReadOnlySpan<byte> bytes)
    {
        if (!bytes.TryCopyTo(destination[position..]))
        {
            return false;
        }

        position += bytes.Length;
        return true;
    }

    internal ServerInfo CreateInfo(ClientConnection client)
    {
        var info = CreateInfo(client.Id, client.RemoteIp);
        info.AuthRequired |= client.IsWebSocket && Options.WebSocket is { AuthOverride: true };
        info.Nonce = client.Nonce;
        return info;
    }

    /// <summary>INFO for WebSocket clients when only the websocket block asks for authorization (nats-server's authOverride).</summary>
    private byte[] WebSocketInfoJson()
    {
        var info = _info.Clone();
        info.AuthRequired = true;
        return JsonSerializer.SerializeToUtf8Bytes(info, NatsJsonContext.Default.ServerInfo);
    }

    internal ServerInfo CreateInfo(ulong clientId, string? clientIp)
    {
        var info = _info.Clone();
        info.ClientId = clientId;
        info.ClientIp = string.IsNullOrEmpty(clientIp) ? null : clientIp;
        return info;
    }

    /// <summary>Makes a batch of subscription changes effective; completes when every shard involved has published it.</summary>
    internal Task ApplyAsync(IReadOnlyList<SubChange> changes)
    {
        if (changes.Count == 0)
        {
            return Task.CompletedTask;
        }

        // Routes first: an RS+ is queued ahead of any message this client publishes after the SUB.
        Routes?.OnLocalChanges(changes);

        var account = changes[0].Sub.Account;
        var first = changes[0].Sub.Shard;
        var single = true;
        for (var i = 1; i < changes.Count && single; i++)
        {
            single = changes[i].Sub.Shard == first && ReferenceEquals(changes[i].Sub.Account, account);
        }

        if (single && account.Routers is { } routers)
        {
            return routers[first].Ask<SubjectRouter.Protocol.Applied>(ApplyFor(changes), null, CancellationToken.None);
        }

        return ApplyToEveryShardAsync(changes);
    }

    // A batch over several shards (or accounts), or for an account whose shards are still starting.
    private static async Task ApplyToEveryShardAsync(IReadOnlyList<SubChange> changes)
    {
        var tasks = new List<Task>();
        var seen = new HashSet<(Account, int)>();
        foreach (var change in changes)
        {
            if (seen.Add((change.Sub.Account, change.Sub.Shard)))
            {
                var routers = await change.Sub.Account.RoutersAsync().ConfigureAwait(false);
                tasks.Add(routers[change.Sub.Shard].Ask<SubjectRouter.Protocol.Applied>(ApplyFor(changes), null, CancellationToken.None));
            }
        }

        await Task.WhenAll(tasks).ConfigureAwait(false);
    }

    // The shard answers the ask's temporary actor; no timeout (a shard that restarts answers after its rebuild).
    private static Func<IActorRef, object> ApplyFor(IReadOnlyList<SubChange> changes) =>
        replyTo => new SubjectRouter.Protocol.Apply(changes, replyTo);

    /// <summary>Like <see cref="ApplyAsync"/>, for removals nobody waits on (a closing client, auto-unsubscribe).</summary>
    internal void ApplyWithoutWaiting(IReadOnlyList<SubChange> changes)
    {
        Routes?.OnLocalChanges(changes);
        var seen = new HashSet<(Account, int)>();
        foreach (var change in changes)
        {
            if (!seen.Add((change.Sub.Account, change.Sub.Shard)))
            {
                continue;
            }

            if (change.Sub.Account.Routers is { } routers)
            {
                routers[change.Sub.Shard].Tell(new SubjectRouter.Protocol.Apply(changes, null));
            }
            else
            {
                _ = TellWhenStartedAsync(change.Sub.Account, change.Sub.Shard, changes);
            }
        }
    }

    private static async Task TellWhenStartedAsync(Account account, int shard, IReadOnlyList<SubChange> changes)
    {
        var routers = await account.RoutersAsync().ConfigureAwait(false);
        routers[shard].Tell(new SubjectRouter.Protocol.Apply(changes, null));
    }

    /// <summary>
    /// An MQTT CONNECT's credentials, as nats-server: the <c>mqtt.authorization</c> user or token
    /// when set (the token is sent as the password); else, with <c>mqtt.tls.verify_and_map</c>, the
    /// client certificate's user; else <c>mqtt.no_auth_user</c> for a client
    /// without a user name; else the server's own users, user or token (the password doubling as the token).
    /// </summary>
    internal AuthResult AuthenticateMqtt(string? user, string? password, X509Certificate2? clientCertificate = null)
    {
        var mqtt = Options.Mqtt;
        if (mqtt?.Username is { } mqttUser)
        {
            return user == mqttUser && SecretEquals(mqtt.Password, password) ? new AuthResult(true, user, null) : AuthResult.Denied;
        }

        if (mqtt?.Token is { } token)
        {
            return SecretEquals(token, password) ? new AuthResult(true, null, null) : AuthResult.Denied;
        }

        if (mqtt?.Tls is { MapCertificateToUser: true } && Options.Users.Count > 0)
        {
            // mqtt.tls.verify_and_map: the certificate alone names the user, as for NATS clients.
            return clientCertificate is not null && CertificateUserMap.Find(clientCertificate, Options.Users) is { } mapped
                ? new AuthResult(true, mapped.User, mapped.Permissions ?? Options.DefaultPermissions)
                : AuthResult.Denied;
        }

        if (user is null && mqtt?.NoAuthUser is { } noAuthUser)
        {
            UserEntry? entry;
            lock (_authLock)
            {
                entry = Options.Users.Find(u => u.User == noAuthUser);
            }

            return entry is null ? AuthResult.Denied : new AuthResult(true, entry.User, entry.Permissions ?? Options.DefaultPermissions);
        }

        return Authenticate(new ConnectOptions { User = user, Pass = password, AuthToken = password });
    }

    /// <summary>The client listener's TLS (the handshake each accepted socket goes through), or null for plain TCP.</summary>
    public TlsTransport? Tls { get; }

    /// <summary>The MQTT listener's TLS (<c>mqtt.tls</c>), or null for plain TCP.</summary>
    public TlsTransport? MqttTls { get; }

    /// <summary>The <c>cluster { tls { } }</c> transport: both sides of every route link; null for plain routes.</summary>
    public TlsTransport? RouteTls { get; }

    /// <summary>
    /// Checks a CONNECT's credentials. With <c>verify_and_map</c> and users configured, the client
    /// certificate alone names the user (nats-server's checkClientTLSCertSubject); one that names no
    /// configured user is refused.
    /// </summary>
    /// <remarks>
    /// <paramref name="nonce"/> is the one this client's INFO carried (nkey and JWT users sign it);
    /// <paramref name="remoteIp"/> is checked against a user JWT's source networks.
    /// </remarks>
    internal AuthResult Authenticate(ConnectOptions connect, X509Certificate2? clientCertificate = null, bool webSocket = false,
        byte[]? nonce = null, string? remoteIp = null)
    {
        lock (_authLock)
        {
            return AuthenticateUnderLock(connect, clientCertificate, webSocket, nonce, remoteIp);
        }
    }

    private AuthResult AuthenticateUnderLock(ConnectOptions connect, X509Certificate2? clientCertificate, bool webSocket, byte[]? nonce, string? remoteIp)
    {
        var o = Options;
        if (webSocket && o.WebSocket is { AuthOverride: true } ws)
        {
            return AuthenticateWebSocket(connect, ws);
        }

        if (!o.AuthRequired)
        {
            return new AuthResult(true, null, null);
        }

        if (Trust is { } trust)
        {
            // Operator mode: a user JWT is required, whatever else the CONNECT carries.
            // Each account JWT's users live in an account named by its public key, as nats-server names it.
            var result = trust.Authenticate(connect, nonce, webSocket ? "WEBSOCKET" : "STANDARD", remoteIp, DateTimeOffset.UtcNow.ToUnixTimeSeconds());
            return result is { Succeeded: true, AccountKey: { } key } ? result with { Account = Accounts.GetOrCreate(key) } : result;
        }

        if (o.NkeyUsers.Count > 0 && connect.Nkey is not null)
        {
            return AuthenticateNkey(connect, nonce);
        }

        // The listener's own block decides (nats-server's tlsMap: the websocket block's for WebSocket clients).
        var tls = webSocket ? o.WebSocket?.Tls : o.Tls;
        if (tls is { MapCertificateToUser: true } && o.Users.Count > 0)
        {
            return clientCertificate is not null && CertificateUserMap.Find(clientCertificate, o.Users) is { } mapped
                ? new AuthResult(true, mapped.User, mapped.Permissions ?? o.DefaultPermissions, AccountOf(mapped))
                : AuthResult.Denied;
        }

        if (o.NoAuthUser is { } noAuthUser && string.IsNullOrEmpty(connect.User) && string.IsNullOrEmpty(connect.Pass) &&
            string.IsNullOrEmpty(connect.AuthToken) && string.IsNullOrEmpty(connect.Nkey) && string.IsNullOrEmpty(connect.Jwt))
        {
            // no_auth_user: a client that sends no credentials logs in as that user (nats-server's processClientOrLeafAuthentication).
            foreach (var user in o.Users)
            {
                if (user.User == noAuthUser)
                {
                    return new AuthResult(true, user.User, user.Permissions ?? o.DefaultPermissions, AccountOf(user));
                }
            }
        }

        if (o.Users.Count > 0 && connect.User is not null)
        {
            foreach (var user in o.Users)
            {
                if (user.User == connect.User && SecretEquals(user.Password, connect.Pass))
                {
                    return new AuthResult(true, user.User, user.Permissions ?? o.DefaultPermissions, AccountOf(user));
                }
            }
        }

        if (o.Username is not null && connect.User == o.Username && SecretEquals(o.Password, connect.Pass))
        {
            return new AuthResult(true, o.Username, o.DefaultPermissions);
        }

        if (o.Token is not null && SecretEquals(o.Token, connect.AuthToken))
        {
            return new AuthResult(true, null, o.DefaultPermissions);
        }

        return AuthResult.Denied;
    }

    /// <summary>
    /// A WebSocket client when the websocket block has its own authorization: its user, password,
    /// token and no_auth_user replace the server's; the users list still applies (nats-server's
    /// processClientOrLeafAuthentication with the websocket override).
    /// </summary>
    private AuthResult AuthenticateWebSocket(ConnectOptions connect, WebSocketOptions ws)
    {
        var o = Options;
        var user = connect.User;
        var pass = connect.Pass;
        if (ws.NoAuthUser is { } noAuthUser && user is null && pass is null && connect.AuthToken is null)
        {
            foreach (var entry in o.Users)
            {
                if (entry.User == noAuthUser)
                {
                    return new AuthResult(true, entry.User, entry.Permissions ?? o.DefaultPermissions, AccountOf(entry));
                }
            }
        }

        if (o.Users.Count > 0 && user is not null)
        {
            foreach (var entry in o.Users)
            {
                if (entry.User == user && SecretEquals(entry.Password, pass))
                {
                    return new AuthResult(true, entry.User, entry.Permissions ?? o.DefaultPermissions, AccountOf(entry));
                }
            }

            return AuthResult.Denied;
        }

        if (ws.Username is not null && user == ws.Username && SecretEquals(ws.Password, pass))
        {
            return new AuthResult(true, ws.Username, null);
        }

        if (ws.Token is not null && SecretEquals(ws.Token, connect.AuthToken))
        {
            return new AuthResult(true, null, null);
        }

        return AuthResult.Denied;
    }

    /// <summary>The account a configured user logs into (null: the global account).</summary>
    private Account? AccountOf(UserEntry user) => user.Account is { } name ? Accounts.GetOrCreate(name) : null;

    internal static bool SecretEquals(string? expected, string? given) =>
        expected is not null && given is not null &&
        CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(expected), Encoding.UTF8.GetBytes(given));

    private static string NewServerId()
    {
        // nats-server ids are 56 characters of base32 starting with 'N' (a server public nkey).
        const string Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        Span<char> id = stackalloc char[56];
        id[0] = 'N';
        for (var i = 1; i < id.Length; i++)
        {
            id[i] = Alphabet[RandomNumberGenerator.GetInt32(Alphabet.Length)];
        }

        return new string(id);
    }
}

/// <summary>One account as /accountz?acc= shows it.</summary>
public sealed record AccountSummary(
    string Name,
    int ClientConnections,
    int Subscriptions,
    bool JetStream,
    IReadOnlyList<ExportOptions> Exports,
    IReadOnlyList<ImportOptions> Imports);

/// <summary>One route as /routez shows it.</summary>
public sealed record RouteSummary(
    ulong Rid,
    string RemoteId,
    string RemoteName,
    bool DidSolicit,
    bool IsConfigured,
    string Ip,
    int Port,
    DateTime Start,
    DateTime LastActivity,
    long PendingBytes,
    long InMsgs,
    long OutMsgs,
    long InBytes,
    long OutBytes,
    int Subscriptions);

/// <summary>One connection as /connz shows it.</summary>
public sealed record ConnectionInfo(
    ulong Cid,
    string Ip,
    int Port,
    DateTime Start,
    DateTime LastActivity,
    string? Name,
    string? Lang,
    string? Version,
    string? AuthorizedUser,
    long InMsgs,
    long InBytes,
    long OutMsgs,
    long OutBytes,
    long PendingBytes,
    IReadOnlyList<string> Subscriptions,
    DateTime? Stop,
    string? Reason,
    string? TlsVersion = null,
    string? TlsCipherSuite = null,
    string Type = ConnectionTypes.Nats,
    string? MqttClient = null,
    string Account = "$G",
    TimeSpan Rtt = default);
