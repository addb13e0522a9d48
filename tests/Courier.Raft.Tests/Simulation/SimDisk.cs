
namespace Courier.Raft.Tests.Simulation;

/// <summary>
/// A member's files: what survives a crash. A Ready's write is a sequence of operations (snapshot,
/// truncate-and-append entries, hard state) that becomes durable only when its sync completes; a
/// crash before that loses it, or (a torn write) keeps a prefix of it, its last append cut short.
/// </summary>
internal sealed class SimDisk
{
    private HardState _hardState;
    private Snapshot? _snapshot;
    private readonly List<Entry> _entries = [];
    private ulong _repairFloor;
    private ulong _repairFloorTerm;

    public bool IsEmpty => _entries.Count == 0 && _snapshot is null && _hardState == default && _repairFloor == 0;

    public PersistedState? Load() =>
        IsEmpty ? null : new PersistedState(_hardState, _snapshot, [.. _entries], _repairFloor, _repairFloorTerm);

    /// <summary>0, or the index the member's log must reach again (RaftLogStore's repair file).</summary>
    public ulong RepairFloor => _repairFloor;

    /// <summary>
    /// A flipped bit in a synced entry (bit rot, a bad sector): that entry and all after it are gone, though the
    /// files once held them; as RaftLogStore does, the member repairs up to the last index it held, and its commit
    /// index is no more than what is left. False when there is nothing to damage.
    /// </summary>
    public bool Damage(Random random)
    {
        if (_entries.Count == 0) return false;
        var (held, heldTerm) = (_entries[^1].Index, _entries[^1].Term);
        var cut = random.Next(_entries.Count);
        _entries.RemoveRange(cut, _entries.Count - cut);
        if (held > _repairFloor) (_repairFloor, _repairFloorTerm) = (held, heldTerm);
        var last = _entries.Count > 0 ? _entries[^1].Index : _snapshot?.Meta.Index ?? 0;
        _hardState = _hardState with { Commit = Math.Min(_hardState.Commit, last) };
        return true;
    }

    /// <summary>The member's log reached its floor and that write is durable.</summary>
    public void ClearRepairFloor() => _repairFloor = _repairFloorTerm = 0;

    public Snapshot? Snapshot => _snapshot;

    /// <summary>Writes <paramref name="ready"/> in full (its sync completed).</summary>
    public void Write(Ready ready) => Write(ready, int.MaxValue);

    /// <summary>Writes the first <paramref name="operations"/> operations of <paramref name="ready"/>'s write, in order; entries count one operation each.</summary>
    public void Write(Ready ready, int operations)
    {
        if (ready.Snapshot is { } snapshot)
        {
            if (operations-- <= 0) return;
            _snapshot = snapshot;
            _entries.Clear(); // an installed snapshot replaces the whole log
        }
        if (ready.Entries.Length > 0)
        {
            if (operations-- <= 0) return;
            var first = ready.Entries[0].Index;
            _entries.RemoveAll(e => e.Index >= first);
            foreach (var entry in ready.Entries)
            {
                if (operations-- <= 0) return;
                _entries.Add(entry);
            }
        }
        if (ready.HardState is { } hard)
        {
            if (operations-- <= 0) return;
            _hardState = hard;
        }
    }

    /// <summary>How many operations <see cref="Write(Ready, int)"/> counts in <paramref name="ready"/>.</summary>
    public static int Operations(Ready ready) =>
        (ready.Snapshot is null ? 0 : 1) + (ready.Entries.Length == 0 ? 0 : 1 + ready.Entries.Length) + (ready.HardState is null ? 0 : 1);

    /// <summary>The host compacted its log behind a snapshot (written and synced before the log prefix is dropped).</summary>
    public void Compact(Snapshot snapshot)
    {
        _snapshot = snapshot;
        _entries.RemoveAll(e => e.Index <= snapshot.Meta.Index);
    }
}
