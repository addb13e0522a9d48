using System.Buffers;
using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Courier.Actors.Connections;

namespace Courier.Actors.JetStream;

/// <summary>What an acknowledgement's body asks for (nats-server's AckAck, AckNak, AckProgress, AckTerm, AckNext).</summary>
internal enum AckKind : byte
{
    /// <summary>An empty body or <c>+ACK</c>.</summary>
    Ack,

    /// <summary><c>-NAK</c>, optionally with <c>{"delay": ns}</c>.</summary>
    Nak,

    /// <summary><c>+WPI</c>: still working, restart the ack wait.</summary>
    Progress,

    /// <summary><c>+TERM</c>: never redeliver.</summary>
    Term,

    /// <summary><c>+NXT</c>: acknowledge and ask for the next message on the reply subject.</summary>
    Next,

    /// <summary>A body none of the above: changes nothing, but a double ack is still confirmed.</summary>
    Other,
}

/// <summary>
/// One acknowledgement, decoded from <c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;delivered&gt;.&lt;stream seq&gt;.&lt;consumer seq&gt;.&lt;timestamp&gt;.&lt;pending&gt;</c>
/// and its body.
/// </summary>
/// <param name="Consumer">The consumer's name (the same string instance for a run of acks to one consumer).</param>
/// <param name="StreamSeq">The acknowledged message's stream sequence.</param>
/// <param name="Kind">What the body asks for.</param>
/// <param name="DelayNanos">For <see cref="AckKind.Nak"/>: the redelivery delay, 0 for at once.</param>
/// <param name="Reply">The ack's reply subject (a double ack, or <c>+NXT</c>'s inbox), if any.</param>
internal readonly record struct AckEntry(string Consumer, ulong StreamSeq, AckKind Kind, long DelayNanos, string? Reply);

/// <summary>
/// The stream's subscription to its ack subjects: decodes each ack straight from the read buffer
/// (no string per subject or token, no body copy) and hands the stream one array per read batch.
/// </summary>
internal sealed class AckSink(Action<AckEntry[]> handler) : DeliverySink
{
    private readonly List<AckEntry> _batch = [];
    private byte[] _lastConsumerBytes = [];
    private string _lastConsumer = "";

    public override void Add(in InProcessMessage frame)
    {
        // $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<timestamp>.<pending>
        var subject = frame.Subject;
        ReadOnlySpan<byte> consumer = default, streamSeq = default;
        var tokens = 0;
        foreach (var range in subject.Split((byte)'.'))
        {
            switch (tokens++)
            {
                case 3:
                    consumer = subject[range];
                    break;
                case 5:
                    streamSeq = subject[range];
                    break;
            }
        }

        if (tokens < 9 || !Utf8Parser.TryParse(streamSeq, out ulong seq, out var used) || used != streamSeq.Length)
        {
            return;
        }

        if (!consumer.SequenceEqual(_lastConsumerBytes))
        {
            _lastConsumerBytes = consumer.ToArray();
            _lastConsumer = Encoding.UTF8.GetString(consumer);
        }

        var headerSize = Math.Max(frame.HeaderSize, 0);
        var payload = frame.Payload.Slice(headerSize);
        Span<byte> small = stackalloc byte[64];
        var body = payload.IsSingleSegment ? payload.FirstSpan : payload.Length <= small.Length ? Copy(payload, small) : payload.ToArray();
        var (kind, delay) = Classify(body);
        var reply = frame.ReplyTo.IsEmpty ? null : Encoding.UTF8.GetString(frame.ReplyTo);
        _batch.Add(new AckEntry(_lastConsumer, seq, kind, delay, reply));
    }

    public override void Complete()
    {
        var batch = _batch.ToArray();
        _batch.Clear();
        handler(batch);
    }

    /// <summary>Decodes an ack body: the kind, and a <c>-NAK</c>'s delay in nanoseconds.</summary>
    internal static (AckKind Kind, long DelayNanos) Classify(ReadOnlySpan<byte> body)
    {
        if (body.IsEmpty || body.StartsWith("+ACK"u8))
        {
            return (AckKind.Ack, 0);
        }

        if (body.StartsWith("-NAK"u8))
        {
            return (AckKind.Nak, NakDelay(body[4..]));
        }

        if (body.StartsWith("+WPI"u8))
        {
            return (AckKind.Progress, 0);
        }

        if (body.StartsWith("+TERM"u8))
        {
            return (AckKind.Term, 0);
        }

        return body.StartsWith("+NXT"u8) ? (AckKind.Next, 0) : (AckKind.Other, 0);
    }

