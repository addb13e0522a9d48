using Courier.Protocols.JetStream;

namespace Courier.Storage.Internal;

/// <summary>Deletes, purges, compaction, truncation, age expiry and limit enforcement.</summary>
internal abstract partial class StoreCore
{
    /// <inheritdoc/>
    public bool RemoveMessage(ulong sequence)
    {
        lock (StateLock)
        {
            ThrowIfClosed();
            return RemoveCore(sequence, truncating: false);
        }
    }

    /// <inheritdoc/>
    public bool EraseMessage(ulong sequence)
    {
        bool removed;
        using (EnterIo())
        {
            lock (StateLock)
            {
                ThrowIfClosed();
                if (!IsLive(sequence))
                {
                    return false;
                }

                EraseRecord(sequence, _slots[sequence]);
                removed = RemoveCore(sequence, truncating: false);
            }

            Flush();
        }

        return removed;
    }

    /// <inheritdoc/>
    public ulong Purge()
    {
        ulong purged;
        using (EnterIo())
        {
            lock (StateLock)
            {
                ThrowIfClosed();
                purged = _msgs;
                ResetTo(_last + 1, _last);
            }

            Flush();
        }

        return purged;
    }

    /// <inheritdoc/>
    public ulong Purge(string? subject, ulong sequence, ulong keep)
    {
        var filter = SubjectFilter.Parse(subject);
        if (filter.IsAll)
        {
            if (sequence > 1)
            {
                return Compact(sequence);
            }

            if (keep == 0)
            {
                return Purge();
            }
        }

        ulong purged = 0;
        using (EnterIo())
        {
            lock (StateLock)
            {
                ThrowIfClosed();
                var matched = FilteredStateLocked(1, filter);
                if (matched.Msgs == 0)
                {
                    return 0;
                }

                ulong max = 0;
                if (keep > 0)
                {
                    if (keep >= matched.Msgs)
                    {
                        return 0;
                    }

                    max = matched.Msgs - keep;
                }

                var upTo = matched.Last;
                if (sequence > 1 && sequence - 1 < upTo)
                {
                    upTo = sequence - 1;
                }

                if (filter.IsAll)
                {
                    while (_msgs > 0 && _first <= upTo && (max == 0 || purged < max))
                    {
                        RemoveCore(_first, truncating: false);
                        purged++;
                    }
                }
                else if (filter.IsLiteral)
                {
                    var entry = _subjects.Find(filter.Utf8);
                    while (entry is not null && entry.Msgs > 0 && entry.First <= upTo && (max == 0 || purged < max))
                    {
                        RemoveCore(entry.First, truncating: false);
                        purged++;
                    }
                }
                else
                {
                    var matcher = new SubjectMatcher(filter, _subjects);
                    for (var seq = matched.First; seq <= upTo && (max == 0 || purged < max); seq++)
                    {
                        if (_slots.Contains(seq) && _slots[seq].IsLive && matcher.Matches(_slots[seq].SubjectId)
                            && RemoveCore(seq, truncating: false))
                        {
                            purged++;
                        }
                    }
                }
            }

            Flush();
        }

        return purged;
    }

    /// <inheritdoc/>
    public ulong Compact(ulong sequence)
    {
        if (sequence == 0)
        {
            return Purge();
        }

        ulong purged = 0;
        using (EnterIo())
        {
            lock (StateLock)
            {
                ThrowIfClosed();
                if (sequence > _last)
                {
                    purged = _msgs;
                    ResetTo(sequence, sequence - 1);
                }
                else
                {
                    while (_msgs > 0 && _first < sequence)
                    {
                        RemoveCore(_first, truncating: false);
                        purged++;
                    }
                }
            }

            Flush();
        }

        return purged;
    }

    /// <inheritdoc/>
    public StoreError Truncate(ulong sequence)
    {
        using (EnterIo())
        {
            // Everything written before the cut must be on disk before files are cut.
            Flush();
            lock (StateLock)
            {
                ThrowIfClosed();
                if (sequence == 0)
                {
                    ResetTo(0, 0);
                    _lastTime = 0;
                }
                else
                {
                    if (!IsLive(sequence))
                    {
                        return StoreError.InvalidSequence;
                    }

                    for (var seq = _last; seq > sequence; seq--)
                    {
                        RemoveCore(seq, truncating: true);
                    }

                    _last = sequence;
                    _lastTime = _slots[sequence].Timestamp;
                    _slots.ClearFrom(sequence + 1);
                    RebuildSubjects();
                    Truncated(sequence);
                }
            }

            Flush();
        }

        return StoreError.None;
    }

