using System.Buffers;
using System.Text;

namespace Courier.Storage.Internal;

/// <summary>Loads, filtered state, pending counts and the stream state.</summary>
internal abstract partial class StoreCore
{
    /// <inheritdoc/>
    public LoadResult LoadMessage(ulong sequence)
    {
        lock (StateLock)
        {
            if (_closed)
            {
                return LoadResult.Missing(LoadStatus.Closed);
            }

            if (sequence > _last)
            {
                return LoadResult.Missing(LoadStatus.EndOfStream);
            }

            if (!IsLive(sequence))
            {
                return LoadResult.Missing(LoadStatus.NotFound);
            }

            var message = ReadChecked(sequence);
            return message is null ? LoadResult.Missing(LoadStatus.Corrupt) : LoadResult.Of(message);
        }
    }

    /// <inheritdoc/>
    public LoadResult LoadNextMessage(string? filter, ulong startSequence)
    {
        lock (StateLock)
        {
            if (_closed)
            {
                return LoadResult.Missing(LoadStatus.Closed);
            }

            var f = ParseCached(filter);
            var start = startSequence;
            while (true)
            {
                var seq = FindNext(f, start);
                if (seq == 0)
                {
                    return LoadResult.Missing(LoadStatus.EndOfStream);
                }

                var message = ReadChecked(seq);
                if (message is not null)
                {
                    return LoadResult.Of(message);
                }

                start = seq + 1; // corrupt: reported and removed; the next one is the answer
            }
        }
    }

    /// <inheritdoc/>
    public LoadResult LoadLastMessage(string? subject)
    {
        lock (StateLock)
        {
            if (_closed)
            {
                return LoadResult.Missing(LoadStatus.Closed);
            }

            // A literal subject (the KV get path) is one table lookup; no filter is parsed or cached.
            var f = SubjectFilter.IsLiteralSubject(subject) ? null : ParseCached(subject);
            while (true)
            {
                var seq = f is null ? LastOfLiteral(subject!) : FindLast(f);
                if (seq == 0)
                {
                    return LoadResult.Missing(LoadStatus.NotFound);
                }

                var message = ReadChecked(seq);
                if (message is not null)
                {
                    return LoadResult.Of(message);
                }
            }
        }
    }

    /// <inheritdoc/>
    public ulong GetSequenceFromTime(long timestamp)
    {
        lock (StateLock)
        {
            ThrowIfClosed();
            if (_msgs == 0)
            {
                return _last + 1;
            }

            if (timestamp <= _slots[_first].Timestamp)
            {
                return _first;
            }

            var lastLive = PrevLive(_last, _first);
            var lastTs = _slots[lastLive].Timestamp;
            if (timestamp == lastTs)
            {
                return lastLive;
            }

            if (timestamp > lastTs)
            {
                return _last + 1;
            }

            // Invariant: ts(lo) < timestamp <= ts(hi), both live.
            var lo = _first;
            var hi = lastLive;
            while (true)
            {
                var mid = lo + ((hi - lo) / 2);
                var m = mid > lo ? NextLive(mid, hi) : hi;
                if (m == hi)
                {
                    m = mid > lo ? PrevLive(mid - 1, lo) : lo;
                    if (m == lo)
                    {
                        return hi;
                    }
                }

                if (_slots[m].Timestamp >= timestamp)
                {
                    hi = m;
                }
                else
                {
                    lo = m;
                }
            }
        }
    }

    /// <inheritdoc/>
    public StreamState State()
    {
        lock (StateLock)
        {
            ThrowIfClosed();
            return new StreamState
            {
                Msgs = _msgs,
                Bytes = _bytes,
                FirstSeq = _first,
                LastSeq = _last,
                FirstTime = _msgs > 0 ? _slots[_first].Timestamp : 0,
                LastTime = _lastTime,
                NumDeleted = _msgs > 0 ? _last - _first + 1 - _msgs : 0,
                NumSubjects = _subjects.Count,
                Lost = _lost.Count > 0 ? new LostData([.. _lost], _lostBytes) : null,
            };
        }
    }