    private static ReadOnlySpan<byte> Copy(ReadOnlySequence<byte> payload, Span<byte> into)
    {
        payload.CopyTo(into);
        return into[..(int)payload.Length];
    }

    // -NAK {"delay": <ns>}: anything else (or malformed JSON) redelivers at once.
    private static long NakDelay(ReadOnlySpan<byte> rest)
    {
        rest = rest.Trim((byte)' ');
        if (rest.IsEmpty || rest[0] != (byte)'{')
        {
            return 0;
        }

        try
        {
            var reader = new Utf8JsonReader(rest);
            while (reader.Read())
            {
                if (reader.TokenType == JsonTokenType.PropertyName && reader.CurrentDepth == 1 && reader.ValueTextEquals("delay"u8)
                    && reader.Read() && reader.TokenType == JsonTokenType.Number && reader.TryGetInt64(out var ns))
                {
                    return Math.Max(ns, 0);
                }
            }
        }
        catch (JsonException)
        {
            // Malformed: as if no delay was given.
        }

        return 0;
    }
}

/// <summary>
/// A delivered message's ack subject, nats-server's format:
/// <c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.&lt;delivered&gt;.&lt;stream seq&gt;.&lt;consumer seq&gt;.&lt;timestamp&gt;.&lt;pending&gt;</c>,
/// formatted in place by <see cref="InProcessClient"/>.
/// </summary>
/// <param name="Prefix">UTF-8 <c>$JS.ACK.&lt;stream&gt;.&lt;consumer&gt;.</c>, made once per consumer.</param>
/// <param name="Deliveries">How often this message has been delivered, this time included.</param>
/// <param name="StreamSeq">The message's stream sequence.</param>
/// <param name="ConsumerSeq">The consumer's delivery sequence.</param>
/// <param name="Timestamp">When the message was stored, in Unix nanoseconds.</param>
/// <param name="Pending">Messages still to deliver after this one.</param>
internal readonly record struct AckReply(byte[] Prefix, long Deliveries, ulong StreamSeq, ulong ConsumerSeq, long Timestamp, long Pending)
{
    public static byte[] MakePrefix(string stream, string consumer) => Encoding.UTF8.GetBytes($"$JS.ACK.{stream}.{consumer}.");

    /// <summary>The most bytes <see cref="Format"/> writes after this prefix: five numbers and their dots.</summary>
    public static int MaxLength(byte[] prefix) => prefix.Length + (5 * 20) + 4;

    /// <summary>The formatted length in bytes (what a pull request's max_bytes counts).</summary>
    public int Length => Prefix.Length + Digits((ulong)Deliveries) + Digits(StreamSeq) + Digits(ConsumerSeq) + Digits((ulong)Timestamp) + Digits((ulong)Math.Max(Pending, 0)) + 4;

    public int Format(Span<byte> into)
    {
        Prefix.CopyTo(into);
        var p = Prefix.Length;
        p += Number(into[p..], (ulong)Deliveries, dot: true);
        p += Number(into[p..], StreamSeq, dot: true);
        p += Number(into[p..], ConsumerSeq, dot: true);
        p += Number(into[p..], (ulong)Timestamp, dot: true);
        p += Number(into[p..], (ulong)Math.Max(Pending, 0), dot: false);
        return p;
    }

    public override string ToString()
    {
        Span<byte> text = stackalloc byte[MaxLength(Prefix)];
        return Encoding.UTF8.GetString(text[..Format(text)]);
    }

    private static int Digits(ulong value)
    {
        var digits = 1;
        while (value >= 10)
        {
            value /= 10;
            digits++;
        }

        return digits;
    }

    private static int Number(Span<byte> into, ulong value, bool dot)
    {
        Utf8Formatter.TryFormat(value, into, out var written);
        if (dot)
        {
            into[written++] = (byte)'.';
        }

        return written;
    }
}
