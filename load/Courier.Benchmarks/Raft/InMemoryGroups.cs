using Courier.Raft;

namespace Courier.Benchmarks.Raft;

/// <summary>
/// Many Raft groups of three members in one process, messages delivered in order at once, the
/// "disk" a no-op: what the consensus core itself costs, without transport or fsync.
/// </summary>
internal sealed class InMemoryGroups
{
    private readonly RaftNode[][] _groups;
    private readonly Queue<(int Group, RaftMessage Message)> _inbox = new();

    public InMemoryGroups(int groups, RaftOptions options)
    {
        _groups = new RaftNode[groups][];
        for (var g = 0; g < groups; g++)
        {
            var members = new RaftNode[3];
            for (var m = 0; m < 3; m++)
            {
                members[m] = new RaftNode((ulong)(m + 1), options with { RandomSeed = g * 3 + m });
                members[m].Bootstrap([1, 2, 3]);
            }
            _groups[g] = members;
        }
        Pump();
    }

    public RaftNode[] Group(int g) => _groups[g];

    /// <summary>Ticks until every group has a leader.</summary>
    public void ElectAll(int maxTicks = 10_000)
    {
        for (var t = 0; t < maxTicks; t++)
        {
            if (Array.TrueForAll(_groups, g => Array.Exists(g, m => m.Role == RaftRole.Leader))) return;
            TickAll();
        }
        throw new InvalidOperationException("groups without a leader");
    }

    /// <summary>One clock tick on every member of every group, and everything that follows from it.</summary>
    public void TickAll()
    {
        foreach (var group in _groups)
            foreach (var member in group)
                member.Tick();
        Pump();
    }

    public RaftNode Leader(int g) => Array.Find(_groups[g], m => m.Role == RaftRole.Leader) ?? throw new InvalidOperationException("no leader");

    /// <summary>Runs every member's Ready cycle and delivers messages until the groups are quiet.</summary>
    public void Pump()
    {
        bool busy;
        do
        {
            busy = false;
            for (var g = 0; g < _groups.Length; g++)
            {
                foreach (var member in _groups[g])
                {
                    while (member.HasReady)
                    {
                        busy = true;
                        var ready = member.GetReady();
                        foreach (var m in ready.EarlyMessages) _inbox.Enqueue((g, m));
                        foreach (var m in ready.Messages) _inbox.Enqueue((g, m));
                        member.Advance(ready);
                    }
                }
            }
            while (_inbox.TryDequeue(out var item))
            {
                busy = true;
                _groups[item.Group][(int)item.Message.To - 1].Step(item.Message);
            }
        } while (busy);
    }
}
