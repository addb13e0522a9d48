using System.Buffers.Binary;

namespace Courier.Raft.Tests.Simulation;

/// <summary>
/// The Raft safety properties (Raft paper, figure 3), checked while a simulation runs:
/// election safety (one leader per term), log matching, leader completeness, state-machine safety,
/// and the one clients care about: an acknowledged (committed) command is never lost.
/// </summary>
internal sealed class Invariants(Simulation sim)
{
    /// <summary>Every entry some member applied, by index: what the group decided.</summary>
    private readonly List<Entry> _decided = [];
    private readonly Dictionary<ulong, ulong> _leaders = [];
    private readonly Dictionary<ulong, (ulong Term, RaftRole Role)> _lastSeen = [];
    private long _lastLogCheck;

    public IReadOnlyList<Entry> Decided => _decided;

    /// <summary>Role changes: one leader per term; a new leader holds every decided entry.</summary>
    public void Observe(SimNode node)
    {
        if (node.Raft is not { } raft) return;
        var now = (raft.Term, raft.Role);
        if (_lastSeen.TryGetValue(node.Id, out var before) && before == now) return;
        _lastSeen[node.Id] = now;
        if (raft.Role != RaftRole.Leader) return;
        sim.Trace($"{node.Id} leads term {raft.Term}");
        if (_leaders.TryGetValue(raft.Term, out var other) && other != node.Id)
            throw sim.Fail($"election safety: {node.Id} and {other} both lead term {raft.Term}");
        _leaders[raft.Term] = node.Id;
        foreach (var entry in _decided)
        {
            if (entry.Index < raft.FirstIndex) continue; // in its snapshot, which the state-machine check covered
            if (!raft.TryGetEntry(entry.Index, out var held) || held.Term != entry.Term)
                throw sim.Fail($"leader completeness: {node.Id} leads term {raft.Term} without decided entry {entry}");
        }
    }

    /// <summary>State-machine safety: every member applies the same entry at an index, in order.</summary>
    public void Apply(SimNode node, Entry entry)
    {
        if (entry.Index != node.Applied + 1)
            throw sim.Fail($"{node.Id} applies {entry} after {node.Applied}");
        if (entry.Index <= (ulong)_decided.Count)
        {
            var decided = _decided[(int)entry.Index - 1];
            if (decided.Term != entry.Term || decided.Type != entry.Type || !decided.Data.Span.SequenceEqual(entry.Data.Span))
                throw sim.Fail($"state-machine safety: {node.Id} applies {entry}, the group decided {decided}");
        }
        else if (entry.Index == (ulong)_decided.Count + 1)
        {
            _decided.Add(entry);
            if (entry.Type == EntryType.Normal && entry.Data.Length == 8)
                sim.Acknowledged.Add(BinaryPrimitives.ReadUInt64LittleEndian(entry.Data.Span));
        }
        else
        {
            throw sim.Fail($"{node.Id} applies {entry} beyond the decided log ({_decided.Count})");
        }
        node.Applied = entry.Index;
        if (entry.Type == EntryType.Normal && entry.Data.Length == 8)
            node.Commands.Add((entry.Index, BinaryPrimitives.ReadUInt64LittleEndian(entry.Data.Span)));
    }

    /// <summary>An installed snapshot holds exactly the decided commands up to its index.</summary>
    public void InstallSnapshot(SimNode node, Snapshot snapshot)
    {
        var index = snapshot.Meta.Index;
        if (index > (ulong)_decided.Count)
            throw sim.Fail($"{node.Id} installs a snapshot at {index} beyond the decided log ({_decided.Count})");
        if (_decided[(int)index - 1].Term != snapshot.Meta.Term)
            throw sim.Fail($"{node.Id} installs a snapshot at {index}@{snapshot.Meta.Term}, decided {_decided[(int)index - 1]}");
        var expected = DecidedCommands(index);
        var got = Simulation.DecodeCommands(snapshot.Data.Span);
        if (!expected.SequenceEqual(got))
            throw sim.Fail($"{node.Id} installs a snapshot at {index} with {got.Count} commands, decided {expected.Count}");
        node.Restore(snapshot);
    }

    public List<ulong> DecidedCommands(ulong upTo)
    {
        var commands = new List<ulong>();
        var count = (int)Math.Min(upTo, (ulong)_decided.Count);
        for (var i = 0; i < count; i++)
            if (_decided[i].Type == EntryType.Normal && _decided[i].Data.Length == 8)
                commands.Add(BinaryPrimitives.ReadUInt64LittleEndian(_decided[i].Data.Span));
        return commands;
    }

    /// <summary>Log matching: two logs that hold the same (index, term) hold the same entries up to it.</summary>
    public void LogMatching(bool force = false)
    {
        if (!force && sim.Steps - _lastLogCheck < 64) return;
        _lastLogCheck = sim.Steps;
        var up = sim.Nodes.Where(n => n.Up).Select(n => n.Raft!).ToArray();
        for (var a = 0; a < up.Length; a++)
            for (var b = a + 1; b < up.Length; b++)
            {
                var x = up[a];
                var y = up[b];
                var lo = Math.Max(x.FirstIndex, y.FirstIndex);
                var hi = Math.Min(x.LastIndex, y.LastIndex);
                // The highest index where both hold an entry of the same term...
                var agree = 0UL;
                for (var i = hi; i >= lo && i > 0; i--)
                {
                    if (x.TryGetEntry(i, out var ex) && y.TryGetEntry(i, out var ey) && ex.Term == ey.Term) { agree = i; break; }
                }
                // ...below it, every entry both hold is the same.
                for (var i = lo; i <= agree; i++)
                {
                    x.TryGetEntry(i, out var ex);
                    y.TryGetEntry(i, out var ey);
                    if (ex.Term != ey.Term || ex.Type != ey.Type || !ex.Data.Span.SequenceEqual(ey.Data.Span))
                        throw sim.Fail($"log matching: {x.Id} and {y.Id} agree at {agree} but differ at {i}: {ex} / {ey}");
                }
            }
    }
}
