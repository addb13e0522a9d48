using System.Text;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Cluster.Tests;

/// <summary>
/// A follower's files damaged while it is down, as the nemesis bench does (issue 35): one bit flipped in its
/// stream's member list, one in a record of its Raft log that other records follow, and one in a durable
/// consumer's meta file (the node refused to start on that one). Before, the node started
/// the stream as a stream of one copy beside its group (and acknowledged publishes the group never had), or cut
/// its log and voted with it. Now it rejoins: its member list from its Raft log, the entries it lost from the
/// leader (it neither campaigns nor votes for a shorter log meanwhile), the consumer from the leader's copy, and
/// once it leads it serves every acknowledged message at the sequence its PubAck named, and the consumer.
/// </summary>
public sealed class DamagedReplicaFilesTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task A_follower_with_a_damaged_member_list_and_raft_log_rejoins_and_keeps_every_acknowledged_message()
    {
        var stores = Directory.CreateTempSubdirectory("courier-damaged-").FullName;
        // Snapshots every 16 applied entries (the classes of this assembly run one at a time): the consumer's creation
        // is compacted out of the log, so the repaired follower copies it from the leader.
        Environment.SetEnvironmentVariable("COURIER_RAFT_COMPACT_EVERY", "16");
        try
        {
            await using var mesh = await Mesh.StartAsync(
                [ServerKind.Courier, ServerKind.Courier, ServerKind.Courier],
                routeCredentials: null,
                extraArgs: ["-js"],
                nodeArgs: i => ["-sd", Path.Combine(stores, $"node-{i}")]);
            await using var nats = await mesh.ConnectAsync(0, "damaged-r3");
            var js = new NatsJSContext(nats);
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            await js.CreateStreamAsync(new StreamConfig("DMG", ["dmg.>"]) { NumReplicas = 3 });
                            return true;
                        }
                        catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                        {
                            return false; // the cluster is still forming
                        }
                    },
                    Timeout),
                $"the R3 stream was never created\n{mesh.Diagnostics()}");

            var acked = new Dictionary<ulong, string>();
            for (var i = 0; i < 30; i++)
            {
                var ack = await ClusterPublish.RetriedAsync(js, "dmg.x", $"dmg-msg-{i:D3}");
                ack.EnsureSuccess();
                acked[ack.Seq] = $"dmg-msg-{i:D3}";
            }

            await js.CreateOrUpdateConsumerAsync("DMG", new ConsumerConfig("keeper") { AckPolicy = ConsumerConfigAckPolicy.Explicit, Description = "kept" });
            for (var i = 30; i < 40; i++)
            {
                var ack = await ClusterPublish.RetriedAsync(js, "dmg.x", $"dmg-msg-{i:D3}");
                ack.EnsureSuccess();
                acked[ack.Seq] = $"dmg-msg-{i:D3}";
            }

            await WaitCurrentAsync(js, mesh, acked.Count);

            // An acknowledged entry after the last compaction with more after it. When that compaction happens varies
            // (batches, consumer-state and leader entries move the log's indexes; under load the log can be compacted
            // up to its end), so when the follower's log holds none, it restarts and a few more messages follow.
            var follower = 0;
            string store = "", raftBlock = "", damaged = "";
            for (var attempt = 0; attempt < 6 && raftBlock.Length == 0; attempt++)
            {
                if (attempt > 0)
                {
                    await mesh.RestartAsync(follower);
                    for (var i = 0; i < 4; i++)
                    {
                        var ack = await ClusterPublish.RetriedAsync(js, "dmg.x", $"dmg-more-{attempt}-{i}");
                        ack.EnsureSuccess();
                        acked[ack.Seq] = $"dmg-more-{attempt}-{i}";
                    }

                    await WaitCurrentAsync(js, mesh, acked.Count);
                }

                var leader = (await js.GetStreamAsync("DMG")).Info.Cluster!.Leader!;
                follower = Enumerable.Range(1, 2).First(i => $"node-{i}" != leader); // never node 0, the client's
                await mesh.Nodes[follower].DisposeAsync(); // SIGKILL
                store = Path.Combine(stores, $"node-{follower}");
                var blocks = Directory.GetFiles(Path.Combine(store, "jetstream", "_raft"), "*.blk", SearchOption.AllDirectories);
                var found = acked.OrderByDescending(a => a.Key).Skip(2) // two entries at least after the damaged one
                    .Select(a => (Block: blocks.FirstOrDefault(f => File.ReadAllBytes(f).AsSpan().IndexOf(Encoding.UTF8.GetBytes(a.Value)) >= 0), Text: a.Value))
                    .FirstOrDefault(f => f.Block is not null);
                (raftBlock, damaged) = (found.Block ?? "", found.Text ?? "");
            }

            Assert.True(raftBlock.Length > 0, $"no Raft block of node-{follower} holds an acknowledged message after six attempts");
            FlipBit(Directory.GetFiles(store, "members", SearchOption.AllDirectories).Single(f => f.Contains("DMG", StringComparison.Ordinal)), "0", 0x40); // '0' becomes 'p'
            FlipBit(raftBlock, damaged, 0x02);
            FlipBit(Directory.GetFiles(store, "meta.json", SearchOption.AllDirectories).Single(f => f.Contains("keeper", StringComparison.Ordinal)), "kept", 0x01);

            for (var i = 40; i < 50; i++)
            {
                var ack = await ClusterPublish.RetriedAsync(js, "dmg.x", $"dmg-msg-{i:D3}");
                ack.EnsureSuccess();
                acked[ack.Seq] = $"dmg-msg-{i:D3}";
            }

            await mesh.RestartAsync(follower);
            await WaitCurrentAsync(js, mesh, acked.Count);
            for (var i = 50; i < 60; i++)
            {
                // Through the repaired node too: a replica that took itself for a stream of one copy would answer these.
                await using var viaFollower = await mesh.ConnectAsync(follower, "damaged-r3-follower");
                var ack = await ClusterPublish.RetriedAsync(new NatsJSContext(viaFollower), "dmg.x", $"dmg-msg-{i:D3}");
                ack.EnsureSuccess();
                acked[ack.Seq] = $"dmg-msg-{i:D3}";
            }

            await WaitCurrentAsync(js, mesh, acked.Count);

            // The repaired follower leads, and its store has every acknowledged message where its PubAck said.
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        if ((await js.GetStreamAsync("DMG")).Info.Cluster?.Leader == $"node-{follower}")
                        {
                            return true;
                        }

                        try
                        {
                            await nats.RequestAsync<byte[], byte[]>("$JS.API.STREAM.LEADER.STEPDOWN.DMG", []);
                        }
                        catch (Exception e) when (e is NatsException or TimeoutException)
                        {
                            // Between leaders.
                        }

                        await Task.Delay(500);
                        return false;
                    },
                    Timeout),
                $"node-{follower} never led after its repair\n{mesh.Diagnostics()}");
            foreach (var (seq, payload) in acked)
            {
                var message = await js.GetStreamAsync("DMG");
                var stored = await message.GetAsync(new StreamMsgGetRequest { Seq = seq });
                Assert.Equal(payload, Encoding.UTF8.GetString(stored.Message.Data.Span));
            }

            // The durable whose definition was damaged here is the leader's copy again. Read until it answers: CI once
            // saw "consumer not found" from the repaired leader right after it took over (not reproduced in 5 runs under
            // load); a consumer lost for good still fails here, after the timeout.
            string? description = null;
            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        try
                        {
                            description = (await js.GetConsumerAsync("DMG", "keeper")).Info.Config.Description;
                            return true;
                        }
                        catch (NatsJSApiException e) when (e.Error.ErrCode == 10014)
                        {
                            return false;
                        }
                    },
                    Timeout),
                $"the durable never came back on node-{follower}, the leader\n{mesh.Diagnostics()}");
            Assert.Equal("kept", description);
            Assert.True(acked.Count >= 60, $"{acked.Count} acknowledged");
            Assert.Equal((long)acked.Count, (await js.GetStreamAsync("DMG")).Info.State.Messages);
        }
        finally
        {
            Environment.SetEnvironmentVariable("COURIER_RAFT_COMPACT_EVERY", null);
            Directory.Delete(stores, recursive: true);
        }
    }

    /// <summary>Flips the bit <paramref name="mask"/> of the first byte of <paramref name="marker"/> in <paramref name="file"/>.</summary>
    private static void FlipBit(string file, string marker, byte mask)
    {
        var bytes = File.ReadAllBytes(file);
        var at = bytes.AsSpan().IndexOf(Encoding.UTF8.GetBytes(marker));
        Assert.True(at >= 0, $"{marker} not in {file}");
        bytes[at] ^= mask;
        File.WriteAllBytes(file, bytes);
    }

    private static async Task WaitCurrentAsync(NatsJSContext js, Mesh mesh, int messages)
    {
        StreamInfo? info = null;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        info = (await js.GetStreamAsync("DMG")).Info;
                        return info.State.Messages == messages && info.Cluster?.Replicas is { Count: 2 } replicas && replicas.All(r => r.Current && !r.Offline);
                    }
                    catch (Exception e) when (e is NatsJSApiException or NatsException or TimeoutException)
                    {
                        return false;
                    }
                },
                Timeout),
            $"the replicas never became current with {messages} messages: {System.Text.Json.JsonSerializer.Serialize(info?.Cluster)}\n{mesh.Diagnostics()}");
    }
}
