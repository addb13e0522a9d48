using System.Buffers;
using System.Buffers.Binary;
using System.Globalization;
using System.Runtime.InteropServices;
using Courier.Protocols.Subjects;

namespace Courier.Storage.FileStorage;

/// <summary>
/// Opening a store: each block's header, then its index file if it has a valid one (no message
/// bytes read), then a record-by-record scan of whatever the index does not cover (the tail of the
/// write block after a crash, or a whole block without a usable index). Damage is cut off or
/// skipped, reported in <see cref="IStreamStore.Warnings"/> and, for messages, in the lost list.
/// </summary>
internal sealed partial class FileStore
{
    private ulong _diskFloor;

    private void Recover()
    {
        lock (StateLock)
        {
            _recovering = true;
            try
            {
                RecoverLocked();
            }
            finally
            {
                _recovering = false;
            }

            foreach (var block in _blocks)
            {
                if (block != _write && block.LiveMsgs == 0)
                {
                    Doom(block);
                }
            }

            foreach (var block in BlocksNeedingIndex(includeWriteBlock: false) ?? [])
            {
                WriteIndex(block);
            }

            _persistedFloor = _diskFloor;
            EnforceLimitsLocked();
            RebuildTtlIndexLocked();
        }

        Flush(); // writes a floor record and deletes empty blocks if recovery found any
    }

    private void RecoverLocked()
    {
        foreach (var stale in _fs.ListFiles(_directory, "*.tmp"))
        {
            _fs.Delete(stale);
        }

        var found = new List<(uint Id, long Length, bool HeaderOk, ulong Floor, bool Reset)>();
        Span<byte> header = stackalloc byte[BlockHeader.Size];
        foreach (var path in _fs.ListFiles(_directory, "*.blk"))
        {
            if (!uint.TryParse(Path.GetFileNameWithoutExtension(path), NumberStyles.None, CultureInfo.InvariantCulture, out var id))
            {
                continue;
            }

            var length = _fs.FileLength(path);
            var ok = false;
            ulong floor = 0;
            var reset = false;
            if (length >= BlockHeader.Size)
            {
                using var handle = _fs.Open(path, FileMode.Open);
                ok = handle.Read(header, 0) == BlockHeader.Size
                    && BlockHeader.TryRead(header, out var headerId, out floor, out reset) && headerId == id;
            }

            found.Add((id, length, ok, floor, reset));
        }

        found.Sort((a, b) => a.Id.CompareTo(b.Id));

        // A purge writes a reset block before deleting the older ones; if it crashed in between,
        // those older blocks are obsolete.
        var start = found.FindLastIndex(f => f.HeaderOk && f.Reset);
        for (var i = 0; i < start; i++)
        {
            var obsolete = new MsgBlock(_fs, _directory, found[i].Id);
            _fs.Delete(obsolete.DataPath);
            _fs.Delete(obsolete.IndexPath);
            _directoryDirty = true;
        }

        foreach (var (id, length, headerOk, floor, _) in found.Skip(Math.Max(start, 0)))
        {
            _nextBlockId = Math.Max(_nextBlockId, id + 1);
            var block = new MsgBlock(_fs, _directory, id);
            if (length < BlockHeader.Size || (!headerOk && IsPreallocatedLength(length) && IsAllZero(block)))
            {
                // Created by a rollover whose first flush never happened (a taken spare is all zeros).
                if (length is > 0 and < BlockHeader.Size)
                {
                    AddWarning(new StoreWarning(StoreWarningKind.TruncatedTail, $"block {id}: {length} bytes, shorter than its header; removed"));
                }

                _fs.Delete(block.DataPath);
                _fs.Delete(block.IndexPath);
                _directoryDirty = true;
                continue;
            }

            if (headerOk)
            {
                RestoreFloor(floor);
                _diskFloor = Math.Max(_diskFloor, floor);
            }
            else
            {
                AddWarning(new StoreWarning(StoreWarningKind.CorruptBlockHeader, $"block {id}: header damaged; records recovered by scanning"));
            }

            _blocks.Add(block);
            LoadBlock(block, length);
        }

        if (_blocks.Count == 0)
        {
            _write = null!;
            StartBlock(reset: false, FloorLocked);
            ApplyInitialFirstSeqLocked();
            return;
        }

        foreach (var block in _blocks)
        {
            block.Sealed = true;
        }

        var last = _blocks[^1];
        _write = last;
        if (last.Length < _blockSize && found[^1].HeaderOk && found[^1].Id == last.Id)
        {
            last.Sealed = false;
            last.IndexCurrent = false; // appends will outgrow it; rewritten on stop
        }
        else
        {
            Rollover(reset: false, FloorLocked);
        }
    }

