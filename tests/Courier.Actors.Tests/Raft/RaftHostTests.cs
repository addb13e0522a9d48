using System.Collections.Concurrent;
using Akka.Actor;
using Akka.TestKit;
using Courier.Actors.Raft;
using Courier.Raft;
using Xunit;
using Host = Courier.Actors.Raft.RaftHost.Protocol;

namespace Courier.Actors.Tests.Raft;

/// <summary>Raft groups hosted on actors: three hosts in one actor system, frames carried by an in-memory transport that can cut a host off.</summary>
public sealed class RaftHostTests : Akka.TestKit.Xunit2.TestKit, IDisposable
{
    private readonly string _root = Path.Combine(Path.GetTempPath(), "courier-raft-host-tests", Guid.NewGuid().ToString("N"));
    private readonly LoopTransport _net = new();
    private readonly Dictionary<ulong, TestProbe> _appliers = [];
    private readonly Dictionary<(ulong, string), bool> _leading = [];
    private readonly Dictionary<ulong, List<object>> _seen = [];
    private int _probes;

    private IActorRef StartHost(ulong id)
    {
        var settings = new RaftHostSettings
        {
            NodeId = id,
            Directory = Path.Combine(_root, $"n{id}"),
            TickInterval = TimeSpan.FromMilliseconds(20),
            Raft = new RaftOptions { ElectionTicks = 10, HeartbeatTicks = 2 },
        };
        var host = Sys.ActorOf(RaftHost.Props(settings, _net.From(id)));
        _net.Hosts[id] = host;
        return host;
    }

    private void StartGroup(IActorRef host, ulong id, string group)
    {
        if (!_appliers.TryGetValue(id, out var applier))
        {
            _appliers[id] = applier = CreateTestProbe($"applier-{id}-{_probes++}");
            _seen[id] = [];
        }
        host.Tell(new Host.StartGroup(group, [1, 2, 3], Bootstrap: true, applier.Ref), TestActor);
        ExpectMsg<Host.GroupStarted>(TimeSpan.FromSeconds(10));
    }

    /// <summary>Takes what <paramref name="id"/>'s applier received within <paramref name="window"/> into its record.</summary>
    private void Pump(ulong id, TimeSpan window)
    {
        var until = DateTime.UtcNow + window;
        while (DateTime.UtcNow < until)
        {
            var message = _appliers[id].ReceiveOne(TimeSpan.FromMilliseconds(10));
            if (message is null) continue;
            _seen[id].Add(message);
            if (message is Host.LeaderChanged changed) _leading[(id, changed.Group)] = changed.IsSelf;
        }
    }

