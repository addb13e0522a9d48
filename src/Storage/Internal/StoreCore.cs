using System.Diagnostics;
using Courier.Protocols.JetStream;

namespace Courier.Storage.Internal;

/// <summary>How a message left the store, for the backend's bookkeeping.</summary>
internal enum Removal
{
    /// <summary>An interior message: the backend must persist a delete (FileStore: a tombstone).</summary>
    Interior,

    /// <summary>The stream's first message: the new first sequence covers it (FileStore: a floor record at the next flush).</summary>
    Front,

    /// <summary>Cut off by Truncate: the backend rewrites its files itself.</summary>
    Truncated,
}

/// <summary>
/// The semantics both stores share, written once: sequences, per-subject state, limits, deletes,
/// purges, filtered reads and counts (nats-server's store.go / memstore.go behaviour). A backend
/// (<see cref="MemoryStore"/>, <c>FileStore</c>) only keeps the records: it implements the hooks
/// at the bottom. Every hook runs with <see cref="StateLock"/> held.
/// </summary>
/// <remarks>
/// In memory per sequence: one <see cref="MsgSlot"/> (28 bytes) in a <see cref="SeqTable{T}"/>.
/// Each slot links to the next message of its subject, so the per-subject limit and per-subject
/// first sequence stay O(1) per append.
/// </remarks>
internal abstract partial class StoreCore : IStreamStore
{
    /// <summary>Largest record accepted (the FileStore offsets and lengths are 32-bit).</summary>
    protected const long MaxRecordSize = 1L << 30; // 1 GiB

    private const int LinearScanSubjects = 256; // above this many subjects, wildcard searches scan sequences (as nats-server's linearScanMaxFSS)

    private readonly SubjectTable _subjects = new();
    private readonly SeqTable<MsgSlot> _slots = new();
    private readonly List<StoreWarning> _warnings = [];
    private readonly List<ulong> _lost = [];
    private StoreConfig _config;
    private SubjectFilter _lastFilter = SubjectFilter.All;
    private ulong _msgs;
    private ulong _bytes;
    private ulong _first;
    private ulong _last;
    private long _lastTime;
    private ulong _lostBytes;
    private bool _closed;
    private volatile IDisplacementObserver? _displacementObserver;

    protected StoreCore(StoreConfig config)
    {
        ArgumentNullException.ThrowIfNull(config);
        _config = config;
    }

    /// <inheritdoc/>
    public IDisplacementObserver? DisplacementObserver
    {
        get => _displacementObserver;
        set => _displacementObserver = value;
    }

    /// <summary>Guards every field of the store, the backend's included.</summary>
    protected Lock StateLock { get; } = new();

    /// <inheritdoc/>
    public abstract StorageType Type { get; }

    /// <inheritdoc/>
    public StoreConfig Config
    {
        get
        {
            lock (StateLock)
            {
                return _config;
            }
        }
    }

    /// <inheritdoc/>
    public virtual SyncPolicy SyncPolicy => SyncPolicy.Always;

    /// <inheritdoc/>
    public IReadOnlyList<StoreWarning> Warnings
    {
        get
        {
            lock (StateLock)
            {
                return [.. _warnings];
            }
        }
    }

    /// <inheritdoc/>
    public StoreDamage Damage
    {
        get
        {
            lock (StateLock)
            {
                return new StoreDamage(_warnings.Count, _lost.Count, _lostBytes);
            }
        }
    }

    /// <summary>The first sequence (LastSeq + 1 when empty). Lock held.</summary>
    protected ulong FirstSeqLocked => _first;

    /// <summary>The last sequence assigned. Lock held.</summary>
    protected ulong LastSeqLocked => _last;

    /// <summary>Timestamp of the last message stored. Lock held.</summary>
    protected long LastTimeLocked => _lastTime;

    /// <summary>Messages stored. Lock held.</summary>
    protected ulong MsgsLocked => _msgs;

    /// <summary>True once stopped. Lock held.</summary>
    protected bool IsClosedLocked => _closed;

    /// <summary>Every sequence below this holds no message (the first, or LastSeq + 1 when empty). Lock held.</summary>
    protected ulong FloorLocked => _msgs > 0 ? _first : _last + 1;