    /// <summary>Restores one block's records into the store state.</summary>
    private void LoadBlock(MsgBlock block, long length)
    {
        List<IndexEntry> entries;
        List<IndexEntry>? indexedBeyond = null;
        long covered;
        string? problem = null;
        if (!_options.VerifyOnOpen && BlockIndex.TryRead(_fs, block.IndexPath, block.Id, length, _key, out entries, out covered, out problem))
        {
            Recovery.BlocksFromIndex++;
        }
        else
        {
            if (problem is not null && !_options.VerifyOnOpen)
            {
                AddWarning(new StoreWarning(StoreWarningKind.CorruptIndex, $"block {block.Id}: index unusable ({problem}); block scanned"));

                // An intact index that covers more than the file: the block lost its end (truncated, or
                // unsynced under an interval). The index still says what was there.
                if (BlockIndex.TryRead(_fs, block.IndexPath, block.Id, long.MaxValue, _key, out var listed, out var listedCovered, out _) && listedCovered > length)
                {
                    indexedBeyond = listed;
                }
            }

            entries = [];
            covered = BlockHeader.Size;
            Recovery.BlocksScanned++;
        }

        var claims = new List<(ulong Seq, ulong Bytes)>();
        var end = length;
        if (covered < length)
        {
            Recovery.BytesScanned += length - covered;
            end = ScanRegion(block, covered, length, entries, claims, report: true);
            if (end < length)
            {
                block.TruncateFile(end);
                _directoryDirty = true;
            }
        }

        block.StartAppending(end);
        block.IndexCurrent = covered == length;

        // Messages first, in sequence order, then the other records in file order. A block's messages
        // ascend by offset, and its tombstones and floors only concern messages before them, so for an
        // intact block this is the file order's result. Damage that moves whole valid records (a swapped
        // or misdirected sector) leaves them out of order; restoring them as found would make every
        // intact message after a moved one with a higher sequence look old and be skipped (found by the
        // corruption tests).
        var span = CollectionsMarshal.AsSpan(entries);
        foreach (var i in MessagesBySequence(span))
        {
            ref var e = ref span[i];
            if (RestoreMessage(e.Sequence, e.Timestamp, e.Subject, Pack(block.Id, e.Offset), e.Length - (uint)_sealOverhead, out var subject))
            {
                block.LiveMsgs++;
                e.Subject = subject!.Key; // share the table's copy
            }
        }

        for (var i = 0; i < span.Length; i++)
        {
            ref var e = ref span[i];
            switch (e.Kind)
            {
                case RecordKind.Tombstone:
                    if (TryGetSlot(e.Sequence, out var target))
                    {
                        if (target.IsLive)
                        {
                            RemoveLocked(e.Sequence);
                        }

                        if (BlockOf(target.Location) != block.Id)
                        {
                            block.HeldTombstones.Add(e.Sequence);
                        }
                    }

                    break;
                case RecordKind.Floor:
                    RestoreFloor(e.Sequence);
                    RestoreSequence(e.Aux, e.Timestamp);
                    _diskFloor = Math.Max(_diskFloor, e.Sequence);
                    break;
                case RecordKind.Erased:
                    RestoreSequence(e.Sequence, e.Timestamp);
                    break;
            }
        }

        if (indexedBeyond is not null)
        {
            // Records the index listed past the valid end: their messages are lost (reported), and their
            // sequences stay used so a restart never hands them out again.
            foreach (var e in indexedBeyond)
            {
                if (e.Offset + (long)e.Length > end && e.Kind is RecordKind.Message or RecordKind.Erased or RecordKind.Floor)
                {
                    var seq = e.Kind == RecordKind.Floor ? e.Aux : e.Sequence;
                    if (e.Kind == RecordKind.Message && !(TryGetSlot(e.Sequence, out var there) && there.IsLive))
                    {
                        claims.Add((e.Sequence, e.Length - (uint)_sealOverhead));
                    }
                    else if (seq > LastSeqLocked)
                    {
                        RestoreSequence(seq, e.Timestamp);
                        _diskFloor = 0; // the next flush persists the last sequence in a floor record
                    }
                }
            }
        }

        foreach (var (seq, bytes) in claims)
        {
            if (TryGetSlot(seq, out var restored) && restored.IsLive)
            {
                continue; // a gap in the scan claimed it, then it was found intact (moved)
            }

            AddLost(seq, bytes);
            if (seq > LastSeqLocked)
            {
                RestoreSequence(seq, LastTimeLocked);
                _diskFloor = 0; // the next flush persists the last sequence in a floor record
            }
        }
    }

