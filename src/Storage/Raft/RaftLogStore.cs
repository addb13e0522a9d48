using System.Buffers;
using System.Buffers.Binary;
using Courier.Raft;
using Courier.Storage.Internal;
using Courier.Storage.IO;

namespace Courier.Storage.Raft;

/// <summary>
/// One Raft group member's durable state in its own directory, as nats-server keeps a group's log
/// in a filestore: <c>log/</c> is a FileStore whose sequence is the Raft index (one
/// record per entry: subject <c>n</c> or <c>c</c> for the entry type, payload the term then the
/// data), <c>state</c> the term and vote (two checksummed slots, written in turn, so a torn write
/// leaves the other), <c>snapshot</c> the latest snapshot (checksummed, replaced by rename).
/// </summary>
/// <remarks>
/// <see cref="Save"/> is the host's step 2 of a <see cref="Ready"/>: durable on return, one log
/// write and one fsync for all its entries (group commit), one more fsync only when the term or
/// vote changed. The commit index is written only with those: it is a lower bound after a
/// restart, which is safe (the leader tells it again); writing it on every Ready would double the
/// fsyncs, and writing it unsynced could tear the slot that holds the last synced vote.
/// </remarks>
public sealed class RaftLogStore : IDisposable
{
    private const int SlotSize = 48;            // bytes: magic 4, version 1, pad 3, counter 8, term 8, vote 8, commit 8, crc 4, pad 4
    private const byte Version = 1;
    private static ReadOnlySpan<byte> StateMagic => "CRHS"u8;
    private static ReadOnlySpan<byte> SnapshotMagic => "CRSN"u8;
    private static ReadOnlySpan<byte> NormalSubject => "n"u8;
    private static ReadOnlySpan<byte> ConfSubject => "c"u8;

    private readonly string _directory;
    private readonly StoreFileSystem _fs;
    private readonly IStreamStore _log;
    private readonly StoreFile _state;
    private StoreEncryption? _encryption;
    private ulong _stateCounter;
    private HardState _written;
    private Snapshot? _snapshot;
    private bool _snapshotDamaged;
    private ulong _repairFloor;
    private ulong _repairFloorTerm;
    private const string RepairFile = "repair"; // RepairFloor and its term: 8 bytes each, then their CRC-32C

    private RaftLogStore(string directory, StoreFileSystem fs, IStreamStore log, StoreFile state)
    {
        _directory = directory;
        _fs = fs;
        _log = log;
        _state = state;
    }

    /// <summary>Opens (or creates) the member's directory.</summary>
    /// <param name="directory">The member's directory.</param>
    /// <param name="encryption">Encryption at rest: the log's records and the snapshot are sealed (the hard
    /// state, three numbers, is not); null: plaintext.</param>
    /// <exception cref="StoreKeyException">The log or snapshot is encrypted and no configured key opens it.</exception>
    public static RaftLogStore Open(string directory, StoreEncryption? encryption = null) => Open(directory, StoreFileSystem.Os, preallocate: true, encryption);

    internal static RaftLogStore Open(string directory, StoreFileSystem fs, bool preallocate, StoreEncryption? encryption = null)
    {
        fs.CreateDirectory(directory);
        var log = StreamStores.OpenFile(Path.Combine(directory, "log"), new StoreConfig { Name = "raft" },
            new FileStoreOptions
            {
                FileSystem = fs,
                Preallocate = preallocate,
                PreallocateInline = !preallocate,
                BlockSize = 4L * 1024 * 1024,
                Encryption = encryption,
                EncryptionContext = "raft:" + Path.GetFileName(Path.TrimEndingDirectorySeparator(directory)),
            });
        var statePath = Path.Combine(directory, "state");
        var created = fs.ReadAllBytes(statePath) is null;
        var state = fs.Open(statePath, FileMode.OpenOrCreate);
        if (created) fs.SyncDirectory(directory);
        var store = new RaftLogStore(directory, fs, log, state) { _encryption = encryption };
        store.ReadHardState();
        store.ReadRepairFloor();
        try
        {
            store._snapshot = store.ReadSnapshot();
        }
        catch (InvalidDataException)
        {
            // A damaged snapshot (it is written whole and renamed into place: never torn): what it held is gone
            // here, and with it the meaning of the log after it. Load starts this member over, repairing.
            store._snapshotDamaged = true;
        }
        return store;
    }

