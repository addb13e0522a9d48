using System.Net;
using System.Text.Json.Nodes;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;

namespace Courier.Cluster.Tests;

/// <summary>Three nodes of one kind with JetStream, each on its own store directory that outlives a restart.</summary>
public abstract class ReplicatedMeshFixture(ServerKind kind) : IAsyncLifetime
{
    private readonly string _stores = Directory.CreateTempSubdirectory("courier-r3-").FullName;

    public Mesh Mesh { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        if (kind == ServerKind.Courier)
        {
            // Snapshots every 16 applied entries (instead of 8192): the tests' few hundred writes then compact
            // the logs, and a restarted replica catches up from the leader's store (StreamActor.Catchup.cs).
            // The test classes of this assembly run one at a time, so no other class's nodes see it.
            Environment.SetEnvironmentVariable(CompactEvery, "16");
        }

        // Tags for placement: node-0 and node-1 have ssd, each node its own az.
        Mesh = await Mesh.StartAsync([kind, kind, kind], routeCredentials: null, extraArgs: ["-js"], nodeArgs: i => ["-sd", Path.Combine(_stores, $"node-{i}")],
            nodeConfig: i => i < 2 ? $"server_tags: [\"az:{i + 1}\", \"SSD\"]\n" : $"server_tags: \"az:{i + 1}\"\n");
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        foreach (var node in Mesh.Nodes)
        {
            if (!await NodeMonitor.HealthAsync(http, node, HttpStatusCode.OK, TimeSpan.FromSeconds(45)))
            {
                throw new TimeoutException($"{node.Url} never became healthy\n{Mesh.Diagnostics()}");
            }
        }
    }

    private const string CompactEvery = "COURIER_RAFT_COMPACT_EVERY";

    public async Task DisposeAsync()
    {
        await Mesh.DisposeAsync();
        Environment.SetEnvironmentVariable(CompactEvery, null);
        try
        {
            Directory.Delete(_stores, recursive: true);
        }
        catch (IOException)
        {
            // A leftover temp folder is harmless.
        }
    }
}

public sealed class CourierReplicatedMesh() : ReplicatedMeshFixture(ServerKind.Courier);

public sealed class NatsServerReplicatedMesh() : ReplicatedMeshFixture(ServerKind.NatsServer);