    /// <summary>Waits until some member says it leads <paramref name="group"/>; returns its id.</summary>
    private ulong AwaitLeader(string group, params ulong[] among)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(15);
        while (DateTime.UtcNow < deadline)
        {
            foreach (var id in among)
            {
                if (_leading.TryGetValue((id, group), out var self) && self) return id;
                Pump(id, TimeSpan.FromMilliseconds(30));
            }
        }
        throw new TimeoutException($"no leader for {group}");
    }

    /// <summary>The commands (8-byte entries) <paramref name="id"/>'s applier received, in order, once <paramref name="count"/> arrived.</summary>
    private List<ulong> AppliedCommands(ulong id, int count)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(15);
        while (true)
        {
            var commands = _seen[id].OfType<Host.Applied>().SelectMany(a => a.Entries)
                .Where(e => e.Type == EntryType.Normal && e.Data.Length == 8).Select(e => BitConverter.ToUInt64(e.Data.Span)).ToList();
            if (commands.Count >= count || DateTime.UtcNow > deadline) return commands;
            Pump(id, TimeSpan.FromMilliseconds(100));
        }
    }

    private void Propose(ulong host, string group, ulong command)
    {
        _net.Hosts[host].Tell(new Host.Propose(group, BitConverter.GetBytes(command), (long)command), TestActor);
        var answer = ExpectMsg<Host.Committed>(TimeSpan.FromSeconds(10));
        Assert.Equal((long)command, answer.Correlation);
    }

    [Fact]
    public void A_proposal_to_the_leader_is_committed_and_applied_on_every_member_in_order()
    {
        for (ulong id = 1; id <= 3; id++) StartGroup(StartHost(id), id, "G");
        var leader = AwaitLeader("G", 1, 2, 3);
        for (ulong c = 1; c <= 20; c++) Propose(leader, "G", c);
        for (ulong id = 1; id <= 3; id++)
            Assert.Equal(Enumerable.Range(1, 20).Select(i => (ulong)i), AppliedCommands(id, 20));
    }

    [Fact]
    public void A_follower_rejects_a_proposal_and_names_the_leader()
    {
        for (ulong id = 1; id <= 3; id++) StartGroup(StartHost(id), id, "G");
        var leader = AwaitLeader("G", 1, 2, 3);
        var follower = new ulong[] { 1, 2, 3 }.First(i => i != leader);
        // The follower hears from the leader within a heartbeat or two.
        AwaitAssert(() =>
        {
            _net.Hosts[follower].Tell(new Host.Propose("G", BitConverter.GetBytes(7UL), 7), TestActor);
            var rejected = ExpectMsg<Host.Rejected>(TimeSpan.FromSeconds(5));
            Assert.Equal(leader, rejected.Leader);
        }, TimeSpan.FromSeconds(5));
    }

    [Fact]
    public void Leadership_goes_where_it_is_handed_and_the_status_says_so()
    {
        for (ulong id = 1; id <= 3; id++) StartGroup(StartHost(id), id, "G");
        var leader = AwaitLeader("G", 1, 2, 3);
        Propose(leader, "G", 1);
        var target = new ulong[] { 1, 2, 3 }.First(i => i != leader);
        _net.Hosts[leader].Tell(new Host.TransferLeadership("G", target));
        Assert.Equal(target, AwaitLeader("G", target));

        _net.Hosts[target].Tell(Host.GetStatus.Instance, TestActor);
        var (name, status) = Assert.Single(ExpectMsg<(string Name, RaftStatus Status)[]>(TimeSpan.FromSeconds(5)));
        Assert.Equal(("G", RaftRole.Leader, target), (name, status.Role, status.Leader));
        Assert.Equal(3, status.Peers.Count);
    }

    [Fact]
    public void A_member_behind_a_compacted_log_gets_the_snapshot()
    {
        for (ulong id = 1; id <= 3; id++) StartGroup(StartHost(id), id, "G");
        var leader = AwaitLeader("G", 1, 2, 3);
        var lagging = new ulong[] { 1, 2, 3 }.First(i => i != leader);
        _net.Cut(lagging);
        for (ulong c = 1; c <= 10; c++) Propose(leader, "G", c);
        Assert.Equal(10, AppliedCommands(leader, 10).Count);

        // The leader's state machine image up to what it applied; its log before that goes.
        var applied = _seen[leader].OfType<Host.Applied>().Last().Entries[^1].Index;
        _net.Hosts[leader].Tell(new Host.Compact("G", applied, new byte[] { 42 }));
        _net.Hosts[leader].Tell(Host.GetStatus.Instance, TestActor);
        Assert.Equal(applied + 1, ExpectMsg<(string Name, RaftStatus Status)[]>(TimeSpan.FromSeconds(5))[0].Status.FirstIndex);

        _net.Heal(lagging);
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(15);
        while (!_seen[lagging].OfType<Host.Applied>().Any(a => a.Snapshot is not null) && DateTime.UtcNow < deadline) Pump(lagging, TimeSpan.FromMilliseconds(100));
        var installed = _seen[lagging].OfType<Host.Applied>().Single(a => a.Snapshot is not null).Snapshot!;
        Assert.Equal(applied, installed.Meta.Index);
        Assert.Equal(new byte[] { 42 }, installed.Data.ToArray());
    }

    [Fact]
    public void When_the_leader_host_stops_another_member_leads_and_the_stopped_one_catches_up_from_its_own_files()
    {
        for (ulong id = 1; id <= 3; id++) StartGroup(StartHost(id), id, "G");
        var old = AwaitLeader("G", 1, 2, 3);
        for (ulong c = 1; c <= 5; c++) Propose(old, "G", c);
        var others = new ulong[] { 1, 2, 3 }.Where(i => i != old).ToArray();
        foreach (var id in others) Assert.Equal([1UL, 2, 3, 4, 5], AppliedCommands(id, 5));

        Watch(_net.Hosts[old]);
        Sys.Stop(_net.Hosts[old]);
        ExpectTerminated(_net.Hosts[old]);
        _net.Hosts.TryRemove(old, out _);
        var next = AwaitLeader("G", others);
        for (ulong c = 6; c <= 10; c++) Propose(next, "G", c);

        // Back from its files: it applies its committed entries again (an applier is idempotent) and catches up.
        _appliers.Remove(old);
        foreach (var key in _leading.Keys.Where(k => k.Item1 == old).ToList()) _leading.Remove(key);
        StartGroup(StartHost(old), old, "G");
        Assert.Equal(Enumerable.Range(1, 10).Select(i => (ulong)i), AppliedCommands(old, 10));
    }

    [Fact]
    public void Without_a_quorum_a_proposal_is_not_acknowledged()
    {
        for (ulong id = 1; id <= 3; id++) StartGroup(StartHost(id), id, "G");
        var leader = AwaitLeader("G", 1, 2, 3);
        foreach (var id in new ulong[] { 1, 2, 3 }.Where(i => i != leader)) _net.Cut(id);
        _net.Hosts[leader].Tell(new Host.Propose("G", BitConverter.GetBytes(99UL), 99), TestActor);
        // No Committed, ever: the cut-off leader steps down (check quorum) and says so.
        var answer = ExpectMsg<object>(TimeSpan.FromSeconds(10));
        Assert.True(answer is Host.Lost or Host.Rejected, $"got {answer}");
        ExpectNoMsg(TimeSpan.FromMilliseconds(500));
    }

    [Fact]
    public void Heartbeats_of_many_groups_travel_in_one_frame_per_peer_pair()
    {
        var hosts = new[] { StartHost(1), StartHost(2), StartHost(3) };
        for (var g = 0; g < 40; g++)
            for (ulong id = 1; id <= 3; id++) StartGroup(hosts[id - 1], id, $"G{g}");
        for (var g = 0; g < 40; g++) AwaitLeader($"G{g}", 1, 2, 3);
        _net.ResetCounts();
        Thread.Sleep(1000);
        var (frames, messages) = _net.Counts();
        // 40 groups: each leader heartbeats two followers 25 times a second, and they answer (at least half
        // of that on a loaded machine, whose timer ticks late: enough for the frame counts below to mean something).
        Assert.True(messages >= 40 * 2 * 25 / 2, $"{messages} messages in a second");
        // However many groups: a host sends a peer at most one frame per tick (50 a second) and one answer
        // per frame it got from that peer; 6 directed pairs. Leaders' heartbeat phases differ, so one
        // heartbeat interval (2 ticks) takes up to 2 frames.
        Assert.True(frames <= 6 * 2 * 50 * 12 / 10, $"{frames} frames in a second");
        Assert.True(frames * 4 <= messages, $"{frames} frames carried {messages} messages");
    }

    public new void Dispose()
    {
        base.Dispose();
        try
        {
            Directory.Delete(_root, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    /// <summary>Frames between hosts in this process; a cut host neither sends nor receives.</summary>
    private sealed class LoopTransport
    {
        private readonly ConcurrentDictionary<ulong, bool> _cut = new();
        private long _frames;
        private long _messages;

        public ConcurrentDictionary<ulong, IActorRef> Hosts { get; } = new();

        public void Cut(ulong id) => _cut[id] = true;

        public void Heal(ulong id) => _cut.TryRemove(id, out _);

        public void ResetCounts()
        {
            Interlocked.Exchange(ref _frames, 0);
            Interlocked.Exchange(ref _messages, 0);
        }

        public (long Frames, long Messages) Counts() => (Interlocked.Read(ref _frames), Interlocked.Read(ref _messages));

        public IRaftTransport From(ulong id) => new Endpoint(this, id);

        private sealed class Endpoint(LoopTransport net, ulong self) : IRaftTransport
        {
            public void Send(ulong peer, ReadOnlyMemory<byte> frame)
            {
                if (net._cut.ContainsKey(self) || net._cut.ContainsKey(peer) || !net.Hosts.TryGetValue(peer, out var host)) return;
                Interlocked.Increment(ref net._frames);
                Interlocked.Add(ref net._messages, RaftCodec.Read(frame).Count);
                host.Tell(new Host.Frame(frame));
            }
        }
    }
}
