using System.Text.Json.Serialization;

namespace Courier.Protocols.JetStream;

/// <summary>A consumer's configuration, with nats-server's field names (durations in nanoseconds).</summary>
public sealed class ConsumerConfig
{
    [JsonPropertyName("durable_name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? DurableName { get; set; }
    [JsonPropertyName("name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; set; }
    [JsonPropertyName("description")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Description { get; set; }
    [JsonPropertyName("deliver_policy")] public DeliverPolicy DeliverPolicy { get; set; } = DeliverPolicy.All;
    [JsonPropertyName("opt_start_seq")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ulong OptStartSeq { get; set; }
    [JsonPropertyName("opt_start_time")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public DateTime? OptStartTime { get; set; }
    [JsonPropertyName("ack_policy")] public AckPolicy AckPolicy { get; set; } = AckPolicy.None;
    [JsonPropertyName("ack_wait")] public long AckWait { get; set; }
    [JsonPropertyName("max_deliver")] public long MaxDeliver { get; set; } = -1;
    [JsonPropertyName("backoff")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<long>? Backoff { get; set; }
    [JsonPropertyName("filter_subject")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? FilterSubject { get; set; }
    [JsonPropertyName("filter_subjects")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? FilterSubjects { get; set; }
    [JsonPropertyName("replay_policy")] public ReplayPolicy ReplayPolicy { get; set; } = ReplayPolicy.Instant;

    /// <summary>The share of acks sampled as metrics, "0" to "100" with or without "%" (nats-server's sample_freq).</summary>
    [JsonPropertyName("sample_freq")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? SampleFrequency { get; set; }

    /// <summary>A push consumer's delivery limit in bits a second (nats-server's rate_limit_bps); 0: none.</summary>
    [JsonPropertyName("rate_limit_bps")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ulong RateLimit { get; set; }
    [JsonPropertyName("max_waiting")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int MaxWaiting { get; set; }
    [JsonPropertyName("max_ack_pending")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long MaxAckPending { get; set; }
    [JsonPropertyName("deliver_subject")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? DeliverSubject { get; set; }
    [JsonPropertyName("deliver_group")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? DeliverGroup { get; set; }
    [JsonPropertyName("flow_control")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool FlowControl { get; set; }
    [JsonPropertyName("idle_heartbeat")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long IdleHeartbeat { get; set; }
    [JsonPropertyName("headers_only")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool HeadersOnly { get; set; }
    [JsonPropertyName("max_batch")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int MaxRequestBatch { get; set; }
    [JsonPropertyName("max_expires")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long MaxRequestExpires { get; set; }
    [JsonPropertyName("max_bytes")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long MaxRequestMaxBytes { get; set; }
    [JsonPropertyName("num_replicas")] public int Replicas { get; set; }
    [JsonPropertyName("mem_storage")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool MemoryStorage { get; set; }
    [JsonPropertyName("inactive_threshold")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long InactiveThreshold { get; set; }
    [JsonPropertyName("metadata")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public Dictionary<string, string>? Metadata { get; set; }

    /// <summary>
    /// nats-server 2.11's <c>pause_until</c>: no deliveries before this time (UTC). Set on create, and afterwards
    /// only by CONSUMER.PAUSE (a create or update of an existing consumer keeps the running value, as nats-server).
    /// </summary>
    [JsonPropertyName("pause_until")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public DateTime? PauseUntil { get; set; }

    /// <summary>nats-server 2.11's <c>priority_groups</c>: the group names a pull request names (ADR-42); a pull consumer only.</summary>
    [JsonPropertyName("priority_groups")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<string>? PriorityGroups { get; set; }

    /// <summary>nats-server 2.11's <c>priority_policy</c>: how the groups' pull requests share the messages.</summary>
    [JsonPropertyName("priority_policy")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public PriorityPolicy PriorityPolicy { get; set; }

    /// <summary>nats-server 2.11's <c>priority_timeout</c> (nanoseconds): how long a pin lasts without a pull request from its client.</summary>
    [JsonPropertyName("priority_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long PinnedTtl { get; set; }
}

/// <summary>CONSUMER.CREATE / DURABLE.CREATE request.</summary>
public sealed class CreateConsumerRequest
{
    [JsonPropertyName("stream_name")] public string StreamName { get; set; } = "";
    [JsonPropertyName("config")] public ConsumerConfig? Config { get; set; }
    [JsonPropertyName("action")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ConsumerAction Action { get; set; }
}

/// <summary>A position in the stream and the consumer's own sequence.</summary>
public sealed class SequenceInfo
{
    [JsonPropertyName("consumer_seq")] public ulong ConsumerSeq { get; set; }
    [JsonPropertyName("stream_seq")] public ulong StreamSeq { get; set; }
    [JsonPropertyName("last_active")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public DateTime? LastActive { get; set; }
}

/// <summary>CONSUMER.CREATE / INFO response and an entry of CONSUMER.LIST.</summary>
public sealed class ConsumerInfoResponse : ApiResponse
{
    [JsonPropertyName("stream_name")] public string StreamName { get; set; } = "";
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("created")] public DateTime Created { get; set; }
    [JsonPropertyName("config")] public ConsumerConfig? Config { get; set; }
    [JsonPropertyName("delivered")] public SequenceInfo Delivered { get; set; } = new();
    [JsonPropertyName("ack_floor")] public SequenceInfo AckFloor { get; set; } = new();
    [JsonPropertyName("num_ack_pending")] public long NumAckPending { get; set; }
    [JsonPropertyName("num_redelivered")] public long NumRedelivered { get; set; }
    [JsonPropertyName("num_waiting")] public int NumWaiting { get; set; }
    [JsonPropertyName("num_pending")] public ulong NumPending { get; set; }

    /// <summary>In a cluster: the cluster's name and the consumer's leader (a replicated stream's consumers live on its leader).</summary>
    [JsonPropertyName("cluster")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ClusterInfo? Cluster { get; set; }
    [JsonPropertyName("push_bound")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool PushBound { get; set; }

    /// <summary>The consumer is paused now (<see cref="ConsumerConfig.PauseUntil"/> is ahead).</summary>
    [JsonPropertyName("paused")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool Paused { get; set; }

    /// <summary>Nanoseconds until the pause ends, while paused.</summary>
    [JsonPropertyName("pause_remaining")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long PauseRemaining { get; set; }
    [JsonPropertyName("ts")] public DateTime Ts { get; set; }

    /// <summary>A consumer with priority groups: its first group and the client pinned to it (nats-server's PriorityGroupState).</summary>
    [JsonPropertyName("priority_groups")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<PriorityGroupState>? PriorityGroups { get; set; }

    /// <summary>Only in CONSUMER.RESET's answer (nats-server's JSApiConsumerResetResponse: the info and this): where the consumer starts again.</summary>
    [JsonPropertyName("reset_seq")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ulong? ResetSeq { get; set; }
}

/// <summary>
/// A priority group's state in CONSUMER.INFO (nats-server's PriorityGroupState): <c>pinned_ts</c> is always written,
/// the zero time when no client is pinned, as Go's omitempty leaves a time.Time in.
/// </summary>
public sealed class PriorityGroupState
{
    [JsonPropertyName("group")] public string Group { get; set; } = "";
    [JsonPropertyName("pinned_client_id")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? PinnedClientId { get; set; }
    [JsonPropertyName("pinned_ts")] public DateTime PinnedTs { get; set; } = DateTime.SpecifyKind(DateTime.MinValue, DateTimeKind.Utc);
}

/// <summary>CONSUMER.UNPIN request (nats-server's JSApiConsumerUnpinRequest).</summary>
public sealed class ConsumerUnpinRequest
{
    [JsonPropertyName("group")] public string? Group { get; set; }
}

/// <summary>CONSUMER.UNPIN response: only its type, or an error.</summary>
public sealed class ConsumerUnpinResponse : ApiResponse;

/// <summary>
/// nats-server's <c>io.nats.jetstream.advisory.v1.consumer_group_pinned</c> (on <c>$JS.EVENT.ADVISORY.CONSUMER.PINNED.&lt;stream&gt;.&lt;consumer&gt;</c>)
/// and <c>..._unpinned</c> (on <c>...UNPINNED...</c>, with the reason "admin" or "timeout"): JSConsumerGroupPinnedAdvisory / JSConsumerGroupUnpinnedAdvisory.
/// </summary>
public sealed class ConsumerGroupPinAdvisory
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("id")] public string Id { get; set; } = "";
    [JsonPropertyName("timestamp")] public DateTime Timestamp { get; set; }
    [JsonPropertyName("stream")] public string Stream { get; set; } = "";
    [JsonPropertyName("consumer")] public string Consumer { get; set; } = "";
    [JsonPropertyName("domain")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; set; }
    [JsonPropertyName("group")] public string Group { get; set; } = "";

    /// <summary>The pinned advisory's new pin.</summary>
    [JsonPropertyName("pinned_id")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? PinnedId { get; set; }

    /// <summary>The unpinned advisory's reason: "admin" (CONSUMER.UNPIN) or "timeout" (priority_timeout passed).</summary>
    [JsonPropertyName("reason")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Reason { get; set; }
}

/// <summary>CONSUMER.RESET request: no body (or no seq) goes back to the ack floor; a seq starts there.</summary>
public sealed class ConsumerResetRequest
{
    [JsonPropertyName("seq")] public ulong Seq { get; set; }
}

/// <summary>CONSUMER.PAUSE request: a time ahead pauses, none (or the zero time) resumes.</summary>
public sealed class ConsumerPauseRequest
{
    [JsonPropertyName("pause_until")] public DateTime? PauseUntil { get; set; }
}

/// <summary>CONSUMER.PAUSE response (nats-server's JSApiConsumerPauseResponse: pause_until is the zero time when resumed).</summary>
public sealed class ConsumerPauseResponse : ApiResponse
{
    [JsonPropertyName("paused")][JsonPropertyOrder(1)] public bool Paused { get; set; }
    [JsonPropertyName("pause_until")][JsonPropertyOrder(1)] public DateTime PauseUntil { get; set; }
    [JsonPropertyName("pause_remaining")][JsonPropertyOrder(1)][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long PauseRemaining { get; set; }
}

/// <summary>
/// nats-server's <c>io.nats.jetstream.advisory.v1.consumer_pause</c>, on
/// <c>$JS.EVENT.ADVISORY.CONSUMER.PAUSE.&lt;stream&gt;.&lt;consumer&gt;</c> when a consumer is paused or resumes.
/// </summary>
public sealed class ConsumerPauseAdvisory
{
    [JsonPropertyName("type")] public string Type { get; set; } = "io.nats.jetstream.advisory.v1.consumer_pause";
    [JsonPropertyName("id")] public string Id { get; set; } = "";
    [JsonPropertyName("timestamp")] public DateTime Timestamp { get; set; }
    [JsonPropertyName("stream")] public string Stream { get; set; } = "";
    [JsonPropertyName("consumer")] public string Consumer { get; set; } = "";
    [JsonPropertyName("paused")] public bool Paused { get; set; }
    [JsonPropertyName("pause_until")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public DateTime PauseUntil { get; set; }
    [JsonPropertyName("domain")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; set; }
}

public sealed class ConsumerNamesResponse : ApiResponse
{
    [JsonPropertyName("total")] public int Total { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("limit")] public int Limit { get; set; }
    [JsonPropertyName("consumers")] public List<string> Consumers { get; set; } = [];
}

public sealed class ConsumerListResponse : ApiResponse
{
    [JsonPropertyName("total")] public int Total { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
    [JsonPropertyName("limit")] public int Limit { get; set; }
    [JsonPropertyName("consumers")] public List<ConsumerInfoResponse> Consumers { get; set; } = [];
}

/// <summary>CONSUMER.MSG.NEXT request (a bare number means the batch size).</summary>
public sealed class NextRequest
{
    [JsonPropertyName("batch")] public int Batch { get; set; } = 1;
    [JsonPropertyName("expires")] public long Expires { get; set; }
    [JsonPropertyName("no_wait")] public bool NoWait { get; set; }
    [JsonPropertyName("max_bytes")] public long MaxBytes { get; set; }
    [JsonPropertyName("idle_heartbeat")] public long IdleHeartbeat { get; set; }

    // nats-server's PriorityGroup, embedded in the request (ADR-42).
    [JsonPropertyName("group")] public string? Group { get; set; }
    [JsonPropertyName("min_pending")] public long MinPending { get; set; }
    [JsonPropertyName("min_ack_pending")] public long MinAckPending { get; set; }
    [JsonPropertyName("id")] public string? Id { get; set; }
    [JsonPropertyName("priority")] public int Priority { get; set; }
}

/// <summary>
/// A durable consumer's definition, written once when it is created (<c>obs/&lt;name&gt;/meta.json</c>);
/// its progress is in the consumer journal under an id made of the stream, the name and <see cref="Created"/>.
/// </summary>
public sealed class ConsumerMetaFile
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("created")] public DateTime Created { get; set; }
    [JsonPropertyName("config")] public ConsumerConfig Config { get; set; } = new();
}

/// <summary>
/// nats-server's <c>io.nats.jetstream.advisory.v1.max_deliver</c>, published on
/// <c>$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.&lt;stream&gt;.&lt;consumer&gt;</c> when a message has been
/// delivered max_deliver times and is not delivered again.
/// </summary>
public sealed class MaxDeliveriesAdvisory
{
    [JsonPropertyName("type")] public string Type { get; set; } = "io.nats.jetstream.advisory.v1.max_deliver";
    [JsonPropertyName("id")] public string Id { get; set; } = "";
    [JsonPropertyName("timestamp")] public DateTime Timestamp { get; set; }
    [JsonPropertyName("stream")] public string Stream { get; set; } = "";
    [JsonPropertyName("consumer")] public string Consumer { get; set; } = "";
    [JsonPropertyName("stream_seq")] public ulong StreamSeq { get; set; }
    [JsonPropertyName("deliveries")] public long Deliveries { get; set; }
}

/// <summary>
/// nats-server's stream_leader_elected and consumer_leader_elected advisories (JSStreamLeaderElectedAdvisory,
/// JSConsumerLeaderElectedAdvisory): the new leader's name and the other replicas as it sees them.
/// </summary>
public sealed class LeaderElectedAdvisory
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("id")] public string Id { get; set; } = "";
    [JsonPropertyName("timestamp")] public DateTime Timestamp { get; set; }
    [JsonPropertyName("stream")] public string Stream { get; set; } = "";
    [JsonPropertyName("consumer")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Consumer { get; set; }
    [JsonPropertyName("leader")] public string Leader { get; set; } = "";
    [JsonPropertyName("replicas")] public List<PeerInfo> Replicas { get; set; } = [];
    [JsonPropertyName("domain")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; set; }
}

/// <summary>
/// nats-server's <c>io.nats.jetstream.advisory.v1.nak</c> and <c>io.nats.jetstream.advisory.v1.terminated</c>, on
/// <c>$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED</c> / <c>MSG_TERMINATED.&lt;stream&gt;.&lt;consumer&gt;</c> when a delivery is nakked or terminated.
/// </summary>
public sealed class DeliveryAdvisory
{
    [JsonPropertyName("type")] public string Type { get; set; } = "";
    [JsonPropertyName("id")] public string Id { get; set; } = "";
    [JsonPropertyName("timestamp")] public DateTime Timestamp { get; set; }
    [JsonPropertyName("stream")] public string Stream { get; set; } = "";
    [JsonPropertyName("consumer")] public string Consumer { get; set; } = "";
    [JsonPropertyName("consumer_seq")] public ulong ConsumerSeq { get; set; }
    [JsonPropertyName("stream_seq")] public ulong StreamSeq { get; set; }
    [JsonPropertyName("deliveries")] public long Deliveries { get; set; }
    [JsonPropertyName("domain")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; set; }
}

/// <summary>
/// nats-server's <c>io.nats.jetstream.metric.v1.consumer_ack</c>, on <c>$JS.EVENT.METRIC.CONSUMER.ACK.&lt;stream&gt;.&lt;consumer&gt;</c>
/// for the acks a consumer's sample_freq samples: <c>ack_time</c> is nanoseconds from the delivery (or the last
/// progress ack) to the ack.
/// </summary>
public sealed class ConsumerAckMetric
{
    [JsonPropertyName("type")] public string Type { get; set; } = "io.nats.jetstream.metric.v1.consumer_ack";
    [JsonPropertyName("id")] public string Id { get; set; } = "";
    [JsonPropertyName("timestamp")] public DateTime Timestamp { get; set; }
    [JsonPropertyName("stream")] public string Stream { get; set; } = "";
    [JsonPropertyName("consumer")] public string Consumer { get; set; } = "";
    [JsonPropertyName("consumer_seq")] public ulong ConsumerSeq { get; set; }
    [JsonPropertyName("stream_seq")] public ulong StreamSeq { get; set; }
    [JsonPropertyName("ack_time")] public long AckTime { get; set; }
    [JsonPropertyName("deliveries")] public long Deliveries { get; set; }
    [JsonPropertyName("domain")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; set; }
}

/// <summary>
/// nats-server's <c>io.nats.jetstream.advisory.v1.stream_action</c>, on
/// <c>$JS.EVENT.ADVISORY.STREAM.{CREATED,UPDATED,DELETED}.&lt;stream&gt;</c>: action create, modify or delete.
/// </summary>
public sealed class StreamActionAdvisory
{
    [JsonPropertyName("type")] public string Type { get; set; } = "io.nats.jetstream.advisory.v1.stream_action";
    [JsonPropertyName("id")] public string Id { get; set; } = "";
    [JsonPropertyName("timestamp")] public DateTime Timestamp { get; set; }
    [JsonPropertyName("stream")] public string Stream { get; set; } = "";
    [JsonPropertyName("action")] public string Action { get; set; } = "";
    [JsonPropertyName("domain")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; set; }
}

/// <summary>
/// nats-server's <c>io.nats.jetstream.advisory.v1.consumer_action</c>, on
/// <c>$JS.EVENT.ADVISORY.CONSUMER.{CREATED,DELETED}.&lt;stream&gt;.&lt;consumer&gt;</c>: action create or delete.
/// </summary>
public sealed class ConsumerActionAdvisory
{
    [JsonPropertyName("type")] public string Type { get; set; } = "io.nats.jetstream.advisory.v1.consumer_action";
    [JsonPropertyName("id")] public string Id { get; set; } = "";
    [JsonPropertyName("timestamp")] public DateTime Timestamp { get; set; }
    [JsonPropertyName("stream")] public string Stream { get; set; } = "";
    [JsonPropertyName("consumer")] public string Consumer { get; set; } = "";
    [JsonPropertyName("action")] public string Action { get; set; } = "";
    [JsonPropertyName("domain")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; set; }
}

/// <summary>Source-generated JSON for the consumer API.</summary>
[JsonSourceGenerationOptions(NumberHandling = JsonNumberHandling.AllowReadingFromString, AllowTrailingCommas = true)]
[JsonSerializable(typeof(CreateConsumerRequest))]
[JsonSerializable(typeof(ConsumerInfoResponse))]
[JsonSerializable(typeof(ConsumerNamesResponse))]
[JsonSerializable(typeof(ConsumerListResponse))]
[JsonSerializable(typeof(NextRequest))]
[JsonSerializable(typeof(ConsumerMetaFile))]
[JsonSerializable(typeof(MaxDeliveriesAdvisory))]
[JsonSerializable(typeof(ConsumerAckMetric))]
[JsonSerializable(typeof(DeliveryAdvisory))]
[JsonSerializable(typeof(LeaderElectedAdvisory))]
[JsonSerializable(typeof(StreamActionAdvisory))]
[JsonSerializable(typeof(ConsumerActionAdvisory))]
[JsonSerializable(typeof(ConsumerPauseRequest))]
[JsonSerializable(typeof(ConsumerPauseResponse))]
[JsonSerializable(typeof(ConsumerResetRequest))]
[JsonSerializable(typeof(ConsumerPauseAdvisory))]
[JsonSerializable(typeof(ConsumerUnpinRequest))]
[JsonSerializable(typeof(ConsumerUnpinResponse))]
[JsonSerializable(typeof(ConsumerGroupPinAdvisory))]
public sealed partial class ConsumerJsonContext : JsonSerializerContext;
