using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Reliability;

/// <summary>
/// Preallocated block files through a real client and a real kill -9: a file stream that half fills its
/// 8 MiB block gets its next block file prepared ahead (spare.tmp, zeros, synced) and appends into it;
/// after the process is killed the zero tail of that block is unwritten space, not damage: every
/// acknowledged message comes back, none is reported lost, and the block is cut back to its records.
/// Courier only: it looks at Courier's FileStore files.
/// </summary>
[Trait("server", "courier")]
public sealed class PreallocatedBlockTests_Courier(CourierFixture server) : IClassFixture<CourierFixture>
{
    private const long BlockSize = 8L * 1024 * 1024; // the FileStore's default block
    private const int PayloadSize = 100_000;         // about 84 to a block

    [Fact]
    public async Task Acknowledged_messages_in_a_preallocated_block_survive_kill_9_and_nothing_is_reported_lost()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-prealloc-").FullName;
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout * 4);
        var total = 0;
        try
        {
            await using (var first = await server.StartServerAsync(null, "-js", "-sd", storeDir))
            {
                await using var nats = await NatsNetClient.ConnectAsync(first.Url);
                var js = new NatsJSContext(nats);
                await js.CreateStreamAsync(new StreamConfig("PRE", ["pre.>"]) { Storage = StreamConfigStorage.File }, cts.Token);
                // From half of a block on, the next block file is prepared in the background; the rollover
                // after it is ready appends into it. Publish until the write block is such a file.
                var published = 0;
                while (published < 250 && !(BlockFiles(storeDir).Length >= 2 && new FileInfo(BlockFiles(storeDir)[^1]).Length == BlockSize))
                {
                    published++;
                    var ack = await js.PublishAsync($"pre.{published}", Payload(published), cancellationToken: cts.Token);
                    ack.EnsureSuccess();
                    Assert.Equal((ulong)published, ack.Seq);
                }

                Assert.True(new FileInfo(BlockFiles(storeDir)[^1]).Length == BlockSize, $"no preallocated block after {published} messages: " + first.Diagnostics());
                for (var i = 0; i < 2; i++)
                {
                    published++;
                    (await js.PublishAsync($"pre.{published}", Payload(published), cancellationToken: cts.Token)).EnsureSuccess();
                }

                total = published;
            } // kill -9: the write block keeps its zero tail

            await using var restarted = await server.StartServerAsync(null, "-js", "-sd", storeDir);
            await using (var nats = await NatsNetClient.ConnectAsync(restarted.Url))
            {
                var js = new NatsJSContext(nats);
                var stream = await js.GetStreamAsync("PRE", cancellationToken: cts.Token);
                var state = stream.Info.State;
                Assert.Null(state.Lost);
                Assert.Equal(total, state.Messages);
                Assert.Equal((ulong)total, state.LastSeq);
                for (var i = 1; i <= total; i++)
                {
                    var got = await stream.GetAsync(new StreamMsgGetRequest { Seq = (ulong)i }, cts.Token);
                    Assert.True(Payload(i).AsSpan().SequenceEqual(got.Message.Data.Span), $"message {i} differs");
                }

                Assert.True(new FileInfo(BlockFiles(storeDir)[^1]).Length < BlockSize); // cut back to its records
                var next = await js.PublishAsync("pre.next", Payload(total + 1), cancellationToken: cts.Token);
                next.EnsureSuccess();
                Assert.Equal((ulong)total + 1, next.Seq);
            }

            Assert.DoesNotContain("store damage", restarted.Log.All(), StringComparison.Ordinal); // what the zero tail would log if it were taken for damage
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    private static byte[] Payload(int i)
    {
        var bytes = new byte[PayloadSize];
        new Random(i).NextBytes(bytes);
        return bytes;
    }

    private static string[] BlockFiles(string storeDir) =>
        [.. Directory.GetFiles(storeDir, "*.blk", SearchOption.AllDirectories).Order(StringComparer.Ordinal)];
}
