using System.Text.Json;
using System.Text.Json.Serialization;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// /jsz and the data of <c>$SYS.REQ.SERVER.*.JSZ</c> (nats-server 2.9.10's JSInfo): the server's
/// JetStream config and usage, and with <c>accounts</c>/<c>acc</c> the accounts' details.
/// </summary>
/// <remarks>
/// nats-server's <c>config</c> is a struct with <c>omitempty</c>, which Go never omits: it is there
/// when JetStream is disabled too, with zero limits. Its embedded JetStreamStats comes between
/// <c>config</c> and <c>streams</c>, so the fields are in that order.
/// </remarks>
internal sealed class Jsz
{
    [JsonPropertyName("server_id")] public string ServerId { get; init; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; init; }
    [JsonPropertyName("disabled")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool Disabled { get; init; }
    [JsonPropertyName("config")] public VarzJetStreamConfig Config { get; init; } = new();
    [JsonPropertyName("memory")] public ulong Memory { get; init; }
    [JsonPropertyName("storage")] public ulong Storage { get; init; }
    [JsonPropertyName("reserved_memory")] public ulong ReservedMemory { get; init; }
    [JsonPropertyName("reserved_storage")] public ulong ReservedStorage { get; init; }
    [JsonPropertyName("accounts")] public int Accounts { get; init; }
    [JsonPropertyName("ha_assets")] public int HaAssets { get; init; }
    [JsonPropertyName("api")] public JszApi Api { get; init; } = new();
    [JsonPropertyName("streams")] public int Streams { get; init; }
    [JsonPropertyName("consumers")] public int Consumers { get; init; }
    [JsonPropertyName("messages")] public ulong Messages { get; init; }
    [JsonPropertyName("bytes")] public ulong Bytes { get; init; }
    [JsonPropertyName("meta_cluster")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public JszMetaCluster? MetaCluster { get; init; }
    [JsonPropertyName("account_details")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<JszAccountDetail>? AccountDetails { get; init; }
}

/// <summary>/jsz <c>meta_cluster</c> (nats-server's MetaClusterInfo): the cluster, the node that places streams, the members.</summary>
internal sealed class JszMetaCluster
{
    [JsonPropertyName("name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; init; }
    [JsonPropertyName("leader")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Leader { get; init; }
    [JsonPropertyName("peer")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Peer { get; init; }
    [JsonPropertyName("replicas")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<JszPeerInfo>? Replicas { get; init; }
    [JsonPropertyName("cluster_size")] public int ClusterSize { get; init; }
}

/// <summary>nats-server's JetStreamAPIStats (<c>inflight</c> is omitempty and Courier has none in flight to report).</summary>
internal sealed class JszApi
{
    [JsonPropertyName("total")] public long Total { get; init; }
    [JsonPropertyName("errors")] public long Errors { get; init; }
}

/// <summary>
/// One account in /jsz <c>account_details</c>, and the data of <c>$SYS.REQ.ACCOUNT.&lt;account&gt;.JSZ</c>
/// (nats-server's AccountDetail: name, id, the embedded JetStreamStats, stream_detail).
/// </summary>
/// <remarks>
/// <c>reserved_memory</c>/<c>reserved_storage</c> are the account's <c>max_mem</c>/<c>max_file</c>
/// limits as Go's uint64 conversion writes them: an unlimited account's -1 is 18446744073709551615.
/// <c>accounts</c> and <c>ha_assets</c> are always 0 here, as nats-server leaves them.
/// </remarks>
internal sealed class JszAccountDetail
{
    [JsonPropertyName("name")] public string Name { get; init; } = "";
    [JsonPropertyName("id")] public string Id { get; init; } = "";
    [JsonPropertyName("memory")] public ulong Memory { get; init; }
    [JsonPropertyName("storage")] public ulong Storage { get; init; }
    [JsonPropertyName("reserved_memory")] public ulong ReservedMemory { get; init; }
    [JsonPropertyName("reserved_storage")] public ulong ReservedStorage { get; init; }
    [JsonPropertyName("accounts")] public int Accounts { get; init; }
    [JsonPropertyName("ha_assets")] public int HaAssets { get; init; }
    [JsonPropertyName("api")] public JszApi Api { get; init; } = new();
    [JsonPropertyName("stream_detail")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<JszStreamDetail>? Streams { get; init; }
}

/// <summary>
/// One stream in <c>stream_detail</c> (nats-server's StreamDetail). Config, state, mirror, sources and
/// the consumers are written by the JetStream API's own JSON models, so they read as STREAM.INFO's
/// and CONSUMER.INFO's do.
/// </summary>
internal sealed class JszStreamDetail
{
    [JsonPropertyName("name")] public string Name { get; init; } = "";
    [JsonPropertyName("created")] public DateTime Created { get; init; }
    [JsonPropertyName("cluster")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public JszClusterInfo? Cluster { get; init; }
    [JsonPropertyName("config")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public JsonElement? Config { get; init; }
    [JsonPropertyName("state")] public JsonElement State { get; init; }
    [JsonPropertyName("consumer_detail")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<JsonElement>? Consumers { get; init; }
    [JsonPropertyName("mirror")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public JsonElement? Mirror { get; init; }
    [JsonPropertyName("sources")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public JsonElement? Sources { get; init; }
}

/// <summary>
/// nats-server's ClusterInfo as a single server writes it for a stream: no cluster name
/// (omitempty), the server's name as leader.
/// </summary>
internal sealed class JszClusterInfo
{
    [JsonPropertyName("name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; init; }
    [JsonPropertyName("leader")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Leader { get; init; }
    [JsonPropertyName("replicas")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<JszPeerInfo>? Replicas { get; init; }
}

/// <summary>nats-server's PeerInfo: a replica of a replicated stream (or a meta group member), as the leader sees it.</summary>
internal sealed class JszPeerInfo
{
    [JsonPropertyName("name")] public string Name { get; init; } = "";
    [JsonPropertyName("current")] public bool Current { get; init; }
    [JsonPropertyName("offline")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool Offline { get; init; }
    [JsonPropertyName("active")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long Active { get; init; }
    [JsonPropertyName("lag")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ulong Lag { get; init; }
    [JsonPropertyName("peer")] public string Peer { get; init; } = "";
}

/// <summary>
/// nats-server's JSzOptions: from /jsz's query (<c>acc</c>, <c>accounts</c>, <c>streams</c>,
/// <c>consumers</c>, <c>config</c>, <c>leader-only</c>, <c>offset</c>, <c>limit</c>) or a system
/// request's JSON (<c>account</c>, <c>accounts</c>, <c>streams</c>, <c>consumer</c>, <c>config</c>,
/// <c>leader_only</c>, <c>offset</c>, <c>limit</c>).
/// </summary>
internal sealed record JszQuery(
    string? Account = null,
    bool Accounts = false,
    bool Streams = false,
    bool Consumers = false,
    bool Config = false,
    bool LeaderOnly = false,
    int Offset = 0,
    int Limit = 0);
