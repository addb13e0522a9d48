using System.Text;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Cluster.Tests;

/// <summary>
/// Encryption at rest on three Courier nodes (<c>jetstream { key }</c>): a stream with num_replicas 3 keeps
/// its messages in every node's Raft log (<c>jetstream/_raft/...</c>, a FileStore) and stream store, and
/// none of those files holds a payload or subject in plaintext.
/// </summary>
public sealed class EncryptedReplicatedStreamTests
{
    private const string Secret = "TOPSECRET-r3-5d1e";
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task A_replicated_stream_on_encrypted_nodes_leaves_no_plaintext_in_raft_logs_or_stores()
    {
        var stores = Directory.CreateTempSubdirectory("courier-r3enc-").FullName;
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

                StreamInfo? info = null;
                Assert.True(
                    await Poll.UntilAsync(
                        async () =>
                        {
                            info = (await js.GetStreamAsync("SECRETR3")).Info;
                            return info.State.Messages == 20 && info.Cluster?.Replicas is { Count: 2 } replicas && replicas.All(r => r.Current);
                        },
                        Timeout),
                    $"the replicas never became current\n{mesh.Diagnostics()}");
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
            Directory.Delete(stores, recursive: true);
        }
    }
}