/// <summary>
/// A stream with num_replicas 3 on three nodes, the same client script against Courier and against three
/// nats-server 2.9.10 nodes: created through one node, written through another, read through the third;
/// its leader killed with SIGKILL under writes (writes resume on a new leader, every acknowledged message
/// is there exactly once at its acknowledged sequence); the killed node restarted catches up.
/// </summary>
public abstract class ReplicatedStreamTests(Mesh mesh)
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    /// <summary>
    /// Every node sees the other two as current members of the JetStream cluster (/jsz meta_cluster): a node an
    /// earlier test of the class killed and restarted is back in the membership (healthz alone does not say so,
    /// and a create or placement meanwhile would not see it).
    /// </summary>
    internal static async Task JetStreamMeshReadyAsync(Mesh mesh)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var last = "";
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    // Every node counts them all; one (the meta leader, where nats-server fills replicas in) sees the others current.
                    var seenCurrent = false;
                    foreach (var node in mesh.Nodes)
                    {
                        try
                        {
                            using var jsz = System.Text.Json.JsonDocument.Parse(await http.GetStringAsync(new Uri(node.MonitorUri, "jsz")));
                            last = jsz.RootElement.TryGetProperty("meta_cluster", out var meta) ? meta.ToString() : "no meta_cluster";
                            if (!jsz.RootElement.TryGetProperty("meta_cluster", out meta) || !meta.TryGetProperty("cluster_size", out var size) || size.GetInt32() != mesh.Nodes.Count)
                            {
                                return false;
                            }

                            seenCurrent |= meta.TryGetProperty("replicas", out var replicas) && replicas.GetArrayLength() == mesh.Nodes.Count - 1 &&
                                replicas.EnumerateArray().All(r => r.GetProperty("current").GetBoolean());
                        }
                        catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
                        {
                            last = e.Message;
                            return false;
                        }
                    }

                    return seenCurrent;
                },
                Timeout),
            $"the JetStream cluster never had every node: {last}\n{mesh.Diagnostics()}");
    }

    private protected Mesh MeshOf() => mesh;

    [Fact]
    public async Task A_replicated_stream_keeps_every_acknowledged_message_when_its_leader_is_killed_and_the_node_catches_up_after_a_restart()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using (var creator = await mesh.ConnectAsync(0, "creator"))
        {
            var jsCreator = new NatsJSContext(creator);
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            await jsCreator.CreateStreamAsync(new StreamConfig("R3", ["r3.>"]) { NumReplicas = 3 });
                            return true;
                        }
                        catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                        {
                            return false; // nats-server: its meta group has no leader yet; either: a node restarted by another test is not back yet
                        }
                    },
                    Timeout),
                $"the R3 stream was never created\n{mesh.Diagnostics()}");
        }

        var acked = new Dictionary<ulong, string>();
        await using (var writer = await mesh.ConnectAsync(1, "writer"))
        {
            var js = new NatsJSContext(writer);
            for (var i = 1; i <= 20; i++)
            {
                var ack = await ClusterPublish.RetriedAsync(js, "r3.before", $"b{i}");
                ack.EnsureSuccess();
                acked.Add(ack.Seq, $"b{i}");
            }
        }

        int leader;
        await using (var reader = await mesh.ConnectAsync(2, "reader"))
        {
            var js = new NatsJSContext(reader);
            StreamInfo? info = null;
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        info = (await js.GetStreamAsync("R3")).Info;
                        return info.Cluster?.Leader is not null && info.Cluster.Replicas is { Count: 2 } replicas && replicas.All(r => r.Current);
                    },
                    Timeout),
                $"the replicas never became current: {System.Text.Json.JsonSerializer.Serialize(info?.Cluster)}\n{mesh.Diagnostics()}");
            Assert.Equal(20, info!.State.Messages);
            Assert.Equal(Mesh.ClusterName, info.Cluster!.Name);
            leader = int.Parse(info.Cluster.Leader!["node-".Length..], System.Globalization.CultureInfo.InvariantCulture);
        }

        await mesh.Nodes[leader].DisposeAsync(); // SIGKILL, by pid
        var survivor = (leader + 1) % 3;
        await using (var writer = await mesh.ConnectAsync(survivor, "after-kill"))
        {
            var js = new NatsJSContext(writer);
            var written = 0;
            var deadline = DateTime.UtcNow + Timeout;
            while (written < 10 && DateTime.UtcNow < deadline)
            {
                try
                {
                    var ack = await js.PublishAsync("r3.after", $"a{written + 1}", opts: new NatsJSPubOpts { MsgId = $"a{written + 1}" });
                    ack.EnsureSuccess();
                    if (!ack.Duplicate)
                    {
                        acked.Add(ack.Seq, $"a{written + 1}");
                    }

                    written++;
                }
                catch (Exception e) when (e is NatsException or NatsJSApiException or TimeoutException)
                {
                    await Task.Delay(250); // no leader yet: the publish fails (no responders, or times out) and is tried again
                }
            }

            Assert.True(written == 10, $"writes never resumed after the leader was killed\n{mesh.Diagnostics()}");
            var info = (await js.GetStreamAsync("R3")).Info;
            Assert.NotEqual($"node-{leader}", info.Cluster?.Leader);

            // Every acknowledged message, exactly once, at the sequence its PubAck gave.
            Assert.Equal((ulong)acked.Count, (ulong)info.State.Messages);
            foreach (var (seq, data) in acked)
            {
                var message = await js.GetStreamAsync("R3");
                var got = await message.GetAsync(new StreamMsgGetRequest { Seq = seq });
                Assert.Equal(data, System.Text.Encoding.UTF8.GetString(got.Message.Data.Span));
            }
        }

        await mesh.RestartAsync(leader);
        await using (var reader = await mesh.ConnectAsync(survivor, "after-restart"))
        {
            var js = new NatsJSContext(reader);
            StreamInfo? info = null;
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            info = (await js.GetStreamAsync("R3")).Info;
                            return info.Cluster?.Replicas is { Count: 2 } replicas && replicas.All(r => r.Current && r.Lag == 0 && !r.Offline);
                        }
                        catch (NatsJSApiException)
                        {
                            return false;
                        }
                    },
                    Timeout),
                $"the restarted replica never caught up: {System.Text.Json.JsonSerializer.Serialize(info?.Cluster)}\n{mesh.Diagnostics()}");

            ApiError? lastError = null;

            // Leadership handed over (STREAM.LEADER.STEPDOWN) until the restarted node leads: it holds every
            // acknowledged message itself, the ones written while it was down included.
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            info = (await js.GetStreamAsync("R3")).Info;
                        }
                        catch (NatsJSApiException e)
                        {
                            lastError = e.Error;
                            return false; // between two leaders
                        }

                        if (info.Cluster?.Leader == $"node-{leader}")
                        {
                            return true;
                        }

                        var answer = await reader.RequestAsync<string, string>("$JS.API.STREAM.LEADER.STEPDOWN.R3", null);
                        Assert.Contains("\"success\":true", answer.Data, StringComparison.Ordinal);
                        await Task.Delay(500);
                        return false;
                    },
                    Timeout),
                $"the restarted node never became the leader: {System.Text.Json.JsonSerializer.Serialize(info?.Cluster)}, last error {lastError?.Code}/{lastError?.ErrCode} {lastError?.Description}\n{mesh.Diagnostics()}");
            Assert.Equal(acked.Count, (int)info!.State.Messages);
            var stream = await js.GetStreamAsync("R3");
            foreach (var (seq, data) in acked)
            {
                var got = await stream.GetAsync(new StreamMsgGetRequest { Seq = seq });
                Assert.Equal(data, System.Text.Encoding.UTF8.GetString(got.Message.Data.Span));
            }
        }
    }

    [Fact]
    public async Task A_durable_consumer_of_a_replicated_stream_resumes_from_its_ack_floor_on_the_new_leader()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using (var creator = await mesh.ConnectAsync(0, "consumer-creator"))
        {
            var js = new NatsJSContext(creator);
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            await js.CreateStreamAsync(new StreamConfig("RC", ["rc.>"]) { NumReplicas = 3 });
                            return true;
                        }
                        catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                        {
                            return false;
                        }
                    },
                    Timeout),
                $"the R3 stream was never created\n{mesh.Diagnostics()}");
            for (var i = 1; i <= 20; i++)
            {
                await ClusterPublish.RetriedAsync(js, "rc.x", $"m{i}");
            }

            var consumer = await js.CreateOrUpdateConsumerAsync("RC", new ConsumerConfig("worker") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
            var first = new List<string?>();
            await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 10, Expires = TimeSpan.FromSeconds(5) }))
            {
                first.Add(msg.Data);
                await msg.AckAsync(new AckOpts { DoubleAck = true });
            }

            Assert.Equal(Enumerable.Range(1, 10).Select(i => $"m{i}"), first);
        }

        await Task.Delay(TimeSpan.FromSeconds(3)); // the consumer's state reaches the other replicas
        int leader;
        await using (var reader = await mesh.ConnectAsync(2, "consumer-reader"))
        {
            var info = (await new NatsJSContext(reader).GetStreamAsync("RC")).Info;
            leader = int.Parse(info.Cluster!.Leader!["node-".Length..], System.Globalization.CultureInfo.InvariantCulture);
        }

        await mesh.Nodes[leader].DisposeAsync(); // SIGKILL, by pid
        await using var client = await mesh.ConnectAsync((leader + 1) % 3, "consumer-after-kill");
        var jsAfter = new NatsJSContext(client);
        var rest = new List<string?>();
        var deadline = DateTime.UtcNow + Timeout;
        while (rest.Count < 10 && DateTime.UtcNow < deadline)
        {
            try
            {
                var consumer = await jsAfter.GetConsumerAsync("RC", "worker");
                await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 10 - rest.Count, Expires = TimeSpan.FromSeconds(2) }))
                {
                    rest.Add(msg.Data);
                    await msg.AckAsync(new AckOpts { DoubleAck = true });
                }
            }
            catch (Exception e) when (e is NatsJSApiException or NatsException or TimeoutException)
            {
                await Task.Delay(250); // no leader yet
            }
        }

        // From the ack floor: the ten acknowledged before the kill are not delivered again.
        Assert.Equal(Enumerable.Range(11, 10).Select(i => $"m{i}"), rest);
        var restarted = await mesh.RestartAsync(leader);
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        Assert.True(await NodeMonitor.HealthAsync(http, restarted, HttpStatusCode.OK, Timeout), $"the restarted node never became healthy\n{mesh.Diagnostics()}");
    }

    /// <summary>
    /// CONSUMER.LEADER.STEPDOWN of a durable on an R3 stream: answered with success, the consumer's info names another
    /// leader afterwards (each node leads it in turn, asked again until it does), and the consumer goes on from its ack
    /// floor; an unknown consumer, an unknown stream and a request with a body get nats-server's errors.
    /// </summary>
    [Fact]
    public async Task A_consumer_leader_stepdown_moves_the_consumer_to_another_replica_which_goes_on_from_its_ack_floor()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using var client = await mesh.ConnectAsync(1, "consumer-stepdown");
        var js = new NatsJSContext(client);
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        await js.CreateStreamAsync(new StreamConfig("CSD", ["csd.>"]) { NumReplicas = 3 });
                        return true;
                    }
                    catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                    {
                        return false;
                    }
                },
                Timeout),
            $"the R3 stream was never created\n{mesh.Diagnostics()}");
        for (var i = 1; i <= 30; i++)
        {
            (await ClusterPublish.RetriedAsync(js, "csd.x", $"m{i}")).EnsureSuccess();
        }

        var consumer = await js.CreateOrUpdateConsumerAsync("CSD", new ConsumerConfig("sd") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
        var got = new List<string?>();
        await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 10, Expires = TimeSpan.FromSeconds(5) }))
        {
            got.Add(msg.Data);
            await msg.AckAsync(new AckOpts { DoubleAck = true });
        }

        Assert.Equal(Enumerable.Range(1, 10).Select(i => $"m{i}"), got);

        async Task<JsonNode?> StepDownAsync(string subject, string? body = null)
        {
            var answer = await client.RequestAsync<string, string>(subject, body);
            return JsonNode.Parse(answer.Data!);
        }

        // Errors first, in nats-server's order: the stream, then the consumer, then the body.
        Assert.Equal(10059, (int?)(await StepDownAsync("$JS.API.CONSUMER.LEADER.STEPDOWN.NOSUCH.sd"))?["error"]?["err_code"]);
        Assert.Equal(10014, (int?)(await StepDownAsync("$JS.API.CONSUMER.LEADER.STEPDOWN.CSD.nosuch"))?["error"]?["err_code"]);
        Assert.Equal(10003, (int?)(await StepDownAsync("$JS.API.CONSUMER.LEADER.STEPDOWN.CSD.sd", """{"placement":{}}"""))?["error"]?["err_code"]);

        // Each leader announces itself: nats-server's stream_leader_elected and consumer_leader_elected advisories.
        var elected = new System.Collections.Concurrent.ConcurrentQueue<(string Subject, JsonNode Body)>();
        await using var advisories = await client.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.*.LEADER_ELECTED.CSD.>");
        var listening = Task.Run(async () =>
        {
            await foreach (var msg in advisories.Msgs.ReadAllAsync())
            {
                elected.Enqueue((msg.Subject, JsonNode.Parse(msg.Data!)!));
            }
        });
        await using var streamAdvisories = await client.SubscribeCoreAsync<string>("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.CSD");
        var streamListening = Task.Run(async () =>
        {
            await foreach (var msg in streamAdvisories.Msgs.ReadAllAsync())
            {
                elected.Enqueue((msg.Subject, JsonNode.Parse(msg.Data!)!));
            }
        });
        await client.PingAsync();

        // Each node leads the consumer in turn; every leader goes on from the ack floor, ten messages at a time.
        var led = new HashSet<string>();
        var next = 11;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    ConsumerInfo info;
                    try
                    {
                        info = (await js.GetConsumerAsync("CSD", "sd")).Info;
                    }
                    catch (NatsJSApiException)
                    {
                        return false; // between two leaders
                    }

                    if (info.Cluster?.Leader is { } leader && led.Add(leader))
                    {
                        Assert.Equal((ulong)(next - 1), info.AckFloor.StreamSeq);
                        Assert.True(info.Cluster.Replicas is { Count: 2 } replicas && !replicas.Any(r => r.Name == leader), System.Text.Json.JsonSerializer.Serialize(info.Cluster)); // the other two peers
                        var batch = new List<string?>();
                        var deadline = DateTime.UtcNow + Timeout;
                        while (batch.Count < 5 && DateTime.UtcNow < deadline)
                        {
                            try
                            {
                                var current = await js.GetConsumerAsync("CSD", "sd");
                                await foreach (var msg in current.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 5 - batch.Count, Expires = TimeSpan.FromSeconds(2) }))
                                {
                                    batch.Add(msg.Data);
                                    await msg.AckAsync(new AckOpts { DoubleAck = true });
                                }
                            }
                            catch (Exception e) when (e is NatsJSApiException or NatsException or TimeoutException)
                            {
                                await Task.Delay(250);
                            }
                        }

                        Assert.Equal(Enumerable.Range(next, 5).Select(i => $"m{i}"), batch);
                        next += 5;
                    }

                    if (led.Count == 3)
                    {
                        return true;
                    }

                    var answer = await StepDownAsync("$JS.API.CONSUMER.LEADER.STEPDOWN.CSD.sd", led.Count == 1 ? "{}" : null); // "{}" is no body
                    Assert.True(answer?["success"]?.GetValue<bool>() == true || answer?["error"]?["code"]?.GetValue<int>() == 503, answer?.ToJsonString());
                    await Task.Delay(500);
                    return false;
                },
                Timeout),
            $"only {string.Join(',', led)} led the consumer\n{mesh.Diagnostics()}");

        // The two consumer leaders after the first announced themselves, each with the group's three peers (nats-server
        // 2.9.10 lists the leader among its replicas).
        bool Announced(string type, string subject, IEnumerable<string> leaders) =>
            leaders.All(leader => elected.Any(e => e.Subject == subject && (string?)e.Body["type"] == type && (string?)e.Body["leader"] == leader && e.Body["replicas"]?.AsArray().Count == 3));
        string Seen() => string.Join("; ", elected.Select(e => e.Subject + " " + e.Body.ToJsonString()));
        Assert.True(
            await Poll.UntilAsync(() => Task.FromResult(Announced("io.nats.jetstream.advisory.v1.consumer_leader_elected", "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.CSD.sd", led.Skip(1))), TimeSpan.FromSeconds(10)),
            $"consumer leaders {string.Join(',', led)}; advisories: {Seen()}");

        // A stream stepdown: its new leader announces itself too.
        string? streamLeader = (await js.GetStreamAsync("CSD")).Info.Cluster?.Leader;
        string? newStreamLeader = null;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    await client.RequestAsync<string, string>("$JS.API.STREAM.LEADER.STEPDOWN.CSD", null);
                    await Task.Delay(500);
                    try
                    {
                        newStreamLeader = (await js.GetStreamAsync("CSD")).Info.Cluster?.Leader;
                    }
                    catch (NatsJSApiException)
                    {
                        return false;
                    }

                    return newStreamLeader is not null && newStreamLeader != streamLeader;
                },
                Timeout),
            $"the stream leader {streamLeader} never changed\n{mesh.Diagnostics()}");
        Assert.True(
            await Poll.UntilAsync(() => Task.FromResult(Announced("io.nats.jetstream.advisory.v1.stream_leader_elected", "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.CSD", [newStreamLeader!])), TimeSpan.FromSeconds(10)),
            $"stream leader {newStreamLeader}; advisories: {Seen()}");
        await js.DeleteStreamAsync("CSD");
    }

    [Fact]
    public async Task A_key_value_bucket_with_three_replicas_keeps_its_latest_revisions_through_a_leader_kill()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using (var creator = await mesh.ConnectAsync(0, "kv-creator"))
        {
            var kv = new NatsKVContext(new NatsJSContext(creator));
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            await kv.CreateStoreAsync(new NatsKVConfig("settings") { NumberOfReplicas = 3, History = 2 });
                            return true;
                        }
                        catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                        {
                            return false;
                        }
                    },
                    Timeout),
                $"the R3 bucket was never created\n{mesh.Diagnostics()}");
        }

        ulong revision;
        await using (var writer = await mesh.ConnectAsync(1, "kv-writer"))
        {
            var store = await new NatsKVContext(new NatsJSContext(writer)).GetStoreAsync("settings");
            var first = await store.PutAsync("colour", "red");
            revision = await store.UpdateAsync("colour", "green", first);
            await Assert.ThrowsAsync<NatsKVWrongLastRevisionException>(async () => await store.UpdateAsync("colour", "blue", first)); // compare-and-set
        }

        int leader;
        await using (var reader = await mesh.ConnectAsync(2, "kv-reader"))
        {
            var js = new NatsJSContext(reader);
            var store = await new NatsKVContext(js).GetStoreAsync("settings");
            var entry = await store.GetEntryAsync<string>("colour");
            Assert.Equal(("green", revision), (entry.Value, entry.Revision));
            var info = (await js.GetStreamAsync("KV_settings")).Info;
            Assert.Equal(3, info.Config.NumReplicas);
            leader = int.Parse(info.Cluster!.Leader!["node-".Length..], System.Globalization.CultureInfo.InvariantCulture);
        }

        await mesh.Nodes[leader].DisposeAsync(); // SIGKILL, by pid
        await using (var client = await mesh.ConnectAsync((leader + 1) % 3, "kv-after-kill"))
        {
            var kv = new NatsKVContext(new NatsJSContext(client));
            INatsKVStore? store = null;
            ulong next = 0;
            var deadline = DateTime.UtcNow + Timeout;
            while (next == 0 && DateTime.UtcNow < deadline)
            {
                try
                {
                    // The new leader has the latest revision: a compare-and-set against it succeeds.
                    store ??= await kv.GetStoreAsync("settings");
                    next = await store.UpdateAsync("colour", "blue", revision);
                }
                catch (Exception e) when (e is NatsJSApiException or NatsException or TimeoutException)
                {
                    await Task.Delay(250); // no leader yet
                }
            }

            Assert.True(next > revision, $"no write after the leader was killed\n{mesh.Diagnostics()}");
            var entry = await store!.GetEntryAsync<string>("colour");
            Assert.Equal(("blue", next), (entry.Value, entry.Revision));
        }

        var restarted = await mesh.RestartAsync(leader);
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        Assert.True(await NodeMonitor.HealthAsync(http, restarted, HttpStatusCode.OK, Timeout), $"the restarted node never became healthy\n{mesh.Diagnostics()}");
    }

    /// <summary>
    /// num_replicas 1 -> 3 -> 1 by STREAM.UPDATE: the new replicas copy the existing messages (each node, once it
    /// leads, holds every one of them), writes go on at R3, and back at R1 the stream keeps them all.
    /// </summary>
    [Fact]
    public async Task A_stream_scaled_from_one_replica_to_three_and_back_keeps_every_message()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using var client = await mesh.ConnectAsync(0, "scaler");
        var js = new NatsJSContext(client);
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        await js.CreateStreamAsync(new StreamConfig("SCALE", ["scale.>"]));
                        return true;
                    }
                    catch (NatsJSApiException e) when (e.Error.Code == 503)
                    {
                        return false; // nats-server's meta group has no leader yet
                    }
                },
                Timeout),
            $"the stream was never created\n{mesh.Diagnostics()}");
        var acked = new Dictionary<ulong, string>();
        for (var i = 1; i <= 40; i++)
        {
            var ack = await ClusterPublish.RetriedAsync(js, $"scale.s{i % 4}", $"one-{i}");
            ack.EnsureSuccess();
            acked[ack.Seq] = $"one-{i}";
        }

        await js.DeleteMessageAsync("SCALE", new StreamMsgDeleteRequest { Seq = 7 });
        acked.Remove(7);

        var stream = await js.GetStreamAsync("SCALE");
        var config = stream.Info.Config;
        config.NumReplicas = 3;
        await using (var other = await mesh.ConnectAsync(1, "scaler-up"))
        {
            var updated = await new NatsJSContext(other).UpdateStreamAsync(config);
            Assert.Equal(3, updated.Info.Config.NumReplicas);
        }

        StreamInfo? info = null;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        info = (await js.GetStreamAsync("SCALE")).Info;
                        return info.Cluster?.Leader is not null && info.Cluster.Replicas is { Count: 2 } replicas && replicas.All(r => r.Current && !r.Offline);
                    }
                    catch (NatsJSApiException)
                    {
                        return false; // between two leaders
                    }
                },
                Timeout),
            $"the new replicas never became current: {System.Text.Json.JsonSerializer.Serialize(info?.Cluster)}\n{mesh.Diagnostics()}");

        for (var i = 1; i <= 10; i++)
        {
            var ack = await ClusterPublish.RetriedAsync(js, "scale.r3", $"three-{i}");
            ack.EnsureSuccess();
            acked[ack.Seq] = $"three-{i}";
        }

        // Each node leads in turn (STREAM.LEADER.STEPDOWN until it does) and holds every acknowledged message.
        var led = new HashSet<string>();
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        info = (await js.GetStreamAsync("SCALE")).Info;
                    }
                    catch (NatsJSApiException)
                    {
                        return false;
                    }

                    if (info.Cluster?.Leader is { } leader && led.Add(leader))
                    {
                        Assert.Equal(acked.Count, (int)info.State.Messages);
                        var current = await js.GetStreamAsync("SCALE");
                        foreach (var (seq, data) in acked)
                        {
                            var got = await current.GetAsync(new StreamMsgGetRequest { Seq = seq });
                            Assert.Equal(data, System.Text.Encoding.UTF8.GetString(got.Message.Data.Span));
                        }

                        await Assert.ThrowsAsync<NatsJSApiException>(async () => await current.GetAsync(new StreamMsgGetRequest { Seq = 7 })); // deleted before the scale-up
                    }

                    if (led.Count == 3)
                    {
                        return true;
                    }

                    await client.RequestAsync<string, string>("$JS.API.STREAM.LEADER.STEPDOWN.SCALE", null);
                    await Task.Delay(500);
                    return false;
                },
                Timeout * 2), // nats-server 2.9.10 re-elected the same leader for a minute under CI's load
            $"only {string.Join(',', led)} led\n{mesh.Diagnostics()}");

        // Back to one replica.
        config = (await js.GetStreamAsync("SCALE")).Info.Config;
        config.NumReplicas = 1;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        var down = await js.UpdateStreamAsync(config);
                        return down.Info.Config.NumReplicas == 1;
                    }
                    catch (NatsJSApiException e) when (e.Error.Code == 503)
                    {
                        return false;
                    }
                },
                Timeout),
            $"the update to one replica failed\n{mesh.Diagnostics()}");
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        info = (await js.GetStreamAsync("SCALE")).Info;
                        return info.Cluster?.Replicas is null or { Count: 0 };
                    }
                    catch (NatsJSApiException)
                    {
                        return false;
                    }
                },
                Timeout),
            $"the stream kept replicas: {System.Text.Json.JsonSerializer.Serialize(info?.Cluster)}\n{mesh.Diagnostics()}");
        var last = await ClusterPublish.RetriedAsync(js, "scale.r1", "one-again");
        last.EnsureSuccess();
        acked[last.Seq] = "one-again";
        info = (await js.GetStreamAsync("SCALE")).Info;
        Assert.Equal(acked.Count, (int)info.State.Messages);
        var after = await js.GetStreamAsync("SCALE");
        foreach (var (seq, data) in acked)
        {
            var got = await after.GetAsync(new StreamMsgGetRequest { Seq = seq });
            Assert.Equal(data, System.Text.Encoding.UTF8.GetString(got.Message.Data.Span));
        }

        await js.DeleteStreamAsync("SCALE");
    }

    /// <summary>
    /// STREAM.PEER.REMOVE: an R2 stream's follower is replaced by the third server, which copies the store (once
    /// it leads it holds every message, the ones from before it joined too); a server that is not a member gets
    /// "peer not a member" (10040); an R3 stream on three servers, with nobody to take the place, "peer remap
    /// failed" (10075), as nats-server 2.9.10 answers.
    /// </summary>
    [Fact]
    public async Task Removing_a_peer_moves_its_replica_to_a_free_server_that_holds_every_message()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using var client = await mesh.ConnectAsync(0, "peer-remover");
        var js = new NatsJSContext(client);
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        await js.CreateStreamAsync(new StreamConfig("PR", ["pr.>"]) { NumReplicas = 2 });
                        await js.CreateStreamAsync(new StreamConfig("PR3", ["pr3.>"]) { NumReplicas = 3 });
                        return true;
                    }
                    catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                    {
                        return false;
                    }
                    catch (NatsJSApiNoResponseException)
                    {
                        return false; // a loaded machine: the group elected its leader after the client gave up; the same create again returns it
                    }
                },
                Timeout),
            $"the streams were never created\n{mesh.Diagnostics()}");
        var acked = new Dictionary<ulong, string>();
        for (var i = 1; i <= 10; i++)
        {
            var ack = await ClusterPublish.RetriedAsync(js, "pr.x", $"m{i}");
            ack.EnsureSuccess();
            acked[ack.Seq] = $"m{i}";
        }

        StreamInfo? info = null;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    info = (await js.GetStreamAsync("PR")).Info;
                    return info.Cluster?.Leader is not null && info.Cluster.Replicas is { Count: 1 } replicas && replicas.All(r => r.Current);
                },
                Timeout),
            $"the replica never became current\n{mesh.Diagnostics()}");
        var removed = info!.Cluster!.Replicas!.First().Name;
        var leader = info.Cluster.Leader!;

        var notMember = await client.RequestAsync<string, string>("$JS.API.STREAM.PEER.REMOVE.PR", "{\"peer\":\"no-such-server\"}");
        Assert.True(notMember.Data?.Contains("\"err_code\":10040", StringComparison.Ordinal), notMember.Data);
        var full = await client.RequestAsync<string, string>("$JS.API.STREAM.PEER.REMOVE.PR3", $"{{\"peer\":\"{removed}\"}}");
        Assert.True(full.Data?.Contains("\"err_code\":10075", StringComparison.Ordinal), full.Data);
        var answer = await client.RequestAsync<string, string>("$JS.API.STREAM.PEER.REMOVE.PR", $"{{\"peer\":\"{removed}\"}}");
        Assert.True(answer.Data?.Contains("\"success\":true", StringComparison.Ordinal), answer.Data);

        // The third server takes the place, copies the store, and once it leads it holds every message.
        var third = Enumerable.Range(0, 3).Select(i => $"node-{i}").Single(n => n != removed && n != leader);
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        info = (await js.GetStreamAsync("PR")).Info;
                    }
                    catch (NatsJSApiException)
                    {
                        return false; // between two leaders
                    }

                    var names = (info.Cluster?.Replicas ?? []).Select(r => r.Name).Append(info.Cluster?.Leader).ToHashSet();
                    if (names.Contains(removed) || !names.Contains(third) || info.Cluster?.Replicas is not { Count: 1 } || !info.Cluster.Replicas.All(r => r.Current))
                    {
                        return false;
                    }

                    if (info.Cluster.Leader == third)
                    {
                        return true;
                    }

                    await client.RequestAsync<string, string>("$JS.API.STREAM.LEADER.STEPDOWN.PR", null);
                    await Task.Delay(500);
                    return false;
                },
                Timeout),
            $"the replica did not move to {third}: {System.Text.Json.JsonSerializer.Serialize(info?.Cluster)}\n{mesh.Diagnostics()}");
        Assert.Equal(acked.Count, (int)info!.State.Messages);
        var stream = await js.GetStreamAsync("PR");
        foreach (var (seq, data) in acked)
        {
            var got = await stream.GetAsync(new StreamMsgGetRequest { Seq = seq });
            Assert.Equal(data, System.Text.Encoding.UTF8.GetString(got.Message.Data.Span));
        }

        // The leader itself can go too: it hands leadership on, and the server removed first takes its place.
        var second = await client.RequestAsync<string, string>("$JS.API.STREAM.PEER.REMOVE.PR", $"{{\"peer\":\"{third}\"}}");
        Assert.True(second.Data?.Contains("\"success\":true", StringComparison.Ordinal), second.Data);
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        info = (await js.GetStreamAsync("PR")).Info;
                    }
                    catch (Exception e) when (e is NatsJSApiException or NatsJSApiNoResponseException)
                    {
                        return false;
                    }

                    var names = (info.Cluster?.Replicas ?? []).Select(r => r.Name).Append(info.Cluster?.Leader).ToHashSet();
                    if (names.Contains(third) || !names.Contains(removed) || info.Cluster?.Replicas is not { Count: 1 } || !info.Cluster.Replicas.All(r => r.Current))
                    {
                        return false;
                    }

                    if (info.Cluster.Leader == removed)
                    {
                        return true;
                    }

                    await client.RequestAsync<string, string>("$JS.API.STREAM.LEADER.STEPDOWN.PR", null);
                    await Task.Delay(500);
                    return false;
                },
                // Twice the usual wait: nats-server 2.9.10 may lose its meta leader for a while after its stream
                // leader's peer is removed (CI saw "JetStream has not established contact with a meta leader" for a minute).
                Timeout * 2),
            $"the leader's replica did not move to {removed}: {System.Text.Json.JsonSerializer.Serialize(info?.Cluster)}\n{mesh.Diagnostics()}");
        Assert.Equal(acked.Count, (int)info!.State.Messages);
        (await ClusterPublish.RetriedAsync(js, "pr.x", "after")).EnsureSuccess();
        foreach (var name in new[] { "PR", "PR3" })
        {
            // nats-server's meta leader may not answer for a moment after a leader's removal.
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            return await js.DeleteStreamAsync(name);
                        }
                        catch (NatsJSApiException e) when (e.Error.ErrCode == 10059)
                        {
                            return true; // an earlier attempt whose answer was lost deleted it (CI saw this from nats-server)
                        }
                        catch (Exception e) when (e is NatsJSApiNoResponseException || (e is NatsJSApiException api && api.Error.Code == 503))
                        {
                            return false;
                        }
                    },
                    Timeout),
                $"{name} was never deleted\n{mesh.Diagnostics()}");
        }
    }

    /// <summary>
    /// placement.tags choose the servers (node-0 and node-1 have "ssd", each node its own "az:N"; tags compare
    /// lowercased); more replicas than tagged servers, or a cluster that is not this one, is nats-server's
    /// "no suitable peers for placement"; /varz shows a server's tags.
    /// </summary>
    [Fact]
    public async Task Placement_tags_choose_the_servers_a_stream_lives_on()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using var client = await mesh.ConnectAsync(0, "placement");
        var js = new NatsJSContext(client);
        async Task<StreamInfo> CreateAsync(StreamConfig config)
        {
            StreamInfo? created = null;
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            created = (await js.CreateStreamAsync(config)).Info;
                            return true;
                        }
                        catch (NatsJSApiException e) when (e.Error.Code == 503)
                        {
                            return false;
                        }
                        catch (NatsJSApiNoResponseException)
                        {
                            return false;
                        }
                    },
                    Timeout),
                $"{config.Name} was never created\n{mesh.Diagnostics()}");
            return created!;
        }

        await CreateAsync(new StreamConfig("PL1", ["pl1.>"]) { Placement = new Placement { Tags = ["az:3"] } });
        var one = (await js.GetStreamAsync("PL1")).Info;
        Assert.Equal("node-2", one.Cluster?.Leader);
        Assert.Equal(["az:3"], one.Config.Placement?.Tags);

        await CreateAsync(new StreamConfig("PL2", ["pl2.>"]) { NumReplicas = 2, Placement = new Placement { Tags = ["ssd"] } });
        StreamInfo? two = null;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    two = (await js.GetStreamAsync("PL2")).Info;
                    return two.Cluster?.Leader is not null && two.Cluster.Replicas is { Count: 1 };
                },
                Timeout),
            $"PL2 never had its replica\n{mesh.Diagnostics()}");
        Assert.Equal(["node-0", "node-1"], two!.Cluster!.Replicas!.Select(r => r.Name).Append(two.Cluster.Leader!).Order(StringComparer.Ordinal));

        var tooMany = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateStreamAsync(new StreamConfig("PL3", ["pl3.>"]) { NumReplicas = 3, Placement = new Placement { Tags = ["ssd"] } }));
        Assert.Equal((400, 10005), (tooMany.Error.Code, tooMany.Error.ErrCode));
        var nowhere = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateStreamAsync(new StreamConfig("PL4", ["pl4.>"]) { Placement = new Placement { Tags = ["gpu"] } }));
        Assert.Equal((400, 10005), (nowhere.Error.Code, nowhere.Error.ErrCode));

        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        using var varz = System.Text.Json.JsonDocument.Parse(await http.GetStringAsync(new Uri(mesh.Nodes[0].MonitorUri, "varz")));
        Assert.Equal(["az:1", "ssd"], varz.RootElement.GetProperty("tags").EnumerateArray().Select(t => t.GetString()));
        await js.DeleteStreamAsync("PL1");
        await js.DeleteStreamAsync("PL2");
    }

    /// <summary>An object store with three replicas: an object put through one node is read whole through another, and again after its stream's leader is killed.</summary>
    [Fact]
    public async Task An_object_store_with_three_replicas_serves_its_objects_through_a_leader_kill()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        var data = new byte[300 * 1024];
        new Random(7).NextBytes(data);
        await using (var creator = await mesh.ConnectAsync(0, "obj-creator"))
        {
            var objects = new NATS.Client.ObjectStore.NatsObjContext(new NatsJSContext(creator));
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            await objects.CreateObjectStoreAsync(new NATS.Client.ObjectStore.NatsObjConfig("files") { NumberOfReplicas = 3 });
                            return true;
                        }
                        catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                        {
                            return false;
                        }
                    },
                    Timeout),
                $"the R3 object store was never created\n{mesh.Diagnostics()}");
        }

        await using (var writer = await mesh.ConnectAsync(1, "obj-writer"))
        {
            var store = await new NATS.Client.ObjectStore.NatsObjContext(new NatsJSContext(writer)).GetObjectStoreAsync("files");
            await store.PutAsync("blob", data);
        }

        int leader;
        await using (var reader = await mesh.ConnectAsync(2, "obj-reader"))
        {
            var js = new NatsJSContext(reader);
            var store = await new NATS.Client.ObjectStore.NatsObjContext(js).GetObjectStoreAsync("files");
            Assert.Equal(data, await store.GetBytesAsync("blob"));
            var info = (await js.GetStreamAsync("OBJ_files")).Info;
            Assert.Equal(3, info.Config.NumReplicas);
            leader = int.Parse(info.Cluster!.Leader!["node-".Length..], System.Globalization.CultureInfo.InvariantCulture);
        }

        await mesh.Nodes[leader].DisposeAsync(); // SIGKILL, by pid
        await using (var client = await mesh.ConnectAsync((leader + 1) % 3, "obj-after-kill"))
        {
            var objects = new NATS.Client.ObjectStore.NatsObjContext(new NatsJSContext(client));
            byte[]? read = null;
            var deadline = DateTime.UtcNow + Timeout;
            while (read is null && DateTime.UtcNow < deadline)
            {
                try
                {
                    read = await (await objects.GetObjectStoreAsync("files")).GetBytesAsync("blob");
                }
                catch (Exception e) when (e is NatsJSApiException or NatsException or TimeoutException or NATS.Client.ObjectStore.NatsObjException)
                {
                    await Task.Delay(250); // no leader yet
                }
            }

            Assert.Equal(data, read);
        }

        var restarted = await mesh.RestartAsync(leader);
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        Assert.True(await NodeMonitor.HealthAsync(http, restarted, HttpStatusCode.OK, Timeout), $"the restarted node never became healthy\n{mesh.Diagnostics()}");
    }

    /// <summary>max_age on a replicated stream: its messages age out on every replica (a new leader has none either).</summary>
    [Fact]
    public async Task Messages_of_a_replicated_stream_age_out_on_every_replica()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using var client = await mesh.ConnectAsync(0, "max-age");
        var js = new NatsJSContext(client);
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        await js.CreateStreamAsync(new StreamConfig("AGE", ["age.>"]) { NumReplicas = 3, MaxAge = TimeSpan.FromSeconds(2) });
                        return true;
                    }
                    catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                    {
                        return false;
                    }
                    catch (NatsJSApiNoResponseException)
                    {
                        return false;
                    }
                },
                Timeout),
            $"the R3 stream was never created\n{mesh.Diagnostics()}");
        for (var i = 0; i < 5; i++)
        {
            (await ClusterPublish.RetriedAsync(js, "age.x", $"m{i}")).EnsureSuccess();
        }

        var leaders = new HashSet<string>();
        StreamInfo? info = null;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        info = (await js.GetStreamAsync("AGE")).Info;
                    }
                    catch (Exception e) when (e is NatsJSApiException or NatsJSApiNoResponseException)
                    {
                        return false;
                    }

                    if (info.State.Messages != 0 || info.State.LastSeq != 5 || info.Cluster?.Leader is not { } leader)
                    {
                        return false;
                    }

                    // Empty at this leader: now at another one too.
                    leaders.Add(leader);
                    if (leaders.Count >= 2)
                    {
                        return true;
                    }

                    await client.RequestAsync<string, string>("$JS.API.STREAM.LEADER.STEPDOWN.AGE", null);
                    await Task.Delay(500);
                    return false;
                },
                Timeout),
            $"messages did not age out everywhere: {info?.State.Messages} left at {info?.Cluster?.Leader}, leaders seen {string.Join(',', leaders)}\n{mesh.Diagnostics()}");
        await js.DeleteStreamAsync("AGE");
    }

    [Fact]
    public async Task More_replicas_than_servers_is_refused_with_nats_servers_error()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using var client = await mesh.ConnectAsync(1, "too-many");
        var js = new NatsJSContext(client);
        NatsJSApiException? error = null;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        await js.CreateStreamAsync(new StreamConfig("R4", ["r4.>"]) { NumReplicas = 4 });
                        return true;
                    }
                    catch (NatsJSApiException e) when (e.Error.Code == 503)
                    {
                        return false; // nats-server: its meta group has no leader yet
                    }
                    catch (NatsJSApiException e)
                    {
                        error = e;
                        return true;
                    }
                },
                Timeout));
        Assert.NotNull(error);
        Assert.Equal((400, 10005), (error!.Error.Code, error.Error.ErrCode));
        Assert.StartsWith("no suitable peers for placement", error.Error.Description, StringComparison.Ordinal);
    }
}

