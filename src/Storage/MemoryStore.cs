using Courier.Protocols.JetStream;
using Courier.Storage.Internal;

namespace Courier.Storage;

/// <summary>
/// The memory store: each message's headers and payload in one array, indexed by sequence. Reads
/// hand out slices of that array (it is never written again), so a load copies nothing.
/// Semantics live in <see cref="StoreCore"/>, shared with the FileStore.
/// </summary>
internal sealed class MemoryStore : StoreCore
{
    private readonly SeqTable<byte[]?> _data = new();

    public MemoryStore(StoreConfig config)
        : base(config)
    {
        lock (StateLock)
        {
            ApplyInitialFirstSeqLocked();
        }
    }

    /// <inheritdoc/>
    public override StorageType Type => StorageType.Memory;

    /// <summary>Nothing to do: memory is never durable.</summary>
    public override void Flush()
    {
    }

    /// <summary>Nothing to do: memory is never durable.</summary>
    public override void Sync()
    {
    }

    /// <inheritdoc/>
    protected override ulong StoreRecord(ulong seq, long timestamp, SubjectEntry subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, uint size)
    {
        byte[] data;
        if (headers.Length + payload.Length == 0)
        {
            data = [];
        }
        else
        {
            data = GC.AllocateUninitializedArray<byte>(headers.Length + payload.Length);
            headers.CopyTo(data);
            payload.CopyTo(data.AsSpan(headers.Length));
        }

        _data.GetOrAdd(seq) = data;
        return (ulong)headers.Length; // the location of a memory record is where its payload starts
    }

    /// <inheritdoc/>
    protected override void RecordRemoved(ulong seq, in MsgSlot slot, Removal removal)
    {
        if (_data.Contains(seq))
        {
            _data[seq] = null;
        }

        if (removal == Removal.Front)
        {
            _data.TrimBelow(FirstSeqLocked);
        }
    }

    /// <inheritdoc/>
    protected override StoredMessage? ReadRecord(ulong seq, in MsgSlot slot, SubjectEntry subject)
    {
        var data = _data[seq]!;
        var headersLength = (int)slot.Location;
        return new StoredMessage(subject.Text, data.AsMemory(0, headersLength), data.AsMemory(headersLength), seq, slot.Timestamp);
    }

    /// <inheritdoc/>
    protected override void AllRemoved(ulong nextSeq) => _data.Clear();

    /// <inheritdoc/>
    protected override void Truncated(ulong seq) => _data.ClearFrom(seq + 1);

    /// <summary>Drops the array (readers holding the message keep their copy of the reference).</summary>
    protected override void EraseRecord(ulong seq, in MsgSlot slot) => _data[seq] = null;

    /// <inheritdoc/>
    protected override void StopBackend()
    {
        lock (StateLock)
        {
            _data.Clear();
        }
    }

    /// <inheritdoc/>
    protected override void DeleteBackend()
    {
    }
}
