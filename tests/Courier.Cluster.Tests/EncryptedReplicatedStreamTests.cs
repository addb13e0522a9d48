using System.Text;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Cluster.Tests;

/// <summary>
/// Encryption at rest on three Courier nodes (<c>jetstream { key }</c>): a stream with num_replicas 3 keeps
/// its messages in every node's Raft log (<c>jetstream/_raft/...</c>, a FileStore) and stream store, and
/// none of those files holds a payload or subject in plaintext, also after a killed follower restarted and
/// caught up.
/// </summary>
public sealed class EncryptedReplicatedStreamTests
{
    private const string Secret = "TOPSECRET-r3-5d1e";
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task A_replicated_stream_on_encrypted_nodes_leaves_no_plaintext_in_raft_logs_or_stores()
    {
        var stores = Directory.CreateTempSubdirectory("courier-r3enc-").FullName;
        // Snapshots every 16 applied entries, as ReplicatedStreamTests (the classes of this assembly run one at a time).
        Environment.SetEnvironmentVariable("COURIER_RAFT_COMPACT_EVERY", "16");
        try
        {
            await using (var mesh = await Mesh.StartAsync(
                [ServerKind.Courier, ServerKind.Courier, ServerKind.Courier],
                routeCredentials: null,
                extraArgs: ["-js"],
                configText: "jetstream {\n  key: \"cluster-key\"\n  cipher: aes\n}\n",
                nodeArgs: i => ["-sd", Path.Combine(stores, $"node-{i}")]))
            {
                await using var nats = await mesh.ConnectAsync(0, "encrypted-r3");
                var js = new NatsJSContext(nats);
                Assert.True(
                    await Poll.UntilAsync(
                        async () =>
                        {
                            try
                            {
                                await js.CreateStreamAsync(new StreamConfig("SECRETR3", ["classified.>"]) { NumReplicas = 3 });
                                return true;
                            }
                            catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                            {
                                return false; // the cluster is still forming
                            }
                        },
                        Timeout),
                    $"the R3 stream was never created\n{mesh.Diagnostics()}");
                for (var i = 0; i < 20; i++)
                {
                    (await ClusterPublish.RetriedAsync(js, "classified.orders", $"{Secret}-{i}")).EnsureSuccess();
                }

                var consumer = await js.CreateOrUpdateConsumerAsync("SECRETR3", new ConsumerConfig("reader") { AckPolicy = ConsumerConfigAckPolicy.Explicit });
                await foreach (var msg in consumer.FetchAsync<byte[]>(new NatsJSFetchOpts { MaxMsgs = 5, Expires = TimeSpan.FromSeconds(5) }))
                {
                    await msg.AckAsync(new AckOpts { DoubleAck = true });
                }

                await WaitCurrentAsync(js, mesh, 20);

                // A follower away while the others write and compact their logs (every 16 entries here) comes
                // back and catches up (from the log or, once it is compacted away, by copying the leader's store
                // and consumers, StreamActor.Catchup.cs; which one is not asserted), into encrypted files too.
                var leader = (await js.GetStreamAsync("SECRETR3")).Info.Cluster!.Leader!;
                var follower = Enumerable.Range(0, 3).First(i => $"node-{i}" != leader && i != 0);
                await mesh.Nodes[follower].DisposeAsync(); // SIGKILL
                for (var i = 20; i < 60; i++)
                {
                    (await ClusterPublish.RetriedAsync(js, "classified.orders", $"{Secret}-{i}")).EnsureSuccess();
                }

                await mesh.RestartAsync(follower); // its encrypted files pass the start's key check and are read back
                await WaitCurrentAsync(js, mesh, 60);
            }

            var files = Directory.GetFiles(stores, "*", SearchOption.AllDirectories);
            Assert.Contains(files, f => f.Contains($"{Path.DirectorySeparatorChar}_raft{Path.DirectorySeparatorChar}", StringComparison.Ordinal) && f.EndsWith(".blk", StringComparison.Ordinal));
            foreach (var file in files)
            {
                var bytes = File.ReadAllBytes(file);
                foreach (var secret in new[] { "TOPSECRET", "classified" })
                {
                    Assert.True(bytes.AsSpan().IndexOf(Encoding.UTF8.GetBytes(secret)) < 0, $"\"{secret}\" in plaintext in {file}");
                }
            }
        }
        finally
        {
            Environment.SetEnvironmentVariable("COURIER_RAFT_COMPACT_EVERY", null);
            Directory.Delete(stores, recursive: true);
        }
    }

    private static async Task WaitCurrentAsync(NatsJSContext js, Mesh mesh, int messages)
    {
        StreamInfo? info = null;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    info = (await js.GetStreamAsync("SECRETR3")).Info;
                    return info.State.Messages == messages && info.Cluster?.Replicas is { Count: 2 } replicas && replicas.All(r => r.Current);
                },
                Timeout),
            $"the replicas never became current with {messages} messages: {System.Text.Json.JsonSerializer.Serialize(info?.Cluster)}\n{mesh.Diagnostics()}");
    }
}
