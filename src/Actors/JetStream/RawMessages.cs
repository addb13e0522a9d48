using System.Buffers;
using System.Text;
using Courier.Actors.Connections;

namespace Courier.Actors.JetStream;

/// <summary>Where one message of a <see cref="RawMessages"/> batch lies in its buffer.</summary>
internal readonly record struct RawEntry(int Subject, int SubjectLength, int Reply, int ReplyLength, int Headers, int HeadersLength, int Payload, int PayloadLength);

/// <summary>
/// A read batch of messages copied into one pooled buffer: what a stream appends, without a string
/// or an array per message. The receiver owns it and calls <see cref="Release"/> when done.
/// </summary>
internal sealed class RawMessages
{
    private byte[] _data;
    private RawEntry[] _entries;

    public RawMessages(byte[] data, RawEntry[] entries, int count)
    {
        _data = data;
        _entries = entries;
        Count = count;
    }

    public int Count { get; private set; }

    public RawEntry this[int index] => _entries[index];

    public ReadOnlyMemory<byte> Subject(int index) => _data.AsMemory(_entries[index].Subject, _entries[index].SubjectLength);

    public ReadOnlySpan<byte> Reply(int index) => _data.AsSpan(_entries[index].Reply, _entries[index].ReplyLength);

    public ReadOnlyMemory<byte> Headers(int index) => _data.AsMemory(_entries[index].Headers, _entries[index].HeadersLength);

    public ReadOnlyMemory<byte> Payload(int index) => _data.AsMemory(_entries[index].Payload, _entries[index].PayloadLength);

    /// <summary>One message as an <see cref="InternalMessage"/> (for the paths that need strings: headers, expectations).</summary>
    public InternalMessage ToMessage(int index)
    {
        var e = _entries[index];
        return new InternalMessage(
            Encoding.UTF8.GetString(_data, e.Subject, e.SubjectLength),
            e.ReplyLength == 0 ? null : Encoding.UTF8.GetString(_data, e.Reply, e.ReplyLength),
            e.HeadersLength == 0 ? null : _data.AsSpan(e.Headers, e.HeadersLength).ToArray(),
            _data.AsSpan(e.Payload, e.PayloadLength).ToArray());
    }

    /// <summary>Gives the buffers back to their pools; the batch is empty afterwards.</summary>
    public void Release()
    {
        if (Count < 0)
        {
            return;
        }

        ArrayPool<byte>.Shared.Return(_data);
        ArrayPool<RawEntry>.Shared.Return(_entries);
        _data = [];
        _entries = [];
        Count = -1;
    }

    public override string ToString() => $"RawMessages({Count})";
}

/// <summary>Collects a read batch into a <see cref="RawMessages"/> and hands it over.</summary>
internal sealed class RawMessageSink(Action<RawMessages> handler) : DeliverySink
{
    private byte[] _data = ArrayPool<byte>.Shared.Rent(4096);
    private RawEntry[] _entries = ArrayPool<RawEntry>.Shared.Rent(64);
    private int _used;
    private int _count;

    public override void Add(in InProcessMessage frame)
    {
        var headers = Math.Max(frame.HeaderSize, 0);
        var total = (int)frame.Payload.Length;
        Reserve(frame.Subject.Length + frame.ReplyTo.Length + total);
        var subject = Put(frame.Subject);
        var reply = Put(frame.ReplyTo);
        var body = _used;
        frame.Payload.CopyTo(_data.AsSpan(_used));
        _used += total;
        if (_count == _entries.Length)
        {
            var grown = ArrayPool<RawEntry>.Shared.Rent(_count * 2);
            _entries.AsSpan(0, _count).CopyTo(grown);
            ArrayPool<RawEntry>.Shared.Return(_entries);
            _entries = grown;
        }

        _entries[_count++] = new RawEntry(subject, frame.Subject.Length, reply, frame.ReplyTo.Length, body, headers, body + headers, total - headers);
    }

    public override void Complete()
    {
        var batch = new RawMessages(_data, _entries, _count);
        _data = ArrayPool<byte>.Shared.Rent(Math.Max(4096, _used));
        _entries = ArrayPool<RawEntry>.Shared.Rent(Math.Max(64, _count));
        _used = 0;
        _count = 0;
        handler(batch);
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
        if (_used + bytes <= _data.Length)
        {
            return;
        }

        var grown = ArrayPool<byte>.Shared.Rent(Math.Max(_data.Length * 2, _used + bytes));
        _data.AsSpan(0, _used).CopyTo(grown);
        ArrayPool<byte>.Shared.Return(_data);
        _data = grown;
    }
}
