using System.Buffers;
using System.Text;
using Courier.Actors.JetStream;

namespace Courier.Actors.Connections;

/// <summary>
/// Messages an in-process client hands to the publish pipeline at once: their subjects, replies,
/// headers and payloads side by side in one buffer (no protocol text), with an entry per message.
/// Pooled by its client: steady state allocates nothing.
/// </summary>
internal sealed class PublishBatch
{
    private const int InitialBytes = 4096; // bytes: a few PubAcks or API replies
    private const int InitialEntries = 16;

    private byte[] _data = new byte[InitialBytes];
    private Entry[] _entries = new Entry[InitialEntries];
    private int _used;

    /// <summary>Messages in the batch.</summary>
    public int Count { get; private set; }

    /// <summary>Bytes of the batch's buffer in use.</summary>
    public int Bytes => _used;

    /// <summary>A <see cref="InProcessClient.FlushAsync"/> waiting for everything queued before it.</summary>
    public TaskCompletionSource? Barrier { get; set; }

    /// <param name="subject">The subject routed on.</param>
    /// <param name="shownSubject">The subject delivered (a JetStream delivery's own); null: the same.</param>
    /// <param name="replyTo">The reply subject, or null.</param>
    /// <param name="headers">The header block, or empty.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="mqttQoS">Published as from an MQTT client at this QoS (a will its session publishes); 0 otherwise.</param>
    public void Add(string subject, string? shownSubject, string? replyTo, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, byte mqttQoS = 0)
    {
        Reserve(Encoding.UTF8.GetMaxByteCount(subject.Length + (shownSubject?.Length ?? 0) + (replyTo?.Length ?? 0)) + headers.Length + payload.Length);
        var (subjectAt, subjectLength) = Put(subject);
        var (shownAt, shownLength) = shownSubject is null ? (subjectAt, subjectLength) : Put(shownSubject);
        var (replyAt, replyLength) = replyTo is null ? (0, 0) : Put(replyTo);
        AddBody(subjectAt, subjectLength, shownAt, shownLength, replyAt, replyLength, headers, payload, mqttQoS);
    }

    /// <summary>A message without headers or reply to a subject given as UTF-8 bytes.</summary>
    public void Add(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> payload)
    {
        Reserve(subject.Length + payload.Length);
        var subjectAt = Put(subject);
        AddBody(subjectAt, subject.Length, subjectAt, subject.Length, 0, 0, default, payload);
    }

    /// <summary>A JetStream delivery: routed on <paramref name="deliverSubject"/>, shown as <paramref name="subject"/>, the ack reply formatted in place.</summary>
    public void Add(string deliverSubject, string subject, in AckReply ack, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        Reserve(Encoding.UTF8.GetMaxByteCount(deliverSubject.Length + subject.Length) + AckReply.MaxLength(ack.Prefix) + headers.Length + payload.Length);
        var (deliverAt, deliverLength) = Put(deliverSubject);
        var (subjectAt, subjectLength) = Put(subject);
        var replyAt = _used;
        var replyLength = ack.Format(_data.AsSpan(_used));
        _used += replyLength;
        AddBody(deliverAt, deliverLength, subjectAt, subjectLength, replyAt, replyLength, headers, payload);
    }

    /// <summary>Runs every message through <paramref name="publisher"/>, in order.</summary>
    public void PublishTo(Publisher publisher)
    {
        var data = _data;
        for (var i = 0; i < Count; i++)
        {
            ref readonly var e = ref _entries[i];
            publisher.InboundQoS = e.MqttQoS; // MQTT subscribers get the lower of it and theirs (0 for every other message)
            publisher.Publish(
                new ReadOnlySpan<byte>(data, e.Subject, e.SubjectLength),
                new ReadOnlySpan<byte>(data, e.Shown, e.ShownLength),
                new ReadOnlySpan<byte>(data, e.Reply, e.ReplyLength),
                e.HeaderSize,
                new ReadOnlySequence<byte>(data, e.Body, e.BodyLength));
        }

        publisher.InboundQoS = 0;
    }

    /// <summary>Empties the batch for reuse; returns its buffer's size.</summary>
    public int Reset()
    {
        _used = 0;
        Count = 0;
        Barrier = null;
        return _data.Length;
    }

    private void AddBody(int subjectAt, int subjectLength, int shownAt, int shownLength, int replyAt, int replyLength, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, byte mqttQoS = 0)
    {
        var body = _used;
        headers.CopyTo(_data.AsSpan(_used));
        _used += headers.Length;
        payload.CopyTo(_data.AsSpan(_used));
        _used += payload.Length;
        if (Count == _entries.Length)
        {
            Array.Resize(ref _entries, Count * 2);
        }

        _entries[Count++] = new Entry(subjectAt, subjectLength, shownAt, shownLength, replyAt, replyLength, body, headers.IsEmpty ? -1 : headers.Length, headers.Length + payload.Length, mqttQoS);
    }

    private (int At, int Length) Put(string text)
    {
        var at = _used;
        var length = Encoding.UTF8.GetBytes(text, _data.AsSpan(_used));
        _used += length;
        return (at, length);
    }

    private int Put(ReadOnlySpan<byte> bytes)
    {
        var at = _used;
        bytes.CopyTo(_data.AsSpan(_used));
        _used += bytes.Length;
        return at;
    }

    private void Reserve(int bytes)
    {
        if (_used + bytes > _data.Length)
        {
            Array.Resize(ref _data, Math.Max(_data.Length * 2, _used + bytes));
        }
    }

    /// <summary>Where one message's parts are in the buffer; <see cref="HeaderSize"/> -1 without headers.</summary>
    private readonly record struct Entry(int Subject, int SubjectLength, int Shown, int ShownLength, int Reply, int ReplyLength, int Body, int HeaderSize, int BodyLength, byte MqttQoS);
}
