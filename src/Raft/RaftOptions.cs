namespace Courier.Raft;

/// <summary>A member's tunables. Times are in ticks of the host's (monotonic) clock.</summary>
public sealed record RaftOptions
{
    /// <summary>Ticks without a leader before a follower campaigns; the actual timeout is drawn from [ElectionTicks, 2 * ElectionTicks).</summary>
    public int ElectionTicks { get; init; } = 10;

    /// <summary>Ticks between a leader's heartbeats.</summary>
    public int HeartbeatTicks { get; init; } = 1;

    /// <summary>Run a pre-vote before a real election (dissertation §9.6).</summary>
    public bool PreVote { get; init; } = true;

    /// <summary>A leader that has not heard from a quorum within an election timeout steps down, and voters ignore vote requests while they hear from a leader (dissertation §6.2, §4.2.3).</summary>
    public bool CheckQuorum { get; init; } = true;

    /// <summary>Most entry bytes in one Append message.</summary>
    public int MaxBytesPerMessage { get; init; } = 1 << 20; // 1 MiB: one route frame stays far below nats-server's max_payload for routes

    /// <summary>Most Append messages in flight to one follower in the replicate state.</summary>
    public int MaxInflightMessages { get; init; } = 64;

    /// <summary>Seed of this member's election-timeout draws (the host passes a random one; simulation passes its seed).</summary>
    public int RandomSeed { get; init; }
}