    /// <summary>What the member recovers: null when it never wrote anything (a fresh member).</summary>
    public PersistedState? Load()
    {
        var state = _log.State();
        var entries = new List<Entry>();
        if (_snapshotDamaged)
        {
            RaiseRepairFloor(Math.Max(state.LastSeq, 1), TermAtOrCurrent(state.LastSeq));
            var error = _log.Truncate(0);
            if (error != StoreError.None) throw new IOException($"raft log in {_directory}: dropping the log after a damaged snapshot: {error}");
            _fs.Delete(Path.Combine(_directory, "snapshot"));
            _fs.SyncDirectory(_directory);
            _snapshotDamaged = false;
            return new PersistedState(_written with { Commit = 0 }, null, [], _repairFloor, _repairFloorTerm);
        }
        if (state.Msgs > 0)
        {
            for (var index = state.FirstSeq; index <= state.LastSeq; index++)
            {
                var loaded = _log.LoadMessage(index);
                if (loaded.Status is LoadStatus.NotFound or LoadStatus.Corrupt)
                {
                    // A crash kept some records of an unflushed batch and not others (unsynced writes
                    // may reach the disk in any order). Nothing from that batch was acknowledged, and a
                    // Raft log is a prefix: it ends before the first hole. When intact records follow the
                    // hole, it may as well be a flipped bit in an entry this member acknowledged long ago:
                    // it repairs (RepairFloor) up to the last index its files held before it votes again.
                    if (IntactAfter(index, state.LastSeq)) RaiseRepairFloor(state.LastSeq, TermAtOrCurrent(state.LastSeq));
                    CutAt(index, state.FirstSeq);
                    break;
                }
                if (!loaded.Found) throw new InvalidDataException($"raft log in {_directory}: entry {index} is {loaded.Status}");
                entries.Add(Decode(index, loaded.Message!));
            }
        }
        if (_snapshot is { } snapshot)
        {
            // A snapshot installed from the leader replaced a log that disagreed with it; when the
            // crash came before that old log was dropped, its entries after the snapshot are not ours.
            if (!SnapshotHeadsLog(snapshot.Meta, entries)) entries.RemoveAll(e => e.Index > snapshot.Meta.Index);
            entries.RemoveAll(e => e.Index <= snapshot.Meta.Index); // in the snapshot (a compaction the crash interrupted)
        }
        if (entries.Count == 0 && _snapshot is null && _written == default && _repairFloor == 0) return null;
        if (_repairFloor != 0)
        {
            // What is left may end before the commit index it wrote: the lost entries come again from the leader.
            var last = entries.Count > 0 ? entries[^1].Index : _snapshot?.Meta.Index ?? 0;
            return new PersistedState(_written with { Commit = Math.Min(_written.Commit, last) }, _snapshot, entries, _repairFloor, _repairFloorTerm);
        }
        return new PersistedState(_written, _snapshot, entries);
    }

    /// <summary>0, or the index this member's log must reach again before it votes as usual (<see cref="PersistedState.RepairFloor"/>); kept in a file until cleared.</summary>
    public ulong RepairFloor => _repairFloor;

    /// <summary>The member's log reached its repair floor (<see cref="RaftNode.RepairFloor"/> is 0) and that is durable: the floor goes.</summary>
    public void ClearRepairFloor()
    {
        if (_repairFloor == 0) return;
        _fs.Delete(Path.Combine(_directory, RepairFile));
        _fs.SyncDirectory(_directory);
        _repairFloor = _repairFloorTerm = 0;
    }

    private bool IntactAfter(ulong hole, ulong last)
    {
        for (var index = hole + 1; index <= last; index++)
            if (_log.LoadMessage(index).Found) return true;
        return false;
    }

    /// <summary>The term of the entry at <paramref name="index"/> when its record is intact; else the current term, which is no lower.</summary>
    private ulong TermAtOrCurrent(ulong index)
    {
        var loaded = index == 0 ? default : _log.LoadMessage(index);
        return loaded.Found && loaded.Message!.Payload.Length >= 8 ? BinaryPrimitives.ReadUInt64LittleEndian(loaded.Message.Payload.Span) : _written.Term;
    }