    /// <summary>The current limits. Lock held.</summary>
    protected StoreConfig ConfigLocked => _config;

    // ---- Backend hooks (lock held) ----

    /// <summary>Keeps the record of a new message; returns its location for the slot.</summary>
    protected abstract ulong StoreRecord(ulong seq, long timestamp, SubjectEntry subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, uint size);

    /// <summary>A message left the store (state already updated).</summary>
    protected abstract void RecordRemoved(ulong seq, in MsgSlot slot, Removal removal);

    /// <summary>Reads a stored message back; null when its record fails the checksum.</summary>
    protected abstract StoredMessage? ReadRecord(ulong seq, in MsgSlot slot, SubjectEntry subject);

    /// <summary>Every record is gone at once (purge, compact past the end, reset); the next append gets <paramref name="nextSeq"/>.</summary>
    protected abstract void AllRemoved(ulong nextSeq);

    /// <summary>Everything above <paramref name="seq"/> was removed by Truncate (the removals were reported one by one first).</summary>
    protected abstract void Truncated(ulong seq);

    /// <summary>Overwrites the record of <paramref name="seq"/> where it is stored (it is removed right after).</summary>
    protected abstract void EraseRecord(ulong seq, in MsgSlot slot);

    /// <summary>True when an earlier write failed and appends must be refused.</summary>
    protected virtual bool WriteFailedLocked => false;

    /// <summary>Serializes structural file operations with Flush (FileStore); nothing for memory. Taken before <see cref="StateLock"/>, never after.</summary>
    protected virtual IoGate EnterIo() => default;

    /// <inheritdoc/>
    public abstract void Flush();

    /// <inheritdoc/>
    public abstract void Sync();

    /// <summary>Backend part of Stop, lock not held (called once).</summary>
    protected abstract void StopBackend();

    /// <summary>Backend part of Delete, after Stop.</summary>
    protected abstract void DeleteBackend();

    // ---- Appends ----

    /// <inheritdoc/>
    public StoreResult Append(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, long timestamp = 0)
    {
        lock (StateLock)
        {
            return AppendLocked(subject, headers, payload, timestamp);
        }
    }

    /// <inheritdoc/>
    public void AppendBatch(ReadOnlySpan<StoreMessage> messages, Span<StoreResult> results)
    {
        if (results.Length < messages.Length)
        {
            throw new ArgumentException("results must have room for every message", nameof(results));
        }

        lock (StateLock)
        {
            for (var i = 0; i < messages.Length; i++)
            {
                var m = messages[i];
                results[i] = AppendLocked(m.Subject.Span, m.Headers.Span, m.Payload.Span, m.Timestamp);
            }
        }

        Flush();
    }

