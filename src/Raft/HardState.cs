namespace Courier.Raft;

/// <summary>What a member must persist (and sync) before any message that depends on it leaves: its term, its vote in that term, and the commit index it knows.</summary>
public readonly record struct HardState(ulong Term, ulong Vote, ulong Commit);

/// <summary>A snapshot's position and the membership as of that position.</summary>
public sealed record SnapshotMeta(ulong Index, ulong Term, Configuration Configuration);

/// <summary>A snapshot: its position and the host's opaque state machine image up to it.</summary>
public sealed record Snapshot(SnapshotMeta Meta, ReadOnlyMemory<byte> Data);

/// <summary>What a member recovers from its own files after a restart.</summary>
/// <param name="HardState">Term, vote and a lower bound of the commit index.</param>
/// <param name="Snapshot">The latest snapshot, if any.</param>
/// <param name="Entries">The log after the snapshot, up to the first entry its files lost.</param>
/// <param name="RepairFloor">0, or the highest index its files once held when they lost entries below it (a damaged
/// record with intact ones after it: a flipped bit, not a torn unsynced tail). Entries this member acknowledged may be
/// gone, so it does not campaign until a leader has brought its log up to that index again, and votes only for a
/// candidate whose log is at least as up-to-date as its log was (<paramref name="RepairFloorTerm"/>, <paramref name="RepairFloor"/>).</param>
/// <param name="RepairFloorTerm">The term of the entry at <paramref name="RepairFloor"/> (the last one its files held).</param>
public sealed record PersistedState(HardState HardState, Snapshot? Snapshot, IReadOnlyList<Entry> Entries, ulong RepairFloor = 0, ulong RepairFloorTerm = 0);
