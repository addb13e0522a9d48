using System.Globalization;
using System.Text;
using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Cluster.Tests;

/// <summary>
/// Distributed counters (nats-server 2.12's <c>allow_msg_counter</c>, which 2.9.10 lacks, so Courier only) on a
/// stream with three replicas: increments published concurrently through one node each get a distinct total, the
/// last is their sum, and the next leader holds the same total and counts on from it (every replica computes
/// each total as it applies the log, in log order).
/// </summary>
public sealed class ReplicatedCounterTests(CourierReplicatedMesh fixture) : IClassFixture<CourierReplicatedMesh>
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Concurrent_increments_get_distinct_totals_and_the_next_leader_counts_on_from_their_sum()
    {
        await using var client = await fixture.Mesh.ConnectAsync(2, "counter-r3");
        JsonDocument? created = null;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    created?.Dispose();
                    created = await ApiAsync(client, "STREAM.CREATE.RC", """{"name":"RC","subjects":["rc.>"],"num_replicas":3,"allow_msg_counter":true}""");
                    return !created.RootElement.TryGetProperty("error", out var e) || (e.GetProperty("code").GetInt32() != 503 && e.GetProperty("err_code").GetInt32() != 10005);
                },
                Timeout),
            "stream RC was never created");
        Assert.False(created!.RootElement.TryGetProperty("error", out _), created.RootElement.ToString());
        created.Dispose();

        // The first increment waits for the new group's leader to take publishes.
        JsonDocument? first = null;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        first = await IncrementAsync(client, "rc.hits", "1000");
                        return true;
                    }
                    catch (Exception e) when (e is NatsNoRespondersException or NatsNoReplyException or TimeoutException)
                    {
                        return false;
                    }
                },
                Timeout),
            $"no PubAck for the first increment\n{fixture.Mesh.Diagnostics()}");
        Assert.Equal("1000", first!.RootElement.GetProperty("val").GetString());
        first.Dispose();

        var acks = await Task.WhenAll(Enumerable.Range(1, 40).Select(async i =>
        {
            using var ack = await IncrementAsync(client, "rc.hits", i.ToString(CultureInfo.InvariantCulture));
            Assert.False(ack.RootElement.TryGetProperty("error", out _), ack.RootElement.ToString());
            return (Seq: ack.RootElement.GetProperty("seq").GetUInt64(), Total: long.Parse(ack.RootElement.GetProperty("val").GetString()!, CultureInfo.InvariantCulture));
        }));

        // Totals rise with the sequence (each increment adds to the one before it in the log) and end at the sum.
        var ordered = acks.OrderBy(a => a.Seq).ToArray();
        Assert.Equal(Enumerable.Range(2, 40).Select(s => (ulong)s), ordered.Select(a => a.Seq));
        Assert.True(ordered.Zip(ordered.Skip(1)).All(pair => pair.First.Total < pair.Second.Total));
        Assert.Equal(1000 + (40 * 41 / 2), ordered[^1].Total);

        using (var info = await ApiAsync(client, "STREAM.INFO.RC", ""))
        {
            var leader = info.RootElement.GetProperty("cluster").GetProperty("leader").GetString();
            using (await ApiAsync(client, "STREAM.LEADER.STEPDOWN.RC", ""))
            {
            }

            Assert.True(
                await Poll.UntilAsync(
                    async () =>
                    {
                        using var now = await ApiAsync(client, "STREAM.INFO.RC", "");
                        return now.RootElement.TryGetProperty("cluster", out var cluster) && cluster.TryGetProperty("leader", out var l) && l.GetString() is { } s && s != leader;
                    },
                    Timeout),
                $"RC's leader {leader} never stepped down");
        }

        using (var get = await ApiAsync(client, "STREAM.MSG.GET.RC", """{"last_by_subj":"rc.hits"}"""))
        {
            Assert.Equal("""{"val":"1820"}""", Encoding.UTF8.GetString(get.RootElement.GetProperty("message").GetProperty("data").GetBytesFromBase64()));
        }

        using var next = await IncrementAsync(client, "rc.hits", "-1820");
        Assert.Equal((42UL, "0"), (next.RootElement.GetProperty("seq").GetUInt64(), next.RootElement.GetProperty("val").GetString()));
    }

    private static async Task<JsonDocument> IncrementAsync(NatsConnection nats, string subject, string increment)
    {
        var reply = await nats.RequestAsync<byte[], byte[]>(subject, [], new NatsHeaders { ["Nats-Incr"] = increment });
        return JsonDocument.Parse(reply.Data ?? []);
    }

    private static async Task<JsonDocument> ApiAsync(NatsConnection nats, string api, string body)
    {
        var reply = await nats.RequestAsync<byte[], byte[]>("$JS.API." + api, Encoding.UTF8.GetBytes(body));
        return JsonDocument.Parse(reply.Data ?? []);
    }
}
