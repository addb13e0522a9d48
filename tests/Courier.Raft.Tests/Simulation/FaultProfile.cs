namespace Courier.Raft.Tests.Simulation;

/// <summary>How hostile one simulated run is. Rates are per virtual second; probabilities per message or crash.</summary>
internal sealed record FaultProfile(
    string Name,
    double Drop = 0,
    double Duplicate = 0,
    int MinDelayMs = 1,
    int MaxDelayMs = 1,
    int MaxSyncMs = 1,
    double CrashesPerSecond = 0,
    double TornWrite = 0,
    double Damage = 0,
    double PartitionsPerSecond = 0,
    double ConfChangesPerSecond = 0,
    double TransfersPerSecond = 0,
    double ProposalsPerSecond = 0,
    int CompactAfterEntries = 0,
    int Members = 5,
    int Voters = 3,
    int MaxBytesPerMessage = 4096)
{
    /// <summary>No faults, instant network and disk: scripted tests drive everything.</summary>
    public static readonly FaultProfile Calm = new("calm");

    /// <summary>The profiles the seeded runs cycle through.</summary>
    public static readonly FaultProfile[] Hostile =
    [
        new("lossy", Drop: 0.10, Duplicate: 0.05, MaxDelayMs: 40, MaxSyncMs: 8, ProposalsPerSecond: 100, CompactAfterEntries: 64),
        new("crashes", Drop: 0.02, Duplicate: 0.02, MaxDelayMs: 20, MaxSyncMs: 10, CrashesPerSecond: 1.5, TornWrite: 0.5, ProposalsPerSecond: 100, CompactAfterEntries: 48),
        new("partitions", Drop: 0.02, MaxDelayMs: 20, MaxSyncMs: 5, PartitionsPerSecond: 1.5, TransfersPerSecond: 0.5, ProposalsPerSecond: 100, CompactAfterEntries: 80),
        new("membership", Drop: 0.03, Duplicate: 0.02, MaxDelayMs: 25, MaxSyncMs: 5, CrashesPerSecond: 0.5, TornWrite: 0.5, PartitionsPerSecond: 0.5, ConfChangesPerSecond: 3, TransfersPerSecond: 0.5, ProposalsPerSecond: 80, CompactAfterEntries: 40),
        new("slow-disk", Drop: 0.02, MaxDelayMs: 10, MaxSyncMs: 60, CrashesPerSecond: 3, TornWrite: 0.8, PartitionsPerSecond: 0.5, TransfersPerSecond: 0.5, ProposalsPerSecond: 150, CompactAfterEntries: 64),
        new("five-voters", Drop: 0.05, Duplicate: 0.02, MaxDelayMs: 30, MaxSyncMs: 30, CrashesPerSecond: 2, TornWrite: 0.6, PartitionsPerSecond: 1.5, TransfersPerSecond: 0.3, ProposalsPerSecond: 120, CompactAfterEntries: 64, Members: 5, Voters: 5),
        // One entry per append: a new leader's no-op no longer travels with the older entries before
        // it, so a quorum can hold an earlier term's entry alone (the Raft paper's figure 8).
        new("one-entry", Drop: 0.05, Duplicate: 0.02, MaxDelayMs: 30, MaxSyncMs: 20, CrashesPerSecond: 2.5, TornWrite: 0.5, PartitionsPerSecond: 1.5, ProposalsPerSecond: 60, CompactAfterEntries: 64, Members: 5, Voters: 5, MaxBytesPerMessage: 1),
        // A restarted member's synced log damaged (a flipped bit: the entry and all after it lost), a minority at a time:
        // the corrupted-minority faults of Jepsen's NATS 2.12.1 analysis (issue 35's nemesis found it in Courier too).
        new("bitrot", Drop: 0.03, Duplicate: 0.02, MaxDelayMs: 20, MaxSyncMs: 10, CrashesPerSecond: 2, TornWrite: 0.3, Damage: 0.6, PartitionsPerSecond: 0.7, TransfersPerSecond: 0.3, ProposalsPerSecond: 100, CompactAfterEntries: 48),
        new("chaos", Drop: 0.08, Duplicate: 0.05, MinDelayMs: 1, MaxDelayMs: 60, MaxSyncMs: 15, CrashesPerSecond: 1, TornWrite: 0.7, PartitionsPerSecond: 1, ConfChangesPerSecond: 1.5, TransfersPerSecond: 1, ProposalsPerSecond: 120, CompactAfterEntries: 32),
    ];

    public override string ToString() => Name;
}