    /// <summary>Durable before the log is cut: a crash right after must not forget that entries were lost.</summary>
    private void RaiseRepairFloor(ulong floor, ulong term)
    {
        if (floor <= _repairFloor) return;
        var bytes = new byte[20];
        BinaryPrimitives.WriteUInt64LittleEndian(bytes, floor);
        BinaryPrimitives.WriteUInt64LittleEndian(bytes.AsSpan(8), term);
        BinaryPrimitives.WriteUInt32LittleEndian(bytes.AsSpan(16), Crc32C.Finish(Crc32C.Append(Crc32C.Start, bytes.AsSpan(0, 16))));
        var path = Path.Combine(_directory, RepairFile);
        using (var file = _fs.Open(path + ".tmp", FileMode.Create))
        {
            file.Write(bytes, 0);
            file.Sync();
        }
        _fs.Move(path + ".tmp", path);
        _fs.SyncDirectory(_directory);
        _repairFloor = floor;
        _repairFloorTerm = term;
    }

    private void ReadRepairFloor()
    {
        var bytes = _fs.ReadAllBytes(Path.Combine(_directory, RepairFile));
        if (bytes is null) return;
        if (bytes.Length == 20 && Crc32C.Finish(Crc32C.Append(Crc32C.Start, bytes.AsSpan(0, 16))) == BinaryPrimitives.ReadUInt32LittleEndian(bytes.AsSpan(16)))
        {
            _repairFloor = BinaryPrimitives.ReadUInt64LittleEndian(bytes);
            _repairFloorTerm = BinaryPrimitives.ReadUInt64LittleEndian(bytes.AsSpan(8));
            return;
        }
        // The floor's own file damaged: as high as can be (it waits for the leader to bring it well past anything it held).
        _repairFloor = ulong.MaxValue;
        _repairFloorTerm = ulong.MaxValue;
    }

    private void CutAt(ulong hole, ulong first)
    {
        var error = hole - 1 >= first ? _log.Truncate(hole - 1) : TruncateAll(first);
        if (error != StoreError.None) throw new IOException($"raft log in {_directory}: cut at {hole}: {error}");
    }

    private static bool SnapshotHeadsLog(SnapshotMeta meta, List<Entry> entries)
    {
        if (entries.Count == 0 || entries[0].Index == meta.Index + 1) return true; // compacted exactly behind it
        foreach (var entry in entries)
            if (entry.Index == meta.Index) return entry.Term == meta.Term;
        return false;
    }

    /// <summary>Step 2 of <paramref name="ready"/>: its snapshot, entries and hard state, durable on return.</summary>
    /// <summary>
    /// Whether <see cref="Save"/> would touch the disk for <paramref name="ready"/>: a snapshot, entries, or a
    /// new term or vote (a commit index alone is not written: after a restart it may be lower, and the leader tells it again).
    /// The host completes a Ready that needs no write at once, without a hand-over to another thread.
    /// </summary>
    public bool NeedsWrite(Ready ready) =>
        ready.Snapshot is not null || ready.Entries.Length > 0 ||
        (ready.HardState is { } hard && (hard.Term != _written.Term || hard.Vote != _written.Vote));

    public void Save(Ready ready)
    {
        if (ready.Snapshot is { } snapshot) InstallSnapshot(snapshot);
        if (ready.Entries.Length > 0) AppendEntries(ready.Entries);
        if (ready.HardState is { } hard && (hard.Term != _written.Term || hard.Vote != _written.Vote)) WriteHardState(hard);
    }

    /// <summary>The host compacted behind <paramref name="snapshot"/> (<see cref="RaftNode.Compact"/>): the snapshot is durable first, then the log before it goes.</summary>
    public void SaveSnapshot(Snapshot snapshot)
    {
        WriteSnapshot(snapshot);
        var first = _log.State().FirstSeq;
        if (snapshot.Meta.Index >= first && snapshot.Meta.Index <= _log.State().LastSeq) _log.Compact(snapshot.Meta.Index + 1);
    }

    private void InstallSnapshot(Snapshot snapshot)
    {
        WriteSnapshot(snapshot);
        // The snapshot replaces the whole log; the next entry is the one after it.
        _log.Truncate(0);
        _log.Compact(snapshot.Meta.Index + 1);
    }