    /// <inheritdoc/>
    public SubjectState FilteredState(ulong startSequence, string? filter)
    {
        lock (StateLock)
        {
            ThrowIfClosed();
            return FilteredStateLocked(startSequence, SubjectFilter.Parse(filter));
        }
    }

    /// <inheritdoc/>
    public IReadOnlyDictionary<string, SubjectState> SubjectsState(string? filter)
    {
        lock (StateLock)
        {
            ThrowIfClosed();
            var f = SubjectFilter.Parse(filter);
            var result = new Dictionary<string, SubjectState>(StringComparer.Ordinal);
            if (f.IsLiteral)
            {
                var entry = _subjects.Find(f.Utf8);
                if (entry is not null)
                {
                    result[entry.Text] = new SubjectState(entry.Msgs, entry.First, entry.Last);
                }

                return result;
            }

            foreach (var entry in _subjects.Entries)
            {
                if (f.Matches(entry.Key))
                {
                    result[entry.Text] = new SubjectState(entry.Msgs, entry.First, entry.Last);
                }
            }

            return result;
        }
    }

    /// <inheritdoc/>
    public (ulong Total, ulong ValidThrough) NumPending(ulong startSequence, string? filter, bool lastPerSubject)
    {
        lock (StateLock)
        {
            ThrowIfClosed();
            var f = SubjectFilter.Parse(filter);
            var total = lastPerSubject ? LastPerSubjectCount(startSequence, f) : FilteredStateLocked(startSequence, f).Msgs;
            return (total, _last);
        }
    }

    /// <inheritdoc/>
    public ulong[] DeletedSequences()
    {
        lock (StateLock)
        {
            ThrowIfClosed();
            if (_msgs == 0)
            {
                return [];
            }

            var deleted = new ulong[_last - _first + 1 - _msgs];
            var n = 0;
            for (var seq = _first; seq <= _last && n < deleted.Length; seq++)
            {
                if (!(_slots.Contains(seq) && _slots[seq].IsLive))
                {
                    deleted[n++] = seq;
                }
            }

            return deleted;
        }
    }

    // ---- Internals (lock held) ----

    private SubjectFilter ParseCached(string? filter)
    {
        var last = _lastFilter;
        if (string.IsNullOrEmpty(filter))
        {
            return SubjectFilter.All;
        }

        if (ReferenceEquals(last.Text, filter) || string.Equals(last.Text, filter, StringComparison.Ordinal))
        {
            return last;
        }

        return _lastFilter = SubjectFilter.Parse(filter);
    }

    /// <summary>Reads a live message; a record that fails its checksum is reported, counted lost and removed.</summary>
    private StoredMessage? ReadChecked(ulong seq)
    {
        ref var slot = ref _slots[seq];
        var entry = _subjects[slot.SubjectId]!;
        var message = ReadRecord(seq, slot, entry);
        if (message is null)
        {
            var size = slot.Size;
            AddWarning(new StoreWarning(StoreWarningKind.CorruptOnRead, $"message {seq} failed its checksum when read; it is lost", seq));
            AddLost(seq, size);
            RemoveCore(seq, truncating: false);
        }

        return message;
    }

    /// <summary>First live sequence in [from, to]; <paramref name="to"/> must be live.</summary>
    private ulong NextLive(ulong from, ulong to)
    {
        for (var s = from; s < to; s++)
        {
            if (_slots.Contains(s) && _slots[s].IsLive)
            {
                return s;
            }
        }

        return to;
    }

    /// <summary>Last live sequence in [to, from] scanning down; <paramref name="to"/> must be live.</summary>
    private ulong PrevLive(ulong from, ulong to)
    {
        for (var s = from; s > to; s--)
        {
            if (_slots.Contains(s) && _slots[s].IsLive)
            {
                return s;
            }
        }

        return to;
    }

