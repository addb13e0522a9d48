using Courier.Raft.Tests.Simulation;
using Xunit;

namespace Courier.Raft.Tests;

/// <summary>Each Raft feature, scripted on a calm simulated network (instant delivery and disk, no random faults).</summary>
public sealed class RaftNodeTests
{
    private static Simulation.Simulation Calm(int members = 3, int voters = 3, int compactAfter = 0, RaftOptions? options = null) =>
        new(seed: 7, FaultProfile.Calm with { CompactAfterEntries = compactAfter }, members, voters, options);

    private static SimNode ElectedLeader(Simulation.Simulation sim)
    {
        Assert.True(sim.RunUntil(() => sim.Leader() is not null), "no leader elected");
        return sim.Leader()!;
    }

    private static List<ulong> ProposeMany(Simulation.Simulation sim, int count)
    {
        var commands = new List<ulong>();
        for (var i = 0; i < count; i++)
        {
            var command = sim.Propose();
            Assert.NotNull(command);
            commands.Add(command.Value);
            if (i % 10 == 9) sim.RunFor(5);
        }
        return commands;
    }

    private static List<ulong> StateOf(SimNode node) => node.Commands.Select(c => c.Command).ToList();

    [Fact]
    public void Three_members_elect_one_leader_and_apply_the_same_commands_in_order()
    {
        var sim = Calm();
        var leader = ElectedLeader(sim);
        var commands = ProposeMany(sim, 200);
        Assert.True(sim.RunUntil(() => sim.Nodes.All(n => n.Commands.Count == 200)));
        foreach (var node in sim.Nodes) Assert.Equal(commands, StateOf(node));
        Assert.Single(sim.Nodes, n => n.Raft!.Role == RaftRole.Leader);
        Assert.All(sim.Nodes, n => Assert.Equal(leader.Id, n.Raft!.Leader));
    }

    [Fact]
    public void A_partitioned_follower_does_not_disturb_the_leader_when_it_returns()
    {
        var sim = Calm();
        var leader = ElectedLeader(sim);
        var term = leader.Raft!.Term;
        var follower = sim.Nodes.First(n => n != leader);
        sim.Partition([follower.Id]);
        sim.RunFor(3000); // fifteen election timeouts alone
        Assert.Equal(term, follower.Raft!.Term); // pre-votes failed: its term never moved
        sim.Heal();
        sim.RunFor(1000);
        Assert.Same(leader, sim.Leader());
        Assert.Equal(term, leader.Raft.Term);
    }

    [Fact]
    public void Without_pre_vote_the_returning_follower_forces_a_new_term()
    {
        // The contrast that shows what the pre-vote test measures.
        var sim = Calm(options: new RaftOptions { ElectionTicks = 10, HeartbeatTicks = 1, PreVote = false, CheckQuorum = false });
        var leader = ElectedLeader(sim);
        var term = leader.Raft!.Term;
        var follower = sim.Nodes.First(n => n != leader);
        sim.Partition([follower.Id]);
        sim.RunFor(3000);
        Assert.True(follower.Raft!.Term > term + 5);
        sim.Heal();
        Assert.True(sim.RunUntil(() => sim.Leader() is { } l && l.Raft!.Term > term));
    }

    [Fact]
    public void A_leader_cut_off_from_its_quorum_steps_down_and_acknowledges_nothing()
    {
        var sim = Calm();
        var old = ElectedLeader(sim);
        ProposeMany(sim, 20);
        sim.RunFor(100);
        sim.Partition([old.Id]);
        var lost = new List<ulong>();
        for (var i = 0; i < 5; i++)
            if (old.Raft!.Propose(BitConverter.GetBytes(1_000_000UL + (ulong)i), out _, out _)) lost.Add(1_000_000UL + (ulong)i);
        sim.AfterEvent(old);
        Assert.NotEmpty(lost);
        Assert.True(sim.RunUntil(() => old.Raft!.Role != RaftRole.Leader, 1000), "the isolated leader kept leading");
        Assert.True(sim.RunUntil(() => sim.Leader() is { } l && l != old, 2000), "the majority elected no one");
        sim.Heal();
        var probe = ProposeMany(sim, 1)[0];
        Assert.True(sim.RunUntil(() => sim.Acknowledged.Contains(probe)));
        sim.RunFor(500);
        Assert.DoesNotContain(sim.Acknowledged, lost.Contains);
        Assert.All(sim.Nodes, n => Assert.DoesNotContain(StateOf(n), lost.Contains)); // its uncommitted entries were replaced
    }

    [Fact]
    public void Without_a_quorum_a_proposal_is_not_acknowledged_until_the_quorum_returns()
    {
        var sim = Calm();
        var leader = ElectedLeader(sim);
        foreach (var node in sim.Nodes.Where(n => n != leader)) sim.Crash(node.Id);
        var command = sim.Propose();
        Assert.True(command is not null, string.Join(" / ", sim.Nodes.Select(n => n.ToString())));
        sim.RunFor(2000);
        Assert.DoesNotContain(command.Value, sim.Acknowledged);
        Assert.NotEqual(RaftRole.Leader, leader.Raft!.Role); // alone, it stepped down (check quorum)
        foreach (var node in sim.Nodes) sim.Restart(node.Id);
        ElectedLeader(sim);
        var probe = ProposeMany(sim, 1)[0];
        Assert.True(sim.RunUntil(() => sim.Acknowledged.Contains(probe)));
    }

