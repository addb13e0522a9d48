using Courier.Storage;

namespace Courier.Actors.Server;

/// <summary>
/// Everything the broker needs to know about how it runs. Filled by the gateway from flags and the
/// config file (nats-server's names in the comments); defaults are nats-server's.
/// </summary>
public sealed class ServerOptions
{
    /// <summary>Client listen host (<c>host</c>, <c>-a</c>).</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary>Client listen port (<c>port</c>, <c>-p</c>); -1 picks a random free port; 0 in the file or flags means 4222.</summary>
    public int Port { get; set; } = 4222;

    /// <summary>Server name (<c>server_name</c>, <c>-n</c>); defaults to the server id.</summary>
    public string? ServerName { get; set; }

    /// <summary>nats-server's <c>server_tags</c>, lowercased: what stream placement (<c>placement.tags</c>) chooses servers by.</summary>
    public List<string> Tags { get; } = [];

    /// <summary>Monitoring host (<c>http</c> host part / <c>http_host</c>); defaults to <see cref="Host"/>.</summary>
    public string? HttpHost { get; set; }

    /// <summary>Monitoring port (<c>http_port</c>, <c>-m</c>); 0 disables, -1 picks a random port.</summary>
    public int HttpPort { get; set; }

    /// <summary>HTTPS monitoring port (<c>https_port</c>), served with <see cref="Tls"/>; 0 disables, -1 picks a random port.</summary>
    public int HttpsPort { get; set; }

    /// <summary>The client listener's <c>tls { }</c> block (or <c>--tls*</c> flags); null means plain TCP.</summary>
    public TlsOptions? Tls { get; set; }

    /// <summary>Bytes; <c>max_payload</c>, nats-server default 1 MB.</summary>
    public int MaxPayload { get; set; } = 1024 * 1024;

    /// <summary>Bytes; <c>max_control_line</c>, nats-server default 4 KB.</summary>
    public int MaxControlLine { get; set; } = 4096;

    /// <summary>Bytes of outbound data buffered per client before it is a slow consumer; <c>max_pending</c>, default 64 MB.</summary>
    public long MaxPending { get; set; } = 64L * 1024 * 1024;

    /// <summary>
    /// <c>max_connections</c>, default 64K. Negative means no client connection is accepted
    /// (<c>max_connections: 0</c> in the file maps here, as nats-server).
    /// </summary>
    public int MaxConnections { get; set; } = 64 * 1024;

    /// <summary><c>max_subscriptions</c> per connection; 0 means unlimited.</summary>
    public int MaxSubscriptions { get; set; }

