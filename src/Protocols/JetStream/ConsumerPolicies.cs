using System.Text.Json;
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

/// <summary>
/// What a consumer create may do to a consumer of the same name (nats-server 2.10's <c>action</c> of
/// <c>CreateConsumerRequest</c>, consumer.go <c>ConsumerAction</c>).
/// </summary>
[JsonConverter(typeof(ConsumerActionConverter))]
public enum ConsumerAction
{
    /// <summary>"" or absent: create it, or answer with the one that exists.</summary>
    CreateOrUpdate,

    /// <summary>"create": only create; one that exists with another configuration is refused (10148).</summary>
    Create,

    /// <summary>"update": only change one that exists; none is refused (10149).</summary>
    Update,
}

/// <summary>The wire names of <see cref="DeliverPolicy"/>; an unknown one is invalid JSON, as nats-server.</summary>
public sealed class DeliverPolicyConverter : JsonConverter<DeliverPolicy>
{
    private static readonly WireNames Names = new(nameof(DeliverPolicy), null, ("all", (int)DeliverPolicy.All), ("last", (int)DeliverPolicy.Last), ("new", (int)DeliverPolicy.New), ("by_start_sequence", (int)DeliverPolicy.ByStartSequence), ("by_start_time", (int)DeliverPolicy.ByStartTime), ("last_per_subject", (int)DeliverPolicy.LastPerSubject));

    public override bool HandleNull => true;

    public override DeliverPolicy Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) => (DeliverPolicy)Names.Read(ref reader);

    public override void Write(Utf8JsonWriter writer, DeliverPolicy value, JsonSerializerOptions options) => Names.Write(writer, (int)value);
}

/// <summary>The wire names of <see cref="AckPolicy"/>; an unknown one is invalid JSON, as nats-server.</summary>
public sealed class AckPolicyConverter : JsonConverter<AckPolicy>
{
    private static readonly WireNames Names = new(nameof(AckPolicy), null, ("none", (int)AckPolicy.None), ("all", (int)AckPolicy.All), ("explicit", (int)AckPolicy.Explicit));

    public override bool HandleNull => true;

    public override AckPolicy Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) => (AckPolicy)Names.Read(ref reader);

    public override void Write(Utf8JsonWriter writer, AckPolicy value, JsonSerializerOptions options) => Names.Write(writer, (int)value);
}

/// <summary>The wire names of <see cref="ReplayPolicy"/>; an unknown one is invalid JSON, as nats-server.</summary>
public sealed class ReplayPolicyConverter : JsonConverter<ReplayPolicy>
{
    private static readonly WireNames Names = new(nameof(ReplayPolicy), null, ("instant", (int)ReplayPolicy.Instant), ("original", (int)ReplayPolicy.Original));

    public override bool HandleNull => true;

    public override ReplayPolicy Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) => (ReplayPolicy)Names.Read(ref reader);

    public override void Write(Utf8JsonWriter writer, ReplayPolicy value, JsonSerializerOptions options) => Names.Write(writer, (int)value);
}

/// <summary>The wire names of <see cref="ConsumerAction"/>; an unknown one (or null) is invalid JSON, as nats-server.</summary>
public sealed class ConsumerActionConverter : JsonConverter<ConsumerAction>
{
    private static readonly WireNames Names = new(nameof(ConsumerAction), null, ("", (int)ConsumerAction.CreateOrUpdate), ("create", (int)ConsumerAction.Create), ("update", (int)ConsumerAction.Update));

    public override bool HandleNull => true;

    public override ConsumerAction Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) => (ConsumerAction)Names.Read(ref reader);

    public override void Write(Utf8JsonWriter writer, ConsumerAction value, JsonSerializerOptions options) => Names.Write(writer, (int)value);
}