    /// <inheritdoc/>
    public ulong ExpireByAge(long now)
    {
        lock (StateLock)
        {
            ThrowIfClosed();
            var maxAge = _config.MaxAge;
            if (maxAge <= TimeSpan.Zero)
            {
                return 0;
            }

            var oldest = now - (maxAge.Ticks * 100); // TimeSpan ticks are 100 ns
            ulong expired = 0;
            while (_msgs > 0 && _slots[_first].Timestamp <= oldest && !NeverExpires(_first))
            {
                RemoveCore(_first, truncating: false);
                expired++;
            }

            if (_msgs > 0 && NeverExpires(_first))
            {
                // Nats-TTL: never outlives max_age: step over such messages to the old ones behind them (nats-server's expireMsgs).
                for (var seq = _first; seq <= _last && _msgs > 0; seq++)
                {
                    if (!IsLive(seq) || NeverExpires(seq))
                    {
                        continue;
                    }

                    if (_slots[seq].Timestamp > oldest)
                    {
                        break;
                    }

                    RemoveCore(seq, truncating: false);
                    expired++;
                }
            }

            return expired;
        }
    }

    /// <inheritdoc/>
    public void UpdateConfig(StoreConfig config)
    {
        ArgumentNullException.ThrowIfNull(config);
        lock (StateLock)
        {
            ThrowIfClosed();
            var oldPer = _config.MaxMsgsPerSubject;
            _config = config;
            EnforceMsgLimit();
            EnforceBytesLimit();
            var maxPer = config.MaxMsgsPerSubject;
            if (maxPer > 0 && (oldPer <= 0 || maxPer < oldPer))
            {
                EnforcePerSubjectLimitAll((ulong)maxPer);
            }
        }
    }

    // ---- Internals (lock held) ----

    private bool IsLive(ulong seq) => seq >= _first && seq <= _last && _slots.Contains(seq) && _slots[seq].IsLive;

    /// <summary>Every message gone; the first sequence becomes <paramref name="first"/> and the last <paramref name="last"/>.</summary>
    private void ResetTo(ulong first, ulong last)
    {
        _subjects.Clear();
        _slots.Clear();
        ClearTtls();
        _msgs = 0;
        _bytes = 0;
        _first = first;
        _last = last;
        AllRemoved(last + 1);
    }

    /// <summary>Removes one message and tells the backend. The workhorse of every delete.</summary>
    private bool RemoveCore(ulong seq, bool truncating)
    {
        if (!IsLive(seq))
        {
            return false;
        }

        ref var slot = ref _slots[seq];
        var removed = slot;
        slot.SubjectId = 0; // keep Next: the subject's chain may pass through here
        if (_neverExpire.Count > 0)
        {
            _neverExpire.Remove(seq);
        }

        _msgs--;
        _bytes -= Counted(removed.Size);

        var entry = _subjects[removed.SubjectId]!;
        if (!truncating)
        {
            UnlinkFromSubject(entry, seq, removed.Next);
        }

        var front = seq == _first;
        if (front)
        {
            AdvanceFirst();
        }

        RecordRemoved(seq, removed, truncating ? Removal.Truncated : front ? Removal.Front : Removal.Interior);
        AssertConsistent();
        return true;
    }

    private void AdvanceFirst()
    {
        if (_msgs == 0)
        {
            _first = _last + 1;
        }
        else
        {
            var seq = _first + 1;
            while (!(_slots.Contains(seq) && _slots[seq].IsLive))
            {
                seq++;
            }

            _first = seq;
        }

        _slots.TrimBelow(_first);
    }

    private void UnlinkFromSubject(SubjectEntry entry, ulong seq, uint next)
    {
        if (entry.Msgs == 1)
        {
            entry.Msgs = 0;
            _subjects.Remove(entry);
            return;
        }

        entry.Msgs--;
        if (entry.Msgs == 1)
        {
            // Two were left and one went: the other is both first and last.
            if (seq == entry.Last)
            {
                entry.Last = entry.First;
            }
            else
            {
                entry.First = entry.Last;
            }

            return;
        }

        if (seq == entry.First)
        {
            entry.First = NextOfSubject(entry, seq, next);
        }
        else if (seq == entry.Last)
        {
            entry.Last = PrevOfSubject(entry, seq);
        }
    }

