using System.Text.Json.Serialization;

namespace Courier.Protocols.JetStream;

/// <summary>A JetStream API error, with nats-server's codes and descriptions.</summary>
public sealed record ApiError(
    [property: JsonPropertyName("code")] int Code,
    [property: JsonPropertyName("err_code")] int ErrCode,
    [property: JsonPropertyName("description")] string Description)
{
    public static ApiError NotEnabled => new(503, 10076, "JetStream not enabled");
    public static ApiError BadRequest => new(400, 10003, "bad request");
    public static ApiError InvalidJson => new(400, 10025, "invalid JSON");

    /// <summary>A request field Courier does not know, in the words of nats-server's strict decoding (JSInvalidJSONErr with Go's json error).</summary>
    public static ApiError UnknownField(string field) => new(400, 10025, $"invalid JSON: json: unknown field \"{field}\"");

    /// <summary>nats-server's NewJSInvalidJSONError(err): "invalid JSON: " and the error's words.</summary>
    public static ApiError InvalidJsonBecause(string reason) => new(400, 10025, $"invalid JSON: {reason}");

    /// <summary>A request needs a JetStream API level above the advertised 2.10's (JSRequiredApiLevelErr), as nats-server answers a request whose Nats-Required-Api-Level it does not reach.</summary>
    public static ApiError RequiredApiLevel => new(412, 10185, "JetStream minimum api level required");

    /// <summary>A leader stepdown asked of a server that is not clustered (JSClusterRequiredErr).</summary>
    public static ApiError ClusterRequired => new(503, 10010, "JetStream clustering support required");

    /// <summary>num_replicas above 1 on a single server (JSStreamReplicasNotSupportedErr).</summary>
    public static ApiError StreamReplicasNotSupported => new(500, 10074, "replicas > 1 not supported in non-clustered mode");

    /// <summary>A stream's max_consumers is reached (JSMaximumConsumersLimitErr).</summary>
    public static ApiError MaximumConsumersReached => new(400, 10026, "maximum consumers limit reached");
    public static ApiError StreamNotFound => new(404, 10059, "stream not found");
    /// <summary>nats-server's JSClusterNotAvailErr: the node that would answer (a stream's, the meta leader) is unreachable.</summary>
    public static ApiError ClusterNotAvailable => new(503, 10008, "JetStream system temporarily unavailable");
    /// <summary>nats-server's JSStreamOfflineErr: STREAM.INFO of a stream whose node is down.</summary>
    public static ApiError StreamOffline => new(500, 10118, "stream is offline");

    /// <summary>An account without JetStream asked for its account info (nats-server's JSNotEnabledForAccountErr).</summary>
    public static ApiError NotEnabledForAccount => new(503, 10039, "JetStream not enabled for account");

    /// <summary>The account's <c>max_streams</c> is reached (JSMaximumStreamsLimitErr).</summary>
    public static ApiError MaximumStreamsReached => new(400, 10027, "maximum number of streams reached");

    /// <summary>The account's <c>max_bytes_required</c> is set and the stream has no max_bytes (JSStreamMaxBytesRequired).</summary>
    public static ApiError StreamMaxBytesRequired => new(400, 10113, "account requires a stream config to have max bytes set");
    public static ApiError ConsumerDurableNameMismatch => new(400, 10017, "consumer name in subject does not match durable name in request");
    public static ApiError StreamNameExists => new(400, 10058, "stream name already in use with a different configuration");
    public static ApiError SubjectOverlap => new(400, 10065, "subjects overlap with an existing stream");
    public static ApiError StreamMismatch => new(400, 10056, "stream name in subject does not match request");
    public static ApiError NoMessageFound => new(404, 10037, "no message found");

    /// <summary>A memory stream's max_bytes (or 1 byte without one) does not fit under max_memory_store with the other memory streams' max_bytes.</summary>
    public static ApiError MemoryResourcesExceeded => new(500, 10028, "insufficient memory resources available");

    /// <summary>A file stream's max_bytes (or 1 byte without one) does not fit under max_file_store with the other file streams' max_bytes.</summary>
    public static ApiError StorageResourcesExceeded => new(500, 10047, "insufficient storage resources available");

    public static ApiError StreamInvalidConfig(string reason) => new(500, 10052, reason); // nats-server's JSStreamInvalidConfigF is a 500

    // Consumer configuration errors (nats-server errors.json).
    public static ApiError ConsumerDeliverToWildcards => new(400, 10079, "consumer deliver subject has wildcards");
    public static ApiError ConsumerPushMaxWaiting => new(400, 10080, "consumer in push mode can not set max waiting");
    public static ApiError ConsumerDeliverCycle => new(400, 10081, "consumer deliver subject forms a cycle");
    public static ApiError ConsumerMaxPendingAckPolicyRequired => new(400, 10082, "consumer requires ack policy for max ack pending");
    public static ApiError ConsumerSmallHeartbeat => new(400, 10083, "consumer idle heartbeat needs to be >= 100ms");
    public static ApiError ConsumerPullRequiresAck => new(400, 10084, "consumer in pull mode requires ack policy");

    /// <summary>JSConsumerPullWithRateLimitErr.</summary>
    public static ApiError ConsumerPullWithRateLimit => new(400, 10086, "consumer in pull mode can not have rate limit set");
    public static ApiError ConsumerMaxWaitingNegative => new(400, 10087, "consumer max waiting needs to be positive");
    public static ApiError ConsumerHeartbeatRequiresPush => new(400, 10088, "consumer idle heartbeat requires a push based consumer");
    public static ApiError ConsumerFlowControlRequiresPush => new(400, 10089, "consumer flow control requires a push based consumer");
    public static ApiError ConsumerWorkQueueRequiresExplicitAck => new(400, 10098, "workqueue stream requires explicit ack");
    public static ApiError ConsumerWorkQueueMultipleUnfiltered => new(400, 10099, "multiple non-filtered consumers not allowed on workqueue stream");
    public static ApiError ConsumerWorkQueueNotUnique => new(400, 10100, "filtered consumer not unique on workqueue stream");
    public static ApiError ConsumerWorkQueueNotDeliverAll => new(400, 10101, "consumer must be deliver all on workqueue stream");
    public static ApiError ConsumerFlowControlNeedsHeartbeats => new(400, 10108, "consumer with flow control also needs heartbeats");
    public static ApiError ConsumerInvalidDeliverSubject => new(400, 10112, "invalid push consumer deliver subject");
    public static ApiError ConsumerMaxRequestBatchNegative => new(400, 10114, "consumer max request batch needs to be > 0");
    public static ApiError ConsumerMaxRequestExpiresTooSmall => new(400, 10115, "consumer max request expires needs to be >= 1ms");

    /// <summary>A create with action "create" names a consumer that exists with another configuration (JSConsumerAlreadyExists).</summary>
    public static ApiError ConsumerAlreadyExists => new(400, 10148, "consumer already exists");

    /// <summary>A create with action "update" names no consumer that exists (JSConsumerDoesNotExist).</summary>
    public static ApiError ConsumerDoesNotExist => new(400, 10149, "consumer does not exist");

    /// <summary>A consumer create changes what its consumer can not change (JSConsumerCreateErrF, 500, with the reason as nats-server words it).</summary>
    public static ApiError ConsumerCreateFailed(string reason) => new(500, 10012, reason);

    /// <summary>A push consumer's deliver subject is changed while someone subscribes to it (JSConsumerNameExistErr).</summary>
    public static ApiError ConsumerNameExists => new(400, 10013, "consumer name already in use");

    public static ApiError StreamStoreFailed(string reason) => new(503, 10077, reason);

    // Priority groups (nats-server 2.11/2.12, jetstream_errors_generated.go).
    public static ApiError ConsumerPriorityPolicyWithoutGroup => new(400, 10159, "Setting PriorityPolicy requires at least one PriorityGroup to be set");
    public static ApiError ConsumerInvalidPriorityGroup => new(400, 10160, "Provided priority group does not exist for this consumer");
    public static ApiError ConsumerEmptyGroupName => new(400, 10161, "Group name cannot be an empty string");
    public static ApiError ConsumerInvalidGroupName => new(400, 10162, "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters");
    public static ApiError ConsumerPushWithPriorityGroup => new(400, 10178, "priority groups can not be used with push consumers");
    public static ApiError ConsumerPriorityGroupWithPolicyNone => new(400, 10196, "consumer can not have priority groups when policy is none");
    public static ApiError ConsumerPinnedTtlWithoutPriorityPolicyNone => new(400, 10197, "PinnedTTL cannot be set when PriorityPolicy is none");

    /// <summary>CONSUMER.RESET to a sequence the consumer's deliver policy does not allow (JSConsumerInvalidResetErr).</summary>
    public static ApiError ConsumerInvalidReset(string reason) => new(400, 10204, $"invalid reset: {reason}");

    /// <summary>A <c>Nats-TTL</c> nats-server cannot read (JSMessageTTLInvalidErr).</summary>
    public static ApiError MessageTtlInvalid => new(400, 10165, "invalid per-message TTL");

    /// <summary>A <c>Nats-TTL</c> on a stream without allow_msg_ttl (JSMessageTTLDisabledErr).</summary>
    public static ApiError MessageTtlDisabled => new(400, 10166, "per-message TTL is disabled");

    public static ApiError StreamSealed => new(400, 10109, "invalid operation on sealed stream");
}