    /// <summary>The first live sequence &gt;= <paramref name="start"/> matching <paramref name="f"/>, or 0.</summary>
    private ulong FindNext(SubjectFilter f, ulong start)
    {
        if (start < _first)
        {
            start = _first;
        }

        if (_msgs == 0 || start > _last)
        {
            return 0;
        }

        var end = _last;
        if (f.IsLiteral)
        {
            var entry = _subjects.Find(f.Utf8);
            if (entry is null || entry.Last < start)
            {
                return 0;
            }

            if (start <= entry.First)
            {
                return entry.First;
            }

            if (_slots.Contains(start - 1) && _slots[start - 1].SubjectId == entry.Id)
            {
                // Iterating the subject (LoadNextMessage(subject, previous + 1)): follow its chain, not every slot.
                return NextOfSubject(entry, start - 1, _slots[start - 1].Next);
            }

            for (var s = start; s <= entry.Last; s++)
            {
                if (_slots.Contains(s) && _slots[s].SubjectId == entry.Id)
                {
                    return s;
                }
            }

            return 0;
        }

        if (!f.IsAll && _subjects.Count <= LinearScanSubjects)
        {
            // Few subjects: bound the scan by the matching subjects' first and last.
            ulong lo = ulong.MaxValue, hi = 0;
            foreach (var entry in _subjects.Entries)
            {
                if (entry.Last >= start && f.Matches(entry.Key))
                {
                    lo = Math.Min(lo, entry.First);
                    hi = Math.Max(hi, entry.Last);
                }
            }

            if (hi == 0)
            {
                return 0;
            }

            start = Math.Max(start, lo);
            end = hi;
        }

        for (var s = start; s <= end; s++)
        {
            if (_slots.Contains(s))
            {
                ref var slot = ref _slots[s];
                if (slot.IsLive && (f.IsAll || f.Matches(_subjects[slot.SubjectId]!.Key)))
                {
                    return s;
                }
            }
        }

        return 0;
    }

