using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// A consumer created again with another configuration (NATS.Net's <c>CreateOrUpdateConsumerAsync</c>, no
/// action): nats-server 2.9.10's updateConfig applies what may change and refuses the rest with
/// checkNewConsumerConfig's reason (500/10012) or, for a deliver subject someone subscribes to, 400/10013.
/// </summary>
public abstract class NatsNetConsumerUpdateTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected NatsNetConsumerUpdateTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public Task An_update_changes_what_may_change_refuses_the_rest_and_survives_a_restart()
    {
        DateTimeOffset created = default;
        return NatsNetClient.AcrossRestartAsync(
            _server,
            async (nats, js, p, ct) =>
            {
                var name = NatsNetClient.NameFor(p);
                await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
                var first = await js.CreateOrUpdateConsumerAsync(name, Pull("first", maxAckPending: 10, TimeSpan.FromSeconds(30)), ct);
                created = first.Info.Created;

                var updated = await js.CreateOrUpdateConsumerAsync(name, Pull("second", maxAckPending: 2, TimeSpan.FromSeconds(5)), ct);
                AssertUpdated(updated.Info, created);
                AssertUpdated((await js.GetConsumerAsync(name, "worker", ct)).Info, created);

                // What checkNewConsumerConfig refuses, in its words; the consumer keeps its configuration.
                await AssertRefusedAsync(js, name, Pull("second", 2, TimeSpan.FromSeconds(5)) with { AckPolicy = ConsumerConfigAckPolicy.All }, (500, 10012, "ack policy can not be updated"), ct);
                await AssertRefusedAsync(js, name, Pull("second", 2, TimeSpan.FromSeconds(5)) with { DeliverPolicy = ConsumerConfigDeliverPolicy.New }, (500, 10012, "deliver policy can not be updated"), ct);
                await AssertRefusedAsync(js, name, Pull("second", 2, TimeSpan.FromSeconds(5)) with { ReplayPolicy = ConsumerConfigReplayPolicy.Original }, (500, 10012, "replay policy can not be updated"), ct);
                await AssertRefusedAsync(js, name, Pull("second", 2, TimeSpan.FromSeconds(5)) with { MaxWaiting = 7 }, (500, 10012, "max waiting can not be updated"), ct);
                // A pull consumer made push: its max_waiting (512 by default) goes to 0 first, and that is the reason given.
                await AssertRefusedAsync(js, name, Pull("second", 2, TimeSpan.FromSeconds(5)) with { DeliverSubject = $"in.{p}.x" }, (500, 10012, "max waiting can not be updated"), ct);
                AssertUpdated((await js.GetConsumerAsync(name, "worker", ct)).Info, created);

                // A push consumer's deliver subject moves while no one subscribes to it, not while someone does.
                var push = new ConsumerConfig("pusher") { AckPolicy = ConsumerConfigAckPolicy.Explicit, DeliverSubject = $"in.{p}.a" };
                await js.CreateOrUpdateConsumerAsync(name, push, ct);
                var moved = await js.CreateOrUpdateConsumerAsync(name, push with { DeliverSubject = $"in.{p}.b" }, ct);
                Assert.Equal($"in.{p}.b", moved.Info.Config.DeliverSubject);
                await using (var sub = await nats.SubscribeCoreAsync<string>($"in.{p}.b", cancellationToken: ct))
                {
                    await nats.PingAsync(ct);
                    await AssertRefusedAsync(js, name, push with { DeliverSubject = $"in.{p}.c" }, (400, 10013, "consumer name already in use"), ct);
                }

                // Made pull, it would wait for 512 requests by default: max_waiting is the reason again.
                await AssertRefusedAsync(js, name, push with { DeliverSubject = null }, (500, 10012, "max waiting can not be updated"), ct);
            },
            async (_, js, p, ct) =>
            {
                var name = NatsNetClient.NameFor(p);
                // nats-server 2.9.10 recovers created a fraction of a millisecond off (the meta file's, not the request's).
                var recovered = (await js.GetConsumerAsync(name, "worker", ct)).Info;
                AssertUpdated(recovered, recovered.Created);
                Assert.InRange(recovered.Created, created.AddSeconds(-1), created.AddSeconds(1));
                Assert.Equal($"in.{p}.b", (await js.GetConsumerAsync(name, "pusher", ct)).Info.Config.DeliverSubject);
            });
    }

    [Fact]
    public Task A_raised_max_ack_pending_lets_more_messages_out_at_once() =>
        NatsNetClient.WithJetStreamAsync(_server, async (js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            for (var i = 0; i < 5; i++)
            {
                (await js.PublishAsync($"{p}.n", i, cancellationToken: ct)).EnsureSuccess();
            }

            var consumer = await js.CreateOrUpdateConsumerAsync(name, Pull("held", maxAckPending: 1, TimeSpan.FromSeconds(30)), ct);
            Assert.Equal(1, await FetchCountAsync(consumer, ct)); // not acknowledged: the window is full

            consumer = await js.CreateOrUpdateConsumerAsync(name, Pull("held", maxAckPending: 3, TimeSpan.FromSeconds(30)), ct);
            Assert.Equal(2, await FetchCountAsync(consumer, ct));
            await consumer.RefreshAsync(ct);
            Assert.Equal(3, consumer.Info.NumAckPending);
        });

    [Fact]
    public Task A_shorter_ack_wait_applies_to_a_delivery_already_pending() =>
        NatsNetClient.WithJetStreamAsync(_server, async (js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            (await js.PublishAsync($"{p}.n", 1, cancellationToken: ct)).EnsureSuccess();
            var consumer = await js.CreateOrUpdateConsumerAsync(name, Pull("held", maxAckPending: 10, TimeSpan.FromSeconds(60)), ct);
            Assert.Equal(1, await FetchCountAsync(consumer, ct)); // not acknowledged, and 60 s to go

            // With 1 s, measured from its delivery (nats-server's checkPending), it goes again within the next fetch.
            consumer = await js.CreateOrUpdateConsumerAsync(name, Pull("held", maxAckPending: 10, TimeSpan.FromSeconds(1)), ct);
            var again = new List<(ulong, ulong)>();
            await foreach (var msg in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 1, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
            {
                again.Add((msg.Metadata!.Value.Sequence.Stream, msg.Metadata!.Value.NumDelivered));
            }

            Assert.Equal([(1UL, 2UL)], again);
        });

    private static ConsumerConfig Pull(string description, long maxAckPending, TimeSpan ackWait) => new("worker")
    {
        AckPolicy = ConsumerConfigAckPolicy.Explicit,
        Description = description,
        MaxAckPending = maxAckPending,
        AckWait = ackWait,
    };

    private static void AssertUpdated(ConsumerInfo info, DateTimeOffset created)
    {
        Assert.Equal(("second", 2L, TimeSpan.FromSeconds(5)), (info.Config.Description, info.Config.MaxAckPending, info.Config.AckWait));
        Assert.Equal(created, info.Created);
    }

    private static async Task AssertRefusedAsync(NatsJSContext js, string stream, ConsumerConfig config, (int, int, string) expected, CancellationToken ct)
    {
        var refused = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.CreateOrUpdateConsumerAsync(stream, config, ct));
        Assert.Equal(expected, (refused.Error.Code, refused.Error.ErrCode, refused.Error.Description));
    }

    private static async Task<int> FetchCountAsync(INatsJSConsumer consumer, CancellationToken ct)
    {
        var count = 0;
        await foreach (var unused in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 5, Expires = TimeSpan.FromSeconds(1) }, cancellationToken: ct))
        {
            count++;
        }

        return count;
    }
}

[Trait("server", "nats-server")]
public sealed class NatsNetConsumerUpdateTests_NatsServer(NatsServerFixture server) : NatsNetConsumerUpdateTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsNetConsumerUpdateTests_Courier(CourierFixture server) : NatsNetConsumerUpdateTests<CourierFixture>(server);
