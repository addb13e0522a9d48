using System.Text.Json.Nodes;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// The events a consumer's acks raise, through NATS.Net: the nak and terminated advisories, and <c>sample_freq</c>, the same script against Courier and nats-server 2.9.10
/// (consumer.go sampleAck): at 100% every explicit ack is published as an
/// <c>io.nats.jetstream.metric.v1.consumer_ack</c> on <c>$JS.EVENT.METRIC.CONSUMER.ACK.&lt;stream&gt;.&lt;consumer&gt;</c>,
/// with the sequences, the delivery count and the time from delivery to ack; a value strconv.Atoi cannot read is
/// refused with nats-server's 10095 and its words.
/// </summary>
public abstract class NatsNetAckEventsTests<TServer>(TServer server) : IClassFixture<TServer>
    where TServer : ServerFixture
{
    [Fact]
    public Task Every_explicit_ack_is_published_as_a_metric_at_a_sample_frequency_of_100_percent() =>
        NatsNetClient.WithJetStreamAsync(server, async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            for (var i = 1; i <= 3; i++)
            {
                (await js.PublishAsync($"{p}.x", $"m{i}", cancellationToken: ct)).EnsureSuccess();
            }

            await using var metrics = await nats.SubscribeCoreAsync<string>($"$JS.EVENT.METRIC.CONSUMER.ACK.{name}.sampled", cancellationToken: ct);
            await nats.PingAsync(ct);
            var consumer = await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("sampled") { AckPolicy = ConsumerConfigAckPolicy.Explicit, SampleFreq = "100%" }, ct);
            Assert.Equal("100%", consumer.Info.Config.SampleFreq);
            var fetched = new List<INatsJSMsg<string>>();
            await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 3, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
            {
                fetched.Add(msg);
            }

            Assert.Equal(3, fetched.Count);
            await Task.Delay(200, ct); // the ack time counts from the delivery
            foreach (var msg in fetched)
            {
                await msg.AckAsync(new AckOpts { DoubleAck = true }, ct);
            }

            var seen = new List<JsonNode>();
            await foreach (var metric in metrics.Msgs.ReadAllAsync(ct))
            {
                seen.Add(JsonNode.Parse(metric.Data!)!);
                if (seen.Count == 3)
                {
                    break;
                }
            }

            for (var i = 0; i < 3; i++)
            {
                var m = seen[i];
                Assert.Equal("io.nats.jetstream.metric.v1.consumer_ack", (string?)m["type"]);
                Assert.Equal(name, (string?)m["stream"]);
                Assert.Equal("sampled", (string?)m["consumer"]);
                Assert.Equal((ulong)(i + 1), (ulong?)m["stream_seq"]);
                Assert.Equal((ulong)(i + 1), (ulong?)m["consumer_seq"]);
                Assert.Equal(1, (int?)m["deliveries"]);
                var ackTime = TimeSpan.FromTicks((long)m["ack_time"]! / 100);
                Assert.True(ackTime >= TimeSpan.FromMilliseconds(150) && ackTime < TimeSpan.FromSeconds(30), $"ack_time {ackTime}");
                Assert.False(string.IsNullOrEmpty((string?)m["id"]));
            }
        });

    [Fact]
    public Task A_nak_and_a_term_are_published_as_nats_servers_advisories() =>
        NatsNetClient.WithJetStreamAsync(server, async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            for (var i = 1; i <= 2; i++)
            {
                (await js.PublishAsync($"{p}.x", $"m{i}", cancellationToken: ct)).EnsureSuccess();
            }

            await using var advisories = await nats.SubscribeCoreAsync<string>($"$JS.EVENT.ADVISORY.CONSUMER.*.{name}.judged", cancellationToken: ct);
            await nats.PingAsync(ct);
            var consumer = await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("judged") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
            var fetched = new List<INatsJSMsg<string>>();
            await foreach (var msg in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 2, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
            {
                fetched.Add(msg);
            }

            await fetched[0].NakAsync(cancellationToken: ct);
            await fetched[1].AckTerminateAsync(cancellationToken: ct);
            var seen = new List<(string Subject, JsonNode Body)>();
            await foreach (var advisory in advisories.Msgs.ReadAllAsync(ct))
            {
                if (advisory.Subject.Contains(".CREATED.", StringComparison.Ordinal))
                {
                    continue; // the consumer's own creation
                }

                seen.Add((advisory.Subject, JsonNode.Parse(advisory.Data!)!));
                if (seen.Count == 2)
                {
                    break;
                }
            }

            var (nakSubject, nak) = seen.Single(a => a.Subject.Contains(".MSG_NAKED.", StringComparison.Ordinal));
            Assert.Equal($"$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.{name}.judged", nakSubject);
            Assert.Equal("io.nats.jetstream.advisory.v1.nak", (string?)nak["type"]);
            Assert.Equal((1UL, 1UL, 1), ((ulong)nak["stream_seq"]!, (ulong)nak["consumer_seq"]!, (int)nak["deliveries"]!));
            var (termSubject, term) = seen.Single(a => a.Subject.Contains(".MSG_TERMINATED.", StringComparison.Ordinal));
            Assert.Equal($"$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.{name}.judged", termSubject);
            Assert.Equal("io.nats.jetstream.advisory.v1.terminated", (string?)term["type"]);
            Assert.Equal((2UL, 2UL, 1), ((ulong)term["stream_seq"]!, (ulong)term["consumer_seq"]!, (int)term["deliveries"]!));
            Assert.Equal(["consumer", "consumer_seq", "deliveries", "id", "stream", "stream_seq", "timestamp", "type"], term.AsObject().Select(kv => kv.Key).Order(StringComparer.Ordinal));
        });

    [Theory]
    [InlineData("abc", "strconv.Atoi: parsing \"abc\": invalid syntax")]
    [InlineData("5.5%", "strconv.Atoi: parsing \"5.5\": invalid syntax")]
    [InlineData("-5", "<nil>")]
    public Task A_sample_frequency_strconv_cannot_read_is_refused_in_nats_servers_words(string frequency, string reason) =>
        NatsNetClient.WithJetStreamAsync(server, async (js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            var refused = await Assert.ThrowsAsync<NatsJSApiException>(async () =>
                await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("bad") { AckPolicy = ConsumerConfigAckPolicy.Explicit, SampleFreq = frequency }, ct));
            Assert.Equal((400, 10095, $"failed to parse consumer sampling configuration: {reason}"), (refused.Error.Code, refused.Error.ErrCode, refused.Error.Description));
        });
}

[Trait("server", "nats-server")]
public sealed class NatsNetAckEventsTests_NatsServer(NatsServerFixture server) : NatsNetAckEventsTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsNetAckEventsTests_Courier(CourierFixture server) : NatsNetAckEventsTests<CourierFixture>(server);
