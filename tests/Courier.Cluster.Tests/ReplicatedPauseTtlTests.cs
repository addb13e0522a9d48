using Courier.Cluster.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Cluster.Tests;

/// <summary>
/// Consumer pause and per-message TTLs on a stream with three replicas (nats-server 2.11 features 2.9.10 lacks,
/// so Courier only): a paused durable, and an updated one, stay so on the next stream leader (their definition
/// goes through the stream's log); messages the leader expired, and the delete markers it stored, are the same
/// on the next leader (removals and markers go through the log too).
/// </summary>
public sealed class ReplicatedPauseTtlTests(CourierReplicatedMesh fixture) : IClassFixture<CourierReplicatedMesh>
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task A_paused_and_updated_durable_consumer_keeps_both_on_the_next_stream_leader()
    {
        await using var client = await fixture.Mesh.ConnectAsync(0, "pause-r3");
        var js = new NatsJSContext(client);
        await CreateAsync(js, new StreamConfig("RP", ["rp.>"]) { NumReplicas = 3 });
        await ClusterPublish.RetriedAsync(js, "rp.x", "m1");
        await js.CreateOrUpdateConsumerAsync("RP", new ConsumerConfig("w") { AckPolicy = ConsumerConfigAckPolicy.Explicit, MaxAckPending = 100 });
        await js.CreateOrUpdateConsumerAsync("RP", new ConsumerConfig("w") { AckPolicy = ConsumerConfigAckPolicy.Explicit, MaxAckPending = 7 });
        var until = DateTimeOffset.UtcNow.AddHours(1);
        Assert.True((await js.PauseConsumerAsync("RP", "w", until)).IsPaused);

        var leader = (await js.GetStreamAsync("RP")).Info.Cluster!.Leader;
        await StepDownAsync(client, js, "RP", leader);

        ConsumerInfo? info = null;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        info = (await js.GetConsumerAsync("RP", "w")).Info;
                        return true;
                    }
                    catch (Exception e) when (e is NatsJSApiException or NatsException or TimeoutException)
                    {
                        return false;
                    }
                },
                Timeout),
            $"no consumer info from the new leader\n{fixture.Mesh.Diagnostics()}");
        Assert.True(info!.IsPaused);
        Assert.Equal(until.ToUnixTimeMilliseconds(), info.Config.PauseUntil?.ToUnixTimeMilliseconds());
        Assert.Equal(7, info.Config.MaxAckPending);

        Assert.True(await js.ResumeConsumerAsync("RP", "w"));
        var consumer = await js.GetConsumerAsync("RP", "w");
        var got = new List<string?>();
        await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 1, Expires = TimeSpan.FromSeconds(10) }))
        {
            got.Add(msg.Data);
        }

        Assert.Equal(["m1"], got);
    }

    [Fact]
    public async Task Expired_messages_and_delete_markers_are_the_same_on_the_next_stream_leader()
    {
        await using var client = await fixture.Mesh.ConnectAsync(1, "ttl-r3");
        var js = new NatsJSContext(client);
        await CreateAsync(js, new StreamConfig("RT", ["rt.>"]) { NumReplicas = 3, SubjectDeleteMarkerTTL = TimeSpan.FromSeconds(2) });
        await ClusterPublish.RetriedAsync(js, "rt.kept", "kept");                                         // 1
        (await js.PublishAsync("rt.gone", "gone", headers: new NatsHeaders { ["Nats-TTL"] = "1s" })).EnsureSuccess(); // 2, raised to 2s
        (await js.PublishAsync("rt.kept", "short", headers: new NatsHeaders { ["Nats-TTL"] = "2s" })).EnsureSuccess(); // 3

        // rt.gone's only message leaves a marker (4), rt.kept's short one does not (1 stays); then the marker expires.
        StreamState state = null!;
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    state = (await js.GetStreamAsync("RT")).Info.State;
                    return state.LastSeq >= 4 && state.Messages == 1;
                },
                Timeout),
            $"expected the marker stored and expired, and one message left: {state?.Messages} messages, last {state?.LastSeq}");

        var leader = (await js.GetStreamAsync("RT")).Info.Cluster!.Leader;
        await StepDownAsync(client, js, "RT", leader);
        var after = (await js.GetStreamAsync("RT")).Info.State;
        Assert.Equal((1L, 1UL, 4UL), (after.Messages, after.FirstSeq, after.LastSeq));
    }

    private static async Task CreateAsync(NatsJSContext js, StreamConfig config) =>
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        await js.CreateStreamAsync(config);
                        return true;
                    }
                    catch (NatsJSApiException e) when (e.Error.Code == 503 || e.Error.ErrCode == 10005)
                    {
                        return false;
                    }
                },
                Timeout),
            $"stream {config.Name} was never created");

    /// <summary>Asks the stream's leader to step down and waits until another member leads.</summary>
    private static async Task StepDownAsync(NatsConnection client, NatsJSContext js, string stream, string? leader)
    {
        await client.RequestAsync<string, string>($"$JS.API.STREAM.LEADER.STEPDOWN.{stream}", "");
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        return (await js.GetStreamAsync(stream)).Info.Cluster?.Leader is { } now && now != leader;
                    }
                    catch (Exception e) when (e is NatsJSApiException or NatsException or TimeoutException)
                    {
                        return false;
                    }
                },
                Timeout),
            $"{stream}'s leader {leader} never stepped down");
    }
}
