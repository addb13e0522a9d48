using System.Security.Cryptography;
using Courier.Storage.Internal;

namespace Courier.Storage.FileStorage;

/// <summary>What deletes, purges, truncation and erasure do to the files.</summary>
internal sealed partial class FileStore
{
    /// <inheritdoc/>
    /// <remarks>An interior delete appends a tombstone; a front removal writes nothing now (the floor
    /// record of the next flush covers it). A block left with no live messages is doomed.</remarks>
    protected override void RecordRemoved(ulong seq, in MsgSlot slot, Removal removal)
    {
        var blockId = BlockOf(slot.Location);
        var block = FindBlock(blockId);
        if (block is not null)
        {
            block.LiveMsgs--;
        }

        if (_recovering)
        {
            return;
        }

        if (removal == Removal.Interior)
        {
            AppendTombstone(seq, blockId);
        }

        if (block is not null && block.LiveMsgs == 0 && block.Sealed)
        {
            Doom(block);
        }
    }

    /// <inheritdoc/>
    /// <remarks>
    /// Starts a block flagged reset (every older block is obsolete), makes it durable, then deletes
    /// every older block. A crash in between leaves obsolete blocks that recovery ignores.
    /// </remarks>
    protected override void AllRemoved(ulong nextSeq)
    {
        var obsolete = _blocks.ToArray();
        if (_write is not null)
        {
            _write.Sealed = true;
        }

        var fresh = StartBlock(reset: true, nextSeq);
        AppendFloor();
        WriteNow(fresh);
        foreach (var block in obsolete)
        {
            _blocks.Remove(block);
            _readHandles.Remove(block);
            block.Dispose();
            _fs.Delete(block.DataPath);
            _fs.Delete(block.IndexPath);
        }

        _doomed.Clear();
        _pinned.Clear();
        InvalidateWindows(null);
        _fs.SyncDirectory(_directory);
        _directoryDirty = false;
    }

    /// <inheritdoc/>
    /// <remarks>
    /// Cuts the block holding <paramref name="seq"/> right after its record and deletes the newer
    /// blocks. Tombstones that lived past the cut and still matter are first written, with a floor
    /// record, into a new write block and made durable.
    /// </remarks>
    protected override void Truncated(ulong seq)
    {
        if (!TryGetSlot(seq, out var slot))
        {
            return;
        }

        var cutBlock = FindBlock(BlockOf(slot.Location))!;
        var cut = (long)OffsetOf(slot.Location) + slot.Size + _sealOverhead;
        foreach (var block in _blocks)
        {
            WriteNow(block);
        }

        var entries = EntriesOf(cutBlock);
        var later = _blocks.Where(b => b.Id > cutBlock.Id).ToArray();
        var carry = new List<(ulong Seq, uint Block)>();
        foreach (var e in entries)
        {
            if (e.Offset >= cut && e.Kind == RecordKind.Tombstone)
            {
                AddIfNeeded(e.Sequence);
            }
        }

        foreach (var block in later)
        {
            foreach (var t in block.HeldTombstones)
            {
                AddIfNeeded(t);
            }
        }

        _write.Sealed = true;
        cutBlock.Sealed = true;
        var fresh = StartBlock(reset: false, FloorLocked);
        foreach (var (target, block) in carry)
        {
            AppendTombstone(target, block);
        }

        AppendFloor();
        WriteNow(fresh);

        foreach (var block in later)
        {
            _blocks.Remove(block);
            _readHandles.Remove(block);
            _doomed.Remove(block);
            _pinned.Remove(block);
            block.Dispose();
            _fs.Delete(block.DataPath);
            _fs.Delete(block.IndexPath);
        }

        cutBlock.TruncateFile(cut);
        cutBlock.Handle.Sync();
        _fs.Delete(cutBlock.IndexPath);
        cutBlock.IndexCurrent = false;
        cutBlock.HeldTombstones.Clear();
        foreach (var e in entries)
        {
            if (e.Offset < cut && e.Kind == RecordKind.Tombstone && TryGetSlot(e.Sequence, out var target) && BlockOf(target.Location) != cutBlock.Id)
            {
                cutBlock.HeldTombstones.Add(e.Sequence);
            }
        }

        InvalidateWindows(null);
        _fs.SyncDirectory(_directory);

        void AddIfNeeded(ulong target)
        {
            if (target <= seq && target >= FloorLocked && TryGetSlot(target, out var s) && !s.IsLive && BlockOf(s.Location) <= cutBlock.Id)
            {
                carry.Add((target, BlockOf(s.Location)));
            }
        }
    }

    /// <inheritdoc/>
    /// <remarks>Rewrites the record in place as an erased record of random bytes with a fresh checksum.</remarks>
    protected override void EraseRecord(ulong seq, in MsgSlot slot)
    {
        var block = FindBlock(BlockOf(slot.Location));
        if (block is null)
        {
            return;
        }

        var offset = OffsetOf(slot.Location);
        var length = (int)slot.Size + _sealOverhead;
        if (block.TryGetBufferedForWrite(offset, length, out var buffered))
        {
            Scramble(_key is null ? buffered : buffered[SealPrefix..^Encryption.Aead.TagSize]);
        }
        else
        {
            WriteNow(block);
            var record = new byte[length];
            if (!ReadExactly(ReadHandle(block), offset, record))
            {
                return;
            }

            if (_key is null)
            {
                Scramble(record);
            }
            else
            {
                // Decrypt, scramble, seal again with a fresh nonce: the erased record stays a valid sealed record.
                var scratch = Array.Empty<byte>();
                if (!TryUnseal(record, buffered: false, ref scratch, out var plain))
                {
                    return;
                }

                var erased = plain.ToArray();
                Scramble(erased);
                SealRecord(_key, erased, record);
            }

            block.Handle.Write(record, offset);
            block.Handle.Sync();
            InvalidateWindows(block);
        }

        // An index file still lists the record as a message; the tombstone (or floor) removes it on load.
    }

    private static void Scramble(Span<byte> record)
    {
        record[4] = (byte)RecordKind.Erased;
        RandomNumberGenerator.Fill(record[RecordFormat.HeaderSize..^4]);
        RecordFormat.Seal(record);
    }

    /// <summary>Writes a block's buffered bytes and fsyncs it, synchronously. Lock and I/O gate held (structural changes only).</summary>
    private void WriteNow(MsgBlock block)
    {
        if (block.BeginFlush())
        {
            WriteInflight(block);
            block.EndFlush();
        }

        if (block.Unsynced)
        {
            block.Handle.Sync();
            block.Unsynced = false;
            SyncCount++;
        }
    }

    /// <summary>Every record of a block: from its index if current, else by scanning it. Lock held.</summary>
    private List<IndexEntry> EntriesOf(MsgBlock block)
    {
        if (BlockIndex.TryRead(_fs, block.IndexPath, block.Id, block.FileLength, _key, out var entries, out var covered, out _) && covered == block.FileLength)
        {
            return entries;
        }

        entries = [];
        ScanRegion(block, BlockHeader.Size, block.FileLength, entries, claims: null, report: false);
        return entries;
    }
}
