using System.Globalization;
using System.Numerics;
using System.Text;
using Courier.Protocols.JetStream;
using Courier.Protocols.Nats;

namespace Courier.Actors.JetStream;

/// <summary>
/// Distributed counters (nats-server 2.12, ADR-49, <c>allow_msg_counter</c>): a publish with
/// <c>Nats-Incr</c> stores the subject's new total, <c>{"val":"&lt;n&gt;"}</c>, with the publish's headers,
/// and its PubAck carries <c>"val"</c>. A sourced counter message adds the difference from the last total
/// copied from that origin and subject, which <c>Nats-Counter-Sources</c> records.
/// </summary>
/// <remarks>
/// The total is computed where every other publish check is: in <see cref="AppendChecked"/>, against the
/// store. A replicated stream applies its log in order on every replica with the same checks, so each
/// replica computes the same totals from the same stores (nats-server's leader computes them before it
/// proposes, keeping running totals of its proposals in flight; Courier proposes the increment itself).
/// A stream without allow_msg_counter pays one span search of a publish's headers for <c>Nats-Incr</c>
/// (nats-server refuses it there); a publish without headers is not looked at.
/// </remarks>
internal sealed partial class StreamActor
{
    /// <summary>
    /// nats-server's increment checks (processJetStreamMsg, before the dedupe): an unreadable <c>Nats-Incr</c>;
    /// one on a stream without counters, with a payload, or with headers a counter cannot honour (Nats-Rollup,
    /// Nats-Expected-*). A sourced message is stored as it comes (its value is read in <see cref="ApplyIncrement"/>).
    /// </summary>
    private ApiError? CheckIncrement(ReadOnlySpan<byte> headers, int payloadLength, bool sourced, out BigInteger? increment)
    {
        if (!MessageCounter.TryReadIncrement(headers, out increment))
        {
            return MessageCounter.Invalid;
        }

        if (increment is null || sourced)
        {
            return null;
        }

        if (!_config.AllowMsgCounter)
        {
            return MessageCounter.Disabled;
        }

        if (payloadLength > 0)
        {
            return MessageCounter.Payload;
        }

        var incompatible =
            !MessageCounter.SliceHeader(headers, "Nats-Rollup:"u8).IsEmpty ||
            !MessageCounter.SliceHeader(headers, "Nats-Expected-Stream:"u8).IsEmpty ||
            !MessageCounter.SliceHeader(headers, "Nats-Expected-Last-Msg-Id:"u8).IsEmpty ||
            !MessageCounter.SliceHeader(headers, "Nats-Expected-Last-Subject-Sequence-Subject:"u8).IsEmpty ||
            !MessageCounter.SliceHeader(headers, "Nats-Expected-Last-Sequence:"u8).IsEmpty ||
            !MessageCounter.SliceHeader(headers, "Nats-Expected-Last-Subject-Sequence:"u8).IsEmpty;
        return incompatible ? MessageCounter.Invalid : null;
    }

    /// <summary>
    /// Adds <paramref name="increment"/> to the subject's last total (0 without one) and turns the message into
    /// the stored one: the new total as its payload, and for a sourced total (<c>Nats-Stream-Source</c>) the
    /// difference from that origin's previous total as its <c>Nats-Incr</c>, with <c>Nats-Counter-Sources</c>.
    /// A last message that is no counter is nats-server's "message counter is broken".
    /// </summary>
    private ApiError? ApplyIncrement(string subject, string? originSubject, ref byte[]? headers, ref byte[] payload, BigInteger increment, out string total)
    {
        total = "";
        var initial = BigInteger.Zero;
        SortedDictionary<string, SortedDictionary<string, string>>? sources = null;
        if (_store.LoadLastMessage(subject) is { Found: true, Message: { } last })
        {
            if (!MessageCounter.TryReadValue(last.Payload.Span, out initial))
            {
                return MessageCounter.Broken;
            }

            var recorded = MessageCounter.SliceHeader(last.Headers.Span, "Nats-Counter-Sources:"u8);
            if (!recorded.IsEmpty && !MessageCounter.TryReadSources(recorded, out sources))
            {
                return MessageCounter.Broken;
            }
        }

        var source = MessageCounter.SliceHeader(headers, "Nats-Stream-Source:"u8);
        if (!source.IsEmpty)
        {
            // Nats-Stream-Source: <origin> <sequence> [<filter> <destination> <origin subject>]: 2.12 writes five fields and
            // keys the sources by the fifth; Courier writes 2.9's two, so its own copies say the origin subject apart.
            var fields = Encoding.UTF8.GetString(source).Split(' ');
            var origin = fields[0];
            originSubject = fields.Length >= 5 ? fields[4] : originSubject ?? subject;
            if (!MessageCounter.TryReadValue(payload, out var sourcedTotal))
            {
                return MessageCounter.Broken;
            }

            sources ??= new(StringComparer.Ordinal);
            if (!sources.TryGetValue(origin, out var subjects))
            {
                sources[origin] = subjects = new(StringComparer.Ordinal);
            }

            subjects.TryGetValue(originSubject, out var previousText);
            subjects[originSubject] = sourcedTotal.ToString(CultureInfo.InvariantCulture);
            MessageCounter.TryParseInteger(Encoding.UTF8.GetBytes(previousText ?? ""), out var previous);
            increment = sourcedTotal - previous;
            headers = NatsHeaders.Set(headers, MessageCounter.IncrHeader, increment.ToString(CultureInfo.InvariantCulture));
        }

        var sum = initial + increment;
        total = sum.ToString(CultureInfo.InvariantCulture);
        payload = MessageCounter.FormatValue(sum);
        if (sources is { Count: > 0 })
        {
            headers = NatsHeaders.Set(headers, MessageCounter.SourcesHeader, MessageCounter.FormatSources(sources));
        }

        return null;
    }

    /// <summary>A counter's PubAck as nats-server writes it: <c>{"stream":"S", "seq":5,"val":"42"}</c>.</summary>
    private byte[] FormatCounterAck(ulong seq, string total)
    {
        Span<byte> ackJson = stackalloc byte[_pubAckPrefix.Length + 48];
        var plain = FormatPubAck(ackJson, seq, duplicate: false); // ends with '}'
        var value = Encoding.ASCII.GetBytes(total);
        var json = new byte[plain.Length - 1 + ",\"val\":\""u8.Length + value.Length + "\"}"u8.Length];
        plain[..^1].CopyTo(json);
        var p = plain.Length - 1;
        ",\"val\":\""u8.CopyTo(json.AsSpan(p));
        p += ",\"val\":\""u8.Length;
        value.CopyTo(json.AsSpan(p));
        p += value.Length;
        "\"}"u8.CopyTo(json.AsSpan(p));
        return json;
    }
}
