using Courier.Raft;

namespace Courier.Actors.Raft;

/// <summary>How a node hosts its Raft group members.</summary>
internal sealed record RaftHostSettings
{
    /// <summary>This node's member id in every group it joins.</summary>
    public required ulong NodeId { get; init; }

    /// <summary>Where each group's log, hard state and snapshot live (one directory per group).</summary>
    public required string Directory { get; init; }

    /// <summary>Encryption at rest of the groups' logs and snapshots (<c>jetstream { key }</c>); null: plaintext.</summary>
    public Courier.Storage.StoreEncryption? Encryption { get; init; }

    /// <summary>One tick of every group's clock.</summary>
    public TimeSpan TickInterval { get; init; } = TimeSpan.FromMilliseconds(100);

    /// <summary>Ticks, as the core counts them: elections after 2-4 s, heartbeats every 500 ms (nats-server: elections after 4-9 s, heartbeats every 1 s).</summary>
    public RaftOptions Raft { get; init; } = new() { ElectionTicks = 20, HeartbeatTicks = 5 };
}
