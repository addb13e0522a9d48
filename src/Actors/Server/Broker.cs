using System.Net.Sockets;
using System.Security.Cryptography;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Cluster;
using Courier.Actors.Connections;
using Courier.Actors.Hosting;
using Courier.Actors.JetStream;
using Courier.Actors.Raft;
using Courier.Actors.Routing;
using Courier.Actors.Server.Authentication;
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

    private readonly ILoggerFactory _loggerFactory;
    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, Task> _jetStreamStarts = new(StringComparer.Ordinal);
    private IActorRef _connections = ActorRefs.Nobody;
    private MqttContext? _mqttClients;
    private RouteRaftTransport? _raftTransport;
    private RouteLinkContext? _routeLinks;
    private LeafLinkContext? _leafLinks;
    private IActorRef _leafManager = ActorRefs.Nobody;
    private IActorRef _gatewayManager = ActorRefs.Nobody;
    private GatewayLinkContext? _gatewayLinks;
    private bool _ownsSystem;

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
        Authentication = new Authenticator(options, Trust, Accounts.GetOrCreate);

        // Operator mode: the accounts the resolver holds at startup, with their JWTs' exports and imports.
        Accounts.Configure(Trust is null ? options.Accounts : [.. options.Accounts, .. Trust.KnownAccounts()]);
        SystemAccount = SystemAccountName() is { } systemName ? Accounts.GetOrCreate(systemName) : null;
        Tls = options.Tls is { } tls ? new TlsTransport(tls) : null;
        MqttTls = options.Mqtt?.Tls is { } mqttTls ? new TlsTransport(mqttTls) : null;
        RouteTls = options.Cluster.Tls is { } routeTls ? new TlsTransport(routeTls) : null;
        LeafTls = options.LeafNodes.Tls is { } leafTls ? new TlsTransport(leafTls) : null;
        GatewayTls = options.Gateway.Tls is { } gatewayTls ? new TlsTransport(gatewayTls) : null;
        Info = new ClientInfo(new ServerInfo
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
        }, options.WebSocket);
        Routes = options.Cluster.Enabled ? new RouteTable(ServerId, options.Cluster.Name) : null;
        Leafs = options.LeafNodes.Enabled || options.LeafNodes.Remotes.Count > 0 ? new Leaf.LeafTable() : null;
        Gateways = options.Gateway.Enabled ? new Gateway.GatewayTable(options.Gateway.Name!, ServerId) : null;
        Subscriptions = new SubscriptionChanges(Routes, Leafs, Gateways);
        ClusterView = new ClusterView(options, ServerId, ServerName, Routes, Info, Registry);
        if (Routes is not null)
        {
            Routes.Changed += ClusterView.OnRoutesChanged;
        }
        Monitoring = new MonitoringSnapshots(Registry, Accounts, Routes, Stats, () => JetStream);
        Connections = new ConnectionContext(options, Logger, Accounts, Registry, Subscriptions, Stats) { Gateways = Gateways };
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

        if (Options.JetStream)
        {
            // A wrong or missing jetstream.key stops the start here, before anything opens a store.
            Courier.Actors.JetStream.JetStreamKeyCheck.Verify(Path.Combine(Options.EffectiveStoreDir, "jetstream"), Options.JetStreamEncryption);
        }

        _ownsSystem = system is null;
        System = system ?? await Task.Run(() => ActorSystemConfig.CreateSystem(ActorSystemConfig.Build(Options, ClusterView.MemberConfig()), _loggerFactory, Options.JetStream ? Options.JetStreamEncryption : null)).ConfigureAwait(false);
        // Every account's shards exist before any SUB can be routed to them.
        await Accounts.Start(System).ConfigureAwait(false);
        await StartImportsAsync().ConfigureAwait(false);
        _connections = System.ActorOf(ConnectionSupervisor.Props(Options, Registry, Stats, this), "connections");
        if (SystemAccount is { } systemAccount)
        {
            var eventsContext = new Events.SystemEventsContext(Options, ServerId, ServerName, Routes, Registry, Accounts, Trust);
            var events = new Events.SystemEvents(eventsContext, systemAccount, new InProcessClient(Connections, InProcessRole.Service, systemAccount));
            await events.StartAsync().ConfigureAwait(false);
            Events = events;
        }

        NatsClients = new ClientContext(Connections, Authentication, Info, Tls, Trust, Events, ActivateAccountAsync);

        if (Options.JetStream)
        {
            await StartJetStreamAsync().ConfigureAwait(false);
        }

        if (Options.Mqtt is not null)
        {
            // Retained messages and persistent sessions come back from the journal before the MQTT
            // listener accepts: a subscriber gets what was retained, a session what was kept for it.
            MqttRetainedStore = System.ActorOf(Mqtt.MqttRetainedStore.Props(MqttRetained), "mqtt-retained");
            MqttSessions = System.ActorOf(Mqtt.MqttSessions.Props(account => new InProcessClient(Connections, InProcessRole.MqttCapture, account), MqttCaptures, Accounts.GetOrCreate, MqttRetained, MqttRetainedStore), "mqtt-sessions");
            await MqttRetainedStore.Ask<Readiness.Ready>(Readiness.AwaitReady.Instance, JetStreamStartTimeout).ConfigureAwait(false);
            await MqttSessions.Ask<Readiness.Ready>(Readiness.AwaitReady.Instance, JetStreamStartTimeout).ConfigureAwait(false);
            _mqttClients = new MqttContext(Connections, Authentication, MqttTls, MqttSessions, MqttCaptures, MqttRetained, MqttRetainedStore, ActivateAccountAsync);
        }

        if (Routes is not null)
        {
            _routeLinks = new RouteLinkContext(Connections, Routes, ClusterView, ServerId, ServerName, RouteTls);
            var routeContext = new RouteContext(Options, ServerId, Routes, Registry, CreateRoute, Logger);
            var routeManager = System.ActorOf(Cluster.RouteManager.Props(routeContext), "routes");
            IActorRef clusterNode = ActorRefs.Nobody;
            string? akkaAddress = null;
            if (System.Settings.ProviderClass.Contains("Cluster", StringComparison.Ordinal))
            {
                akkaAddress = Akka.Cluster.Cluster.Get(System).SelfAddress.ToString();
                ClusterView.Started(routeManager, ActorRefs.Nobody, akkaAddress); // the membership actor reads the route manager
                clusterNode = System.ActorOf(Cluster.ClusterNode.Props(ClusterView, Logger), "cluster-node");
            }

            ClusterView.Started(routeManager, clusterNode, akkaAddress);
        }

        if (Leafs is not null)
        {
            _leafLinks = new LeafLinkContext(Connections, Leafs, ServerId, ServerName, () => Routes?.ClusterName, Authentication, LeafTls);
            var leafContext = new Leaf.LeafContext(Options, Accounts, Registry, CreateLeaf, Logger);
            _leafManager = System.ActorOf(Leaf.LeafManager.Props(leafContext), "leafnodes");
        }

        if (Gateways is not null)
        {
            var gatewayContext = new Gateway.GatewayContext(Options, Gateways, Registry, CreateGateway, Logger);
            var manager = System.ActorOf(Gateway.GatewayManager.Props(gatewayContext), "gateways");
            _gatewayManager = manager;
            _gatewayLinks = new GatewayLinkContext(Connections, Gateways, ServerId, ServerName, (name, urls) => manager.Tell(new Gateway.GatewayManager.Protocol.Implicit(name, urls)), GatewayTls);
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

        await Subscriptions.ApplyAsync(changes).ConfigureAwait(false);
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
            ? new JetStreamCluster(System, Routes, ServerName, Options.Cluster.Name, Options.Tags)
            : null;
        JetStreamCluster = cluster;
        if (cluster is not null)
        {
            // Replicated streams' Raft groups: one host for the node, its frames on $NRG.<member> over the
            // route links (in the system account when there is one, as nats-server's).
            var transport = new RouteRaftTransport(new InProcessClient(Connections, InProcessRole.JetStream, SystemAccount));
            var settings = new RaftHostSettings { NodeId = cluster.MemberId, Directory = Path.Combine(Options.EffectiveStoreDir, "jetstream", "_raft"), Encryption = Options.JetStreamEncryption };
            Directory.CreateDirectory(settings.Directory);
            cluster.RaftHost = System!.ActorOf(RaftHost.Props(settings, transport), "raft");
            transport.Listen(cluster.MemberId, cluster.RaftHost);
            _raftTransport = transport;
        }

        // Without accounts (and not in operator mode, whose accounts come from the resolver): one
        // JetStream, the global account's.
        if (Options.Accounts.Count == 0 && Trust is null)
        {
            var global = System!.ActorOf(JetStreamApi.Props(JetStreamSettings.From(Options) with { FirstRequest = StartWarmUp }, () => new InProcessClient(Connections, InProcessRole.JetStream), Space, cluster: cluster, account: Accounts.Global.Name), "jetstream");
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

        await Subscriptions.ApplyAsync(disabled).ConfigureAwait(false);
    }

    /// <summary>One account's JetStream API (its streams, its limits), started and ready; set as the account's.</summary>
    private async Task<IActorRef> StartAccountJetStreamAsync(Account account, AccountJetStreamLimits limits, string actorName)
    {
        var settings = JetStreamSettings.ForAccount(Options, account.Name, limits) with { FirstRequest = StartWarmUp };
        account.Streams = new LocalStreams(prefix => account.JetStreamExporterFor(prefix)?.Streams);
        var api = System!.ActorOf(JetStreamApi.Props(settings, () => new InProcessClient(Connections, InProcessRole.JetStream, account), account.Space, account.Streams, JetStreamCluster, account.Name), actorName);
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
                await Subscriptions.ApplyAsync([AccountClient(account).AddImportSubscription(JetStreamApi.InfoSubject, ImportBinding.JetStreamDisabled())]).ConfigureAwait(false);
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
    private InProcessConnection AccountClient(Account account)
    {
        if (account.ImportClient is { } existing)
        {
            return existing;
        }

        var client = InProcessConnection.Create(Connections, account, InProcessRole.Service);
        account.ImportClient = client;
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



    /// <summary>The node's view of the cluster for JetStream (/jsz's meta_cluster); null without a <c>cluster { }</c> or JetStream.</summary>
    internal JetStreamCluster? JetStreamCluster { get; private set; }

    public ServerOptions Options { get; }

    public string ServerId { get; }

    public string ServerName { get; }

    public DateTime Started { get; } = DateTime.UtcNow;

    public ServerStats Stats { get; } = new();

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

    internal ICollection<Connection> Clients => Registry.Clients;

    /// <summary>Sets the port listeners actually bound (for INFO when the configured port was -1).</summary>
    public void SetListenPort(int port)
    {
        Info.SetPort(port);
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

        ClusterView.SetRoutePort(routePort);
        ClusterView.RouteManager.Tell(new RouteManager.Protocol.StartRouting(Options.Cluster.Routes));
    }

    /// <summary>Takes ownership of an accepted route socket.</summary>
    public void AcceptRoute(Socket socket)
    {
        socket.NoDelay = true;
        ClusterView.RouteManager.Tell(new RouteManager.Protocol.Accepted(socket));
    }

    /// <summary>Creates the data path of a route link (<see cref="Cluster.RouteActor"/>): the <see cref="RouteContext"/>'s factory.</summary>
    private RouteConnection CreateRoute(Stream stream, Socket socket, ulong id, IActorRef owner, RouteLink link) =>
        new(_routeLinks!, stream, socket, id, owner, link);

    /// <summary>Dials the remotes of <c>leafnodes.remotes</c> (once the listeners accept: the node serves its clients meanwhile).</summary>
    public void StartLeafNodes() => _leafManager.Tell(Leaf.LeafManager.Protocol.Start.Instance);

    /// <summary>Takes ownership of a socket accepted on the leaf node port.</summary>
    public void AcceptLeaf(Socket socket)
    {
        socket.NoDelay = true;
        _leafManager.Tell(new Leaf.LeafManager.Protocol.Accepted(socket));
    }

    /// <summary>Creates the data path of a leaf node link (<see cref="Leaf.LeafActor"/>): the <see cref="Leaf.LeafContext"/>'s factory.</summary>
    private LeafConnection CreateLeaf(Socket socket, ulong id, IActorRef owner, Leaf.LeafLink link, Accounts.Account account) =>
        new(_leafLinks!, new NetworkStream(socket, ownsSocket: false), socket, id, owner, link, account);

    /// <summary>Dials the remote gateways of <c>gateway.gateways</c> (once the listeners accept).</summary>
    public void StartGateways() => _gatewayManager.Tell(Gateway.GatewayManager.Protocol.Start.Instance);

    /// <summary>Takes ownership of a socket accepted on the gateway port.</summary>
    public void AcceptGateway(Socket socket)
    {
        socket.NoDelay = true;
        _gatewayManager.Tell(new Gateway.GatewayManager.Protocol.Accepted(socket));
    }

    /// <summary>Creates the data path of a gateway link (<see cref="Gateway.GatewayActor"/>): the <see cref="Gateway.GatewayContext"/>'s factory.</summary>
    private GatewayConnection CreateGateway(Socket socket, ulong id, IActorRef owner, Gateway.GatewayLink link) =>
        new(_gatewayLinks!, new NetworkStream(socket, ownsSocket: false), socket, id, owner, link);

    /// <summary>The node's gateway links and the interest told over them; null without <c>gateway { }</c>.</summary>
    internal Gateway.GatewayTable? Gateways { get; }

    /// <summary>The node's leaf node links and the interest told to them; null without <c>leafnodes { }</c>.</summary>
    internal Leaf.LeafTable? Leafs { get; }

    /// <summary>The client port actually listened on.</summary>
    public int ListenPort => Info.Port;


    /// <inheritdoc />
    ClientConnection IConnectionFactory.Create(Stream stream, Socket? socket, ulong id, IActorRef owner) => new(NatsClients, stream, socket, id, owner);

    /// <inheritdoc />
    MqttConnection IConnectionFactory.CreateMqtt(Stream stream, Socket socket, ulong id, IActorRef owner) =>
        new(_mqttClients ?? throw new InvalidOperationException("MQTT is not configured"), stream, socket, id, owner);

    /// <inheritdoc />
    byte[] IConnectionFactory.RejectionInfo(ulong id) => ProtocolWriter.Info(Info.Create(id, null));

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

        _leafManager.Tell(Leaf.LeafManager.Protocol.Stop.Instance);
        _gatewayManager.Tell(Gateway.GatewayManager.Protocol.Stop.Instance);
        if (_raftTransport is { } raft)
        {
            await raft.DisposeAsync().ConfigureAwait(false);
        }

        if (_ownsSystem)
        {
            await system.Terminate().ConfigureAwait(false);
            return;
        }

        // A host's system (a test's) outlives the broker: stop just the broker's actors, children first.
        var jetStreams = Accounts.All.Select(a => a.JetStream).Where(j => j is not null && !ReferenceEquals(j, JetStream));
        foreach (var actor in new[] { JetStream }.Concat(jetStreams).Concat([JetStreamCluster?.RaftHost, ClusterView.ClusterNode, ClusterView.RouteManager, _leafManager, _gatewayManager, _connections]).Concat(Accounts.Supervisors))
        {
            if (actor is not null && !actor.IsNobody())
            {
                await actor.GracefulStop(TimeSpan.FromSeconds(30)).ConfigureAwait(false);
            }
        }
    }

    internal ulong NextClientId() => Registry.NextClientId();

    internal void Register(Connection client) => Registry.Register(client);

    internal void Unregister(Connection client, Subscription[] subscriptions) => Registry.Unregister(client, subscriptions);

    /// <summary>Puts SUB/UNSUB batches in effect in the routes and router shards.</summary>
    internal SubscriptionChanges Subscriptions { get; }

    /// <summary>What every connection uses of the node (in-process ones included).</summary>
    internal ConnectionContext Connections { get; }

    /// <summary>What a NATS client uses of the node; made when the broker has started.</summary>
    internal ClientContext NatsClients { get; private set; } = null!;

    /// <summary>The node's view of its cluster: routes' INFO, connect_urls, membership.</summary>
    internal ClusterView ClusterView { get; }

    /// <summary>Snapshots of the node for monitoring.</summary>
    internal MonitoringSnapshots Monitoring { get; }

    /// <summary>The INFO clients get.</summary>
    internal ClientInfo Info { get; }

    /// <summary>Checks logins: the authorization in force, the INFO nonce, operator-mode account admission.</summary>
    internal Authenticator Authentication { get; }

    /// <summary>Operator mode's trusted keys and account resolver; null without an <c>operator</c>.</summary>
    internal OperatorTrust? Trust { get; }

    /// <summary>The client listener's TLS (the handshake each accepted socket goes through), or null for plain TCP.</summary>
    public TlsTransport? Tls { get; private set; }

    /// <summary>The MQTT listener's TLS (<c>mqtt.tls</c>), or null for plain TCP.</summary>
    public TlsTransport? MqttTls { get; }

    /// <summary>The <c>cluster { tls { } }</c> transport: both sides of every route link; null for plain routes.</summary>
    public TlsTransport? RouteTls { get; }

    /// <summary>The <c>leafnodes { tls { } }</c> block's TLS layer, for accepted leaf links; null without one.</summary>
    public TlsTransport? LeafTls { get; }

    /// <summary>The <c>gateway { tls { } }</c> transport: both sides of every gateway link; null for plain links.</summary>
    public TlsTransport? GatewayTls { get; }

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