    /// <summary>The last sequence of a literal subject (0 when none), looked up by its UTF-8 bytes on the
    /// stack (pooled beyond 256 bytes): nothing allocated per call.</summary>
    private ulong LastOfLiteral(string subject)
    {
        const int StackBytes = 256; // UTF-8 bytes encoded on the stack; longer subjects rent a buffer
        var max = Encoding.UTF8.GetMaxByteCount(subject.Length);
        byte[]? rented = null;
        var utf8 = max <= StackBytes ? stackalloc byte[StackBytes] : (rented = ArrayPool<byte>.Shared.Rent(max));
        try
        {
            var length = Encoding.UTF8.GetBytes(subject, utf8);
            return _msgs == 0 ? 0 : _subjects.Find(utf8[..length])?.Last ?? 0;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    /// <summary>The last live sequence matching <paramref name="f"/>, or 0.</summary>
    private ulong FindLast(SubjectFilter f)
    {
        if (_msgs == 0)
        {
            return 0;
        }

        if (f.IsAll)
        {
            return PrevLive(_last, _first);
        }

        if (f.IsLiteral)
        {
            return _subjects.Find(f.Utf8)?.Last ?? 0;
        }

        ulong last = 0;
        foreach (var entry in _subjects.Entries)
        {
            if (entry.Last > last && f.Matches(entry.Key))
            {
                last = entry.Last;
            }
        }

        return last;
    }

    /// <summary>Messages, first and last matching <paramref name="f"/> at or after <paramref name="start"/> (nats-server filteredStateLocked).</summary>
    private SubjectState FilteredStateLocked(ulong start, SubjectFilter f)
    {
        if (start < _first)
        {
            start = _first;
        }

        if (_msgs == 0 || start > _last)
        {
            return default;
        }

        if (f.IsAll)
        {
            if (start <= _first)
            {
                return new SubjectState(_msgs, _first, PrevLive(_last, _first));
            }

            // A consumer asks this once per delivery pass: count from the shorter side of start, and
            // without a scan at all when nothing between first and last was deleted.
            if (_msgs == _last - _first + 1)
            {
                return new SubjectState(_last - start + 1, start, _last);
            }

            if (start - _first < _last - start + 1)
            {
                var before = ScanRange(_first, start - 1, f).Msgs;
                var after = _msgs - before;
                return after == 0 ? default : new SubjectState(after, NextLive(start, _last), PrevLive(_last, start));
            }

            return ScanRange(start, _last, f);
        }

        if (f.IsLiteral)
        {
            var entry = _subjects.Find(f.Utf8);
            if (entry is null || entry.Last < start)
            {
                return default;
            }

            return start <= entry.First ? new SubjectState(entry.Msgs, entry.First, entry.Last) : ScanSubject(start, entry);
        }

        // Wildcard: whole subjects from their counts, subjects that straddle start by one scan.
        // With more subjects than sequences to look at, scanning the sequences is cheaper.
        if ((ulong)_subjects.Count > _last - start + 1)
        {
            return ScanRange(start, _last, f);
        }

        ulong msgs = 0, first = 0, last = 0, partialLast = 0;
        List<int>? partial = null;
        foreach (var entry in _subjects.Entries)
        {
            if (entry.Last < start || !f.Matches(entry.Key))
            {
                continue;
            }

            last = Math.Max(last, entry.Last);
            if (start <= entry.First)
            {
                msgs += entry.Msgs;
                first = first == 0 ? entry.First : Math.Min(first, entry.First);
            }
            else
            {
                (partial ??= []).Add(entry.Id);
                partialLast = Math.Max(partialLast, entry.Last);
            }
        }

        if (partial is not null)
        {
            var ids = new HashSet<int>(partial);
            for (var s = start; s <= partialLast; s++)
            {
                if (_slots.Contains(s) && _slots[s].IsLive && ids.Contains(_slots[s].SubjectId))
                {
                    msgs++;
                    if (first == 0 || s < first)
                    {
                        first = s;
                    }
                }
            }
        }

        return new SubjectState(msgs, first, last);
    }

    private SubjectState ScanRange(ulong from, ulong to, SubjectFilter f)
    {
        var matcher = new SubjectMatcher(f, _subjects);
        ulong msgs = 0, first = 0, last = 0;
        for (var s = from; s <= to; s++)
        {
            if (_slots.Contains(s) && _slots[s].IsLive && matcher.Matches(_slots[s].SubjectId))
            {
                msgs++;
                if (first == 0)
                {
                    first = s;
                }

                last = s;
            }
        }

        return new SubjectState(msgs, first, last);
    }

    private SubjectState ScanSubject(ulong from, SubjectEntry entry)
    {
        ulong msgs = 0, first = 0;
        if (from - entry.First < entry.Last - from)
        {
            // Nearer the subject's first message: count what lies before from, the rest is the answer.
            ulong before = 0;
            for (var s = entry.First; s < from; s++)
            {
                if (_slots.Contains(s) && _slots[s].SubjectId == entry.Id)
                {
                    before++;
                }
            }

            for (var s = from; first == 0 && s <= entry.Last; s++)
            {
                if (_slots.Contains(s) && _slots[s].SubjectId == entry.Id)
                {
                    first = s;
                }
            }

            return new SubjectState(entry.Msgs - before, first, entry.Last);
        }

        for (var s = from; s <= entry.Last; s++)
        {
            if (_slots.Contains(s) && _slots[s].SubjectId == entry.Id)
            {
                msgs++;
                if (first == 0)
                {
                    first = s;
                }
            }
        }

        return new SubjectState(msgs, first, entry.Last);
    }

    /// <summary>Subjects matching <paramref name="f"/> whose last message is at or after <paramref name="start"/>.</summary>
    private ulong LastPerSubjectCount(ulong start, SubjectFilter f)
    {
        if (start < _first)
        {
            start = _first;
        }

        if (_msgs == 0 || start > _last)
        {
            return 0;
        }

        if (f.IsLiteral)
        {
            var entry = _subjects.Find(f.Utf8);
            return entry is not null && entry.Last >= start ? 1UL : 0UL;
        }

        ulong count = 0;
        if ((ulong)_subjects.Count > _last - start + 1)
        {
            // A subject counts once: at the slot that is its last message.
            var matcher = new SubjectMatcher(f, _subjects);
            for (var s = start; s <= _last; s++)
            {
                if (_slots.Contains(s) && _slots[s].IsLive && _subjects[_slots[s].SubjectId]!.Last == s && matcher.Matches(_slots[s].SubjectId))
                {
                    count++;
                }
            }

            return count;
        }

        foreach (var entry in _subjects.Entries)
        {
            if (entry.Last >= start && f.Matches(entry.Key))
            {
                count++;
            }
        }

        return count;
    }
}
