using System.Collections.Concurrent;
using System.Text;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Actors.JetStream;
using Courier.Actors.Raft;
using Courier.Actors.Server;
using Courier.Actors.Tests.Server;
using Courier.Protocols.JetStream;
using Courier.Raft;
using Courier.Storage;
using Xunit;
using Host = Courier.Actors.Raft.RaftHost.Protocol;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// Three replicas of one stream in one actor system: three Raft hosts joined by an in-memory transport,
/// three stream actors, three file stores. Whatever the leader took (plain publishes, Nats-Msg-Id
/// duplicates, a failed expectation, a message delete, a purge, across a change of leader), every
/// replica's store ends up with the same messages at the same sequences with the same timestamps.
/// </summary>
public sealed class ReplicatedStreamActorTests : Akka.TestKit.Xunit2.TestKit
{
    private const string Group = "S-test";
    private readonly string _root = Directory.CreateTempSubdirectory("courier-replicas-").FullName;
    private readonly ConcurrentDictionary<ulong, IActorRef> _hosts = new();

    public ReplicatedStreamActorTests()
        : base(TestConfig.For(new ServerOptions { Host = "127.0.0.1" }))
    {
    }

    [Fact]
    public async Task Every_replica_stores_what_the_leader_acknowledged_with_the_same_sequences_timestamps_and_deletions()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys);
        ulong[] members = [1, 2, 3];
        var config = new StreamConfig { Name = "R", Subjects = ["r.>"], Replicas = 3 };
        var replicas = members.ToDictionary(id => id, id => StartReplica(harness, id, members, config, "r", electionTicks: 10, StreamReplication.DefaultCompactEvery));
        var stores = replicas.ToDictionary(r => r.Key, r => r.Value.Store);
        var streams = replicas.ToDictionary(r => r.Key, r => r.Value.Stream);
        var (publisher, acks) = AckCollector(harness);
        await using var disposePublisher = publisher;

        // Member 1 campaigns at once, as the member a stream was created through is told to; a publish is
        // answered once the group has a leader that subscribed.
        _hosts[1].Tell(new Host.Campaign(Group));
        var leader = await LeaderAsync(members);
        await AcknowledgedAsync(publisher, acks, "r.first", null, "first");

        var sent = 1;
        for (var i = 0; i < 30; i++)
        {
            var headers = i % 3 == 0 ? Encoding.ASCII.GetBytes($"NATS/1.0\r\nNats-Msg-Id: id-{i / 6}\r\n\r\n") : null; // every id twice
            publisher.Publish($"r.s{i % 4}", $"_INBOX.acks.{i}", headers, Encoding.UTF8.GetBytes($"m{i}"));
            sent++;
        }

        publisher.Publish("r.x", "_INBOX.acks.expect", Encoding.ASCII.GetBytes("NATS/1.0\r\nNats-Expected-Last-Sequence: 1\r\n\r\n"), "refused"u8);
        sent++;
        Assert.True(await UntilAsync(() => acks.Count >= sent), $"{acks.Count} of {sent} PubAcks");
        Assert.Contains(acks, a => a.Contains("\"duplicate\": true", StringComparison.Ordinal));
        Assert.Contains(acks, a => a.Contains("wrong last sequence", StringComparison.Ordinal));

        // A delete and a purge go through the log too, answered by the leader.
        streams[leader].Tell(new StreamActor.Protocol.Request("MSG.DELETE", "_INBOX.acks.delete", "{\"seq\":3}"u8.ToArray()));
        streams[leader].Tell(new StreamActor.Protocol.Request("PURGE", "_INBOX.acks.purge", "{\"filter\":\"r.s1\"}"u8.ToArray()));
        Assert.True(await UntilAsync(() => acks.Count >= sent + 2), "the delete and the purge were not answered");

        // Leadership moves; the new leader takes more.
        var successor = members.First(m => m != leader);
        _hosts[leader].Tell(new Host.TransferLeadership(Group, successor));
        Assert.True(await UntilAsync(async () => await RoleAsync(successor) == RaftRole.Leader), "leadership did not move");
        await AcknowledgedAsync(publisher, acks, "r.after", null, "after");

        var expected = stores[successor].State();
        Assert.True(expected.Msgs > 10, $"only {expected.Msgs} messages stored");
        foreach (var id in members)
        {
            Assert.True(await UntilAsync(() => stores[id].State().LastSeq == expected.LastSeq && stores[id].State().Msgs == expected.Msgs), $"replica {id}: {stores[id].State()} vs {expected}");
        }

        for (var seq = expected.FirstSeq; seq <= expected.LastSeq; seq++)
        {
            var reference = stores[successor].LoadMessage(seq);
            foreach (var id in members)
            {
                var got = stores[id].LoadMessage(seq);
                Assert.Equal(reference.Found, got.Found);
                if (got.Message is { } m && reference.Message is { } r)
                {
                    Assert.Equal((r.Subject, r.Timestamp, Encoding.UTF8.GetString(r.Payload.Span), Encoding.UTF8.GetString(r.Headers.Span)), (m.Subject, m.Timestamp, Encoding.UTF8.GetString(m.Payload.Span), Encoding.UTF8.GetString(m.Headers.Span)));
                }
            }
        }

        foreach (var replica in replicas.Values)
        {
            await StopReplicaAsync(replica);
        }
    }

    /// <summary>
    /// Snapshots every 8 entries. A replica cut off while the leader's log moved past it gets the leader's
    /// snapshot and copies the store from the leader (deletes, a purge, Nats-Msg-Id window and a durable
    /// consumer included); a replica restarted from its snapshot trusts its store up to it; one whose store
    /// took a delete after its snapshot catches up instead. Every store ends equal to the leader's.
    /// </summary>
    [Fact]
    public async Task Replicas_behind_a_compacted_log_or_restarted_from_a_snapshot_end_with_the_leaders_store()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys);
        ulong[] members = [1, 2, 3];
        var config = new StreamConfig { Name = "C", Subjects = ["c.>"], Replicas = 3 };
        var replicas = members.ToDictionary(id => id, id => StartReplica(harness, id, members, config));
        var (publisher, acks) = AckCollector(harness);
        await using var disposePublisher = publisher;
        _hosts[1].Tell(new Host.Campaign(Group));
        var leader = await LeaderAsync(members);
        await AcknowledgedAsync(publisher, acks, "c.first", null, "first");

        // One follower is cut off after ten; the others take 50 more publishes (one entry each), a delete and a purge.
        // Each publish carries a Nats-Msg-Id and is sent again until acknowledged: a loaded machine may change leaders.
        var lagging = members.First(m => m != leader);
        var acknowledged = new ConcurrentDictionary<string, string>();
        publisher.Subscribe("_INBOX.c.>", null, batch =>
        {
            foreach (var m in batch)
            {
                acknowledged[m.Subject] = Encoding.UTF8.GetString(m.Payload);
            }
        });
        for (var i = 0; i < 60; i++)
        {
            if (i == 10)
            {
                // It holds the first ten: the delete and the purge below remove messages it has, which only the leader's list of deletes can tell it.
                Assert.True(await UntilAsync(() => replicas[lagging].Store.State().LastSeq == 11), "the follower did not get the first messages");
                _cut[lagging] = true;
            }

            var headers = Encoding.ASCII.GetBytes($"NATS/1.0\r\nNats-Msg-Id: id-{i}\r\n\r\n");
            var reply = $"_INBOX.c.{i}";
            var n = i;
            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
            while (!acknowledged.ContainsKey(reply) && DateTime.UtcNow < deadline)
            {
                publisher.Publish($"c.s{n % 3}", reply, headers, Encoding.UTF8.GetBytes($"m{n}"));
                for (var wait = 0; wait < 50 && !acknowledged.ContainsKey(reply); wait++)
                {
                    await Task.Delay(10);
                }
            }

            Assert.True(
                acknowledged.ContainsKey(reply),
                $"publish {i} was not acknowledged");
        }

        var sent = acks.Count;
        replicas[leader].Stream.Tell(new StreamActor.Protocol.Request("MSG.DELETE", "_INBOX.acks.delete", "{\"seq\":4}"u8.ToArray()));
        replicas[leader].Stream.Tell(new StreamActor.Protocol.Request("PURGE", "_INBOX.acks.purge", "{\"filter\":\"c.s1\"}"u8.ToArray()));
        Assert.True(await UntilAsync(() => acks.Count >= sent + 2), "the delete and the purge were not answered");
        Assert.True(await UntilAsync(async () => (await StatusAsync(leader)).FirstIndex > 20), "the leader's log was not compacted");

        // Back: the leader's log no longer reaches it, so it copies the store.
        _cut.TryRemove(lagging, out _);
        await SameStoresAsync(replicas, leader, members);

        // Its Nats-Msg-Id window came with the copy: once it leads, a repeated id is a duplicate.
        _hosts[leader].Tell(new Host.TransferLeadership(Group, lagging));
        Assert.True(await UntilAsync(async () => await RoleAsync(lagging) == RaftRole.Leader), "leadership did not move to the caught-up replica");
        var before = acks.Count;
        Assert.True(
            await UntilAsync(() =>
            {
                if (acks.Skip(before).Any(a => a.Contains("\"duplicate\": true", StringComparison.Ordinal)))
                {
                    return true;
                }

                publisher.Publish("c.s0", "_INBOX.acks.dup", Encoding.ASCII.GetBytes("NATS/1.0\r\nNats-Msg-Id: id-55\r\n\r\n"), "again"u8);
                return false;
            }),
            "a repeated Nats-Msg-Id was not a duplicate at the caught-up leader");
        leader = lagging;
        await AcknowledgedAsync(publisher, acks, "c.after", null, "after");

        // A restart from the snapshot: the store is trusted up to it and the log's tail applied again.
        var restarted = members.First(m => m != leader);
        await StopReplicaAsync(replicas[restarted]);
        for (var i = 0; i < 20; i++)
        {
            await AcknowledgedAsync(publisher, acks, $"c.r{i}", null, $"r{i}");
        }

        replicas[restarted] = StartReplica(harness, restarted, members, config);
        await SameStoresAsync(replicas, leader, members);

        // A store that took a delete after its snapshot (as a crash can leave it) no longer matches it: it catches up.
        var third = members.First(m => m != leader && m != restarted);
        await StopReplicaAsync(replicas[third]);
        using (var store = StreamStores.OpenFile(replicas[third].Directory, new StoreConfig { Name = "C" }, new FileStoreOptions { Sync = SyncPolicy.Interval(TimeSpan.FromMinutes(2)) }))
        {
            var state = store.State();
            Assert.True(store.RemoveMessage(state.FirstSeq), "nothing to delete in the stopped replica's store");
            store.Flush();
            store.Stop();
        }

        await AcknowledgedAsync(publisher, acks, "c.late", null, "late");
        replicas[third] = StartReplica(harness, third, members, config);
        await SameStoresAsync(replicas, leader, members);

        foreach (var replica in replicas.Values)
        {
            await StopReplicaAsync(replica);
        }
    }

    private sealed record Replica(IActorRef Host, IActorRef Stream, IStreamStore Store, InProcessClient Client, string Directory);

    private readonly ConcurrentDictionary<ulong, bool> _cut = new();

    /// <summary>One replica: its Raft host (on the cuttable in-memory transport), its store (under <paramref name="prefix"/>) and its stream actor.</summary>
    private Replica StartReplica(BrokerHarness harness, ulong id, ulong[] members, StreamConfig config, string prefix = "c", int electionTicks = 25, int compactEvery = 8)
    {
        var host = Sys.ActorOf(RaftHost.Props(
            new RaftHostSettings { NodeId = id, Directory = Path.Combine(_root, $"{prefix}raft-{id}"), TickInterval = TimeSpan.FromMilliseconds(20), Raft = new RaftOptions { ElectionTicks = electionTicks, HeartbeatTicks = 2 } },
            new LoopTransport(_hosts, id, _cut)));
        _hosts[id] = host;
        var client = new InProcessClient(harness.Broker.Connections, InProcessRole.JetStream);
        var directory = Path.Combine(_root, $"{prefix}stream-{id}");
        Directory.CreateDirectory(directory);
        var store = StreamStores.OpenFile(directory, new StoreConfig { Name = config.Name }, new FileStoreOptions { Sync = SyncPolicy.Interval(TimeSpan.FromMinutes(2)) });
        var replication = new StreamReplication(Group, members, host, member => $"n{member}", "test", CompactEvery: compactEvery);
        var stream = Sys.ActorOf(StreamActor.Props(client, config, DateTime.UtcNow, store, directory, _ => false, replication: replication));
        return new Replica(host, stream, store, client, directory);
    }

    /// <summary>A client publishing with replies under <c>_INBOX.acks.</c>, and the PubAcks it gets.</summary>
    private static (InProcessClient Publisher, ConcurrentQueue<string> Acks) AckCollector(BrokerHarness harness)
    {
        var publisher = new InProcessClient(harness.Broker.Connections);
        var acks = new ConcurrentQueue<string>();
        publisher.Subscribe("_INBOX.acks.>", null, batch =>
        {
            foreach (var m in batch)
            {
                acks.Enqueue(Encoding.UTF8.GetString(m.Payload));
            }
        });
        return (publisher, acks);
    }

    private async Task StopReplicaAsync(Replica replica)
    {
        await replica.Stream.GracefulStop(TimeSpan.FromSeconds(5));
        await replica.Host.GracefulStop(TimeSpan.FromSeconds(5));
        await replica.Client.DisposeAsync();
    }

    private async Task<RaftStatus> StatusAsync(ulong id) =>
        (await _hosts[id].Ask<Host.GroupStatus>(new Host.GetGroupStatus(Group), TimeSpan.FromSeconds(5))).Status!;

    private static async Task SameStoresAsync(Dictionary<ulong, Replica> replicas, ulong leader, ulong[] members)
    {
        var reference = replicas[leader].Store;
        foreach (var id in members)
        {
            Assert.True(
                await UntilAsync(() => replicas[id].Store.State() is var s && reference.State() is var r && s.LastSeq == r.LastSeq && s.Msgs == r.Msgs && s.FirstSeq == r.FirstSeq && s.NumDeleted == r.NumDeleted),
                $"replica {id}: {replicas[id].Store.State()} vs the leader's {reference.State()}");
        }

        var expected = reference.State();
        for (var seq = expected.FirstSeq; seq <= expected.LastSeq; seq++)
        {
            var want = reference.LoadMessage(seq);
            foreach (var id in members)
            {
                var got = replicas[id].Store.LoadMessage(seq);
                Assert.True(want.Found == got.Found, $"replica {id}: sequence {seq} found {got.Found}, at the leader {want.Found}");
                if (got.Message is { } m && want.Message is { } w)
                {
                    Assert.Equal((w.Subject, w.Timestamp, Encoding.UTF8.GetString(w.Payload.Span)), (m.Subject, m.Timestamp, Encoding.UTF8.GetString(m.Payload.Span)));
                }
            }
        }
    }

    private async Task AcknowledgedAsync(InProcessClient publisher, ConcurrentQueue<string> acks, string subject, byte[]? headers, string payload)
    {
        var before = acks.Count;
        Assert.True(
            await UntilAsync(() =>
            {
                if (acks.Count > before)
                {
                    return true;
                }

                publisher.Publish(subject, $"_INBOX.acks.{subject}", headers, Encoding.UTF8.GetBytes(payload));
                return false;
            }),
            $"no PubAck for {subject}");
        await Task.Delay(200); // a retried publish's PubAck still on its way
    }

    private async Task<ulong> LeaderAsync(ulong[] members)
    {
        ulong leader = 0;
        Assert.True(
            await UntilAsync(async () =>
            {
                foreach (var id in members)
                {
                    if (await RoleAsync(id) == RaftRole.Leader)
                    {
                        leader = id;
                        return true;
                    }
                }

                return false;
            }),
            "no leader");
        return leader;
    }

    private async Task<RaftRole?> RoleAsync(ulong id) =>
        (await _hosts[id].Ask<Host.GroupStatus>(new Host.GetGroupStatus(Group), TimeSpan.FromSeconds(5))).Status?.Role;

    private static Task<bool> UntilAsync(Func<bool> condition) => UntilAsync(() => Task.FromResult(condition()));

    private static async Task<bool> UntilAsync(Func<Task<bool>> condition)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        while (DateTime.UtcNow < deadline)
        {
            if (await condition())
            {
                return true;
            }

            await Task.Delay(50);
        }

        return false;
    }

    protected override void AfterAll()
    {
        base.AfterAll();
        Shutdown();
        try
        {
            Directory.Delete(_root, recursive: true);
        }
        catch (IOException)
        {
            // The OS cleans the temp folder.
        }
    }

    /// <summary>Frames straight into the peer host's mailbox.</summary>
    private sealed class LoopTransport(ConcurrentDictionary<ulong, IActorRef> hosts, ulong self, ConcurrentDictionary<ulong, bool>? cut = null) : IRaftTransport
    {
        public void Send(ulong peer, ReadOnlyMemory<byte> frame)
        {
            if (cut is not null && (cut.ContainsKey(self) || cut.ContainsKey(peer)))
            {
                return;
            }

            if (peer != self && hosts.TryGetValue(peer, out var host))
            {
                host.Tell(new Host.Frame(frame));
            }
        }
    }
}
