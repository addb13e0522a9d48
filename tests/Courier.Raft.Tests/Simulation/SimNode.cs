
namespace Courier.Raft.Tests.Simulation;

/// <summary>One simulated server: a <see cref="RaftNode"/> while up, its <see cref="SimDisk"/> always, and a state machine (the applied commands) rebuilt from the disk at restart.</summary>
internal sealed class SimNode(ulong id, SimDisk disk)
{
    public ulong Id { get; } = id;
    public SimDisk Disk { get; } = disk;
    public RaftNode? Raft { get; set; }
    public bool Up => Raft is not null;

    /// <summary>A Ready whose write is in progress.</summary>
    public Ready? Writing { get; set; }
    public long WriteId { get; set; }

    /// <summary>The state machine: commands applied, in order, each with the index of its entry (a snapshot's get its index), and the index applied up to.</summary>
    public List<(ulong Index, ulong Command)> Commands { get; } = [];
    public ulong Applied { get; set; }

    public List<ulong> CommandsUpTo(ulong index)
    {
        var commands = new List<ulong>(Commands.Count);
        foreach (var (at, command) in Commands)
            if (at <= index) commands.Add(command);
        return commands;
    }

    /// <summary>Rebuilds the state machine from a snapshot (an install, or the disk at restart).</summary>
    public void Restore(Snapshot? snapshot)
    {
        Commands.Clear();
        Applied = 0;
        if (snapshot is null) return;
        foreach (var command in Simulation.DecodeCommands(snapshot.Data.Span)) Commands.Add((snapshot.Meta.Index, command));
        Applied = snapshot.Meta.Index;
    }

    /// <summary>Started incarnations (a restart makes a new one; stale disk completions of an old one are ignored).</summary>
    public int Incarnation { get; set; }

    public override string ToString() => Raft?.ToString() ?? $"raft {Id} down";
}
