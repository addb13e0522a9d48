using System.Diagnostics;
using System.Text;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Reliability;

/// <summary>
/// Lost data reported as nats-server reports it: a message whose record is damaged on disk is listed
/// in STREAM.INFO's <c>state.lost</c> (nats-server's LostStreamData, read here by NATS.Net's own model),
/// and Courier's log names the stream. Courier only: the test damages a record of Courier's FileStore
/// block format on disk; nats-server 2.9.10 keeps another file layout (its own msgs/N.blk records and
/// index), so the same bytes cannot be flipped in both, and the side-by-side corruption campaign against
/// nats-server is still to come (README, Reliability).
/// </summary>
[Trait("server", "courier")]
public sealed class LostDataTests_Courier(CourierFixture server) : IClassFixture<CourierFixture>
{
    private const int Messages = 20;
    private const int Damaged = 10; // the sequence whose payload is flipped on disk
    private static readonly TimeSpan LogWait = TimeSpan.FromSeconds(20); // log lines arrive asynchronously

    [Fact]
    public async Task A_message_damaged_in_a_block_file_is_listed_in_stream_info_state_lost_after_a_restart_and_the_log_names_the_stream()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-lost-").FullName;
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout * 2);
        try
        {
            await using (var first = await server.StartServerAsync(null, "-js", "-sd", storeDir))
            {
                await using var nats = await NatsNetClient.ConnectAsync(first.Url);
                var js = new NatsJSContext(nats);
                await js.CreateStreamAsync(new StreamConfig("LOST", ["lost.>"]) { Storage = StreamConfigStorage.File }, cts.Token);
                for (var i = 1; i <= Messages; i++)
                {
                    var ack = await js.PublishAsync($"lost.{i}", Payload(i), cancellationToken: cts.Token);
                    ack.EnsureSuccess();
                    Assert.Equal((ulong)i, ack.Seq);
                }
            } // kill -9: every message was acknowledged, so it is on disk

            FlipOneByteOfPayload(storeDir, Damaged);

            await using var restarted = await server.StartServerAsync(null, "-js", "-sd", storeDir);
            await using (var nats = await NatsNetClient.ConnectAsync(restarted.Url))
            {
                var js = new NatsJSContext(nats);
                var stream = await js.GetStreamAsync("LOST", cancellationToken: cts.Token);

                // Every intact message is served as written; the damaged one is not served at all.
                for (var i = 1; i <= Messages; i++)
                {
                    if (i == Damaged)
                    {
                        var e = await Assert.ThrowsAsync<NatsJSApiException>(() => stream.GetAsync(new StreamMsgGetRequest { Seq = (ulong)i }, cts.Token).AsTask());
                        Assert.Equal(404, e.Error.Code);
                        continue;
                    }

                    var got = await stream.GetAsync(new StreamMsgGetRequest { Seq = (ulong)i }, cts.Token);
                    Assert.Equal(Payload(i), got.Message.Data.ToArray());
                }

                await stream.RefreshAsync(cts.Token);
                var state = stream.Info.State;
                Assert.NotNull(state.Lost);
                Assert.Equal([(long)Damaged], state.Lost.Msgs);
                Assert.True(state.Lost.Bytes >= Payload(Damaged).Length, $"lost bytes {state.Lost.Bytes}");
                Assert.Equal(Messages - 1, state.Messages);
                Assert.Equal(1UL, state.FirstSeq);
                Assert.Equal((ulong)Messages, state.LastSeq); // no renumbering: the sequence stays taken
            }

            var clock = Stopwatch.StartNew();
            while (!restarted.Log.All().Contains("JetStream stream 'LOST' lost 1 message(s)", StringComparison.Ordinal) && clock.Elapsed < LogWait)
            {
                await Task.Delay(100, cts.Token);
            }

            Assert.True(restarted.Log.All().Contains("JetStream stream 'LOST' lost 1 message(s)", StringComparison.Ordinal), restarted.Diagnostics());
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    internal static byte[] Payload(int i) => Encoding.ASCII.GetBytes($"lost-payload-{i:D3}-{new string('x', 40)}");

    // As the corruption campaign does on real files: one bit of one record's payload, found by its bytes.
    internal static void FlipOneByteOfPayload(string storeDir, int seq)
    {
        var marker = Payload(seq);
        foreach (var file in Directory.GetFiles(storeDir, "*.blk", SearchOption.AllDirectories))
        {
            var bytes = File.ReadAllBytes(file);
            var at = bytes.AsSpan().IndexOf(marker);
            if (at >= 0)
            {
                bytes[at + marker.Length - 5] ^= 0x01; // inside the x's: the record's checksum no longer matches
                File.WriteAllBytes(file, bytes);
                return;
            }
        }

        Assert.Fail($"no block file under {storeDir} holds message {seq}");
    }
}