/// <summary>The envelope every API response shares: its type and, on failure, the error.</summary>
public abstract class ApiResponse
{
    [JsonPropertyName("type")]
    public string Type { get; set; } = "";

    [JsonPropertyName("error")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public ApiError? Error { get; set; }
}

/// <summary>An error-only response of any type.</summary>
public sealed class ErrorResponse : ApiResponse;

/// <summary>$JS.API.INFO</summary>
public sealed class AccountInfoResponse : ApiResponse
{
    [JsonPropertyName("memory")] public long Memory { get; set; }
    [JsonPropertyName("storage")] public long Storage { get; set; }
    [JsonPropertyName("streams")] public int Streams { get; set; }
    [JsonPropertyName("consumers")] public int Consumers { get; set; }
    [JsonPropertyName("limits")] public AccountLimits Limits { get; set; } = new();
    [JsonPropertyName("domain")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; set; }
    [JsonPropertyName("api")] public ApiStats Api { get; set; } = new();
}

public sealed class AccountLimits
{
    [JsonPropertyName("max_memory")] public long MaxMemory { get; set; } = -1;
    [JsonPropertyName("max_storage")] public long MaxStorage { get; set; } = -1;
    [JsonPropertyName("max_streams")] public int MaxStreams { get; set; } = -1;
    [JsonPropertyName("max_consumers")] public int MaxConsumers { get; set; } = -1;
    [JsonPropertyName("max_ack_pending")] public int MaxAckPending { get; set; } = -1;
    [JsonPropertyName("memory_max_stream_bytes")] public long MemoryMaxStreamBytes { get; set; } = -1;
    [JsonPropertyName("storage_max_stream_bytes")] public long StorageMaxStreamBytes { get; set; } = -1;
    [JsonPropertyName("max_bytes_required")] public bool MaxBytesRequired { get; set; }
}

public sealed class ApiStats
{
    [JsonPropertyName("total")] public long Total { get; set; }
    [JsonPropertyName("errors")] public long Errors { get; set; }
}

/// <summary>A stream's configuration, with nats-server's field names and defaults (durations in nanoseconds).</summary>
public sealed class StreamConfig
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("description")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Description { get; set; }
    [JsonPropertyName("subjects")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? Subjects { get; set; }
    [JsonPropertyName("retention")] public RetentionPolicy Retention { get; set; } = RetentionPolicy.Limits;
    [JsonPropertyName("max_consumers")] public int MaxConsumers { get; set; } = -1;
    [JsonPropertyName("max_msgs")] public long MaxMsgs { get; set; } = -1;
    [JsonPropertyName("max_bytes")] public long MaxBytes { get; set; } = -1;
    [JsonPropertyName("max_age")] public long MaxAge { get; set; }
    [JsonPropertyName("max_msgs_per_subject")] public long MaxMsgsPerSubject { get; set; } = -1;
    [JsonPropertyName("max_msg_size")] public int MaxMsgSize { get; set; } = -1;
    [JsonPropertyName("discard")] public DiscardPolicy Discard { get; set; } = DiscardPolicy.Old;
    [JsonPropertyName("storage")] public StorageType Storage { get; set; } = StorageType.File;
    [JsonPropertyName("num_replicas")] public int Replicas { get; set; } = 1;
    [JsonPropertyName("duplicate_window")] public long DuplicateWindow { get; set; }
    [JsonPropertyName("compression")] public string Compression { get; set; } = "none";
    [JsonPropertyName("allow_direct")] public bool AllowDirect { get; set; }
    [JsonPropertyName("mirror_direct")] public bool MirrorDirect { get; set; }
    [JsonPropertyName("sealed")] public bool Sealed { get; set; }
    [JsonPropertyName("deny_delete")] public bool DenyDelete { get; set; }
    [JsonPropertyName("deny_purge")] public bool DenyPurge { get; set; }
    [JsonPropertyName("allow_rollup_hdrs")] public bool AllowRollup { get; set; }
    [JsonPropertyName("discard_new_per_subject")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool DiscardNewPerSubject { get; set; }
    [JsonPropertyName("first_seq")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ulong FirstSeq { get; set; }
    [JsonPropertyName("consumer_limits")] public Dictionary<string, long> ConsumerLimits { get; set; } = [];
    [JsonPropertyName("metadata")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public Dictionary<string, string>? Metadata { get; set; }
    [JsonPropertyName("placement")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public Placement? Placement { get; set; }
    [JsonPropertyName("mirror")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public StreamSource? Mirror { get; set; }
    [JsonPropertyName("sources")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<StreamSource>? Sources { get; set; }
    [JsonPropertyName("republish")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public RePublish? RePublish { get; set; }

    /// <summary>2.10's input transform: a published subject matching <c>src</c> is stored under the mapped <c>dest</c>.</summary>
    [JsonPropertyName("subject_transform")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public SubjectTransformConfig? SubjectTransform { get; set; }

    /// <summary>2.11's <c>allow_msg_ttl</c>: a message's <c>Nats-TTL</c> header sets when it expires (refused without it).</summary>
    [JsonPropertyName("allow_msg_ttl")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool AllowMsgTtl { get; set; }

    /// <summary>
    /// 2.11's <c>subject_delete_marker_ttl</c> (nanoseconds): when max_age or a TTL removes a subject's last message,
    /// a delete marker (<c>Nats-Marker-Reason: MaxAge</c>) takes its place for this long.
    /// </summary>
    [JsonPropertyName("subject_delete_marker_ttl")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long SubjectDeleteMarkerTtl { get; set; }

    /// <summary>
    /// 2.12's <c>allow_msg_counter</c> (ADR-49): every publish is a <c>Nats-Incr</c> and the stream keeps each
    /// subject's running total (<see cref="MessageCounter"/>). Set at create, never changed by an update.
    /// </summary>
    [JsonPropertyName("allow_msg_counter")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool AllowMsgCounter { get; set; }

}

/// <summary>A stream's state as STREAM.INFO reports it.</summary>
public sealed class StreamStateInfo
{
    [JsonPropertyName("messages")] public ulong Messages { get; set; }
    [JsonPropertyName("bytes")] public ulong Bytes { get; set; }
    [JsonPropertyName("first_seq")] public ulong FirstSeq { get; set; }
    [JsonPropertyName("first_ts")] public DateTime FirstTs { get; set; }
    [JsonPropertyName("last_seq")] public ulong LastSeq { get; set; }
    [JsonPropertyName("last_ts")] public DateTime LastTs { get; set; }
    [JsonPropertyName("num_subjects")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int NumSubjects { get; set; }
    [JsonPropertyName("subjects")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public SortedDictionary<string, ulong>? Subjects { get; set; }
    [JsonPropertyName("num_deleted")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ulong NumDeleted { get; set; }
    [JsonPropertyName("deleted")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ulong[]? Deleted { get; set; }
    [JsonPropertyName("lost")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public LostStreamData? Lost { get; set; }
    [JsonPropertyName("consumer_count")] public int ConsumerCount { get; set; }
}

/// <summary>Messages the store lost to damage, as nats-server's <c>LostStreamData</c> in a stream's state.</summary>
public sealed class LostStreamData
{
    [JsonPropertyName("msgs")] public ulong[] Msgs { get; set; } = [];
    [JsonPropertyName("bytes")] public ulong Bytes { get; set; }
}

/// <summary>STREAM.CREATE / UPDATE / INFO response, and an entry of STREAM.LIST.</summary>
public sealed class StreamInfoResponse : ApiResponse
{
    [JsonPropertyName("config")] public StreamConfig? Config { get; set; }
    [JsonPropertyName("created")] public DateTime Created { get; set; }
    [JsonPropertyName("state")] public StreamStateInfo? State { get; set; }
    [JsonPropertyName("ts")] public DateTime Ts { get; set; }
    [JsonPropertyName("did_create")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool DidCreate { get; set; }
    [JsonPropertyName("domain")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; set; }
    [JsonPropertyName("cluster")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ClusterInfo? Cluster { get; set; }
    [JsonPropertyName("mirror")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public StreamSourceInfo? Mirror { get; set; }
    [JsonPropertyName("sources")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<StreamSourceInfo>? Sources { get; set; }

    // STREAM.INFO's page of state.subjects (nats-server's ApiPaged; absent from other answers).
    [JsonPropertyName("total")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public int? Total { get; set; }
    [JsonPropertyName("offset")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public int? Offset { get; set; }
    [JsonPropertyName("limit")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public int? Limit { get; set; }
}

/// <summary>STREAM.NAMES / STREAM.LIST request.</summary>
/// <summary>nats-server's ClusterInfo: the cluster, the group's leader, and the other replicas.</summary>
public sealed class ClusterInfo
{
    [JsonPropertyName("name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; set; }
    [JsonPropertyName("leader")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Leader { get; set; }
    [JsonPropertyName("replicas")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<PeerInfo>? Replicas { get; set; }
}

/// <summary>nats-server's PeerInfo: a replica as its leader sees it (active: nanoseconds since it was last heard).</summary>
public sealed class PeerInfo
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("current")] public bool Current { get; set; }
    [JsonPropertyName("offline")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool Offline { get; set; }
    [JsonPropertyName("active")] public long Active { get; set; }
    [JsonPropertyName("lag")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ulong Lag { get; set; }
    [JsonPropertyName("peer")] public string Peer { get; set; } = "";
}

/// <summary>nats-server's Placement: the cluster a stream's replicas must be in, and tags each of their servers must have.</summary>
public sealed class Placement
{
    [JsonPropertyName("cluster")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Cluster { get; set; }
    [JsonPropertyName("tags")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? Tags { get; set; }
}

/// <summary>STREAM.PEER.REMOVE's request: the server name of the peer to take out of the stream's group.</summary>
public sealed class StreamRemovePeerRequest
{
    [JsonPropertyName("peer")] public string? Peer { get; set; }
}

public sealed class StreamListRequest
{
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("subject")] public string? Subject { get; set; }
}

public sealed class StreamNamesResponse : ApiResponse
{
    [JsonPropertyName("total")] public int Total { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("limit")] public int Limit { get; set; }
    [JsonPropertyName("streams")] public List<string> Streams { get; set; } = [];
}

public sealed class StreamListResponse : ApiResponse
{
    [JsonPropertyName("total")] public int Total { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("limit")] public int Limit { get; set; }
    [JsonPropertyName("streams")] public List<StreamInfoResponse> Streams { get; set; } = [];
    [JsonPropertyName("missing")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? Missing { get; set; }
}

/// <summary>STREAM.DELETE, STREAM.MSG.DELETE.</summary>
public sealed class SuccessResponse : ApiResponse
{
    [JsonPropertyName("success")] public bool Success { get; set; }
}

/// <summary>STREAM.PURGE request: a subject filter, an upper sequence bound, or a number to keep.</summary>
public sealed class StreamPurgeRequest
{
    [JsonPropertyName("filter")] public string? Filter { get; set; }
    [JsonPropertyName("seq")] public ulong Seq { get; set; }
    [JsonPropertyName("keep")] public ulong Keep { get; set; }
}

public sealed class StreamPurgeResponse : ApiResponse
{
    [JsonPropertyName("success")] public bool Success { get; set; }
    [JsonPropertyName("purged")] public ulong Purged { get; set; }
}

/// <summary>STREAM.MSG.GET request: by sequence, last by subject, or next by subject from seq.</summary>
public sealed class MsgGetRequest
{
    [JsonPropertyName("seq")] public ulong Seq { get; set; }
    [JsonPropertyName("last_by_subj")] public string? LastBySubject { get; set; }
    [JsonPropertyName("next_by_subj")] public string? NextBySubject { get; set; }

    /// <summary>DIRECT.GET (2.11): this many messages from <see cref="Seq"/> or <see cref="StartTime"/> on, then an EOB status.</summary>
    [JsonPropertyName("batch")] public int Batch { get; set; }

    /// <summary>DIRECT.GET (2.11): stop a batch once this many bytes went out (default: nats-server's max_pending, 64 MiB).</summary>
    [JsonPropertyName("max_bytes")] public int MaxBytes { get; set; }

    /// <summary>2.11: start at the first message stored at or after this time.</summary>
    [JsonPropertyName("start_time")] public DateTime? StartTime { get; set; }

    /// <summary>DIRECT.GET (2.11): the last message of every subject these filters match.</summary>
    [JsonPropertyName("multi_last")] public List<string>? MultiLast { get; set; }

    /// <summary>DIRECT.GET multi_last (2.11): as of this sequence.</summary>
    [JsonPropertyName("up_to_seq")] public ulong UpToSeq { get; set; }

    /// <summary>DIRECT.GET multi_last (2.11): as of this time.</summary>
    [JsonPropertyName("up_to_time")] public DateTime? UpToTime { get; set; }
}

/// <summary>STREAM.MSG.DELETE request.</summary>
public sealed class MsgDeleteRequest
{
    [JsonPropertyName("seq")] public ulong Seq { get; set; }
    [JsonPropertyName("no_erase")] public bool NoErase { get; set; }
}

public sealed class StoredMessageInfo
{
    [JsonPropertyName("subject")] public string Subject { get; set; } = "";
    [JsonPropertyName("seq")] public ulong Seq { get; set; }
    [JsonPropertyName("hdrs")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public byte[]? Headers { get; set; }
    [JsonPropertyName("data")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public byte[]? Data { get; set; }
    [JsonPropertyName("time")] public DateTime Time { get; set; }
}

public sealed class MsgGetResponse : ApiResponse
{
    [JsonPropertyName("message")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public StoredMessageInfo? Message { get; set; }
}

/// <summary>The acknowledgement of a message stored in a stream.</summary>
public sealed class PubAck
{
    [JsonPropertyName("stream")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Stream { get; set; }
    [JsonPropertyName("seq")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ulong Seq { get; set; }
    [JsonPropertyName("duplicate")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool Duplicate { get; set; }

    /// <summary>A counter stream's new total for the subject (2.12), as a decimal string.</summary>
    [JsonPropertyName("val")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Value { get; set; }
    [JsonPropertyName("error")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ApiError? Error { get; set; }
}

/// <summary>Source-generated JSON for the JetStream API.</summary>
[JsonSourceGenerationOptions(NumberHandling = JsonNumberHandling.AllowReadingFromString, AllowTrailingCommas = true)]
[JsonSerializable(typeof(ErrorResponse))]
[JsonSerializable(typeof(AccountInfoResponse))]
[JsonSerializable(typeof(StreamConfig))]
[JsonSerializable(typeof(StreamInfoResponse))]
[JsonSerializable(typeof(StreamListRequest))]
[JsonSerializable(typeof(StreamRemovePeerRequest))]
[JsonSerializable(typeof(StreamNamesResponse))]
[JsonSerializable(typeof(StreamListResponse))]
[JsonSerializable(typeof(SuccessResponse))]
[JsonSerializable(typeof(StreamPurgeRequest))]
[JsonSerializable(typeof(StreamPurgeResponse))]
[JsonSerializable(typeof(MsgGetRequest))]
[JsonSerializable(typeof(MsgDeleteRequest))]
[JsonSerializable(typeof(MsgGetResponse))]
[JsonSerializable(typeof(PubAck))]
[JsonSerializable(typeof(StreamInfoRequest))]
[JsonSerializable(typeof(RePublish))]
[JsonSerializable(typeof(StreamSource))]
public sealed partial class JetStreamJsonContext : JsonSerializerContext;