    /// <summary>The positions of the message entries, ascending by sequence (file order when it already is).</summary>
    private static List<int> MessagesBySequence(ReadOnlySpan<IndexEntry> entries)
    {
        var positions = new List<int>(entries.Length);
        var ascending = true;
        ulong previous = 0;
        for (var i = 0; i < entries.Length; i++)
        {
            if (entries[i].Kind == RecordKind.Message)
            {
                ascending &= entries[i].Sequence > previous;
                previous = entries[i].Sequence;
                positions.Add(i);
            }
        }

        if (!ascending)
        {
            var keys = new ulong[positions.Count];
            for (var k = 0; k < keys.Length; k++)
            {
                keys[k] = entries[positions[k]].Sequence;
            }

            var sorted = positions.ToArray();
            Array.Sort(keys, sorted); // unstable, but equal sequences (copies) restore once either way
            positions = [.. sorted];
        }

        return positions;
    }

    /// <summary>
    /// Reads records in [from, to) of a block file, adding an entry per valid record. A damaged
    /// record followed by valid ones is skipped (its message lost); damage with nothing valid after
    /// it is a torn tail. Returns where the valid data ends (the file is cut there by the caller).
    /// </summary>
    private long ScanRegion(MsgBlock block, long from, long to, List<IndexEntry> entries, List<(ulong Seq, ulong Bytes)>? claims, bool report)
    {
        var buffer = ArrayPool<byte>.Shared.Rent((int)(to - from));
        try
        {
            var read = 0;
            while (read < to - from)
            {
                var n = block.Handle.Read(buffer.AsSpan(read, (int)(to - from) - read), from + read);
                if (n <= 0)
                {
                    break;
                }

                read += n;
            }

            return ScanBuffer(block, from, buffer.AsSpan(0, read), entries, claims, report);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private long ScanBuffer(MsgBlock block, long from, ReadOnlySpan<byte> data, List<IndexEntry> entries, List<(ulong Seq, ulong Bytes)>? claims, bool report)
    {
        var subjects = new Dictionary<byte[], byte[]>(SubjectBytesComparer.Instance).GetAlternateLookup<ReadOnlySpan<byte>>();
        // The last good message sequence before the scanned bytes: from this block's indexed entries,
        // else (recovery) the last sequence of the blocks before it. A damaged record is believed to
        // be the message it names only if that is the next sequence.
        var previous = report ? LastSeqLocked : 0;
        for (var i = entries.Count - 1; i >= 0; i--)
        {
            if (entries[i].Kind is RecordKind.Message or RecordKind.Erased)
            {
                previous = entries[i].Sequence;
                break;
            }
        }

        var gap = false;
        var pos = 0;
        var scratch = Array.Empty<byte>();
        while (pos < data.Length)
        {
            var rest = data[pos..];
            if (TryRecordAt(rest, ref scratch, out var h, out var record, out var stored))
            {
                var e = new IndexEntry
                {
                    Offset = (uint)(from + pos),
                    Length = (uint)stored,
                    Sequence = h.Sequence,
                    Timestamp = h.Timestamp,
                    Kind = h.Kind,
                };
                if (h.Kind is RecordKind.Message or RecordKind.Erased)
                {
                    if (h.Kind == RecordKind.Message)
                    {
                        var subject = record.Slice(RecordFormat.HeaderSize, h.SubjectLength);
                        if (!subjects.TryGetValue(subject, out var shared))
                        {
                            shared = subject.ToArray();
                            subjects[subject] = shared;
                        }

                        e.Subject = shared; // one array per distinct subject of the block
                    }

                    if (gap && h.Sequence > previous + 1)
                    {
                        for (var lost = previous + 1; lost < h.Sequence && claims is not null; lost++)
                        {
                            claims.Add((lost, 0));
                        }
                    }

                    gap = false;
                    previous = h.Sequence;
                }
                else if (h.Kind == RecordKind.Floor)
                {
                    var payload = record.Slice(RecordFormat.HeaderSize, RecordFormat.FloorPayload);
                    e.Aux = BinaryPrimitives.ReadUInt64LittleEndian(payload);
                    e.Timestamp = BinaryPrimitives.ReadInt64LittleEndian(payload[8..]);
                }

                entries.Add(e);
                pos += stored;
                continue;
            }

            if (IsUnwrittenTail(from + pos, rest))
            {
                return from + pos; // the rest of a preallocated block, never written
            }

            // Damage at pos. Does a valid record follow? (A sealed record's header cannot be read unless it is intact.)
            var header = _key is null && rest.Length >= RecordFormat.HeaderSize ? RecordFormat.ReadHeader(rest) : default;
            var plausible = _key is null && rest.Length >= RecordFormat.HeaderSize && RecordFormat.IsPlausible(header, MaxRecordSize);
            var next = FindNextValid(data, pos + 1, ref scratch);
            if (plausible && header.Kind == RecordKind.Message && header.Sequence == previous + 1)
            {
                // The fixed part reads right: the message it names is the one lost.
                if (next >= 0 || header.Length == rest.Length)
                {
                    claims?.Add((header.Sequence, header.Length));
                    previous = header.Sequence;
                }
            }
            else
            {
                gap = true;
            }

            var where = $"block {block.Id} offset {from + pos}";
            if (next < 0)
            {
                if (report)
                {
                    var whole = plausible && header.Length == rest.Length;
                    var partial = IsPreallocatedLength(from + data.Length) ? rest.LastIndexOfAnyExcept((byte)0) + 1 : rest.Length; // a preallocated block's zeros are no record
                    AddWarning(whole
                        ? new StoreWarning(StoreWarningKind.CorruptRecord, $"{where}: last record failed its checksum; message {header.Sequence} lost", header.Sequence)
                        : new StoreWarning(StoreWarningKind.TruncatedTail, $"{where}: {partial} bytes of partial record cut off"));
                }

                return from + pos;
            }

            if (report)
            {
                AddWarning(new StoreWarning(StoreWarningKind.CorruptRecord, $"{where}: {next - pos} damaged bytes skipped" + (plausible ? $" (message {header.Sequence} lost)" : ""), plausible ? header.Sequence : 0));
            }

            pos = next;
        }

        return from + pos;
    }

    /// <summary>The first position at or after <paramref name="start"/> where a whole valid record begins, or -1.</summary>
    private int FindNextValid(ReadOnlySpan<byte> data, int start, ref byte[] scratch)
    {
        for (var p = start; p + RecordFormat.Overhead <= data.Length; p++)
        {
            if (data[p] == 0 && data[p + 1] == 0 && data[p + 2] == 0 && data[p + 3] == 0)
            {
                // A record's length (its first 4 bytes) is never 0: skip a run of zeros (a preallocated tail) at once.
                var nonZero = data[p..].IndexOfAnyExcept((byte)0);
                if (nonZero < 0)
                {
                    return -1;
                }

                p += Math.Max(0, nonZero - 4); // the loop's p++ lands 3 bytes before the first non-zero byte
                continue;
            }

            if (TryRecordAt(data[p..], ref scratch, out _, out _, out _))
            {
                return p;
            }
        }

        return -1;
    }
}
