using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Reliability;

/// <summary>
/// Lost data in /jsz (issue 14): after a block file is damaged while the server is stopped, the
/// stream's detail in <c>/jsz?streams=true</c> carries <c>state.lost</c> (nats-server's LostStreamData:
/// <c>msgs</c>, <c>bytes</c>) as STREAM.INFO does, and the totals count only the intact messages.
/// Courier only, for the reason <see cref="LostDataTests_Courier"/> gives.
/// </summary>
[Trait("server", "courier")]
public sealed class LostDataJszTests_Courier(CourierFixture server) : IClassFixture<CourierFixture>
{
    private const int Messages = 12;
    private const int Damaged = 5; // the sequence whose payload is flipped on disk

    [Fact]
    public async Task A_message_damaged_in_a_block_file_is_listed_in_the_stream_detail_state_lost_of_jsz_after_a_restart()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-lost-jsz-").FullName;
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout * 2);
        try
        {
            await using (var first = await server.StartServerAsync(null, "-js", "-sd", storeDir))
            {
                await using var nats = await NatsNetClient.ConnectAsync(first.Url);
                var js = new NatsJSContext(nats);
                await js.CreateStreamAsync(new StreamConfig("LOSTJSZ", ["lostjsz.>"]) { Storage = StreamConfigStorage.File }, cts.Token);
                await js.CreateStreamAsync(new StreamConfig("INTACT", ["intact.>"]) { Storage = StreamConfigStorage.File }, cts.Token);
                for (var i = 1; i <= Messages; i++)
                {
                    (await js.PublishAsync($"lostjsz.{i}", LostDataTests_Courier.Payload(i), cancellationToken: cts.Token)).EnsureSuccess();
                }

                (await js.PublishAsync("intact.1", "whole", cancellationToken: cts.Token)).EnsureSuccess();
            } // kill -9: every message was acknowledged, so it is on disk

            LostDataTests_Courier.FlipOneByteOfPayload(storeDir, Damaged);

            await using var restarted = await server.StartServerAsync(null, "-js", "-sd", storeDir);
            using var monitor = new MonitorClient(restarted);
            var jsz = await monitor.GetJsonAsync("/jsz?streams=true");
            Assert.Equal((ulong)Messages, jsz.GetProperty("messages").GetUInt64()); // 11 intact of LOSTJSZ, 1 of INTACT
            var account = Assert.Single(jsz.GetProperty("account_details").EnumerateArray());
            Assert.Equal("$G", account.GetProperty("name").GetString());
            var streams = account.GetProperty("stream_detail").EnumerateArray().ToDictionary(s => s.GetProperty("name").GetString()!);

            var state = streams["LOSTJSZ"].GetProperty("state");
            Assert.True(state.TryGetProperty("lost", out var lost), state.ToString());
            Assert.Equal([(ulong)Damaged], lost.GetProperty("msgs").EnumerateArray().Select(m => m.GetUInt64()));
            Assert.True(lost.GetProperty("bytes").GetUInt64() >= (ulong)LostDataTests_Courier.Payload(Damaged).Length, lost.ToString());
            Assert.Equal((ulong)(Messages - 1), state.GetProperty("messages").GetUInt64());
            Assert.Equal((ulong)Messages, state.GetProperty("last_seq").GetUInt64()); // no renumbering

            // The stream that lost nothing says nothing of loss (omitempty, as nats-server).
            Assert.False(streams["INTACT"].GetProperty("state").TryGetProperty("lost", out _), streams["INTACT"].ToString());
            Assert.Equal(JsonValueKind.Object, streams["INTACT"].GetProperty("state").ValueKind);
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }
}
