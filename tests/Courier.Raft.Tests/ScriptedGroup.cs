using Courier.Raft.Tests.Simulation;

namespace Courier.Raft.Tests;

/// <summary>
/// Members driven by hand: every message waits in an outbox until the test delivers or drops it,
/// and writes are instant. For interleavings too precise for random runs (the Raft paper's figure 8).
/// </summary>
internal sealed class ScriptedGroup
{
    private readonly List<RaftMessage> _outbox = [];
    private readonly Dictionary<ulong, SimDisk> _disks = [];
    private readonly RaftOptions _options;

    public ScriptedGroup(int voters, RaftOptions options)
    {
        _options = options;
        var ids = Enumerable.Range(1, voters).Select(i => (ulong)i).ToArray();
        foreach (var id in ids)
        {
            var raft = new RaftNode(id, options with { RandomSeed = (int)id });
            raft.Bootstrap(ids);
            Members[id] = raft;
            _disks[id] = new SimDisk();
            Flush(id);
        }
    }

    public Dictionary<ulong, RaftNode> Members { get; } = [];

    /// <summary>Entries each member applied, by index.</summary>
    public Dictionary<ulong, List<Entry>> Applied { get; } = [];

    public RaftNode this[ulong id] => Members[id];

    /// <summary>Runs a member's Ready cycles: writes are instant, messages go to the outbox.</summary>
    public void Flush(ulong id)
    {
        var raft = Members[id];
        while (raft.HasReady)
        {
            var ready = raft.GetReady();
            _disks[id].Write(ready);
            _outbox.AddRange(ready.EarlyMessages);
            _outbox.AddRange(ready.Messages);
            if (!Applied.TryGetValue(id, out var applied)) Applied[id] = applied = [];
            applied.AddRange(ready.CommittedEntries);
            raft.Advance(ready);
        }
    }

    /// <summary>A crash and restart: the member comes back from its disk, as a follower.</summary>
    public void Restart(ulong id)
    {
        Members[id] = new RaftNode(id, _options with { RandomSeed = (int)id + 100 }, _disks[id].Load());
        Flush(id);
    }

    /// <summary>Makes <paramref name="id"/> campaign now (as if its leader handed over).</summary>
    public void Campaign(ulong id)
    {
        var raft = Members[id];
        var term = raft.Term;
        if (raft.Role == RaftRole.Follower)
            raft.Step(new RaftMessage { Type = MessageType.TimeoutNow, From = 0, To = id, Term = raft.Term });
        else
            for (var i = 0; i < 100 && raft.Term == term; i++) raft.Tick(); // a candidate campaigns again when its election times out
        Flush(id);
    }

    /// <summary>Delivers the waiting messages that match, and whatever they cause, until none match.</summary>
    public void Deliver(Func<RaftMessage, bool> which)
    {
        while (true)
        {
            var next = _outbox.FindIndex(m => which(m));
            if (next < 0) return;
            var m = _outbox[next];
            _outbox.RemoveAt(next);
            Members[m.To].Step(m);
            Flush(m.To);
        }
    }

    public void DropAll() => _outbox.Clear();
}
