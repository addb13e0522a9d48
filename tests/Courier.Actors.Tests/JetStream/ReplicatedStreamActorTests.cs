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
        var stores = new Dictionary<ulong, IStreamStore>();
        var streams = new Dictionary<ulong, IActorRef>();
        var clients = new List<InProcessClient>();
        foreach (var id in members)
        {
            var host = Sys.ActorOf(RaftHost.Props(
                new RaftHostSettings { NodeId = id, Directory = Path.Combine(_root, $"raft-{id}"), TickInterval = TimeSpan.FromMilliseconds(20), Raft = new RaftOptions { ElectionTicks = 10, HeartbeatTicks = 2 } },
                new LoopTransport(_hosts, id)));
            _hosts[id] = host;
            var client = new InProcessClient(harness.Broker.Connections, InProcessRole.JetStream);
            clients.Add(client);
            var directory = Path.Combine(_root, $"stream-{id}");
            Directory.CreateDirectory(directory);
            stores[id] = StreamStores.OpenFile(directory, new StoreConfig { Name = "R" }, new FileStoreOptions { Sync = SyncPolicy.Interval(TimeSpan.FromMinutes(2)) });
            var replication = new StreamReplication(Group, members, host, member => $"n{member}", "test");
            streams[id] = Sys.ActorOf(StreamActor.Props(client, config, DateTime.UtcNow, stores[id], directory, _ => false, replication: replication));
        }

        await using var publisher = new InProcessClient(harness.Broker.Connections);
        var acks = new ConcurrentQueue<string>();
        publisher.Subscribe("_INBOX.acks.>", null, batch =>
        {
            foreach (var m in batch)
            {
                acks.Enqueue(Encoding.UTF8.GetString(m.Payload));
            }
        });

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

        foreach (var stream in streams.Values)
        {
            stream.Tell(PoisonPill.Instance);
        }

        foreach (var client in clients)
        {
            await client.DisposeAsync();
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
    private sealed class LoopTransport(ConcurrentDictionary<ulong, IActorRef> hosts, ulong self) : IRaftTransport
    {
        public void Send(ulong peer, ReadOnlyMemory<byte> frame)
        {
            if (peer != self && hosts.TryGetValue(peer, out var host))
            {
                host.Tell(new Host.Frame(frame));
            }
        }
    }
}
