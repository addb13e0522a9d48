using Xunit;

namespace Courier.Raft.Tests;

/// <summary>
/// The Raft paper's figure 8 (§5.4.2): a leader must not commit an entry of an earlier term by
/// counting replicas, because a later leader may still overwrite it. Random simulation does not
/// reach this interleaving (a new leader's no-op travels with the older entries), so it is scripted:
/// with the rule broken, this test loses an acknowledged entry.
/// </summary>
public sealed class Figure8Tests
{
    [Fact]
    public void An_entry_of_an_earlier_term_is_not_committed_by_counting_replicas()
    {
        // One entry per append, so a quorum can hold the old entry without the new leader's no-op.
        var g = new ScriptedGroup(5, new RaftOptions { ElectionTicks = 10, HeartbeatTicks = 1, MaxBytesPerMessage = 1, PreVote = false, CheckQuorum = false }); // the paper's setting: no leases, so votes are not ignored by members that never tick here
        bool Between(RaftMessage m, ulong a, params ulong[] others) =>
            (m.From == a && others.Contains(m.To)) || (m.To == a && others.Contains(m.From));

        // (a) 1 leads term 2 and its entries reach 2 only.
        g.Campaign(1);
        g.Deliver(m => Between(m, 1, 2, 3) && m.Type is MessageType.Vote or MessageType.VoteResponse);
        Assert.Equal(RaftRole.Leader, g[1].Role);
        Assert.True(g[1].Propose(BitConverter.GetBytes(42UL), out var xIndex, out var xTerm));
        g.Flush(1);
        for (var i = 0; i < 5; i++)
        {
            g.Deliver(m => Between(m, 1, 2));
            g.DropAll();
            g[1].Tick();
            g.Flush(1);
        }
        g.DropAll();
        Assert.True(g[2].LastIndex >= xIndex);

        // (b) 1 is cut off; 5 leads term 3 with votes of 3 and 4, and its entries reach no one.
        for (var attempt = 0; attempt < 3 && g[5].Role != RaftRole.Leader; attempt++)
        {
            g.Campaign(5); // term 2 fails (3 voted for 1), term 3 wins
            g.Deliver(m => Between(m, 5, 3, 4) && m.Type is MessageType.Vote or MessageType.VoteResponse);
            g.DropAll();
        }
        Assert.Equal(RaftRole.Leader, g[5].Role);
        Assert.Equal(3UL, g[5].Term);

        // (c) 1 comes back and leads term 4 (votes of 2 and 3) and replicates the old entry to 3,
        //     to 3 and 4 (1, 3, 4: a quorum holds it), but its own no-op reaches no one.
        g.Restart(1);
        g.Campaign(1); // term 3 fails (3 voted for 5), term 4 wins
        g.Deliver(m => Between(m, 1, 2, 3) && m.Type is MessageType.Vote or MessageType.VoteResponse);
        g.DropAll();
        g.Campaign(1);
        g.Deliver(m => Between(m, 1, 2, 3) && m.Type is MessageType.Vote or MessageType.VoteResponse);
        Assert.True(g[1].Role == RaftRole.Leader, string.Join(" / ", g.Members.Values));
        Assert.Equal(4UL, g[1].Term);
        for (var round = 0; round < 20; round++)
        {
            // Everything except an append that would give the no-op to 2 or 3 (one they would reject still goes).
            g.Deliver(m => Between(m, 1, 3, 4) && (m.Type != MessageType.Append || m.Entries.All(e => e.Term < 4) || m.Index > g[m.To].LastIndex));
            g[1].Tick();
            g.Flush(1);
        }
        foreach (var id in new ulong[] { 3, 4 })
            Assert.True(g[id].LastIndex == xIndex, $"x at {xIndex}: " + string.Join(" / ", g.Members.Values)); // the old entry, not the no-op
        var acknowledged = g.Applied[1].Any(e => e.Index == xIndex && e.Term == xTerm);
        Assert.False(acknowledged, "the term-4 leader committed a term-2 entry by counting replicas");
        g.DropAll();

        // (d) 1 is cut off again; 5 leads a later term with votes of 2, 3, 4 and overwrites index xIndex.
        g.Restart(5);
        for (var attempt = 0; attempt < 3 && g[5].Role != RaftRole.Leader; attempt++)
        {
            g.Campaign(5); // term 4 fails (2 and 3 voted for 1), term 5 wins: its last term 3 beats their 2
            g.Deliver(m => Between(m, 5, 2, 3, 4));
            g.DropAll();
        }
        Assert.Equal(RaftRole.Leader, g[5].Role);
        Assert.True(g[5].TryGetEntry(xIndex, out var held));
        Assert.NotEqual(xTerm, held.Term); // the entry at xIndex is 5's: which is only safe because it was never acknowledged
    }
}
