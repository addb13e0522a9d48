using System.Buffers.Binary;
using Courier.Storage.Internal;

namespace Courier.Storage.FileStorage;

/// <summary>Appending records to the write block, and starting new blocks.</summary>
internal sealed partial class FileStore
{
    /// <inheritdoc/>
    /// <remarks>Hot path: encodes into the write block's buffer; allocates only when the buffer grows. Nothing
    /// else is kept per record: a sealed block's index is built from its file once it is written.</remarks>
    protected override ulong StoreRecord(ulong seq, long timestamp, SubjectEntry subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, uint size)
    {
        var block = WriteBlockFor(size + (uint)_sealOverhead);
        var offset = block.Length;
        RecordFormat.Write(ReserveRecord(block, size), RecordKind.Message, seq, timestamp, subject.Key, headers, payload);
        block.LiveMsgs++;
        return Pack(block.Id, offset);
    }

    /// <summary>Appends a tombstone for <paramref name="seq"/>, whose message is in block <paramref name="targetBlock"/>. Lock held.</summary>
    private void AppendTombstone(ulong seq, uint targetBlock)
    {
        var block = AppendMarker(RecordKind.Tombstone, seq, []);
        if (targetBlock != block.Id)
        {
            block.HeldTombstones.Add(seq);
        }
    }

    /// <summary>Appends a floor record: the current first sequence, last sequence and last time. Lock held.</summary>
    private void AppendFloor()
    {
        Span<byte> payload = stackalloc byte[RecordFormat.FloorPayload];
        BinaryPrimitives.WriteUInt64LittleEndian(payload, LastSeqLocked);
        BinaryPrimitives.WriteInt64LittleEndian(payload[8..], LastTimeLocked);
        var floor = FloorLocked;
        AppendMarker(RecordKind.Floor, floor, payload);
        _persistedFloor = floor;
    }

    private MsgBlock AppendMarker(RecordKind kind, ulong seq, ReadOnlySpan<byte> payload)
    {
        var size = (uint)(RecordFormat.Overhead + payload.Length);
        var block = WriteBlockFor(size + (uint)_sealOverhead);
        RecordFormat.Write(ReserveRecord(block, size), kind, seq, NowUnixNanos(), [], [], payload);
        return block;
    }

    /// <summary>The write block, after a rollover when a record of <paramref name="size"/> would take it past the block size.</summary>
    private MsgBlock WriteBlockFor(uint size)
    {
        var block = _write;
        if (block.Length + size > _blockSize && block.Length > BlockHeader.Size)
        {
            block = Rollover(reset: false, FloorLocked);
        }
        else if (block.Length > _blockSize / 2 && _spareState == SpareNone)
        {
            PrepareSpare(); // half full: this store fills blocks, have the next one ready by the rollover
        }

        return block;
    }

    /// <summary>Seals the write block and starts the next one. Lock held.</summary>
    private MsgBlock Rollover(bool reset, ulong floor)
    {
        var sealedBlock = _write;
        sealedBlock.Sealed = true;
        if (sealedBlock.LiveMsgs == 0)
        {
            Doom(sealedBlock);
        }

        return StartBlock(reset, floor);
    }

    /// <summary>Creates the next block file (or takes the prepared spare) with its header buffered and makes it the write block. Lock held.</summary>
    private MsgBlock StartBlock(bool reset, ulong floor)
    {
        var block = new MsgBlock(_fs, _directory, _nextBlockId++);
        var spare = TryTakeSpare(block);
        if (!spare)
        {
            _ = block.Handle; // create the file now: a failure surfaces here, not in a later flush
            block.Handle.SetLength(0);
        }

        block.StartAppending(0);
        if (spare)
        {
            block.Allocated = _blockSize;
        }

        BlockHeader.Write(block.Reserve(BlockHeader.Size), block.Id, floor, reset);
        _blocks.Add(block);
        _write = block;
        _directoryDirty = true;
        return block;
    }

    /// <summary>Marks a block with no live messages for deletion at the next flush. Lock held.</summary>
    private void Doom(MsgBlock block)
    {
        if (!block.Doomed && block != _write)
        {
            block.Doomed = true;
            _doomed.Add(block);
        }
    }
}
