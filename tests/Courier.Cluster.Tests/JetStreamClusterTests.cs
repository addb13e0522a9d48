using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;

namespace Courier.Cluster.Tests;

/// <summary>
/// JetStream in a three-node mesh (R1 streams, as nats-server 2.9 places them): a stream lives on one
/// node, and clients on every node create it, publish to it, consume from it (pull, push, ordered),
/// use KV and list the streams, through NATS.Net unmodified. The mesh is shared by the class; each
/// test uses streams and subjects of its own.
/// </summary>
public sealed class JetStreamClusterTests(JetStreamMeshFixture fixture) : IClassFixture<JetStreamMeshFixture>
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);
    private readonly Mesh _mesh = fixture.Mesh;

    [Fact]
    public async Task A_stream_created_through_one_node_lives_on_one_node_and_serves_publishers_and_consumers_on_the_others()
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        await using var a = await _mesh.ConnectAsync(0, "creator");
        await using var b = await _mesh.ConnectAsync(1, "publisher");
        await using var c = await _mesh.ConnectAsync(2, "consumer");
        var (jsA, jsB, jsC) = (new NatsJSContext(a), new NatsJSContext(b), new NatsJSContext(c));
        var before = await StreamCountsAsync(http);

        var created = await jsA.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]));
        Assert.Equal("ORDERS", created.Info.Config.Name);
        var after = await StreamCountsAsync(http);
        Assert.Equal(before.Sum() + 1, after.Sum()); // one node holds it, once
        Assert.Single(Enumerable.Range(0, 3), i => after[i] == before[i] + 1);

        foreach (var js in new[] { jsA, jsB, jsC })
        {
            Assert.Equal("ORDERS", (await js.GetStreamAsync("ORDERS")).Info.Config.Name);
        }

        for (var i = 1; i <= 5; i++)
        {
            var ack = await jsB.PublishAsync($"orders.{i}", $"order {i}");
            ack.EnsureSuccess();
            Assert.Equal("ORDERS", ack.Stream);
            Assert.Equal((ulong)i, ack.Seq);
        }

        // Pull from node C, acks from node C: the consumer on the owner sees them (its info asked on node A).
        var pull = await jsC.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("puller") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        var pulled = new List<string?>();
        using (var cts = new CancellationTokenSource(Timeout))
        {
            await foreach (var msg in pull.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 5, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: cts.Token))
            {
                pulled.Add(msg.Data);
                await msg.AckAsync(cancellationToken: cts.Token);
            }
        }

        Assert.Equal(Enumerable.Range(1, 5).Select(i => $"order {i}"), pulled);
        Assert.True(
            await Poll.UntilAsync(async () => (await jsA.GetConsumerAsync("ORDERS", "puller")).Info is { NumAckPending: 0, AckFloor.StreamSeq: 5 }, Timeout),
            $"the acks from node C never reached the consumer\n{_mesh.Diagnostics()}");

        // Push: the owner delivers to a subscriber on node C, which acks.
        var push = await jsC.CreatePushConsumerAsync("ORDERS", new NatsJSPushConsumerOpts { DurableName = "pusher", DeliverSubject = "deliver.orders", AckPolicy = ConsumerConfigAckPolicy.Explicit });
        var pushed = new List<string?>();
        using (var cts = new CancellationTokenSource(Timeout))
        {
            await foreach (var msg in push.ConsumeAsync<string>(cancellationToken: cts.Token))
            {
                pushed.Add(msg.Data);
                await msg.AckAsync(cancellationToken: cts.Token);
                if (pushed.Count == 5)
                {
                    break;
                }
            }
        }

        Assert.Equal(Enumerable.Range(1, 5).Select(i => $"order {i}"), pushed);

        // Ordered: the client's own consumer, recreated as it pleases, read on node C.
        var ordered = await jsC.CreateOrderedConsumerAsync("ORDERS");
        var read = new List<ulong>();
        using (var cts = new CancellationTokenSource(Timeout))
        {
            await foreach (var msg in ordered.ConsumeAsync<string>(cancellationToken: cts.Token))
            {
                read.Add(msg.Metadata!.Value.Sequence.Stream);
                if (read.Count == 5)
                {
                    break;
                }
            }
        }

        Assert.Equal([1UL, 2UL, 3UL, 4UL, 5UL], read);
    }

    [Fact]
    public async Task Stream_names_list_and_account_info_from_every_node_show_every_stream_once()
    {
        var names = new[] { "LIST_A", "LIST_B", "LIST_C" };
        for (var i = 0; i < 3; i++)
        {
            await using var connection = await _mesh.ConnectAsync(i, "creator");
            var js = new NatsJSContext(connection);
            await js.CreateStreamAsync(new StreamConfig(names[i], [$"list.{i}.>"]));
            (await js.PublishAsync($"list.{i}.x", "one")).EnsureSuccess();
        }

        for (var i = 0; i < 3; i++)
        {
            await using var connection = await _mesh.ConnectAsync(i, "lister");
            var js = new NatsJSContext(connection);
            var listed = new List<string>();
            await foreach (var name in js.ListStreamNamesAsync())
            {
                listed.Add(name);
            }

            Assert.Equal(listed.Distinct().Count(), listed.Count);
            Assert.All(names, n => Assert.Contains(n, listed));

            var infos = new List<StreamInfo>();
            await foreach (var stream in js.ListStreamsAsync())
            {
                infos.Add(stream.Info);
            }

            Assert.Equal(listed.Order(), infos.Select(s => s.Config.Name!).Order());
            Assert.All(names, n => Assert.Equal(1, infos.Single(s => s.Config.Name == n).State.Messages));

            var account = await js.GetAccountInfoAsync();
            Assert.Equal(listed.Count, account.Streams);
            Assert.True(account.Storage > 0, $"node {i}: account storage {account.Storage}");
        }
    }

    [Fact]
    public async Task A_key_put_on_one_node_is_read_and_watched_on_another()
    {
        await using var a = await _mesh.ConnectAsync(0, "kv-writer");
        await using var c = await _mesh.ConnectAsync(2, "kv-reader");
        var storeA = await new NatsKVContext(new NatsJSContext(a)).CreateStoreAsync(new NatsKVConfig("settings"));
        await storeA.PutAsync("colour", "red");

        var storeC = await new NatsKVContext(new NatsJSContext(c)).GetStoreAsync("settings");
        Assert.Equal("red", (await storeC.GetEntryAsync<string>("colour")).Value);

        var seen = new List<string?>();
        using var cts = new CancellationTokenSource(Timeout);
        await foreach (var entry in storeC.WatchAsync<string>("colour", cancellationToken: cts.Token))
        {
            seen.Add(entry.Value);
            if (seen.Count == 1)
            {
                await storeA.PutAsync("colour", "blue", cancellationToken: cts.Token);
            }
            else
            {
                break;
            }
        }

        Assert.Equal(["red", "blue"], seen);
    }

    [Fact]
    public async Task Two_creates_of_one_name_racing_on_two_nodes_end_with_one_stream()
    {
        await using var b = await _mesh.ConnectAsync(1, "racer-b");
        await using var c = await _mesh.ConnectAsync(2, "racer-c");
        var racing = new[]
        {
            CreateAsync(new NatsJSContext(b), new StreamConfig("RACE", ["race.b.>"])),
            CreateAsync(new NatsJSContext(c), new StreamConfig("RACE", ["race.c.>"])),
        };
        var outcomes = await Task.WhenAll(racing);

        Assert.Single(outcomes, o => o is null);
        Assert.Single(outcomes, o => o is { Error.ErrCode: 10058 }); // stream name already in use
        for (var i = 0; i < 3; i++)
        {
            await using var connection = await _mesh.ConnectAsync(i, "lister");
            var listed = new List<string>();
            await foreach (var name in new NatsJSContext(connection).ListStreamNamesAsync())
            {
                listed.Add(name);
            }

            Assert.Single(listed, n => n == "RACE");
        }

        static async Task<NatsJSApiException?> CreateAsync(NatsJSContext js, StreamConfig config)
        {
            try
            {
                await js.CreateStreamAsync(config);
                return null;
            }
            catch (NatsJSApiException e)
            {
                return e;
            }
        }
    }

    [Fact]
    public async Task A_stream_no_node_has_is_not_found_through_every_node()
    {
        for (var i = 0; i < _mesh.Nodes.Count; i++)
        {
            await using var connection = await _mesh.ConnectAsync(i, "asker");
            var js = new NatsJSContext(connection);
            var info = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.GetStreamAsync("NOWHERE"));
            Assert.Equal((404, 10059), (info.Error.Code, info.Error.ErrCode));
            var delete = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.DeleteStreamAsync("NOWHERE"));
            Assert.Equal((404, 10059), (delete.Error.Code, delete.Error.ErrCode));
        }
    }

    [Fact]
    public async Task Every_nodes_jsz_names_the_same_meta_leader_of_a_three_member_cluster()
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var leaders = new List<string?>();
        foreach (var node in _mesh.Nodes)
        {
            using var jsz = JsonDocument.Parse(await http.GetStringAsync(new Uri(node.MonitorUri, "jsz")));
            var meta = jsz.RootElement.GetProperty("meta_cluster");
            Assert.Equal(Mesh.ClusterName, meta.GetProperty("name").GetString());
            Assert.Equal(3, meta.GetProperty("cluster_size").GetInt32());
            Assert.Equal(8, meta.GetProperty("peer").GetString()!.Length);
            leaders.Add(meta.GetProperty("leader").GetString());
        }

        Assert.Single(leaders.Distinct());
        Assert.Contains(leaders[0], new[] { "node-0", "node-1", "node-2" });
    }

    /// <summary>Each node's own stream count (/jsz <c>streams</c>).</summary>
    private async Task<int[]> StreamCountsAsync(HttpClient http)
    {
        var counts = new int[_mesh.Nodes.Count];
        for (var i = 0; i < counts.Length; i++)
        {
            using var jsz = JsonDocument.Parse(await http.GetStringAsync(new Uri(_mesh.Nodes[i].MonitorUri, "jsz")));
            counts[i] = jsz.RootElement.GetProperty("streams").GetInt32();
        }

        return counts;
    }
}