public sealed class CourierReplicatedStreamTests(CourierReplicatedMesh fixture) : ReplicatedStreamTests(fixture.Mesh), IClassFixture<CourierReplicatedMesh>
{
    /// <summary>
    /// An ephemeral consumer asking three replicas: nats-server replicates it; Courier replicates file-backed
    /// durables only, so it refuses rather than keep one copy (nats-server's consumer create error, 10012).
    /// A durable asking three is taken.
    /// </summary>
    [Fact]
    public async Task An_ephemeral_consumer_asking_for_replicas_is_refused_and_a_durable_is_taken()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using var client = await fixture.Mesh.ConnectAsync(0, "consumer-replicas");
        var js = new NatsJSContext(client);
        Assert.True(await Poll.UntilAsync(
            async () =>
            {
                try
                {
                    await js.CreateStreamAsync(new StreamConfig("RE", ["re.>"]) { NumReplicas = 3 });
                    return true;
                }
                catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                {
                    return false; // a node restarted by another test is not back yet
                }
            },
            TimeSpan.FromSeconds(60)));
        var refused = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateOrUpdateConsumerAsync("RE", new ConsumerConfig { NumReplicas = 3, AckPolicy = ConsumerConfigAckPolicy.Explicit }));
        Assert.Equal((500, 10012), (refused.Error.Code, refused.Error.ErrCode));
        var durable = await js.CreateOrUpdateConsumerAsync("RE", new ConsumerConfig("kept") { NumReplicas = 3, AckPolicy = ConsumerConfigAckPolicy.Explicit });
        Assert.Equal(3, durable.Info.Config.NumReplicas);
    }

    /// <summary>
    /// /metrics on every node (Courier's own <c>courier_raft_*</c>): the stream's group on each, one leader, one
    /// term and applied index once they agree, the leader's view of its two followers caught up, and every
    /// node's Raft log group-committing; once the stream is deleted its series are gone.
    /// </summary>
    [Fact]
    public async Task Metrics_show_each_raft_group_its_leader_and_its_followers_lag()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using var client = await fixture.Mesh.ConnectAsync(0, "raft-metrics");
        var js = new NatsJSContext(client);
        Assert.True(await Poll.UntilAsync(
            async () =>
            {
                try
                {
                    await js.CreateStreamAsync(new StreamConfig("RM", ["rm.>"]) { NumReplicas = 3 });
                    return true;
                }
                catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                {
                    return false; // a node restarted by another test is not back yet
                }
            },
            TimeSpan.FromSeconds(60)));
        for (var i = 0; i < 5; i++)
        {
            (await js.PublishAsync("rm.x", i)).EnsureSuccess();
        }

        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var scrapes = new List<Dictionary<string, PrometheusFamily>>();
        List<PrometheusSample> Of(string family) =>
            [.. scrapes.SelectMany(m => m.TryGetValue(family, out var f) ? f.Samples : []).Where(s => s.Labels.GetValueOrDefault("stream") == "RM")];
        async Task ScrapeAllAsync()
        {
            scrapes.Clear();
            foreach (var node in fixture.Mesh.Nodes)
            {
                scrapes.Add(PrometheusText.Parse(await http.GetStringAsync(new Uri(node.MonitorUri, "metrics"))));
            }
        }

        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    await ScrapeAllAsync();
                    var applied = Of("courier_raft_applied_index");
                    var lag = Of("courier_raft_peer_lag_entries");
                    return applied.Count == 3 && applied.Select(s => s.Value).Distinct().Count() == 1 &&
                        Of("courier_raft_is_leader").Sum(s => s.Value) == 1 && lag.Count == 2 && lag.All(s => s.Value == 0);
                },
                TimeSpan.FromSeconds(30)),
            $"courier_raft_*: {string.Join("\n", new[] { "courier_raft_applied_index", "courier_raft_is_leader", "courier_raft_peer_lag_entries" }.SelectMany(Of))}");
        Assert.Single(Of("courier_raft_term").Select(s => s.Value).Distinct());
        Assert.All(Of("courier_raft_commit_index"), s => Assert.True(s.Value >= 5, $"commit {s.Value}: five publishes, besides membership and no-op entries"));
        Assert.All(Of("courier_raft_is_leader"), s => Assert.Equal(["server_id", "raft_group", "account", "stream"], s.Labels.Keys.ToArray()));
        Assert.Single(Of("courier_raft_is_leader").Select(s => s.Labels["raft_group"]).Distinct());
        var peers = Of("courier_raft_peer_lag_entries").Select(s => s.Labels["peer"]).Order(StringComparer.Ordinal).ToArray();
        var leaderIndex = scrapes.FindIndex(m => m["courier_raft_is_leader"].Samples.Any(s => s.Labels.GetValueOrDefault("stream") == "RM" && s.Value == 1));
        Assert.Equal(
            Enumerable.Range(0, 3).Where(i => i != leaderIndex).Select(i => $"node-{i}").ToArray(),
            peers); // the lag of the two followers, on the leader only
        Assert.All(scrapes, m => Assert.Contains(
            PrometheusText.Family(m, "courier_store_group_commit_entries", "histogram").Samples,
            s => s.Name == "courier_store_group_commit_entries_count" && s.Labels.GetValueOrDefault("log") == "raft" && s.Value > 0));

        await js.DeleteStreamAsync("RM");
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    await ScrapeAllAsync();
                    return Of("courier_raft_term").Count == 0 && Of("courier_raft_peer_lag_entries").Count == 0;
                },
                TimeSpan.FromSeconds(30)),
            "the deleted stream's group stayed in the metrics");
    }

    /// <summary>Behind a num_replicas change, the groups themselves (/raftz): up from 1, a group on every node with three voters; back to 1, only the leader's, with one.</summary>
    [Fact]
    public async Task Scaling_a_stream_up_and_down_adds_and_removes_its_group_members()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using var client = await fixture.Mesh.ConnectAsync(0, "scale-raftz");
        var js = new NatsJSContext(client);
        await js.CreateStreamAsync(new StreamConfig("SZ", ["sz.>"]));
        (await js.PublishAsync("sz.x", "before")).EnsureSuccess();
        var config = (await js.GetStreamAsync("SZ")).Info.Config;
        config.NumReplicas = 3;
        await js.UpdateStreamAsync(config);
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var groups = new List<System.Text.Json.JsonElement>();
        async Task<bool> GroupsAsync(int count, int voters)
        {
            groups.Clear();
            foreach (var node in fixture.Mesh.Nodes)
            {
                using var raftz = System.Text.Json.JsonDocument.Parse(await http.GetStringAsync(new Uri(node.MonitorUri, "raftz?acc=$G")));
                groups.AddRange(raftz.RootElement.GetProperty("groups").EnumerateArray().Where(g => g.GetProperty("stream").GetString() == "SZ").Select(g => g.Clone()));
            }

            return groups.Count == count && groups.Count(g => g.GetProperty("role").GetString() == "leader") == 1 &&
                groups.Single(g => g.GetProperty("role").GetString() == "leader").GetProperty("peers").GetArrayLength() == voters;
        }

        Assert.True(await Poll.UntilAsync(() => GroupsAsync(3, 3), TimeSpan.FromSeconds(30)), $"after the scale-up, /raftz: {string.Join("\n", groups)}");
        config.NumReplicas = 1;
        await js.UpdateStreamAsync(config);
        Assert.True(await Poll.UntilAsync(() => GroupsAsync(1, 1), TimeSpan.FromSeconds(30)), $"after the scale-down, /raftz: {string.Join("\n", groups)}");
        var info = (await js.GetStreamAsync("SZ")).Info;
        Assert.Equal((1, 1L), (info.Config.NumReplicas, info.State.Messages));
        await js.DeleteStreamAsync("SZ");
    }

    /// <summary>/raftz (Courier's; nats-server 2.9.10 has none): every node hosts the stream's group, one of them leads it, all in one term.</summary>
    [Fact]
    public async Task Raftz_shows_the_replicated_streams_group_on_every_node_with_one_leader()
    {
        await JetStreamMeshReadyAsync(MeshOf());
        await using (var client = await fixture.Mesh.ConnectAsync(0, "raftz"))
        {
            var js = new NatsJSContext(client);
            Assert.True(await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        await js.CreateStreamAsync(new StreamConfig("RZ", ["rz.>"]) { NumReplicas = 3 });
                        return true;
                    }
                    catch (NatsJSApiException e) when (e.Error.ErrCode == 10005)
                    {
                        return false; // a node restarted by another test is not back yet
                    }
                },
                TimeSpan.FromSeconds(60)));
            for (var i = 0; i < 5; i++)
            {
                (await js.PublishAsync("rz.x", i)).EnsureSuccess();
            }
        }

        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var groups = new List<System.Text.Json.JsonElement>();
        Assert.True(await Poll.UntilAsync(
            async () =>
            {
                groups.Clear();
                foreach (var node in fixture.Mesh.Nodes)
                {
                    using var raftz = System.Text.Json.JsonDocument.Parse(await http.GetStringAsync(new Uri(node.MonitorUri, "raftz?acc=$G")));
                    groups.AddRange(raftz.RootElement.GetProperty("groups").EnumerateArray().Where(g => g.GetProperty("stream").GetString() == "RZ").Select(g => g.Clone()));
                }

                return groups.Count == 3 && groups.Count(g => g.GetProperty("role").GetString() == "leader") == 1 && groups.All(g => g.GetProperty("applied").GetUInt64() == groups[0].GetProperty("applied").GetUInt64());
            },
            TimeSpan.FromSeconds(20)),
            $"/raftz: {string.Join("\n", groups)}");
        Assert.Single(groups.Select(g => g.GetProperty("term").GetUInt64()).Distinct());
        var leader = groups.Single(g => g.GetProperty("role").GetString() == "leader");
        Assert.All(groups, g => Assert.Equal(leader.GetProperty("leader").GetString(), g.GetProperty("leader").GetString()));
        Assert.True(leader.GetProperty("commit").GetUInt64() >= 5, leader.ToString()); // five publishes, besides membership and no-op entries

        // /jsz on the leader's node: the stream's cluster block names the leader and both replicas, and
        // meta_cluster lists the other two servers.
        var leaderName = leader.GetProperty("leader").GetString()!;
        var leaderNode = fixture.Mesh.Nodes[int.Parse(leaderName["node-".Length..], System.Globalization.CultureInfo.InvariantCulture)];
        System.Text.Json.JsonElement cluster = default;
        Assert.True(await Poll.UntilAsync(
            async () =>
            {
                using var jsz = System.Text.Json.JsonDocument.Parse(await http.GetStringAsync(new Uri(leaderNode.MonitorUri, "jsz?accounts=true&streams=true")));
                var stream = jsz.RootElement.GetProperty("account_details").EnumerateArray().SelectMany(a => a.TryGetProperty("stream_detail", out var d) ? d.EnumerateArray() : []).Single(d => d.GetProperty("name").GetString() == "RZ");
                cluster = stream.GetProperty("cluster").Clone();
                Assert.Equal(2, jsz.RootElement.GetProperty("meta_cluster").GetProperty("replicas").GetArrayLength());
                return cluster.TryGetProperty("replicas", out var replicas) && replicas.GetArrayLength() == 2 && replicas.EnumerateArray().All(r => r.GetProperty("current").GetBoolean());
            },
            TimeSpan.FromSeconds(20)),
            $"/jsz stream cluster: {cluster}");
        Assert.Equal(leaderName, cluster.GetProperty("leader").GetString());
    }
}

