using System.Text.Json.Serialization;
using Courier.Actors.Server;

namespace Courier.Gateway.Monitoring;

/// <summary>/varz, with nats-server's field names for the fields Courier implements.</summary>
internal sealed class Varz
{
    [JsonPropertyName("server_id")] public string ServerId { get; init; } = "";
    [JsonPropertyName("server_name")] public string ServerName { get; init; } = "";
    [JsonPropertyName("version")] public string Version { get; init; } = "";
    [JsonPropertyName("courier_version")] public string CourierVersion { get; init; } = "";
    [JsonPropertyName("tags")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? Tags { get; init; }
    [JsonPropertyName("proto")] public int Proto { get; init; }
    [JsonPropertyName("go")] public string Go { get; init; } = "";
    [JsonPropertyName("host")] public string Host { get; init; } = "";
    [JsonPropertyName("port")] public int Port { get; init; }
    [JsonPropertyName("auth_required")] public bool AuthRequired { get; init; }
    [JsonPropertyName("max_connections")] public int MaxConnections { get; init; }
    [JsonPropertyName("max_subscriptions")] public int MaxSubscriptions { get; init; }
    [JsonPropertyName("ping_interval")] public long PingInterval { get; init; }
    [JsonPropertyName("ping_max")] public int PingMax { get; init; }
    [JsonPropertyName("http_host")] public string HttpHost { get; init; } = "";
    [JsonPropertyName("http_port")] public int HttpPort { get; init; }
    [JsonPropertyName("https_port")] public int HttpsPort { get; init; }
    [JsonPropertyName("tls_required")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TlsRequired { get; init; }
    [JsonPropertyName("tls_verify")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TlsVerify { get; init; }
    [JsonPropertyName("tls_timeout")] public double TlsTimeout { get; init; }
    [JsonPropertyName("auth_timeout")] public double AuthTimeout { get; init; }
    [JsonPropertyName("max_control_line")] public int MaxControlLine { get; init; }
    [JsonPropertyName("max_payload")] public int MaxPayload { get; init; }
    [JsonPropertyName("max_pending")] public long MaxPending { get; init; }
    [JsonPropertyName("write_deadline")] public long WriteDeadline { get; init; }
    [JsonPropertyName("cluster")] public VarzCluster Cluster { get; init; } = new();
    [JsonPropertyName("leaf")] public VarzLeaf Leaf { get; init; } = new();
    [JsonPropertyName("gateway")] public VarzGateway Gateway { get; init; } = new();

    /// <summary>nats-server's MQTTOptsVarz: the mqtt {} block as configured (empty without one).</summary>
    [JsonPropertyName("mqtt")] public VarzMqtt Mqtt { get; init; } = new();

    /// <summary>nats-server's WebsocketOptsVarz: the websocket {} block as configured (empty without one).</summary>
    [JsonPropertyName("websocket")] public VarzWebsocket Websocket { get; init; } = new();
    [JsonPropertyName("connect_urls")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? ConnectUrls { get; init; }
    [JsonPropertyName("jetstream")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public VarzJetStream? JetStream { get; init; }
    [JsonPropertyName("start")] public DateTime Start { get; init; }
    [JsonPropertyName("now")] public DateTime Now { get; init; }
    [JsonPropertyName("uptime")] public string Uptime { get; init; } = "";
    [JsonPropertyName("mem")] public long Mem { get; init; }
    [JsonPropertyName("cores")] public int Cores { get; init; }
    [JsonPropertyName("gomaxprocs")] public int MaxProcs { get; init; }
    [JsonPropertyName("cpu")] public double Cpu { get; init; }
    [JsonPropertyName("connections")] public int Connections { get; init; }
    [JsonPropertyName("total_connections")] public long TotalConnections { get; init; }
    [JsonPropertyName("routes")] public int Routes { get; init; }
    [JsonPropertyName("remotes")] public int Remotes { get; init; }
    [JsonPropertyName("leafnodes")] public int Leafnodes { get; init; }
    [JsonPropertyName("in_msgs")] public long InMsgs { get; init; }
    [JsonPropertyName("out_msgs")] public long OutMsgs { get; init; }
    [JsonPropertyName("in_bytes")] public long InBytes { get; init; }
    [JsonPropertyName("out_bytes")] public long OutBytes { get; init; }
    [JsonPropertyName("slow_consumers")] public long SlowConsumers { get; init; }
    [JsonPropertyName("subscriptions")] public int Subscriptions { get; init; }
    /// <summary>How many times each monitoring page nats-server counts was asked for over HTTP (only those asked for).</summary>
    [JsonPropertyName("http_req_stats")] public Dictionary<string, ulong> HttpReqStats { get; init; } = [];
    [JsonPropertyName("config_load_time")] public DateTime ConfigLoadTime { get; init; }
    [JsonPropertyName("system_account")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? SystemAccount { get; init; }
}

/// <summary>The <c>cluster</c> part of /varz (nats-server's ClusterOptsVarz; empty without a cluster).</summary>
internal sealed class VarzCluster
{
    [JsonPropertyName("name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; init; }
    [JsonPropertyName("addr")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Host { get; init; }
    [JsonPropertyName("cluster_port")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; init; }
    [JsonPropertyName("auth_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double AuthTimeout { get; init; }
    [JsonPropertyName("urls")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? Urls { get; init; }
}

/// <summary>/routez (nats-server's Routez).</summary>
internal sealed class Routez
{
    [JsonPropertyName("server_id")] public string ServerId { get; init; } = "";
    [JsonPropertyName("server_name")] public string ServerName { get; init; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; init; }
    [JsonPropertyName("num_routes")] public int NumRoutes { get; init; }
    [JsonPropertyName("routes")] public IReadOnlyList<RoutezRoute> Routes { get; init; } = [];
}

/// <summary>One route of /routez (nats-server's RouteInfo).</summary>
internal sealed class RoutezRoute
{
    [JsonPropertyName("rid")] public ulong Rid { get; init; }
    [JsonPropertyName("remote_id")] public string RemoteId { get; init; } = "";
    [JsonPropertyName("remote_name")] public string RemoteName { get; init; } = "";
    [JsonPropertyName("did_solicit")] public bool DidSolicit { get; init; }
    [JsonPropertyName("is_configured")] public bool IsConfigured { get; init; }
    [JsonPropertyName("ip")] public string Ip { get; init; } = "";
    [JsonPropertyName("port")] public int Port { get; init; }
    [JsonPropertyName("start")] public DateTime Start { get; init; }
    [JsonPropertyName("last_activity")] public DateTime LastActivity { get; init; }
    [JsonPropertyName("uptime")] public string Uptime { get; init; } = "";
    [JsonPropertyName("idle")] public string Idle { get; init; } = "";
    [JsonPropertyName("pending_size")] public long Pending { get; init; }
    [JsonPropertyName("in_msgs")] public long InMsgs { get; init; }
    [JsonPropertyName("out_msgs")] public long OutMsgs { get; init; }
    [JsonPropertyName("in_bytes")] public long InBytes { get; init; }
    [JsonPropertyName("out_bytes")] public long OutBytes { get; init; }
    [JsonPropertyName("subscriptions")] public int Subscriptions { get; init; }
}

/// <summary>The JetStream part of /varz.</summary>
internal sealed class VarzJetStream
{
    [JsonPropertyName("config")] public VarzJetStreamConfig? Config { get; init; }
}

/// <summary>nats-server's JetStreamConfig, in /varz <c>jetstream.config</c> and /jsz <c>config</c>.</summary>
internal sealed class VarzJetStreamConfig
{
    [JsonPropertyName("max_memory")] public long MaxMemory { get; init; }
    [JsonPropertyName("max_storage")] public long MaxStorage { get; init; }
    [JsonPropertyName("store_dir")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? StoreDir { get; init; }
    [JsonPropertyName("domain")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; init; }

    /// <summary>Nanoseconds between fsyncs under a sync_interval; absent with sync always (nats-server 2.10 names).</summary>
    [JsonPropertyName("sync_interval")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long SyncInterval { get; init; }

    /// <summary>True when every flush fsyncs (Courier's default; nats-server's <c>sync_interval: always</c>).</summary>
    [JsonPropertyName("sync_always")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool SyncAlways { get; init; }

    /// <summary>The server's JetStream config from its options (the store directory given separately).</summary>
    public static VarzJetStreamConfig From(ServerOptions o, string storeDir) => new()
    {
        MaxMemory = o.MaxMemoryStore,
        MaxStorage = o.MaxFileStore,
        StoreDir = storeDir.Length == 0 ? null : storeDir, // omitempty, as nats-server
        Domain = string.IsNullOrEmpty(o.JetStreamDomain) ? null : o.JetStreamDomain,
        SyncInterval = o.JetStreamSync.IsAlways ? 0 : o.JetStreamSync.Period.Ticks * 100,
        SyncAlways = o.JetStreamSync.IsAlways,
    };
}

/// <summary>/connz.</summary>
internal sealed class Connz
{
    [JsonPropertyName("server_id")] public string ServerId { get; init; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; init; }
    [JsonPropertyName("num_connections")] public int NumConnections { get; init; }
    [JsonPropertyName("total")] public int Total { get; init; }
    [JsonPropertyName("offset")] public int Offset { get; init; }
    [JsonPropertyName("limit")] public int Limit { get; init; }
    /// <summary>Null (as nats-server's nil slice) when <c>acc</c> names no account.</summary>
    [JsonPropertyName("connections")] public IReadOnlyList<ConnzConnection>? Connections { get; init; } = [];
}

internal sealed class ConnzConnection
{
    [JsonPropertyName("cid")] public ulong Cid { get; init; }
    [JsonPropertyName("kind")] public string Kind { get; init; } = "Client";
    [JsonPropertyName("type")] public string Type { get; init; } = "nats";
    [JsonPropertyName("ip")] public string Ip { get; init; } = "";
    [JsonPropertyName("port")] public int Port { get; init; }
    [JsonPropertyName("start")] public DateTime Start { get; init; }
    [JsonPropertyName("last_activity")] public DateTime LastActivity { get; init; }
    [JsonPropertyName("uptime")] public string Uptime { get; init; } = "";
    [JsonPropertyName("idle")] public string Idle { get; init; } = "";
    [JsonPropertyName("rtt")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Rtt { get; init; }
    [JsonPropertyName("pending_bytes")] public long PendingBytes { get; init; }
    [JsonPropertyName("in_msgs")] public long InMsgs { get; init; }
    [JsonPropertyName("out_msgs")] public long OutMsgs { get; init; }
    [JsonPropertyName("in_bytes")] public long InBytes { get; init; }
    [JsonPropertyName("out_bytes")] public long OutBytes { get; init; }
    [JsonPropertyName("subscriptions")] public int Subscriptions { get; init; }
    [JsonPropertyName("tls_version")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? TlsVersion { get; init; }
    [JsonPropertyName("tls_cipher_suite")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? TlsCipherSuite { get; init; }
    [JsonPropertyName("name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; init; }
    [JsonPropertyName("lang")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Lang { get; init; }
    [JsonPropertyName("version")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Version { get; init; }
    [JsonPropertyName("authorized_user")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? AuthorizedUser { get; init; }
    [JsonPropertyName("account")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Account { get; init; }
    [JsonPropertyName("stop")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public DateTime? Stop { get; init; }
    [JsonPropertyName("reason")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Reason { get; init; }
    [JsonPropertyName("subscriptions_list")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? SubscriptionsList { get; init; }
    [JsonPropertyName("subscriptions_list_detail")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<SubszDetail>? SubscriptionsListDetail { get; init; }
    [JsonPropertyName("mqtt_client")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? MqttClient { get; init; }
}

/// <summary>/accountz: the account names, or with <c>?acc=</c> one account's detail.</summary>
internal sealed class Accountz
{
    [JsonPropertyName("server_id")] public string ServerId { get; init; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; init; }
    [JsonPropertyName("system_account")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? SystemAccount { get; init; }
    [JsonPropertyName("accounts")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? Accounts { get; init; }
    [JsonPropertyName("account_detail")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public AccountzDetail? Account { get; init; }
}

/// <summary>One account in /accountz?acc= (nats-server's AccountInfo, the fields of a config account).</summary>
internal sealed class AccountzDetail
{
    [JsonPropertyName("account_name")] public string Name { get; init; } = "";
    [JsonPropertyName("update_time")] public DateTime UpdateTime { get; init; }
    [JsonPropertyName("is_system")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool IsSystem { get; init; }
    [JsonPropertyName("expired")] public bool Expired { get; init; }
    [JsonPropertyName("complete")] public bool Complete { get; init; } = true;
    [JsonPropertyName("jetstream_enabled")] public bool JetStream { get; init; }
    [JsonPropertyName("leafnode_connections")] public int LeafnodeConnections { get; init; }
    [JsonPropertyName("client_connections")] public int ClientConnections { get; init; }
    [JsonPropertyName("subscriptions")] public int Subscriptions { get; init; }
    [JsonPropertyName("exports")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<AccountzExport>? Exports { get; init; }
    [JsonPropertyName("imports")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<AccountzImport>? Imports { get; init; }
}

/// <summary>An export as nats-server's ExtExport (a jwt.Export) writes it.</summary>
internal sealed class AccountzExport
{
    [JsonPropertyName("subject")] public string Subject { get; init; } = "";
    [JsonPropertyName("type")] public string Type { get; init; } = "";
    [JsonPropertyName("response_type")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? ResponseType { get; init; }
    [JsonPropertyName("approved_accounts")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? ApprovedAccounts { get; init; }
}

/// <summary>An import as nats-server's ExtImport (a jwt.Import) writes it.</summary>
internal sealed class AccountzImport
{
    [JsonPropertyName("subject")] public string Subject { get; init; } = "";
    [JsonPropertyName("account")] public string Account { get; init; } = "";
    [JsonPropertyName("to")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? To { get; init; }
    [JsonPropertyName("local_subject")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? LocalSubject { get; init; }
    [JsonPropertyName("type")] public string Type { get; init; } = "";
    [JsonPropertyName("invalid")] public bool Invalid { get; init; }
    [JsonPropertyName("share")] public bool Share { get; init; }
    [JsonPropertyName("tracking")] public bool Tracking { get; init; }
}

/// <summary>/subsz.</summary>
internal sealed class Subsz
{
    [JsonPropertyName("server_id")] public string ServerId { get; init; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; init; }
    [JsonPropertyName("num_subscriptions")] public int NumSubscriptions { get; init; }
    [JsonPropertyName("num_cache")] public int NumCache { get; init; }
    [JsonPropertyName("num_inserts")] public long NumInserts { get; init; }
    [JsonPropertyName("num_removes")] public long NumRemoves { get; init; }
    [JsonPropertyName("num_matches")] public long NumMatches { get; init; }
    [JsonPropertyName("cache_hit_rate")] public double CacheHitRate { get; init; }
    [JsonPropertyName("max_fanout")] public int MaxFanout { get; init; }
    [JsonPropertyName("avg_fanout")] public double AvgFanout { get; init; }
    [JsonPropertyName("total")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public int? Total { get; init; }
    [JsonPropertyName("offset")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public int? Offset { get; init; }
    [JsonPropertyName("limit")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public int? Limit { get; init; }
    [JsonPropertyName("subscriptions_list")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<SubszDetail>? Subscriptions { get; init; }
}

/// <summary>
/// /subsz without a subscription to list: nats-server then writes only its SublistStats, without
/// server id, time or paging.
/// </summary>
internal sealed class SublistStats
{
    [JsonPropertyName("num_subscriptions")] public int NumSubscriptions { get; init; }
    [JsonPropertyName("num_cache")] public int NumCache { get; init; }
    [JsonPropertyName("num_inserts")] public long NumInserts { get; init; }
    [JsonPropertyName("num_removes")] public long NumRemoves { get; init; }
    [JsonPropertyName("num_matches")] public long NumMatches { get; init; }
    [JsonPropertyName("cache_hit_rate")] public double CacheHitRate { get; init; }
    [JsonPropertyName("max_fanout")] public int MaxFanout { get; init; }
    [JsonPropertyName("avg_fanout")] public double AvgFanout { get; init; }

    public static SublistStats Of(Subsz subsz) => new()
    {
        NumSubscriptions = subsz.NumSubscriptions,
        NumCache = subsz.NumCache,
        NumInserts = subsz.NumInserts,
        NumRemoves = subsz.NumRemoves,
        NumMatches = subsz.NumMatches,
        CacheHitRate = subsz.CacheHitRate,
        MaxFanout = subsz.MaxFanout,
        AvgFanout = subsz.AvgFanout,
    };
}

/// <summary>/healthz.</summary>
internal sealed class Healthz
{
    [JsonPropertyName("status")] public string Status { get; init; } = "ok";

    /// <summary>Written in a HEALTHZ system request's answer; /healthz leaves it out (it is the HTTP status).</summary>
    [JsonPropertyName("status_code")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int StatusCode { get; set; }

    [JsonPropertyName("error")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Error { get; init; }
    [JsonPropertyName("errors")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<HealthzError>? Errors { get; init; }
}

/// <summary>One entry of /healthz's <c>errors</c> (nats-server 2.10's HealthzError; <c>type</c> as its HealthZErrorType's names).</summary>
internal sealed class HealthzError
{
    [JsonPropertyName("type")] public string Type { get; init; } = "";
    [JsonPropertyName("account")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Account { get; init; }
    [JsonPropertyName("stream")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Stream { get; init; }
    [JsonPropertyName("consumer")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Consumer { get; init; }
    [JsonPropertyName("error")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Error { get; init; }
}

/// <summary>The <c>statsz</c> of <c>$SYS.SERVER.&lt;id&gt;.STATSZ</c> and <c>$SYS.REQ.SERVER.PING</c> (nats-server's ServerStats).</summary>
internal sealed class Statsz
{
    [JsonPropertyName("start")] public DateTime Start { get; init; }
    [JsonPropertyName("mem")] public long Mem { get; init; }
    [JsonPropertyName("cores")] public int Cores { get; init; }
    [JsonPropertyName("cpu")] public double Cpu { get; init; }
    [JsonPropertyName("connections")] public int Connections { get; init; }
    [JsonPropertyName("total_connections")] public long TotalConnections { get; init; }
    [JsonPropertyName("active_accounts")] public int ActiveAccounts { get; init; }
    [JsonPropertyName("subscriptions")] public int Subscriptions { get; init; }
    [JsonPropertyName("sent")] public StatszData Sent { get; init; } = new();
    [JsonPropertyName("received")] public StatszData Received { get; init; } = new();
    [JsonPropertyName("slow_consumers")] public long SlowConsumers { get; init; }
    [JsonPropertyName("routes")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<StatszRoute>? Routes { get; init; }
    [JsonPropertyName("active_servers")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int ActiveServers { get; init; }
    [JsonPropertyName("jetstream")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public VarzJetStream? JetStream { get; init; }
}

/// <summary>Messages and bytes, one way (nats-server's DataStats).</summary>
internal sealed class StatszData
{
    [JsonPropertyName("msgs")] public long Msgs { get; init; }
    [JsonPropertyName("bytes")] public long Bytes { get; init; }
}

/// <summary>A route in statsz (nats-server's RouteStat).</summary>
internal sealed class StatszRoute
{
    [JsonPropertyName("rid")] public ulong Rid { get; init; }
    [JsonPropertyName("name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; init; }
    [JsonPropertyName("sent")] public StatszData Sent { get; init; } = new();
    [JsonPropertyName("received")] public StatszData Received { get; init; } = new();
    [JsonPropertyName("pending")] public long Pending { get; init; }
}

/// <summary>The <c>data</c> of <c>$SYS.REQ.ACCOUNT.&lt;account&gt;.STATZ</c> (nats-server's AccountStatz).</summary>
internal sealed class AccountStatz
{
    [JsonPropertyName("server_id")] public string ServerId { get; init; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; init; }
    [JsonPropertyName("account_statz")] public IReadOnlyList<AccountStat> Accounts { get; init; } = [];
}

/// <summary>One account's connections and traffic on this server (nats-server's AccountStat).</summary>
internal sealed class AccountStat
{
    [JsonPropertyName("acc")] public string Account { get; init; } = "";
    [JsonPropertyName("conns")] public int Connections { get; init; }
    [JsonPropertyName("leafnodes")] public int LeafNodes { get; init; }
    [JsonPropertyName("total_conns")] public int TotalConnections { get; init; }
    [JsonPropertyName("sent")] public StatszData Sent { get; init; } = new();
    [JsonPropertyName("received")] public StatszData Received { get; init; } = new();
    [JsonPropertyName("slow_consumers")] public long SlowConsumers { get; init; }
}

/// <summary>
/// One subscription in /subsz <c>subscriptions_list</c> and /connz <c>subscriptions_list_detail</c>
/// (nats-server's SubDetail).
/// </summary>
internal sealed class SubszDetail
{
    [JsonPropertyName("account")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Account { get; init; }
    [JsonPropertyName("subject")] public string Subject { get; init; } = "";
    [JsonPropertyName("qgroup")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Queue { get; init; }
    [JsonPropertyName("sid")] public string Sid { get; init; } = "";
    [JsonPropertyName("msgs")] public long Msgs { get; init; }
    [JsonPropertyName("max")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long Max { get; init; }
    [JsonPropertyName("cid")] public ulong Cid { get; init; }

    /// <summary>A subscription's detail; <paramref name="withAccount"/> false for an open connection's list in /connz.</summary>
    public static SubszDetail From(SubscriptionInfo s, bool withAccount) => new()
    {
        Account = withAccount ? s.Account : null,
        Subject = s.Subject,
        Queue = s.Queue,
        Sid = s.Sid,
        Msgs = s.Msgs,
        Max = s.Max,
        Cid = s.Cid,
    };
}

/// <summary>/raftz: the Raft groups this server hosts (replicated streams), as each member sees itself.</summary>
internal sealed class Raftz
{
    [JsonPropertyName("server_id")] public string ServerId { get; init; } = "";
    [JsonPropertyName("server_name")] public string ServerName { get; init; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; init; }
    [JsonPropertyName("groups")] public IReadOnlyList<RaftzGroup> Groups { get; init; } = [];
}

/// <summary>One group of /raftz: this member's role, term and log positions, and (at a leader) its view of the others.</summary>
internal sealed class RaftzGroup
{
    [JsonPropertyName("group")] public string Group { get; init; } = "";
    [JsonPropertyName("account")] public string Account { get; init; } = "";
    [JsonPropertyName("stream")] public string Stream { get; init; } = "";
    [JsonPropertyName("id")] public string Id { get; init; } = "";
    [JsonPropertyName("role")] public string Role { get; init; } = "";
    [JsonPropertyName("term")] public ulong Term { get; init; }
    [JsonPropertyName("leader")] public string? Leader { get; init; }
    [JsonPropertyName("commit")] public ulong Commit { get; init; }
    [JsonPropertyName("applied")] public ulong Applied { get; init; }
    [JsonPropertyName("first_index")] public ulong FirstIndex { get; init; }
    [JsonPropertyName("last_index")] public ulong LastIndex { get; init; }
    [JsonPropertyName("peers")] public IReadOnlyList<RaftzPeer> Peers { get; init; } = [];
}

/// <summary>A member of a group as /raftz shows it (match and activity are known at the leader only).</summary>
internal sealed class RaftzPeer
{
    [JsonPropertyName("id")] public string Id { get; init; } = "";
    [JsonPropertyName("name")] public string? Name { get; init; }
    [JsonPropertyName("match")] public ulong Match { get; init; }
    [JsonPropertyName("active")] public bool Active { get; init; }
    [JsonPropertyName("learner")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool Learner { get; init; }
}

/// <summary>nats-server 2.9.10's MQTTOptsVarz (every field omitted when zero).</summary>
internal sealed class VarzMqtt
{
    [JsonPropertyName("host")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? Host { get; init; }
    [JsonPropertyName("port")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; init; }
    [JsonPropertyName("no_auth_user")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? NoAuthUser { get; init; }
    [JsonPropertyName("auth_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double AuthTimeout { get; init; }
    [JsonPropertyName("tls_map")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TlsMap { get; init; }
    [JsonPropertyName("tls_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double TlsTimeout { get; init; }
    [JsonPropertyName("ack_wait")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long AckWait { get; init; }
    [JsonPropertyName("max_ack_pending")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int MaxAckPending { get; init; }
}

/// <summary>nats-server 2.9.10's WebsocketOptsVarz (every field omitted when zero).</summary>
internal sealed class VarzWebsocket
{
    [JsonPropertyName("host")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? Host { get; init; }
    [JsonPropertyName("port")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; init; }
    [JsonPropertyName("no_auth_user")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? NoAuthUser { get; init; }
    [JsonPropertyName("jwt_cookie")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public string? JwtCookie { get; init; }
    [JsonPropertyName("handshake_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long HandshakeTimeout { get; init; }
    [JsonPropertyName("auth_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double AuthTimeout { get; init; }
    [JsonPropertyName("no_tls")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool NoTls { get; init; }
    [JsonPropertyName("tls_map")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TlsMap { get; init; }
    [JsonPropertyName("same_origin")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool SameOrigin { get; init; }
    [JsonPropertyName("allowed_origins")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? AllowedOrigins { get; init; }
    [JsonPropertyName("compression")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool Compression { get; init; }
}
