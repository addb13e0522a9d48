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

/// <summary>How a pull consumer's priority groups share its messages (nats-server's <c>priority_policy</c>, ADR-42).</summary>
[JsonConverter(typeof(PriorityPolicyConverter))]
public enum PriorityPolicy
{
    /// <summary>"none": no priority groups.</summary>
    None,

    /// <summary>"overflow": a pull request with min_pending / min_ack_pending gets messages only while the consumer is that far behind.</summary>
    Overflow,

    /// <summary>"pinned_client": one client (its pin id) gets the messages until it stops asking for priority_timeout, or is unpinned.</summary>
    PinnedClient,

    /// <summary>"prioritized" (2.12): waiting pull requests are served by their priority, 0 first.</summary>
    Prioritized,
}

/// <summary>
/// The wire names of <see cref="PriorityPolicy"/>, exact as nats-server's UnmarshalJSON: any other value (a
/// number, null) is refused with its words, <c>unknown priority policy: "x"</c> (the raw JSON), which the API
/// answers as <c>invalid JSON: …</c>.
/// </summary>
public sealed class PriorityPolicyConverter : JsonConverter<PriorityPolicy>
{
    private static readonly WireNames Names = new(nameof(PriorityPolicy), -1, ("none", (int)PriorityPolicy.None), ("overflow", (int)PriorityPolicy.Overflow), ("pinned_client", (int)PriorityPolicy.PinnedClient), ("prioritized", (int)PriorityPolicy.Prioritized));

    public override bool HandleNull => true;

    public override PriorityPolicy Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        if (reader.TokenType == JsonTokenType.String)
        {
            var value = Names.Read(ref reader);
            if (value >= 0)
            {
                return (PriorityPolicy)value;
            }
        }

        // Go prints the raw JSON it was given: the string with its quotes (and escapes), a number, null, ...
        string raw;
        if (reader.TokenType is JsonTokenType.StartObject or JsonTokenType.StartArray)
        {
            var array = reader.TokenType == JsonTokenType.StartArray;
            reader.Skip();
            raw = array ? "[...]" : "{...}";
        }
        else
        {
            var text = System.Text.Encoding.UTF8.GetString(reader.HasValueSequence ? System.Buffers.BuffersExtensions.ToArray(reader.ValueSequence) : reader.ValueSpan);
            raw = reader.TokenType == JsonTokenType.String ? $"\"{text}\"" : text;
        }

        throw new WireValueException($"unknown priority policy: {raw}");
    }

    public override void Write(Utf8JsonWriter writer, PriorityPolicy value, JsonSerializerOptions options) => Names.Write(writer, (int)value);
}

/// <summary>
/// A value nats-server's own UnmarshalJSON refuses with its own words (the message): the API answers
/// <c>invalid JSON: &lt;message&gt;</c> (10025), as nats-server's NewJSInvalidJSONError(err).
/// </summary>
public sealed class WireValueException(string message) : JsonException(message);