public sealed class NatsServerReplicatedStreamTests(NatsServerReplicatedMesh fixture) : ReplicatedStreamTests(fixture.Mesh), IClassFixture<NatsServerReplicatedMesh>;

/// <summary>
/// Two of three nodes killed: the one left acknowledges no write (no responders, or no answer), and once
/// a second node is back writes are acknowledged again with the earlier data intact. A mesh of its own
/// (Courier's lone survivor is downed by Akka's split-brain resolver, and only a restart brings it back
/// into the membership: see README, Cluster), the same script against three nats-server nodes.
/// </summary>
public abstract class QuorumLossTests(Mesh mesh)
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Without_a_quorum_no_write_is_acknowledged_and_writes_resume_when_a_quorum_is_back()
    {
        await using (var creator = await mesh.ConnectAsync(0, "quorum-creator"))
        {
            var js = new NatsJSContext(creator);
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            await js.CreateStreamAsync(new StreamConfig("RQ", ["rq.>"]) { NumReplicas = 3 });
                            return true;
                        }
                        catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                        {
                            return false;
                        }
                    },
                    Timeout),
                $"the R3 stream was never created\n{mesh.Diagnostics()}");
            await ClusterPublish.RetriedAsync(js, "rq.x", "before");
        }

        // Two of three nodes killed: the one left cannot commit anything.
        await mesh.Nodes[1].DisposeAsync();
        await mesh.Nodes[2].DisposeAsync();
        await using (var client = await mesh.ConnectAsync(0, "quorum-lost"))
        {
            var js = new NatsJSContext(client);
            var until = DateTime.UtcNow + TimeSpan.FromSeconds(8);
            var attempts = 0;
            while (DateTime.UtcNow < until)
            {
                attempts++;
                try
                {
                    var ack = await js.PublishAsync("rq.x", $"lost-{attempts}", opts: new NatsJSPubOpts { RetryAttempts = 1 });
                    Assert.Fail($"a write was acknowledged without a quorum: seq {ack.Seq}, error {ack.Error?.Description}");
                }
                catch (Exception e) when (e is NatsException or NatsJSApiException or TimeoutException)
                {
                    // No responders (no leader subscribes) or no answer (a leader that cannot commit): never an ack.
                }
            }

            Assert.True(attempts > 1);
        }

        // One node back: a quorum again, and writes are acknowledged.
        await mesh.RestartAsync(1);
        await using (var client = await mesh.ConnectAsync(0, "quorum-back"))
        {
            var js = new NatsJSContext(client);
            var acked = false;
            var deadline = DateTime.UtcNow + (2 * Timeout); // nats-server 2.9.10's meta group sometimes takes over a minute here on a loaded machine
            while (!acked && DateTime.UtcNow < deadline)
            {
                try
                {
                    (await js.PublishAsync("rq.x", "after", opts: new NatsJSPubOpts { MsgId = "after" })).EnsureSuccess();
                    acked = true;
                }
                catch (Exception e) when (e is NatsException or NatsJSApiException or TimeoutException)
                {
                    await Task.Delay(250);
                }
            }

            Assert.True(acked, $"writes never resumed with two of three nodes up\n{mesh.Diagnostics()}");
            var stream = await js.GetStreamAsync("RQ");
            Assert.Equal("before", System.Text.Encoding.UTF8.GetString((await stream.GetAsync(new StreamMsgGetRequest { Seq = 1 })).Message.Data.Span));
        }

    }
}

public sealed class CourierQuorumLossTests(CourierReplicatedMesh fixture) : QuorumLossTests(fixture.Mesh), IClassFixture<CourierReplicatedMesh>;

public sealed class NatsServerQuorumLossTests(NatsServerReplicatedMesh fixture) : QuorumLossTests(fixture.Mesh), IClassFixture<NatsServerReplicatedMesh>;

/// <summary>
/// A publish right after a create, as careful clients make it: a new group may still change leader once
/// (a publish the old leader took gets no answer), so it is sent again under its Nats-Msg-Id until a
/// PubAck comes; the id makes a retry of a stored message a duplicate, never a second copy.
/// </summary>
internal static class ClusterPublish
{
    public static async Task<PubAckResponse> RetriedAsync(NatsJSContext js, string subject, string data)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (true)
        {
            try
            {
                var ack = await js.PublishAsync(subject, data, opts: new NatsJSPubOpts { MsgId = $"{subject}-{data}" });
                ack.EnsureSuccess();
                return ack;
            }
            catch (Exception e) when (e is NatsJSPublishNoResponseException or NatsNoRespondersException && DateTime.UtcNow < deadline)
            {
                await Task.Delay(200);
            }
        }
    }
}