    [Fact]
    public void A_member_told_to_campaign_leads_before_any_election_timeout_and_a_leader_ignores_it()
    {
        var sim = Calm();
        var chosen = sim.Node(2);
        chosen.Raft!.Campaign();
        sim.AfterEvent(chosen);
        Assert.True(sim.RunUntil(() => chosen.Raft.Role == RaftRole.Leader, 60), "no leader before the shortest election timeout (100 ms)");
        Assert.Single(sim.Nodes, n => n.Raft!.Role == RaftRole.Leader);
        var term = chosen.Raft.Term;
        chosen.Raft.Campaign();
        sim.AfterEvent(chosen);
        sim.RunFor(50);
        Assert.Equal((RaftRole.Leader, term), (chosen.Raft.Role, chosen.Raft.Term));
    }

    [Fact]
    public void Leadership_transfer_hands_over_to_the_chosen_member()
    {
        var sim = Calm();
        var leader = ElectedLeader(sim);
        ProposeMany(sim, 50);
        var target = sim.Nodes.First(n => n != leader);
        Assert.True(leader.Raft!.TransferLeadership(target.Id));
        Assert.False(leader.Raft.Propose(new byte[8], out _, out _)); // refused while handing over
        sim.AfterEvent(leader);
        Assert.True(sim.RunUntil(() => target.Raft!.Role == RaftRole.Leader, 100), "the transfer took longer than half an election timeout");
        Assert.NotEqual(RaftRole.Leader, leader.Raft.Role);
        var probe = ProposeMany(sim, 1)[0];
        Assert.True(sim.RunUntil(() => sim.Acknowledged.Contains(probe)));
    }

    [Fact]
    public void A_member_far_behind_the_compacted_log_catches_up_from_a_snapshot()
    {
        var sim = Calm(compactAfter: 50);
        var leader = ElectedLeader(sim);
        var lagging = sim.Nodes.First(n => n != leader);
        sim.Crash(lagging.Id);
        var commands = ProposeMany(sim, 400);
        Assert.True(sim.RunUntil(() => leader.Commands.Count == 400));
        Assert.True(leader.Raft!.FirstIndex > 100); // compacted: what the lagging member lacks is gone from the log
        sim.Restart(lagging.Id);
        Assert.True(sim.RunUntil(() => lagging.Commands.Count == 400));
        Assert.Equal(commands, StateOf(lagging));
        Assert.NotNull(lagging.Disk.Snapshot); // it installed the leader's snapshot
    }

    [Fact]
    public void Restarted_members_recover_log_term_and_commands_from_their_disks()
    {
        var sim = Calm();
        ElectedLeader(sim);
        var commands = ProposeMany(sim, 100);
        Assert.True(sim.RunUntil(() => sim.Nodes.All(n => n.Commands.Count == 100)));
        var terms = sim.Nodes.Select(n => n.Raft!.Term).ToArray();
        foreach (var node in sim.Nodes) sim.Crash(node.Id);
        foreach (var node in sim.Nodes) sim.Restart(node.Id);
        Assert.All(sim.Nodes.Zip(terms), p => Assert.Equal(p.Second, p.First.Raft!.Term));
        ElectedLeader(sim);
        var more = ProposeMany(sim, 10);
        Assert.True(sim.RunUntil(() => sim.Nodes.All(n => n.Commands.Count == 110)));
        foreach (var node in sim.Nodes) Assert.Equal(commands.Concat(more), StateOf(node));
    }

    [Fact]
    public void Membership_changes_one_at_a_time_through_a_learner()
    {
        var sim = Calm(members: 4, voters: 3);
        var leader = ElectedLeader(sim);
        var commands = ProposeMany(sim, 100);
        Assert.True(sim.RunUntil(() => leader.Raft!.CommitIndex >= leader.Raft.LastIndex));
        var raft = leader.Raft!;
        Assert.True(raft.ProposeConfChange(new ConfChange(ConfChangeKind.AddLearner, 4), out _));
        Assert.False(raft.ProposeConfChange(new ConfChange(ConfChangeKind.AddVoter, 4), out _)); // one at a time
        sim.AfterEvent(leader);
        var learner = sim.Node(4);
        Assert.True(sim.RunUntil(() => learner.Commands.Count == 100));
        Assert.Equal(commands, StateOf(learner));
        Assert.False(raft.Configuration.IsVoter(4)); // a learner is not counted
        Assert.True(sim.RunUntil(() => raft.ProposeConfChange(new ConfChange(ConfChangeKind.AddVoter, 4), out _)));
        sim.AfterEvent(leader);
        Assert.True(sim.RunUntil(() => sim.Nodes.All(n => n.Raft!.Configuration.Voters.Length == 4)));

        // The leader removes itself: it leads until the removal commits, then the others elect.
        Assert.True(sim.RunUntil(() => raft.ProposeConfChange(new ConfChange(ConfChangeKind.Remove, leader.Id), out _)));
        sim.AfterEvent(leader);
        Assert.True(sim.RunUntil(() => sim.Leader() is { } l && l != leader, 2000));
        var probe = ProposeMany(sim, 1)[0];
        Assert.True(sim.RunUntil(() => sim.Acknowledged.Contains(probe)));
        Assert.Equal(3, sim.Leader()!.Raft!.Configuration.Voters.Length);
    }

    [Fact]
    public void The_last_voter_cannot_be_removed()
    {
        var sim = Calm(members: 1, voters: 1);
        var leader = ElectedLeader(sim);
        Assert.True(sim.RunUntil(() => leader.Raft!.CommitIndex >= leader.Raft.LastIndex));
        Assert.False(leader.Raft!.ProposeConfChange(new ConfChange(ConfChangeKind.Remove, leader.Id), out _));
        var probe = ProposeMany(sim, 1)[0];
        Assert.True(sim.RunUntil(() => sim.Acknowledged.Contains(probe))); // a group of one commits alone
    }
}