    private StoreResult AppendLocked(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, long timestamp)
    {
        if (_closed)
        {
            return StoreResult.Fail(StoreError.Closed);
        }

        if (WriteFailedLocked)
        {
            return StoreResult.Fail(StoreError.WriteFailed);
        }

        if (subject.IsEmpty || subject.Length > ushort.MaxValue)
        {
            return StoreResult.Fail(StoreError.InvalidSubject);
        }

        var cfg = _config;
        if (cfg.MaxMsgSize > 0 && (long)headers.Length + payload.Length > cfg.MaxMsgSize)
        {
            return StoreResult.Fail(StoreError.MessageTooLarge);
        }

        var size = IStreamStore.MessageSize(subject.Length, headers.Length, payload.Length);
        if (size > MaxRecordSize)
        {
            return StoreResult.Fail(StoreError.MessageTooLarge);
        }

        var entry = _subjects.Find(subject);
        var maxPer = cfg.MaxMsgsPerSubject;
        var atSubjectLimit = maxPer > 0 && entry is not null && entry.Msgs >= (ulong)maxPer;

        // Discard new: refuse rather than exceed (nats-server storeRawMsg). At the per-subject limit the
        // message replaces the subject's oldest, so the stream-wide checks let it through.
        if (cfg.Discard == DiscardPolicy.New)
        {
            if (atSubjectLimit && cfg.DiscardNewPerSubject)
            {
                return StoreResult.Fail(StoreError.MaxMsgsPerSubject);
            }

            if (cfg.MaxMsgs > 0 && _msgs >= (ulong)cfg.MaxMsgs && !atSubjectLimit)
            {
                return StoreResult.Fail(StoreError.MaxMsgs);
            }

            // As nats-server's stores: refused once the stored bytes plus this message's headers and
            // payload would reach max_bytes (subject and overhead not counted here, and reaching it is enough).
            var adding = (ulong)headers.Length + (ulong)payload.Length;
            if (cfg.MaxBytes > 0 && _bytes + adding >= (ulong)cfg.MaxBytes)
            {
                if (!atSubjectLimit || Counted(_slots[entry!.First].Size) < adding)
                {
                    return StoreResult.Fail(StoreError.MaxBytes);
                }
            }
        }

        if (timestamp == 0)
        {
            timestamp = NowUnixNanos();
        }

        var seq = _last + 1;
        var isNewSubject = entry is null;
        entry ??= _subjects.Add(subject);
        ulong location;
        try
        {
            location = StoreRecord(seq, timestamp, entry, headers, payload, (uint)size);
        }
        catch when (isNewSubject)
        {
            _subjects.Remove(entry);
            throw;
        }

        ref var slot = ref _slots.GetOrAdd(seq);
        slot = new MsgSlot { Timestamp = timestamp, Location = location, SubjectId = entry.Id, Size = (uint)size };
        if (_msgs == 0)
        {
            _first = seq;
        }

        _msgs++;
        _bytes += Counted(size);
        _last = seq;
        _lastTime = timestamp;
        LinkToSubject(entry, seq);
        if (cfg.AllowMsgTtl && !headers.IsEmpty)
        {
            TrackTtl(seq, timestamp, headers);
        }

        if (maxPer > 0 && entry.Msgs > (ulong)maxPer)
        {
            EnforcePerSubjectLimit(entry, (ulong)maxPer, _displacementObserver);
        }

        EnforceMsgLimit();
        EnforceBytesLimit();
        return new StoreResult(StoreError.None, seq, timestamp);
    }

    /// <summary>Adds a live slot at <paramref name="seq"/> to its subject (first or chained after the subject's last).</summary>
    private void LinkToSubject(SubjectEntry entry, ulong seq)
    {
        if (entry.Msgs == 0)
        {
            entry.First = seq;
        }
        else
        {
            var distance = seq - entry.Last;
            if (distance <= uint.MaxValue)
            {
                _slots[entry.Last].Next = (uint)distance;
            }
        }

        entry.Last = seq;
        entry.Msgs++;
    }

    /// <summary>Unix nanoseconds now.</summary>
    /// <summary>What a record of <paramref name="recordSize"/> bytes counts for in <see cref="StreamState.Bytes"/> (<see cref="IStreamStore.CountedSize"/>).</summary>
    protected ulong Counted(ulong recordSize) => recordSize - 32 + IStreamStore.CountedOverhead(Type);

    protected static long NowUnixNanos() => (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) * 100;

    // ---- Recovery (FileStore) ----

    /// <summary>Restores a message found on disk, in ascending sequence order. Returns false (and stores nothing) for a sequence at or below the last one.</summary>
    protected bool RestoreMessage(ulong seq, long timestamp, ReadOnlySpan<byte> subject, ulong location, uint size, out SubjectEntry? entry)
    {
        entry = null;
        if (seq <= _last && _last != 0)
        {
            return false;
        }

        entry = _subjects.Find(subject) ?? _subjects.Add(subject);
        ref var slot = ref _slots.GetOrAdd(seq);
        slot = new MsgSlot { Timestamp = timestamp, Location = location, SubjectId = entry.Id, Size = size };
        if (_msgs == 0)
        {
            _first = seq;
        }

        _msgs++;
        _bytes += Counted(size);
        _last = seq;
        _lastTime = timestamp;
        LinkToSubject(entry, seq);
        return true;
    }

    /// <summary>Recovery: a sequence that held a message which is gone (erased, or lost) still counts for LastSeq.</summary>
    protected void RestoreSequence(ulong seq, long timestamp)
    {
        if (seq > _last)
        {
            if (_msgs == 0)
            {
                _first = seq + 1;
            }

            _last = seq;
            _lastTime = timestamp;
        }
    }