    /// <summary><c>ping_interval</c>, default 2 minutes.</summary>
    public TimeSpan PingInterval { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary><c>ping_max</c>: unanswered server PINGs before the connection is stale; default 2.</summary>
    public int MaxPingsOut { get; set; } = 2;

    /// <summary><c>authorization.timeout</c>: time a client has to send CONNECT; default 2 s.</summary>
    public TimeSpan AuthTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary><c>write_deadline</c>: a write blocked this long closes the client as a slow consumer; default 10 s.</summary>
    public TimeSpan WriteDeadline { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary><c>authorization.token</c>, <c>--auth</c>.</summary>
    public string? Token { get; set; }

    /// <summary><c>authorization.user</c>, <c>--user</c>.</summary>
    public string? Username { get; set; }

    /// <summary><c>authorization.password</c>, <c>--pass</c>.</summary>
    public string? Password { get; set; }

    /// <summary><c>authorization.users</c>: users with optional per-user permissions.</summary>
    public List<UserEntry> Users { get; } = [];

    /// <summary><c>accounts { }</c>: the configured accounts (their users are in <see cref="Users"/>, naming them).</summary>
    public List<AccountOptions> Accounts { get; } = [];

    /// <summary><c>no_auth_user</c>: the user a client that sends no credentials logs in as.</summary>
    public string? NoAuthUser { get; set; }

    /// <summary>The config file has an <c>authorization {}</c> block (then no implicit no-auth user is added).</summary>
    public bool AuthorizationBlock { get; set; }

    /// <summary><c>system_account</c> outside operator mode: the account of the system events and requests (default <c>$SYS</c>).</summary>
    public string? SystemAccount { get; set; }

    /// <summary><c>no_system_account</c>: no system account is made when none is configured.</summary>
    public bool NoSystemAccount { get; set; }

    /// <summary><c>authorization.permissions</c>: permissions for the single user/token form.</summary>
    public Permissions? DefaultPermissions { get; set; }

    /// <summary><c>jetstream</c> enabled (<c>-js</c>).</summary>
    public bool JetStream { get; set; }

    /// <summary><c>jetstream.store_dir</c>, <c>-sd</c>.</summary>
    public string? StoreDir { get; set; }

    /// <summary>The store directory in use: <see cref="StoreDir"/>, or nats-server's default under the temp directory.</summary>
    public string EffectiveStoreDir => StoreDir ?? Path.Combine(Path.GetTempPath(), "nats");

    /// <summary>The global account's JetStream directory (<c>&lt;store_dir&gt;/jetstream/$G</c>): streams, consumer journal, snapshots.</summary>
    public string JetStreamAccountDirectory => Path.Combine(EffectiveStoreDir, "jetstream", "$G");

    /// <summary>Bytes; <c>jetstream.max_memory_store</c>; -1 means unlimited (nats-server: a share of RAM).</summary>
    public long MaxMemoryStore { get; set; } = -1;

    /// <summary>Bytes; <c>jetstream.max_file_store</c>; -1 means unlimited.</summary>
    public long MaxFileStore { get; set; } = -1;

    /// <summary><c>jetstream.domain</c>: the API is served on <c>$JS.&lt;domain&gt;.API.&gt;</c> as well, and answers name it.</summary>
    public string? JetStreamDomain { get; set; }

    /// <summary>
    /// <c>jetstream.sync_interval</c> (alias <c>sync</c>): when file stores fsync. Courier's default is
    /// <see cref="SyncPolicy.Always"/>, an fsync before every PubAck (DESIGN.md invariant 4), where
    /// nats-server's is every 2 minutes; a duration trades power-loss durability of that long for
    /// throughput (a kill -9 still loses nothing acknowledged).
    /// </summary>
    public SyncPolicy JetStreamSync { get; set; } = SyncPolicy.Always;

    /// <summary>
    /// <c>jetstream.key</c> (aliases <c>ek</c>, <c>encryption_key</c>): encryption at rest of every file
    /// JetStream writes (streams, consumers, journal, snapshots, Raft logs); null: plaintext.
    /// </summary>
    public string? JetStreamKey { get; set; }

    /// <summary><c>jetstream.prev_key</c> (aliases <c>prev_ek</c>, <c>prev_encryption_key</c>): the key to rotate from.</summary>
    public string? JetStreamPreviousKey { get; set; }

    /// <summary><c>jetstream.cipher</c>: <c>chachapoly</c> (<c>chacha</c>, the default) or <c>aes</c>.</summary>
    public StoreCipher JetStreamCipher { get; set; } = StoreCipher.ChaCha;

    /// <summary>The encryption at rest the options ask for (a new instance per call: take it once); null without <see cref="JetStreamKey"/>.</summary>
    public StoreEncryption? JetStreamEncryption =>
        string.IsNullOrEmpty(JetStreamKey) ? null : new StoreEncryption(JetStreamKey, JetStreamCipher, JetStreamPreviousKey);

    /// <summary><c>debug</c>, <c>-D</c>.</summary>
    public bool Debug { get; set; }

    /// <summary><c>trace</c>, <c>-V</c>.</summary>
    public bool Trace { get; set; }

    /// <summary><c>log_file</c>, <c>-l</c>.</summary>
    public string? LogFile { get; set; }

    /// <summary><c>logtime</c>, <c>-T</c>: log lines carry a timestamp (nats-server's default).</summary>
    public bool Logtime { get; set; } = true;

    /// <summary><c>logfile_size_limit</c>: the log file is rotated past this many bytes; 0 never.</summary>
    public long LogSizeLimit { get; set; }

    /// <summary><c>lame_duck_duration</c>: how long lame duck mode spreads the closing of clients (nats-server: 2 minutes).</summary>
    public TimeSpan LameDuckDuration { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary><c>lame_duck_grace_period</c>: how long lame duck mode waits before it closes the first client (nats-server: 10 s).</summary>
    public TimeSpan LameDuckGracePeriod { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// <c>idle_poll</c> (Courier's own key): how long after network activity one CPU is kept out of its
    /// idle state by a lowest-priority spin, so the next wake-up is cheap (see Hosting/IdlePoll.cs); 0 off.
    /// </summary>
    public TimeSpan IdlePoll { get; set; } = TimeSpan.FromMicroseconds(100);

    /// <summary><c>ports_file_dir</c>, <c>--ports_file_dir</c>.</summary>
    public string? PortsFileDir { get; set; }

    /// <summary><c>pid_file</c>, <c>-P</c>.</summary>
    public string? PidFile { get; set; }

    /// <summary>The config file this came from (<c>-c</c>), if any.</summary>
    public string? ConfigFile { get; set; }

    /// <summary>
    /// The nats-server version whose behaviour Courier implements; sent as INFO <c>version</c>
    /// (config key <c>nats_server_version</c>). Clients gate features on it.
    /// </summary>
    public string NatsServerVersion { get; set; } = "2.10.22";

    /// <summary>The <c>websocket { }</c> block; null when there is none (no WebSocket listener).</summary>
    public WebSocketOptions? WebSocket { get; set; }

    /// <summary>True when any form of client authentication is configured.</summary>
    public bool AuthRequired => Token is not null || Username is not null || Users.Count > 0 || NkeyUsers.Count > 0 || Operator is not null;

    /// <summary>
    /// Whether INFO carries a <c>nonce</c> for the client to sign: nkey users or operator mode are
    /// configured (nats-server's nonceRequired).
    /// </summary>
    public bool NonceRequired => NkeyUsers.Count > 0 || Operator is not null;

    /// <summary><c>authorization.users</c> entries with an <c>nkey</c> instead of a user and password.</summary>
    public List<NkeyUserEntry> NkeyUsers { get; } = [];

    /// <summary>JWT operator mode (<c>operator</c>, <c>resolver</c>, ...); null without an <c>operator</c>.</summary>
    public OperatorOptions? Operator { get; set; }

    /// <summary>The <c>mqtt { }</c> block: null when there is no MQTT listener.</summary>
    public MqttOptions? Mqtt { get; set; }

    /// <summary>The <c>cluster { }</c> block (route listener and routes); <see cref="ClusterOptions.Enabled"/> false without one.</summary>
    public ClusterOptions Cluster { get; } = new();

    /// <summary><c>leafnodes { }</c>: the leaf node listener (this node as a hub) and the remotes it dials (this node as a leaf).</summary>
    public LeafNodeOptions LeafNodes { get; } = new();

    /// <summary><c>gateway { }</c>: this cluster's gateway name, listener and the remote gateways it dials (bound; links not implemented yet).</summary>
    public GatewayOptions Gateway { get; } = new();
}

/// <summary>
/// nats-server's <c>mqtt { host, port, no_auth_user, authorization { username, password, token,
/// timeout }, ack_wait, max_ack_pending, reject_qos2_publish, downgrade_qos2_subscribe, js_api_timeout }</c>
/// and the stream and consumer keys that say what Courier does. MQTT needs JetStream, as in nats-server.
/// </summary>
public sealed class MqttOptions
{
    /// <summary>Listen host (<c>mqtt.host</c>); the server's host when null.</summary>
    public string? Host { get; set; }

    /// <summary>Listen port (<c>mqtt.port</c>); 1883 as nats-server, -1 for a random one.</summary>
    public int Port { get; set; } = 1883;

    /// <summary>
    /// <c>mqtt.no_auth_user</c>: a client that sends no user name is this user of the server's
    /// <c>authorization.users</c> (with its permissions).
    /// </summary>
    public string? NoAuthUser { get; set; }

    /// <summary><c>mqtt.authorization.username</c>: when set, the only credentials MQTT clients may use.</summary>
    public string? Username { get; set; }

    /// <summary><c>mqtt.authorization.password</c>.</summary>
    public string? Password { get; set; }

    /// <summary><c>mqtt.authorization.token</c>: when set, MQTT clients send it as their password.</summary>
    public string? Token { get; set; }

    /// <summary><c>mqtt.authorization.timeout</c>: time allowed for the CONNECT packet; the server's auth timeout when null.</summary>
    public TimeSpan? AuthTimeout { get; set; }

    /// <summary>
    /// <c>mqtt.tls { }</c>: MQTT over TLS on the MQTT port, the handshake first (MQTT has no INFO). Its
    /// <c>verify</c> and <c>verify_and_map</c> apply to MQTT clients in place of the client listener's block.
    /// </summary>
    public TlsOptions? Tls { get; set; }

    /// <summary><c>mqtt.ack_wait</c>: how long a QoS 1 delivery waits for its PUBACK before redelivery (30 s, as nats-server).</summary>
    public TimeSpan AckWait { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary><c>mqtt.max_ack_pending</c>: QoS 1 deliveries in flight per subscription (1024, as nats-server; at most 65535).</summary>
    public int MaxAckPending { get; set; } = 1024;

    /// <summary><c>mqtt.reject_qos2_publish</c> (nats-server 2.10): a QoS 2 PUBLISH closes the client; an MQTT 5.0 CONNACK says Maximum QoS 1.</summary>
    public bool RejectQos2Publish { get; set; }

    /// <summary><c>mqtt.downgrade_qos2_subscribe</c> (nats-server 2.10): a QoS 2 subscription is granted QoS 1.</summary>
    public bool DowngradeQos2Subscribe { get; set; }

    /// <summary>
    /// <c>mqtt.js_api_timeout</c>: how long an MQTT client waits for the server's own storage (the session
    /// registry at CONNECT, a journal write before an acknowledgement) before it is refused or closed
    /// (5 s; nats-server's bound of its MQTT requests to JetStream, 4 s there).
    /// </summary>
    public TimeSpan JsApiTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>True when the <c>mqtt.authorization</c> block sets its own credentials.</summary>
    public bool HasOwnAuth => Username is not null || Token is not null;
}

/// <summary>
/// One entry of <c>authorization.users</c>, or of an account's <c>users</c>: then <see cref="Account"/>
/// names the account it logs into (null: the global account <c>$G</c>).
/// </summary>
public sealed record UserEntry(string User, string? Password, Permissions? Permissions, string? Account = null);

/// <summary>
/// Publish and subscribe permissions, as nats-server's <c>permissions</c> block; <see cref="Responses"/>
/// is its <c>allow_responses</c>.
/// </summary>
public sealed record Permissions(SubjectPermission? Publish, SubjectPermission? Subscribe, ResponsePermission? Responses = null);

/// <summary>
/// <c>allow_responses</c>: the user may publish to the reply subject of a message it received, up to
/// <see cref="MaxMessages"/> times (negative: no limit) within <see cref="Expires"/> (negative: never
/// expires). nats-server's defaults: one response within 2 minutes.
/// </summary>
public sealed record ResponsePermission(int MaxMessages = 1, TimeSpan? Expires = null)
{
    /// <summary>How long a reply subject may be answered (2 minutes unless set).</summary>
    public TimeSpan ExpiresAfter => Expires ?? TimeSpan.FromMinutes(2);
}

/// <summary>
/// Allow and deny lists of subjects (wildcards allowed). A plain list in the config file is an
/// allow list. Null allow means everything not denied is allowed.
/// </summary>
public sealed record SubjectPermission(IReadOnlyList<string>? Allow, IReadOnlyList<string>? Deny);
