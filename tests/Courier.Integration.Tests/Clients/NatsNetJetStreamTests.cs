using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// JetStream through the official .NET client (NATS.Client.JetStream from NATS.Net), each test
/// against a server of its own started with <c>-js</c> on a store directory of its own.
/// </summary>
public abstract class NatsNetJetStreamTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected NatsNetJetStreamTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public Task A_created_stream_acknowledges_each_publish_with_its_sequence_and_a_repeated_msg_id_as_a_duplicate() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            var stream = await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            Assert.Equal(name, stream.Info.Config.Name);
            Assert.Equal(0, stream.Info.State.Messages);

            for (var i = 1; i <= 5; i++)
            {
                var ack = await js.PublishAsync($"{p}.orders.{i}", $"order {i}", cancellationToken: ct);
                ack.EnsureSuccess();
                Assert.Equal(name, ack.Stream);
                Assert.Equal((ulong)i, ack.Seq);
                Assert.False(ack.Duplicate);
            }

            var first = await js.PublishAsync($"{p}.once", "x", opts: new NatsJSPubOpts { MsgId = "id-1" }, cancellationToken: ct);
            var again = await js.PublishAsync($"{p}.once", "x", opts: new NatsJSPubOpts { MsgId = "id-1" }, cancellationToken: ct);
            Assert.Equal(6UL, first.Seq);
            Assert.True(again.Duplicate);
            Assert.Equal(6UL, again.Seq);

            await stream.RefreshAsync(ct);
            Assert.Equal(6, stream.Info.State.Messages);
            Assert.Equal(6UL, stream.Info.State.LastSeq);
        });

    [Fact]
    public Task Publishing_to_a_subject_no_stream_captures_fails_as_unanswered() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            await js.CreateStreamAsync(new StreamConfig(NatsNetClient.NameFor(p), [$"{p}.in"]), ct);

            // The server answers 503 no responders; NATS.Net retries, then reports the publish unanswered.
            await Assert.ThrowsAsync<NatsJSPublishNoResponseException>(
                async () => await js.PublishAsync($"{p}.elsewhere", "lost", cancellationToken: ct));
        });

    [Fact]
    public Task ConsumeAsync_on_a_durable_consumer_delivers_every_message_in_order_and_acks_move_the_ack_floor() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            const int Count = 40;
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            for (var i = 0; i < Count; i++)
            {
                (await js.PublishAsync($"{p}.n", i, cancellationToken: ct)).EnsureSuccess();
            }

            var consumer = await js.CreateOrUpdateConsumerAsync(
                name,
                new ConsumerConfig("worker") { AckPolicy = ConsumerConfigAckPolicy.Explicit },
                ct);

            var received = new List<int>();
            await foreach (var msg in consumer.ConsumeAsync<int>(opts: new NatsJSConsumeOpts { MaxMsgs = 7 }, cancellationToken: ct))
            {
                Assert.Equal((ulong)(received.Count + 1), msg.Metadata!.Value.Sequence.Stream);
                received.Add(msg.Data);
                await msg.AckAsync(new AckOpts { DoubleAck = true }, ct); // the server confirms each ack
                if (received.Count == Count)
                {
                    break;
                }
            }

            Assert.Equal(Enumerable.Range(0, Count), received);
            await consumer.RefreshAsync(ct);
            Assert.Equal((ulong)Count, consumer.Info.AckFloor.StreamSeq);
            Assert.Equal(0, consumer.Info.NumAckPending);
            Assert.Equal(0UL, consumer.Info.NumPending);
        });

    [Fact]
    public Task FetchAsync_returns_at_most_the_batch_and_ends_when_the_stream_has_no_more() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            for (var i = 0; i < 10; i++)
            {
                (await js.PublishAsync($"{p}.job", $"job {i}", cancellationToken: ct)).EnsureSuccess();
            }

            var consumer = await js.CreateOrUpdateConsumerAsync(
                name,
                new ConsumerConfig("fetcher") { AckPolicy = ConsumerConfigAckPolicy.Explicit },
                ct);
            var fetch = new NatsJSFetchOpts { MaxMsgs = 4, Expires = TimeSpan.FromSeconds(2) };

            var batches = new List<List<string>>();
            for (var b = 0; b < 4; b++)
            {
                var batch = new List<string>();
                await foreach (var msg in consumer.FetchAsync<string>(fetch, cancellationToken: ct))
                {
                    batch.Add(msg.Data!);
                    await msg.AckAsync(cancellationToken: ct);
                }

                batches.Add(batch);
            }

            Assert.Equal([4, 4, 2, 0], batches.Select(b => b.Count));
            Assert.Equal(Enumerable.Range(0, 10).Select(i => $"job {i}"), batches.SelectMany(b => b));
        });

    [Fact]
    public Task An_ordered_consumer_reads_a_whole_stream_over_several_subjects_in_stream_order() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            const int Count = 300;
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            var subjects = new[] { $"{p}.a", $"{p}.b.1", $"{p}.c.x.y" };
            for (var i = 0; i < Count; i++)
            {
                (await js.PublishAsync(subjects[i % subjects.Length], i, cancellationToken: ct)).EnsureSuccess();
            }

            var consumer = await js.CreateOrderedConsumerAsync(name, cancellationToken: ct);
            var received = new List<(ulong Seq, string Subject, int Data)>();
            await foreach (var msg in consumer.ConsumeAsync<int>(cancellationToken: ct))
            {
                var metadata = msg.Metadata!.Value;
                received.Add((metadata.Sequence.Stream, msg.Subject, msg.Data));
                if (received.Count == Count)
                {
                    Assert.Equal(0UL, metadata.NumPending); // the last one says nothing is left
                    break;
                }
            }

            Assert.Equal(Enumerable.Range(1, Count).Select(i => (ulong)i), received.Select(r => r.Seq));
            Assert.Equal(Enumerable.Range(0, Count), received.Select(r => r.Data));
            Assert.Equal(Enumerable.Range(0, Count).Select(i => subjects[i % subjects.Length]), received.Select(r => r.Subject));
        });

    [Fact]
    public Task An_ordered_consumer_from_a_start_sequence_reads_the_rest_and_then_what_is_published_later() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            for (var i = 1; i <= 10; i++)
            {
                (await js.PublishAsync($"{p}.n", i, cancellationToken: ct)).EnsureSuccess();
            }

            // No filter here: NATS.Net sends filters as filter_subjects, which nats-server 2.9 ignores.
            var consumer = await js.CreateOrderedConsumerAsync(
                name,
                new NatsJSOrderedConsumerOpts { DeliverPolicy = ConsumerConfigDeliverPolicy.ByStartSequence, OptStartSeq = 6 },
                ct);

            var received = new List<int>();
            await foreach (var msg in consumer.ConsumeAsync<int>(cancellationToken: ct))
            {
                received.Add(msg.Data);
                if (received.Count == 5)
                {
                    // Caught up with what was there: what comes next arrives on the same consumer.
                    (await js.PublishAsync($"{p}.n", 11, cancellationToken: ct)).EnsureSuccess();
                    (await js.PublishAsync($"{p}.n", 12, cancellationToken: ct)).EnsureSuccess();
                }

                if (received.Count == 7)
                {
                    break;
                }
            }

            Assert.Equal([6, 7, 8, 9, 10, 11, 12], received);
        });

    private Task WithJetStreamAsync(Func<NatsJSContext, string, CancellationToken, Task> test) => NatsNetClient.WithJetStreamAsync(_server, test);
}

[Trait("server", "nats-server")]
public sealed class NatsNetJetStreamTests_NatsServer(NatsServerFixture server) : NatsNetJetStreamTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsNetJetStreamTests_Courier(CourierFixture server) : NatsNetJetStreamTests<CourierFixture>(server);