    /// <summary>Recovery: everything below <paramref name="floor"/> is gone and LastSeq is at least floor - 1.</summary>
    protected void RestoreFloor(ulong floor)
    {
        while (_msgs > 0 && _first < floor)
        {
            RemoveCore(_first, truncating: false);
        }

        if (floor > 0 && floor - 1 > _last)
        {
            _last = floor - 1;
        }

        if (_msgs == 0 && _first < floor)
        {
            _first = floor;
        }
    }

    /// <summary>The location recorded for <paramref name="seq"/> if its slot still exists (live or removed).</summary>
    protected bool TryGetLocation(ulong seq, out ulong location, out bool live)
    {
        if (seq >= _first && seq <= _last && _slots.Contains(seq))
        {
            ref var slot = ref _slots[seq];
            location = slot.Location;
            live = slot.IsLive;
            return slot.Size != 0;
        }

        location = 0;
        live = false;
        return false;
    }

    /// <summary>The slot of <paramref name="seq"/> (live or removed) if it is still kept.</summary>
    protected bool TryGetSlot(ulong seq, out MsgSlot slot)
    {
        if (seq >= _first && seq <= _last && _slots.Contains(seq))
        {
            slot = _slots[seq];
            return slot.Size != 0;
        }

        slot = default;
        return false;
    }

    /// <summary>Removes <paramref name="seq"/> during recovery or on a read that found it corrupt; returns whether it was there.</summary>
    protected bool RemoveLocked(ulong seq) => RemoveCore(seq, truncating: false);

    /// <summary>Records damage found (lock held).</summary>
    protected void AddWarning(StoreWarning warning) => _warnings.Add(warning);

    /// <summary>Records a lost message (lock held).</summary>
    protected void AddLost(ulong seq, ulong bytes)
    {
        _lost.Add(seq);
        _lostBytes += bytes;
    }

    /// <summary>After recovery: the limits may have been lowered while the store was closed.</summary>
    protected void EnforceLimitsLocked()
    {
        var maxPer = _config.MaxMsgsPerSubject;
        if (maxPer > 0)
        {
            EnforcePerSubjectLimitAll((ulong)maxPer);
        }

        EnforceMsgLimit();
        EnforceBytesLimit();
    }

    /// <summary>A new stream with <see cref="StoreConfig.FirstSeq"/> above 1 starts there.</summary>
    protected void ApplyInitialFirstSeqLocked()
    {
        if (_config.FirstSeq > 1 && _last == 0 && _msgs == 0)
        {
            _first = _config.FirstSeq;
            _last = _config.FirstSeq - 1;
            AllRemoved(_first);
        }
    }

    // ---- Lifecycle ----

    /// <inheritdoc/>
    public void Stop()
    {
        lock (StateLock)
        {
            if (_closed)
            {
                return;
            }

            _closed = true; // from here appends and loads answer Closed; the backend still flushes
        }

        StopBackend();
        lock (StateLock)
        {
            _subjects.Clear();
            _slots.Clear();
        }
    }

    /// <inheritdoc/>
    public void Delete()
    {
        Stop();
        DeleteBackend();
    }

    /// <summary>Stops the store. Unlike <see cref="Stop"/>, never throws for a failed final write (an owner that needs to know calls Flush or Stop first).</summary>
    public void Dispose()
    {
        try
        {
            Stop();
        }
        catch (IOException)
        {
        }
    }

    /// <summary>Throws when stopped (lock held).</summary>
    private void ThrowIfClosed()
    {
        if (_closed)
        {
            throw new ObjectDisposedException(GetType().Name, "store is closed");
        }
    }

    [Conditional("DEBUG")]
    private void AssertConsistent() => Debug.Assert(_msgs == 0 || (_first <= _last && _slots.Contains(_first) && _slots[_first].IsLive));

    /// <summary>A scope that holds the backend's I/O gate (see <see cref="EnterIo"/>).</summary>
    protected readonly struct IoGate(Lock? gate) : IDisposable
    {
        public static IoGate Enter(Lock gate)
        {
            gate.Enter();
            return new IoGate(gate);
        }

        public void Dispose() => gate?.Exit();
    }
}
