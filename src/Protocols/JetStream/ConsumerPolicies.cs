using System.Text.Json.Serialization;

namespace Courier.Protocols.JetStream;

/// <summary>Where a new consumer starts (nats-server's <c>deliver_policy</c>).</summary>
[JsonConverter(typeof(DeliverPolicyConverter))]
public enum DeliverPolicy
{
    /// <summary>"all": from the stream's first message.</summary>
    All,

    /// <summary>"last": from the last message (the last one its filters match).</summary>
    Last,

    /// <summary>"new": only messages stored after it is created.</summary>
    New,

    /// <summary>"by_start_sequence": from <c>opt_start_seq</c>.</summary>
    ByStartSequence,

    /// <summary>"by_start_time": from the first message at or after <c>opt_start_time</c>.</summary>
    ByStartTime,

    /// <summary>"last_per_subject": the last message of every matching subject, then what arrives.</summary>
    LastPerSubject,
}

/// <summary>What a consumer's deliveries need from the client (nats-server's <c>ack_policy</c>).</summary>
[JsonConverter(typeof(AckPolicyConverter))]
public enum AckPolicy
{
    /// <summary>"none": nothing; a delivery is done when sent.</summary>
    None,

    /// <summary>"all": an ack acknowledges every delivery up to it.</summary>
    All,

    /// <summary>"explicit": every delivery is acknowledged on its own.</summary>
    Explicit,
}

/// <summary>How fast a consumer replays stored messages (nats-server's <c>replay_policy</c>).</summary>
[JsonConverter(typeof(ReplayPolicyConverter))]
public enum ReplayPolicy
{
    /// <summary>"instant": as fast as the client takes them.</summary>
    Instant,

    /// <summary>"original": at the pace they were stored.</summary>
    Original,
}

/// <summary>The wire names of <see cref="DeliverPolicy"/>; an unknown one is invalid JSON, as nats-server.</summary>
public sealed class DeliverPolicyConverter() : WireEnumConverter<DeliverPolicy>(
    null,
    ("all", DeliverPolicy.All),
    ("last", DeliverPolicy.Last),
    ("new", DeliverPolicy.New),
    ("by_start_sequence", DeliverPolicy.ByStartSequence),
    ("by_start_time", DeliverPolicy.ByStartTime),
    ("last_per_subject", DeliverPolicy.LastPerSubject));

/// <summary>The wire names of <see cref="AckPolicy"/>; an unknown one is invalid JSON, as nats-server.</summary>
public sealed class AckPolicyConverter() : WireEnumConverter<AckPolicy>(
    null, ("none", AckPolicy.None), ("all", AckPolicy.All), ("explicit", AckPolicy.Explicit));

/// <summary>The wire names of <see cref="ReplayPolicy"/>; an unknown one is invalid JSON, as nats-server.</summary>
public sealed class ReplayPolicyConverter() : WireEnumConverter<ReplayPolicy>(
    null, ("instant", ReplayPolicy.Instant), ("original", ReplayPolicy.Original));
