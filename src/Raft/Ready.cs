namespace Courier.Raft;

/// <summary>
/// Everything the host must do for one member, in one batch (etcd/raft's <c>Ready</c>), in this order:
/// 1. send <see cref="EarlyMessages"/> (a leader's appends and heartbeats: its own durability is
///    counted separately, so they may leave while it writes);
/// 2. persist <see cref="Snapshot"/>, then <see cref="Entries"/> (an entry whose index is already on
///    disk replaces it and everything after it), then <see cref="HardState"/>, and sync;
/// 3. send <see cref="Messages"/> (votes and acknowledgements: they promise what step 2 made durable);
/// 4. apply <see cref="Snapshot"/> and then <see cref="CommittedEntries"/> to the state machine;
/// 5. call <see cref="RaftNode.Advance"/> with this Ready.
/// Steps and ticks may continue between <see cref="RaftNode.GetReady"/> and Advance; the next Ready
/// comes after Advance.
/// </summary>
public sealed class Ready
{
    internal static readonly RaftMessage[] NoMessages = [];

    public HardState? HardState { get; init; }
    public Snapshot? Snapshot { get; init; }
    public Entry[] Entries { get; init; } = [];
    public Entry[] CommittedEntries { get; init; } = [];
    public RaftMessage[] EarlyMessages { get; init; } = NoMessages;
    public RaftMessage[] Messages { get; init; } = NoMessages;

    /// <summary>True when step 2 has nothing to write.</summary>
    public bool NothingToPersist => HardState is null && Snapshot is null && Entries.Length == 0;
}
