using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Features;

/// <summary>
/// CONSUMER.RESET (nats-server 2.14's processResetReq / resetStartingSeq), which nats-server 2.9.10 lacks, so
/// Courier only: through NATS.Net's ResetConsumerAsync, and raw transcripts for the deliver-policy refusals.
/// </summary>
[Trait("server", "courier")]
public sealed class ConsumerResetTests(CourierFixture fixture) : IClassFixture<CourierFixture>
{
    [Fact]
    public Task A_reset_goes_back_to_the_ack_floor_and_delivers_the_unacknowledged_again_from_consumer_sequence_one() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (js, p, ct) =>
        {
            var stream = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(stream, [p + ".>"]), ct);
            for (var i = 1; i <= 5; i++)
            {
                await js.PublishAsync($"{p}.x", i, cancellationToken: ct);
            }

            var consumer = await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
            var first = true;
            await foreach (var msg in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 3, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
            {
                if (first)
                {
                    await msg.AckAsync(new AckOpts { DoubleAck = true }, ct); // ack floor 1; 2 and 3 stay pending
                    first = false;
                }
            }

            var reset = await js.ResetConsumerAsync(stream, "C", cancellationToken: ct);
            Assert.Equal(2UL, reset.ResetSeq);
            await consumer.RefreshAsync(ct);
            var info = consumer.Info;
            Assert.Equal((0L, 1UL, 0UL, 1UL), (info.NumAckPending, info.Delivered.StreamSeq, info.Delivered.ConsumerSeq, info.AckFloor.StreamSeq));
            Assert.Equal(4UL, info.NumPending);

            var again = new List<(int Value, ulong StreamSeq, ulong ConsumerSeq)>();
            await foreach (var msg in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 4, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
            {
                again.Add((msg.Data, msg.Metadata!.Value.Sequence.Stream, msg.Metadata!.Value.Sequence.Consumer));
                await msg.AckAsync(cancellationToken: ct);
            }

            Assert.Equal([(2, 2UL, 1UL), (3, 3UL, 2UL), (4, 4UL, 3UL), (5, 5UL, 4UL)], again);
        });

    [Fact]
    public Task A_durable_reset_to_a_sequence_is_kept_across_a_restart() =>
        NatsNetClient.AcrossRestartAsync(
            fixture,
            async (nats, js, p, ct) =>
            {
                var stream = NatsNetClient.NameFor(p);
                await js.CreateStreamAsync(new StreamConfig(stream, [p + ".>"]), ct);
                for (var i = 1; i <= 5; i++)
                {
                    await js.PublishAsync($"{p}.x", i, cancellationToken: ct);
                }

                var consumer = await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig("D") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
                await foreach (var msg in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 4, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
                {
                    await msg.AckAsync(new AckOpts { DoubleAck = true }, ct);
                }

                Assert.Equal(2UL, (await js.ResetConsumerAsync(stream, "D", 2, ct)).ResetSeq);
            },
            async (nats, js, p, ct) =>
            {
                var consumer = await js.GetConsumerAsync(NatsNetClient.NameFor(p), "D", ct);
                Assert.Equal((1UL, 1UL), (consumer.Info.AckFloor.StreamSeq, consumer.Info.Delivered.StreamSeq));
                var values = new List<int>();
                await foreach (var msg in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 4, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
                {
                    values.Add(msg.Data);
                }

                Assert.Equal([2, 3, 4, 5], values);
            });

    [Fact]
    public async Task A_reset_to_a_sequence_the_deliver_policy_does_not_allow_is_refused_with_nats_servers_error()
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await JetStreamApiWire.ConnectAsync(server);
            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            for (var i = 0; i < 5; i++)
            {
                await c.SendAsync("PUB s.a 1\r\nx\r\n");
            }

            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.NEW", """{"stream_name":"S","config":{"name":"NEW","ack_policy":"explicit","deliver_policy":"new"}}""")) { }
            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.FROM3", """{"stream_name":"S","config":{"name":"FROM3","ack_policy":"explicit","deliver_policy":"by_start_sequence","opt_start_seq":3}}""")) { }

            using (var refused = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.RESET.S.NEW", """{"seq":2}"""))
            {
                Wire.JetStreamStrictApiTests.AssertError(refused, "io.nats.jetstream.api.v1.consumer_reset_response", 400, 10204, "invalid reset: not allowed");
            }

            using (var floor = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.RESET.S.NEW", ""))
            {
                // No sequence: back to the ack floor, whatever the policy (the stream's last, 5, for a new consumer).
                Assert.Equal("io.nats.jetstream.api.v1.consumer_reset_response", floor.RootElement.GetProperty("type").GetString());
                Assert.Equal(6UL, floor.RootElement.GetProperty("reset_seq").GetUInt64());
                Assert.Equal("NEW", floor.RootElement.GetProperty("name").GetString());
            }

            using (var below = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.RESET.S.FROM3", """{"seq":2}"""))
            {
                Wire.JetStreamStrictApiTests.AssertError(below, "io.nats.jetstream.api.v1.consumer_reset_response", 400, 10204, "invalid reset: below start seq");
            }

            using (var allowed = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.RESET.S.FROM3", """{"seq":4}"""))
            {
                Assert.Equal(4UL, allowed.RootElement.GetProperty("reset_seq").GetUInt64());
                Assert.Equal(3UL, allowed.RootElement.GetProperty("ack_floor").GetProperty("stream_seq").GetUInt64());
                Assert.Equal(2UL, allowed.RootElement.GetProperty("num_pending").GetUInt64());
            }

            using (var missing = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.RESET.S.NONE", ""))
            {
                Wire.JetStreamStrictApiTests.AssertError(missing, "io.nats.jetstream.api.v1.consumer_reset_response", 404, 10014, "consumer not found");
            }
        });
    }
}
