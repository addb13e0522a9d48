using System.Globalization;
using System.Text;
using System.Text.Json;
using Courier.Actors.Tests.Server;
using Xunit;
using static Courier.Actors.Tests.JetStream.JetStreamWire;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// A stream's capture subscription is served by calls on each publisher's thread (IDirectSubscriber),
/// not MSG frames through the API client's pipe: several publishers at once still get every message
/// stored once, each publisher's in its own order, and a PubAck naming the message it stored.
/// </summary>
public sealed class DirectCaptureTests : JetStreamTestKit
{
    private const int Publishers = 4;
    private const int PerPublisher = 400;
    private const int Batch = 50; // PUBs per socket write: a publisher's read batch holds several

    [Theory]
    [InlineData("file")]
    [InlineData("memory")]
    public async Task Concurrent_publishers_get_every_message_stored_once_in_each_publishers_order(string storage)
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var admin = await ConnectRequesterAsync(harness);
        await RequestAsync(admin, "$JS.API.STREAM.CREATE.CC", $$"""{"name":"CC","subjects":["cc.>"],"storage":"{{storage}}"}""");

        var clients = new LineClient[Publishers];
        for (var p = 0; p < Publishers; p++)
        {
            clients[p] = await harness.ConnectAsync();
            await clients[p].SendAsync($"SUB _INBOX.p{p}.* 1\r\nPING\r\n");
            await clients[p].ExpectLineAsync("PONG");
        }

        try
        {
            // Each publisher: its sequences in the order of its PubAcks, which come in the order of its messages.
            var acked = await Task.WhenAll(Enumerable.Range(0, Publishers).Select(p => PublishAsync(clients[p], p)));

            foreach (var seqs in acked)
            {
                Assert.Equal(PerPublisher, seqs.Count);
                for (var n = 1; n < seqs.Count; n++)
                {
                    Assert.True(seqs[n] > seqs[n - 1], $"message {n} stored at {seqs[n]}, before its predecessor at {seqs[n - 1]}");
                }
            }

            var all = acked.SelectMany(s => s).Order().ToList();
            Assert.Equal(Enumerable.Range(1, Publishers * PerPublisher).Select(i => (ulong)i), all);
            var info = await RequestAsync(admin, "$JS.API.STREAM.INFO.CC", "");
            Assert.Contains($"\"messages\":{Publishers * PerPublisher},", info, StringComparison.Ordinal);

            // The stored message at each acked sequence is the one acked there (a sample of each publisher's).
            for (var p = 0; p < Publishers; p++)
            {
                for (var n = 0; n < PerPublisher; n += 37)
                {
                    var get = await RequestAsync(admin, "$JS.API.STREAM.MSG.GET.CC", $$"""{"seq":{{acked[p][n]}}}""");
                    using var doc = JsonDocument.Parse(get);
                    var message = doc.RootElement.GetProperty("message");
                    Assert.Equal($"cc.p{p}", message.GetProperty("subject").GetString());
                    Assert.Equal($"p{p}-{n}", Encoding.UTF8.GetString(Convert.FromBase64String(message.GetProperty("data").GetString()!)));
                }
            }
        }
        finally
        {
            foreach (var c in clients)
            {
                c.Dispose();
            }
        }
    }

    private static async Task<List<ulong>> PublishAsync(LineClient c, int p)
    {
        var seqs = new List<ulong>(PerPublisher);
        for (var start = 0; start < PerPublisher; start += Batch)
        {
            var batch = new StringBuilder();
            for (var n = start; n < start + Batch; n++)
            {
                var payload = $"p{p}-{n}";
                batch.Append(CultureInfo.InvariantCulture, $"PUB cc.p{p} _INBOX.p{p}.{n} {payload.Length}\r\n{payload}\r\n");
            }

            await c.SendAsync(batch.ToString());
            for (var n = start; n < start + Batch; n++)
            {
                var line = await c.ReadLineAsync() ?? throw new Xunit.Sdk.XunitException("connection closed");
                Assert.StartsWith($"MSG _INBOX.p{p}.{n} 1 ", line, StringComparison.Ordinal);
                using var ack = JsonDocument.Parse(await c.ReadLineAsync() ?? "");
                seqs.Add(ack.RootElement.GetProperty("seq").GetUInt64());
            }
        }

        return seqs;
    }

    [Fact]
    public async Task Publishing_on_while_the_stream_is_deleted_leaves_the_server_serving_and_a_stream_made_again_starts_empty()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var admin = await ConnectRequesterAsync(harness);
        await RequestAsync(admin, "$JS.API.STREAM.CREATE.DL", """{"name":"DL","subjects":["dl.>"],"storage":"file"}""");

        using var publisher = await harness.ConnectAsync();
        using var stop = new CancellationTokenSource();
        var publishing = Task.Run(async () =>
        {
            var burst = string.Concat(Enumerable.Repeat("PUB dl.x 3\r\nabc\r\n", 100));
            while (!stop.IsCancellationRequested)
            {
                await publisher.SendAsync(burst);
                await Task.Delay(1);
            }
        });

        await Task.Delay(100);
        Assert.Contains("\"success\":true", await RequestAsync(admin, "$JS.API.STREAM.DELETE.DL", ""), StringComparison.Ordinal);
        await Task.Delay(200);
        await stop.CancelAsync();
        await publishing;

        // Gone: no stream answers for it, and a new one on the same subjects starts empty and stores again.
        Assert.Contains("\"code\":404", await RequestAsync(admin, "$JS.API.STREAM.INFO.DL", ""), StringComparison.Ordinal);
        await RequestAsync(admin, "$JS.API.STREAM.CREATE.DL", """{"name":"DL","subjects":["dl.>"],"storage":"file"}""");
        Assert.Contains("\"seq\":1}", await RequestAsync(admin, "dl.y", "one"), StringComparison.Ordinal);
        await publisher.SendAsync("PING\r\n");
        await publisher.ExpectLineAsync("PONG");
    }
}