    private void AppendEntries(Entry[] entries)
    {
        var first = entries[0].Index;
        var state = _log.State();
        if (state.Msgs > 0 && first <= state.LastSeq)
        {
            // A new leader's entries replace ours from `first` on (never committed ones).
            var error = first - 1 >= state.FirstSeq ? _log.Truncate(first - 1) : TruncateAll(first);
            if (error != StoreError.None) throw new IOException($"raft log in {_directory}: truncate to {first - 1}: {error}");
        }
        else if (_log.State().LastSeq + 1 != first)
        {
            _log.Compact(first); // an empty log (fresh, or just compacted) continues at `first`
        }
        var buffer = ArrayPool<byte>.Shared.Rent(256);
        try
        {
            foreach (var entry in entries)
            {
                var size = 8 + entry.Data.Length; // bytes: term, then the data
                if (buffer.Length < size)
                {
                    ArrayPool<byte>.Shared.Return(buffer);
                    buffer = ArrayPool<byte>.Shared.Rent(size);
                }
                BinaryPrimitives.WriteUInt64LittleEndian(buffer, entry.Term);
                entry.Data.Span.CopyTo(buffer.AsSpan(8));
                var result = _log.Append(entry.Type == EntryType.ConfChange ? ConfSubject : NormalSubject, [], buffer.AsSpan(0, size));
                if (result.Sequence != entry.Index) throw new IOException($"raft log in {_directory}: entry {entry.Index} stored at {result.Sequence} ({result.Error})");
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
        _log.Flush(); // one write and one fsync for the whole Ready
        StoreMetrics.GroupCommit(StoreMetrics.RaftLog, entries.Length);
    }

    private StoreError TruncateAll(ulong next)
    {
        var error = _log.Truncate(0);
        if (error == StoreError.None) _log.Compact(next);
        return error;
    }

    private static Entry Decode(ulong index, StoredMessage message)
    {
        var payload = message.Payload;
        if (payload.Length < 8) throw new InvalidDataException($"raft log entry {index}: {payload.Length} bytes");
        var type = message.Subject == "c" ? EntryType.ConfChange : EntryType.Normal;
        return new Entry(BinaryPrimitives.ReadUInt64LittleEndian(payload.Span), index, type, payload[8..]);
    }

    private void ReadHardState()
    {
        Span<byte> slots = stackalloc byte[2 * SlotSize];
        var read = _state.Read(slots[..(int)Math.Min(_state.Length, slots.Length)], 0); // a new file is empty
        _stateCounter = 0;
        _written = default;
        for (var slot = 0; slot < 2; slot++)
        {
            if (read < (slot + 1) * SlotSize) continue;
            var s = slots.Slice(slot * SlotSize, SlotSize);
            if (!s[..4].SequenceEqual(StateMagic) || s[4] != Version) continue;
            if (Crc32C.Finish(Crc32C.Append(Crc32C.Start, s[..40])) != BinaryPrimitives.ReadUInt32LittleEndian(s[40..])) continue;
            var counter = BinaryPrimitives.ReadUInt64LittleEndian(s[8..]);
            if (counter <= _stateCounter) continue;
            _stateCounter = counter;
            _written = new HardState(BinaryPrimitives.ReadUInt64LittleEndian(s[16..]), BinaryPrimitives.ReadUInt64LittleEndian(s[24..]), BinaryPrimitives.ReadUInt64LittleEndian(s[32..]));
        }
    }

    private void WriteHardState(HardState hard)
    {
        Span<byte> s = stackalloc byte[SlotSize];
        s.Clear();
        StateMagic.CopyTo(s);
        s[4] = Version;
        var counter = _stateCounter + 1;
        BinaryPrimitives.WriteUInt64LittleEndian(s[8..], counter);
        BinaryPrimitives.WriteUInt64LittleEndian(s[16..], hard.Term);
        BinaryPrimitives.WriteUInt64LittleEndian(s[24..], hard.Vote);
        BinaryPrimitives.WriteUInt64LittleEndian(s[32..], hard.Commit);
        BinaryPrimitives.WriteUInt32LittleEndian(s[40..], Crc32C.Finish(Crc32C.Append(Crc32C.Start, s[..40])));
        _state.Write(s, (long)(counter % 2) * SlotSize); // the other slot keeps the previous state if this write tears
        _state.Sync();
        _stateCounter = counter;
        _written = hard;
    }

    private void WriteSnapshot(Snapshot snapshot)
    {
        var meta = snapshot.Meta;
        var config = meta.Configuration;
        var size = 4 + 1 + 8 + 8 + 4 + 8 * config.Voters.Length + 4 + 8 * config.Learners.Length + 4 + snapshot.Data.Length + 4;
        var bytes = new byte[size];
        var w = bytes.AsSpan();
        SnapshotMagic.CopyTo(w);
        w[4] = Version;
        var at = 5;
        BinaryPrimitives.WriteUInt64LittleEndian(w[at..], meta.Index); at += 8;
        BinaryPrimitives.WriteUInt64LittleEndian(w[at..], meta.Term); at += 8;
        at = WriteIds(w, at, config.Voters);
        at = WriteIds(w, at, config.Learners);
        BinaryPrimitives.WriteInt32LittleEndian(w[at..], snapshot.Data.Length); at += 4;
        snapshot.Data.Span.CopyTo(w[at..]); at += snapshot.Data.Length;
        BinaryPrimitives.WriteUInt32LittleEndian(w[at..], Crc32C.Finish(Crc32C.Append(Crc32C.Start, w[..at])));

        WriteSnapshotFile(_encryption is null ? bytes : _encryption.SealFile(SnapshotContext, bytes));
        _snapshot = snapshot;
    }

    private const string SnapshotContext = "raft-snapshot"; // what a sealed snapshot's key is derived for

    private void WriteSnapshotFile(byte[] bytes)
    {
        var path = Path.Combine(_directory, "snapshot");
        var temp = path + ".tmp";
        using (var file = _fs.Open(temp, FileMode.Create))
        {
            file.Write(bytes, 0);
            file.Sync();
        }
        _fs.Move(temp, path);
        _fs.SyncDirectory(_directory);
    }

    private static int WriteIds(Span<byte> w, int at, ulong[] ids)
    {
        BinaryPrimitives.WriteInt32LittleEndian(w[at..], ids.Length);
        at += 4;
        foreach (var id in ids)
        {
            BinaryPrimitives.WriteUInt64LittleEndian(w[at..], id);
            at += 8;
        }
        return at;
    }

    private Snapshot? ReadSnapshot()
    {
        var bytes = _fs.ReadAllBytes(Path.Combine(_directory, "snapshot"));
        if (bytes is null) return null;
        if (StoreEncryption.IsSealedFile(bytes))
        {
            bytes = (_encryption ?? throw new StoreKeyException(StoreEncryption.NoEncryptionError)).OpenFile(SnapshotContext, bytes, out var previous);
            if (previous) WriteSnapshotFile(_encryption.SealFile(SnapshotContext, bytes)); // rotation: sealed with the current key from now on
        }
        else if (_encryption is not null)
        {
            WriteSnapshotFile(_encryption.SealFile(SnapshotContext, bytes)); // written before the key was set
        }

        var r = bytes.AsSpan();
        try
        {
            if (!r[..4].SequenceEqual(SnapshotMagic) || r[4] != Version) throw new InvalidDataException("not a raft snapshot");
            var at = 5;
            var index = BinaryPrimitives.ReadUInt64LittleEndian(r[at..]); at += 8;
            var term = BinaryPrimitives.ReadUInt64LittleEndian(r[at..]); at += 8;
            var voters = ReadIds(r, ref at);
            var learners = ReadIds(r, ref at);
            var length = BinaryPrimitives.ReadInt32LittleEndian(r[at..]); at += 4;
            if (length < 0 || at + length + 4 != r.Length) throw new InvalidDataException("raft snapshot length mismatch");
            var data = bytes.AsMemory(at, length); at += length;
            if (Crc32C.Finish(Crc32C.Append(Crc32C.Start, r[..at])) != BinaryPrimitives.ReadUInt32LittleEndian(r[at..]))
                throw new InvalidDataException("raft snapshot checksum mismatch");
            return new Snapshot(new SnapshotMeta(index, term, new Configuration(voters, learners)), data);
        }
        catch (ArgumentOutOfRangeException)
        {
            throw new InvalidDataException($"raft snapshot in {_directory} is cut short");
        }
    }

    private static ulong[] ReadIds(ReadOnlySpan<byte> r, ref int at)
    {
        var count = BinaryPrimitives.ReadInt32LittleEndian(r[at..]);
        at += 4;
        if (count < 0 || count > 1024) throw new InvalidDataException("raft snapshot member count out of range"); // a group has at most a few members
        var ids = new ulong[count];
        for (var i = 0; i < count; i++, at += 8) ids[i] = BinaryPrimitives.ReadUInt64LittleEndian(r[at..]);
        return ids;
    }

    public void Dispose()
    {
        _log.Stop();
        _state.Dispose();
    }
}
