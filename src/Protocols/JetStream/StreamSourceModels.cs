using System.Text.Json.Serialization;

namespace Courier.Protocols.JetStream;

/// <summary>A stream's <c>mirror</c> or one of its <c>sources</c> (nats-server's StreamSource).</summary>
public sealed class StreamSource
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("opt_start_seq")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public ulong OptStartSeq { get; set; }
    [JsonPropertyName("opt_start_time")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public DateTime? OptStartTime { get; set; }
    [JsonPropertyName("filter_subject")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? FilterSubject { get; set; }

    /// <summary>2.10: each transform takes the origin subjects matching its <c>src</c> and maps them to <c>dest</c> (kept as they are when <c>dest</c> is empty).</summary>
    [JsonPropertyName("subject_transforms")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<SubjectTransformConfig>? SubjectTransforms { get; set; }
    [JsonPropertyName("external")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ExternalStream? External { get; set; }

    /// <summary>Fields Courier does not act on, echoed as sent.</summary>
    [JsonExtensionData] public Dictionary<string, System.Text.Json.JsonElement>? Unknown { get; set; }
}

/// <summary>
/// How far a mirror or source has come (nats-server's StreamSourceInfo): <c>lag</c> is how many
/// origin messages are still to copy, <c>active</c> the nanoseconds since the origin was last
/// reached (-1 when never).
/// </summary>
public sealed class StreamSourceInfo
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("external")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ExternalStream? External { get; set; }
    [JsonPropertyName("lag")] public ulong Lag { get; set; }
    [JsonPropertyName("active")] public long Active { get; set; }
    [JsonPropertyName("error")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ApiError? Error { get; set; }

    /// <summary>2.10: the source's <c>filter_subject</c>, when it has one.</summary>
    [JsonPropertyName("filter_subject")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? FilterSubject { get; set; }

    /// <summary>2.10: the source's transforms, each with its <c>src</c> as given and its <c>dest</c> ("" when it only filters).</summary>
    [JsonPropertyName("subject_transforms")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public List<SubjectTransformConfig>? SubjectTransforms { get; set; }
}

/// <summary>
/// Where a mirror's or source's origin lives when it is not in this account's own JetStream
/// (nats-server's ExternalStream): the API prefix to reach it and the prefix of the delivery
/// subjects. nats-server prints both, empty or not.
/// </summary>
public sealed class ExternalStream
{
    [JsonPropertyName("api")] public string ApiPrefix { get; set; } = "";
    [JsonPropertyName("deliver")] public string DeliverPrefix { get; set; } = "";
}

/// <summary>A stream's <c>subject_transform</c> (nats-server 2.10's SubjectTransformConfig).</summary>
public sealed class SubjectTransformConfig
{
    [JsonPropertyName("src")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Source { get; set; }
    [JsonPropertyName("dest")] public string Destination { get; set; } = "";
}

/// <summary>A stream's <c>republish</c>: each stored message matching <c>src</c> is published again on <c>dest</c>.</summary>
public sealed class RePublish
{
    [JsonPropertyName("src")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Source { get; set; }
    [JsonPropertyName("dest")] public string Destination { get; set; } = "";
    [JsonPropertyName("headers_only")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool HeadersOnly { get; set; }
}

/// <summary>STREAM.INFO request: the deleted sequences and a page of per-subject counts.</summary>
public sealed class StreamInfoRequest
{
    [JsonPropertyName("deleted_details")] public bool DeletedDetails { get; set; }
    [JsonPropertyName("subjects_filter")] public string? SubjectsFilter { get; set; }
    [JsonPropertyName("offset")] public int Offset { get; set; }
}
