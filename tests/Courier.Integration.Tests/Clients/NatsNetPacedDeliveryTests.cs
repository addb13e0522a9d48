using System.Diagnostics;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// Paced delivery through NATS.Net, the same script against Courier and nats-server 2.9.10 (consumer.go
/// loopAndGatherMsgs): <c>replay_policy: original</c> replays what the stream held with the gaps it was stored
/// with, then delivers live messages; <c>rate_limit_bps</c> holds a push consumer to its rate past a burst of one
/// maximum payload (1 MiB), and a pull consumer with one is refused. The bounds are lower bounds on the pacing the
/// configuration asks for, never on speed.
/// </summary>
public abstract class NatsNetPacedDeliveryTests<TServer>(TServer server) : IClassFixture<TServer>
    where TServer : ServerFixture
{
    [Fact]
    public Task Replay_original_keeps_the_stored_gaps_and_then_delivers_live_messages() =>
        NatsNetClient.WithJetStreamAsync(server, async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            var gap = TimeSpan.FromMilliseconds(400);
            for (var i = 1; i <= 4; i++)
            {
                (await js.PublishAsync($"{p}.x", $"m{i}", cancellationToken: ct)).EnsureSuccess();
                if (i < 4)
                {
                    await Task.Delay(gap, ct);
                }
            }

            var inbox = $"in.{p}";
            var arrivals = new List<(string? Data, long At)>();
            var clock = Stopwatch.StartNew();
            await using var sub = await nats.SubscribeCoreAsync<string>(inbox, cancellationToken: ct);
            await nats.PingAsync(ct);
            await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("replayer") { DeliverSubject = inbox, AckPolicy = ConsumerConfigAckPolicy.None, ReplayPolicy = ConsumerConfigReplayPolicy.Original }, ct);
            await foreach (var msg in sub.Msgs.ReadAllAsync(ct))
            {
                arrivals.Add((msg.Data, clock.ElapsedMilliseconds));
                if (arrivals.Count == 4)
                {
                    break;
                }
            }

            Assert.Equal(["m1", "m2", "m3", "m4"], arrivals.Select(a => a.Data));
            for (var i = 1; i < 4; i++)
            {
                // Each stored gap (at least 400 ms) is kept, give or take the clocks' grain.
                Assert.True(arrivals[i].At - arrivals[i - 1].At >= gap.TotalMilliseconds * 0.75, $"gap {i}: {string.Join(", ", arrivals.Select(a => a.At))} ms");
            }

            // The replay is over: a live message comes through too.
            (await js.PublishAsync($"{p}.x", "live", cancellationToken: ct)).EnsureSuccess();
            await foreach (var msg in sub.Msgs.ReadAllAsync(ct))
            {
                Assert.Equal("live", msg.Data);
                break;
            }
        });

    [Fact]
    public Task Rate_limit_holds_a_push_consumer_to_its_rate_past_the_burst_and_is_refused_on_a_pull_consumer() =>
        NatsNetClient.WithJetStreamAsync(server, async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            var payload = new byte[64 * 1024];
            const int Count = 24; // 1.5 MiB: half a MiB past the burst
            for (var i = 0; i < Count; i++)
            {
                (await js.PublishAsync($"{p}.big", payload, cancellationToken: ct)).EnsureSuccess();
            }

            var refused = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
                await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("puller") { AckPolicy = ConsumerConfigAckPolicy.Explicit, RateLimitBps = 1_000_000 }, ct));
            Assert.Equal((400, 10086, "consumer in pull mode can not have rate limit set"), (refused.Error.Code, refused.Error.ErrCode, refused.Error.Description));

            const long BytesPerSecond = 256 * 1024;
            var inbox = $"in.{p}";
            await using var sub = await nats.SubscribeCoreAsync<byte[]>(inbox, cancellationToken: ct);
            await nats.PingAsync(ct);
            var clock = Stopwatch.StartNew();
            var info = await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("limited") { DeliverSubject = inbox, AckPolicy = ConsumerConfigAckPolicy.None, RateLimitBps = BytesPerSecond * 8 }, ct);
            Assert.Equal(BytesPerSecond * 8, info.Info.Config.RateLimitBps);
            var received = 0;
            await foreach (var msg in sub.Msgs.ReadAllAsync(ct))
            {
                Assert.Equal(payload.Length, msg.Data!.Length);
                if (++received == Count)
                {
                    break;
                }
            }

            // Half a MiB past the burst at a quarter of a MiB a second: two seconds at least (1.5 s allows the grain).
            Assert.True(clock.Elapsed >= TimeSpan.FromSeconds(1.5), $"all {Count} in {clock.ElapsedMilliseconds} ms");
        });
}

[Trait("server", "nats-server")]
public sealed class NatsNetPacedDeliveryTests_NatsServer(NatsServerFixture server) : NatsNetPacedDeliveryTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsNetPacedDeliveryTests_Courier(CourierFixture server) : NatsNetPacedDeliveryTests<CourierFixture>(server);