    /// <summary>The subject's next live message after <paramref name="seq"/>, following the chain through removed slots.</summary>
    private ulong NextOfSubject(SubjectEntry entry, ulong seq, uint next)
    {
        var candidate = seq;
        while (next != 0)
        {
            candidate += next;
            if (candidate > entry.Last || !_slots.Contains(candidate))
            {
                break;
            }

            ref var slot = ref _slots[candidate];
            if (slot.SubjectId == entry.Id)
            {
                return candidate;
            }

            if (slot.IsLive)
            {
                break; // not this subject's chain any more (cannot happen; scan to be safe)
            }

            next = slot.Next;
        }

        for (var s = seq + 1; s <= entry.Last; s++)
        {
            if (_slots.Contains(s) && _slots[s].SubjectId == entry.Id)
            {
                return s;
            }
        }

        return entry.Last;
    }

    private ulong PrevOfSubject(SubjectEntry entry, ulong seq)
    {
        for (var s = seq - 1; s >= entry.First && s > 0; s--)
        {
            if (_slots.Contains(s) && _slots[s].SubjectId == entry.Id)
            {
                return s;
            }
        }

        return entry.First;
    }

    /// <summary>Recomputes every subject's counts and chains from the slots (after Truncate).</summary>
    private void RebuildSubjects()
    {
        foreach (var entry in _subjects.Entries)
        {
            entry.Msgs = 0;
        }

        if (_msgs > 0)
        {
            for (var seq = _first; seq <= _last; seq++)
            {
                if (_slots.Contains(seq) && _slots[seq].IsLive)
                {
                    _slots[seq].Next = 0;
                    LinkToSubject(_subjects[_slots[seq].SubjectId]!, seq);
                }
            }
        }

        List<SubjectEntry>? empty = null;
        foreach (var entry in _subjects.Entries)
        {
            if (entry.Msgs == 0)
            {
                (empty ??= []).Add(entry);
            }
        }

        if (empty is not null)
        {
            foreach (var entry in empty)
            {
                _subjects.Remove(entry);
            }
        }
    }

    /// <summary>Removes the subject's oldest messages beyond <paramref name="max"/>; an append's are shown to <paramref name="observer"/> first.</summary>
    private void EnforcePerSubjectLimit(SubjectEntry entry, ulong max, IDisplacementObserver? observer = null)
    {
        while (entry.Msgs > max)
        {
            var oldest = entry.First;
            if (observer is not null && observer.Wants(oldest))
            {
                if (ReadChecked(oldest) is not { } message)
                {
                    continue; // corrupt: already removed and counted lost
                }

                observer.Displaced(message);
            }

            if (!RemoveCore(oldest, truncating: false))
            {
                break;
            }
        }
    }

    private void EnforcePerSubjectLimitAll(ulong max)
    {
        List<SubjectEntry>? over = null;
        foreach (var entry in _subjects.Entries)
        {
            if (entry.Msgs > max)
            {
                (over ??= []).Add(entry);
            }
        }

        if (over is not null)
        {
            foreach (var entry in over)
            {
                EnforcePerSubjectLimit(entry, max);
            }
        }
    }

    /// <summary>max_msgs with discard old: drop from the front (nats-server enforceMsgLimit).</summary>
    private void EnforceMsgLimit()
    {
        var max = _config.MaxMsgs;
        if (_config.Discard != DiscardPolicy.Old || max <= 0)
        {
            return;
        }

        while (_msgs > (ulong)max)
        {
            RemoveCore(_first, truncating: false);
        }
    }

    /// <summary>
    /// Over max_bytes: drop from the front (nats-server enforceBytesLimit), whatever the discard policy:
    /// discard new lets a message in while the bytes before it plus its headers and payload stay under
    /// the limit, and its subject and overhead can still take the total over, as in nats-server 2.9.
    /// </summary>
    private void EnforceBytesLimit()
    {
        var max = _config.MaxBytes;
        if (max <= 0)
        {
            return;
        }

        while (_bytes > (ulong)max && _msgs > 0)
        {
            RemoveCore(_first, truncating: false);
        }
    }
}
