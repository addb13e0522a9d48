using System.Buffers.Binary;

namespace Courier.Raft.Tests.Simulation;

internal sealed partial class Simulation
{
    private bool _faults;
    private bool _clients;

    /// <summary>One seeded run: faults for <paramref name="faultyMs"/>, then <see cref="Settle"/>.</summary>
    public static Simulation Run(int seed, FaultProfile profile, long faultyMs = 6000)
    {
        var options = new RaftOptions { ElectionTicks = 10, HeartbeatTicks = 1, MaxBytesPerMessage = profile.MaxBytesPerMessage, MaxInflightMessages = 16 };
        var sim = new Simulation(seed, profile, profile.Members, profile.Voters, options);
        sim.RunFor(faultyMs);
        sim.Settle();
        return sim;
    }

    private void ScheduleFaults()
    {
        _faults = true;
        _clients = true;
        Every(Profile.ProposalsPerSecond, () => { if (_clients) Propose(); });
        Every(Profile.CrashesPerSecond, CrashSomeone);
        Every(Profile.PartitionsPerSecond, PartitionSomeone);
        Every(Profile.ConfChangesPerSecond, ChangeMembership);
        Every(Profile.TransfersPerSecond, TransferSomewhere);
    }

    /// <summary>Runs <paramref name="action"/> at exponentially distributed intervals while faults are on.</summary>
    private void Every(double perSecond, Action action)
    {
        if (perSecond <= 0) return;
        void Loop()
        {
            if (!_faults) return;
            action();
            Schedule(Interval(perSecond), Loop);
        }
        Schedule(Interval(perSecond), Loop);
    }

    private long Interval(double perSecond) => (long)(-Math.Log(1 - Random.NextDouble()) * 1000 / perSecond) + 1;

    /// <summary>The member that leads the highest term, if any.</summary>
    public SimNode? Leader()
    {
        SimNode? leader = null;
        foreach (var node in Nodes)
            if (node.Raft is { Role: RaftRole.Leader } raft && (leader is null || raft.Term > leader.Raft!.Term)) leader = node;
        return leader;
    }

    /// <summary>A client proposes a new command to whoever leads; returns it, or null when no leader took it.</summary>
    public ulong? Propose()
    {
        if (Leader() is not { } leader) return null;
        var command = _nextCommand++;
        var data = new byte[8];
        BinaryPrimitives.WriteUInt64LittleEndian(data, command);
        if (!leader.Raft!.Propose(data, out var index, out var term)) return null;
        _proposed[command] = (index, term);
        AfterEvent(leader);
        return command;
    }

    public void Crash(ulong id)
    {
        var node = Node(id);
        if (!node.Up) return;
        if (node.Writing is { } writing && Random.NextDouble() < Profile.TornWrite)
        {
            var kept = Random.Next(0, SimDisk.Operations(writing));
            node.Disk.Write(writing, kept); // torn: a prefix of the write made it to disk
            Trace($"{id} crashes, its write torn after {kept} of {SimDisk.Operations(writing)} operations");
        }
        else
        {
            Trace($"{id} crashes{(node.Writing is null ? "" : ", its unsynced write lost")}");
        }
        node.Raft = null;
        node.Writing = null;
        node.Incarnation++;
        node.Restore(null);
    }

    public void Restart(ulong id)
    {
        var node = Node(id);
        if (node.Up) return;
        // Damage, when the profile has it, to one member at a time: a majority that lost entries loses them for good.
        if (Profile.Damage > 0 && Random.NextDouble() < Profile.Damage
            && Nodes.All(n => n == node || (n.Disk.RepairFloor == 0 && n.Raft is not { RepairFloor: > 0 })) && node.Disk.Damage(Random))
            Trace($"{id}'s log damaged: it repairs up to {node.Disk.RepairFloor}");
        var state = node.Disk.Load();
        node.Raft = NewRaft(id, state);
        node.Incarnation++;
        node.Restore(state?.Snapshot);
        Trace($"{id} restarts: {node.Raft}");
        AfterEvent(node);
    }

    public void Partition(IReadOnlyCollection<ulong> side, bool oneWay = false)
    {
        foreach (var a in side)
            foreach (var b in Nodes.Select(n => n.Id).Where(x => !side.Contains(x)))
            {
                _cut.Add((a, b));
                if (!oneWay) _cut.Add((b, a));
            }
        Trace($"partition [{string.Join(' ', side)}]{(oneWay ? " (outbound only)" : "")}");
    }

