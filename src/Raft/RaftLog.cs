namespace Courier.Raft;

/// <summary>
/// A member's view of its log: the snapshot boundary, the entries after it, how far they are
/// durable (<see cref="Stable"/>), committed and applied. The host's files hold the same entries;
/// this copy is what the core reads (compaction bounds it).
/// </summary>
internal sealed class RaftLog
{
    private readonly List<Entry> _entries = []; // _entries[i].Index == SnapshotIndex + 1 + i
    private SnapshotMeta _snapshot;

    public RaftLog(SnapshotMeta snapshot)
    {
        _snapshot = snapshot;
        Committed = snapshot.Index;
        Applied = snapshot.Index;
        Stable = snapshot.Index;
    }

    public SnapshotMeta SnapshotMeta => _snapshot;
    public ulong SnapshotIndex => _snapshot.Index;
    public ulong FirstIndex => _snapshot.Index + 1;
    public ulong LastIndex => _snapshot.Index + (ulong)_entries.Count;
    public ulong LastTerm => _entries.Count == 0 ? _snapshot.Term : _entries[^1].Term;
    public int Count => _entries.Count;

    /// <summary>Highest index the host has made durable.</summary>
    public ulong Stable { get; private set; }
    public ulong Committed { get; private set; }
    public ulong Applied { get; private set; }

    public bool TryTerm(ulong index, out ulong term)
    {
        if (index == _snapshot.Index) { term = _snapshot.Term; return true; }
        if (index < _snapshot.Index || index > LastIndex) { term = 0; return false; }
        term = _entries[(int)(index - FirstIndex)].Term;
        return true;
    }

    /// <summary>Term at <paramref name="index"/>, 0 when it is compacted or beyond the log.</summary>
    public ulong TermOrZero(ulong index) => TryTerm(index, out var term) ? term : 0;

    public bool MatchTerm(ulong index, ulong term) => TryTerm(index, out var t) && t == term;

    public Entry At(ulong index) => _entries[(int)(index - FirstIndex)];

    /// <summary>§5.4.1: a candidate's log is at least as up to date as ours.</summary>
    public bool IsUpToDate(ulong lastIndex, ulong lastTerm) =>
        lastTerm > LastTerm || (lastTerm == LastTerm && lastIndex >= LastIndex);

    /// <summary>The leader's own appends.</summary>
    public void Append(Entry entry)
    {
        if (entry.Index != LastIndex + 1) throw new InvalidOperationException($"append {entry} after {LastIndex}");
        _entries.Add(entry);
    }

    /// <summary>
    /// A follower's append after (prevIndex, prevTerm). Returns false when the logs do not agree
    /// there; otherwise drops a conflicting suffix (never a committed entry), appends what is new,
    /// and advances the commit to what the leader says, bounded by what this message proves.
    /// </summary>
    public bool TryAppend(ulong prevIndex, ulong prevTerm, Entry[] entries, ulong leaderCommit, out ulong lastNew, out bool truncated)
    {
        lastNew = 0;
        truncated = false;
        if (!MatchTerm(prevIndex, prevTerm)) return false;
        lastNew = prevIndex + (ulong)entries.Length;
        for (var i = 0; i < entries.Length; i++)
        {
            var entry = entries[i];
            if (entry.Index <= _snapshot.Index) continue; // already in the snapshot
            if (entry.Index <= LastIndex)
            {
                if (At(entry.Index).Term == entry.Term) continue;
                if (entry.Index <= Committed)
                    throw new InvalidOperationException($"entry {entry} conflicts with committed entry {At(entry.Index)} (committed {Committed})");
                TruncateFrom(entry.Index);
                truncated = true;
            }
            _entries.Add(entry);
        }
        CommitTo(Math.Min(leaderCommit, lastNew));
        return true;
    }

    private void TruncateFrom(ulong index)
    {
        _entries.RemoveRange((int)(index - FirstIndex), (int)(LastIndex - index + 1));
        if (Stable >= index) Stable = index - 1;
    }

    public void CommitTo(ulong index)
    {
        if (index <= Committed) return;
        if (index > LastIndex) throw new InvalidOperationException($"commit {index} beyond last index {LastIndex}");
        Committed = index;
    }

    /// <summary>Entries [lo, hi] up to <paramref name="maxBytes"/> (at least one).</summary>
    public Entry[] Slice(ulong lo, ulong hi, int maxBytes)
    {
        if (lo > hi) return [];
        var count = 0;
        var bytes = 0;
        for (var i = lo; i <= hi; i++)
        {
            bytes += At(i).Size;
            if (count > 0 && bytes > maxBytes) break;
            count++;
        }
        return _entries.GetRange((int)(lo - FirstIndex), count).ToArray();
    }

    /// <summary>Entries not yet durable.</summary>
    public Entry[] Unstable() => Stable >= LastIndex ? [] : Slice(Stable + 1, LastIndex, int.MaxValue);

    /// <summary>Committed entries not yet handed out for applying (only those the Ready also makes durable).</summary>
    public Entry[] NextCommitted(ulong appliedPending)
    {
        var from = Math.Max(appliedPending, _snapshot.Index) + 1;
        var to = Math.Min(Committed, LastIndex);
        return from > to ? [] : Slice(from, to, int.MaxValue);
    }

    /// <summary>The host made entries up to (index, term) durable; ignored when a later truncation replaced them.</summary>
    public void StableTo(ulong index, ulong term)
    {
        if (index > Stable && MatchTerm(index, term)) Stable = index;
    }

    public void AppliedTo(ulong index)
    {
        if (index > Applied) Applied = index;
    }

    /// <summary>Replaces the whole log with a snapshot (a follower too far behind).</summary>
    public void Restore(SnapshotMeta meta)
    {
        _entries.Clear();
        _snapshot = meta;
        Committed = meta.Index;
        Stable = meta.Index;
    }

    /// <summary>Drops entries up to <paramref name="meta"/>.Index (already applied, now in the host's snapshot).</summary>
    public void Compact(SnapshotMeta meta)
    {
        if (meta.Index <= _snapshot.Index) return;
        if (meta.Index > Applied) throw new InvalidOperationException($"compact to {meta.Index} beyond applied {Applied}");
        _entries.RemoveRange(0, (int)(meta.Index - _snapshot.Index));
        _snapshot = meta;
    }

    /// <summary>Largest index at or below <paramref name="index"/> whose term is at most <paramref name="term"/> (a rejected append's hint, so the leader skips a whole term at once).</summary>
    public ulong FindConflictByTerm(ulong index, ulong term)
    {
        if (index > LastIndex) index = LastIndex;
        while (index > _snapshot.Index && At(index).Term > term) index--;
        return index;
    }
}
