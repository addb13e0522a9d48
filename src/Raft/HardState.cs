namespace Courier.Raft;

/// <summary>What a member must persist (and sync) before any message that depends on it leaves: its term, its vote in that term, and the commit index it knows.</summary>
public readonly record struct HardState(ulong Term, ulong Vote, ulong Commit);

/// <summary>A snapshot's position and the membership as of that position.</summary>
public sealed record SnapshotMeta(ulong Index, ulong Term, Configuration Configuration);

/// <summary>A snapshot: its position and the host's opaque state machine image up to it.</summary>
public sealed record Snapshot(SnapshotMeta Meta, ReadOnlyMemory<byte> Data);

/// <summary>What a member recovers from its own files after a restart.</summary>
public sealed record PersistedState(HardState HardState, Snapshot? Snapshot, IReadOnlyList<Entry> Entries);