    public void Heal()
    {
        _cut.Clear();
        Trace("heal");
    }

    private void CrashSomeone()
    {
        var node = Nodes[Random.Next(Nodes.Length)];
        if (!node.Up) return;
        Crash(node.Id);
        var id = node.Id;
        Schedule(Random.Next(20, 1500), () => { if (_faults) Restart(id); });
    }

    private void PartitionSomeone()
    {
        if (_cut.Count > 0) return;
        var side = Nodes.Select(n => n.Id).Where(_ => Random.Next(2) == 0).ToArray();
        if (side.Length == 0 || side.Length == Nodes.Length) side = [Nodes[Random.Next(Nodes.Length)].Id];
        Partition(side, oneWay: Random.NextDouble() < 0.2);
        Schedule(Random.Next(100, 2000), () => { if (_faults) Heal(); });
    }

    private void ChangeMembership()
    {
        if (Leader() is not { } leader) return;
        var raft = leader.Raft!;
        var config = raft.Configuration;
        var target = Nodes[Random.Next(Nodes.Length)].Id;
        ConfChange change;
        if (config.IsVoter(target))
        {
            if (config.Voters.Length <= 2 && Random.Next(4) != 0) return; // mostly keep three or more voters
            change = new ConfChange(Random.Next(3) == 0 ? ConfChangeKind.AddLearner : ConfChangeKind.Remove, target);
        }
        else if (config.IsLearner(target))
        {
            change = new ConfChange(Random.Next(4) == 0 ? ConfChangeKind.Remove : ConfChangeKind.AddVoter, target);
        }
        else
        {
            change = new ConfChange(Random.Next(3) == 0 ? ConfChangeKind.AddVoter : ConfChangeKind.AddLearner, target);
        }
        if (raft.ProposeConfChange(change, out var index))
        {
            Trace($"{leader.Id} proposes {change.Kind} {change.Node} at {index}");
            AfterEvent(leader);
        }
    }

    private void TransferSomewhere()
    {
        if (Leader() is not { } leader) return;
        var voters = leader.Raft!.Configuration.Voters;
        var to = voters[Random.Next(voters.Length)];
        if (leader.Raft.TransferLeadership(to))
        {
            Trace($"{leader.Id} hands leadership to {to}");
            AfterEvent(leader);
        }
    }

    /// <summary>
    /// Ends the faults (heals, restarts everyone), then checks liveness (a leader commits a new
    /// command) and that every acknowledged command is in every current member's state machine,
    /// exactly once and in the decided order.
    /// </summary>
    public void Settle()
    {
        _faults = false;
        _clients = false;
        Heal();
        foreach (var node in Nodes) Restart(node.Id);
        RunFor(1000);
        ulong? probe = null;
        for (var attempt = 0; attempt < 50 && probe is null; attempt++)
        {
            probe = Propose();
            if (probe is null) RunFor(200);
        }
        if (probe is not { } command) throw Fail("liveness: no leader took a proposal 11 s after the faults stopped");
        for (var waited = 0; waited < 10_000 && !Acknowledged.Contains(command); waited += 100) RunFor(100);
        if (!Acknowledged.Contains(command)) throw Fail($"liveness: command {command} not committed 10 s after the faults stopped");
        RunFor(2000);
        Check.LogMatching(force: true);

        var decided = Check.DecidedCommands(ulong.MaxValue);
        var seen = new HashSet<ulong>();
        foreach (var c in decided)
            if (!seen.Add(c)) throw Fail($"command {c} was applied twice");
        foreach (var c in Acknowledged)
            if (!seen.Contains(c)) throw Fail($"acknowledged command {c} is not in the decided log");
        var leader = Leader() ?? throw Fail("no leader after settling");
        foreach (var member in leader.Raft!.Configuration.Voters.Concat(leader.Raft.Configuration.Learners))
        {
            var node = Node(member);
            var commands = node.Commands.Select(c => c.Command).ToList();
            if (node.Applied != leader.Raft.CommitIndex)
                throw Fail($"member {member} applied {node.Applied}, the leader committed {leader.Raft.CommitIndex}");
            if (!commands.SequenceEqual(decided))
                throw Fail($"member {member}'s state machine ({commands.Count} commands) differs from the decided log ({decided.Count})");
        }
    }
}
