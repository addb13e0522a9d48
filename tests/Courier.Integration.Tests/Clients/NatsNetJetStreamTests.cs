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
    public Task A_message_of_max_payload_is_stored_then_served_by_msg_get_and_by_a_consumer_whole() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            // The answers are bigger than max_payload (MSG.GET's base64 JSON, a delivery with its reply
            // subject and headers); the server's own clients are not held to the clients' limit.
            var payload = new byte[1_000_000]; // with its Nats-Msg-Id header, just under the default 1 MiB
            new Random(7).NextBytes(payload);
            var stream = await js.CreateStreamAsync(new StreamConfig(NatsNetClient.NameFor(p), [$"{p}.big"]), ct);
            var ack = await js.PublishAsync($"{p}.big", payload, opts: new NatsJSPubOpts { MsgId = "big-1" }, cancellationToken: ct);
            ack.EnsureSuccess();

            var got = await stream.GetAsync(new StreamMsgGetRequest { Seq = ack.Seq }, ct);
            Assert.True(payload.AsSpan().SequenceEqual(got.Message.Data.Span), "MSG.GET served other bytes");

            var consumer = await stream.CreateOrUpdateConsumerAsync(new ConsumerConfig("big") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
            INatsJSMsg<byte[]>? delivered = null;
            await foreach (var msg in consumer.FetchAsync<byte[]>(new NatsJSFetchOpts { MaxMsgs = 1, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
            {
                delivered = msg;
                await msg.AckAsync(cancellationToken: ct);
            }

            Assert.NotNull(delivered);
            Assert.True(payload.AsSpan().SequenceEqual(delivered.Data), "the consumer delivered other bytes");

            // The API still answers afterwards (a refused answer closed its connection before).
            await stream.RefreshAsync(ct);
            Assert.Equal(1, stream.Info.State.Messages);
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

    [Fact]
    public Task An_unacknowledged_message_comes_back_after_ack_wait_a_delayed_nak_after_its_delay_and_progress_holds_it_back() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            var consumer = await js.CreateOrUpdateConsumerAsync(
                name,
                new ConsumerConfig("slow") { AckPolicy = ConsumerConfigAckPolicy.Explicit, AckWait = TimeSpan.FromSeconds(2) }, // 2 s: a progress every 200 ms stays far inside it on a loaded 2-core CI machine
                ct);

            async Task<(INatsJSMsg<string> Msg, TimeSpan After)> NextAsync(TimeSpan expires)
            {
                var started = System.Diagnostics.Stopwatch.GetTimestamp();
                await foreach (var m in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 1, Expires = expires }, cancellationToken: ct))
                {
                    return (m, System.Diagnostics.Stopwatch.GetElapsedTime(started));
                }

                throw new Xunit.Sdk.XunitException($"nothing delivered within {expires}");
            }

            // Not acknowledged: delivered again once ack_wait has passed.
            (await js.PublishAsync($"{p}.a", "a", cancellationToken: ct)).EnsureSuccess();
            var (first, _) = await NextAsync(TimeSpan.FromSeconds(5));
            Assert.Equal(1UL, first.Metadata!.Value.NumDelivered);
            var (again, after) = await NextAsync(TimeSpan.FromSeconds(5));
            Assert.Equal(1UL, again.Metadata!.Value.Sequence.Stream);
            Assert.Equal(2UL, again.Metadata!.Value.NumDelivered);
            Assert.InRange(after, TimeSpan.FromMilliseconds(1700), TimeSpan.FromSeconds(4)); // ack_wait (2 s), less a little for the fetch started after the delivery
            await consumer.RefreshAsync(ct);
            Assert.Equal(1, consumer.Info.NumRedelivered); // pending and delivered more than once
            await again.AckAsync(new AckOpts { DoubleAck = true }, ct);

            // A NAK with a delay: delivered again after the delay, not at once.
            (await js.PublishAsync($"{p}.b", "b", cancellationToken: ct)).EnsureSuccess();
            var (nakked, _) = await NextAsync(TimeSpan.FromSeconds(5));
            await nakked.NakAsync(new AckOpts { NakDelay = TimeSpan.FromMilliseconds(800) }, ct);
            var (back, delayed) = await NextAsync(TimeSpan.FromSeconds(5));
            Assert.Equal(2UL, back.Metadata!.Value.Sequence.Stream);
            Assert.Equal(2UL, back.Metadata!.Value.NumDelivered);
            Assert.InRange(delayed, TimeSpan.FromMilliseconds(500), TimeSpan.FromSeconds(4));
            await back.AckAsync(new AckOpts { DoubleAck = true }, ct);

            // Progress acks, each well within ack_wait (a loaded machine may stretch a 200 ms delay a lot: with a 1 s
            // ack_wait, a stall of the test process past 800 ms let the message go in 2 of 5 full runs), hold a
            // message back for twice ack_wait.
            (await js.PublishAsync($"{p}.c", "c", cancellationToken: ct)).EnsureSuccess();
            var (working, _) = await NextAsync(TimeSpan.FromSeconds(5));
            for (var i = 0; i < 20; i++)
            {
                await Task.Delay(200, ct);
                await working.AckProgressAsync(cancellationToken: ct);
            }

            // Without the progress acks its ack wait would have ended two seconds ago: a no-wait fetch would get it again.
            // Courier's check only: nats-server 2.9.10 sometimes hands it out again here all the same (2 of 3 CI
            // runs on 2026-11-27, with progress every 200 ms against a 1 s ack_wait, then its ack_wait), so it is no reference for this.
            if (_server.Kind == ServerKind.Courier)
            {
                var held = new List<ulong>();
                await foreach (var m in consumer.FetchNoWaitAsync<string>(new NatsJSFetchOpts { MaxMsgs = 1 }, cancellationToken: ct))
                {
                    held.Add(m.Metadata!.Value.Sequence.Stream);
                }

                Assert.Empty(held);
                await consumer.RefreshAsync(ct);
                Assert.Equal(0, consumer.Info.NumRedelivered); // a and b came back once each, but are acknowledged
            }

            await consumer.RefreshAsync(ct);
            Assert.Equal(1, consumer.Info.NumAckPending);
            await working.AckAsync(new AckOpts { DoubleAck = true }, ct);
            await consumer.RefreshAsync(ct);
            Assert.Equal(0, consumer.Info.NumAckPending);
            Assert.Equal(3UL, consumer.Info.AckFloor.StreamSeq);
        });

    /// <summary>
    /// Publishes in flight together (so they reach the stream in batches) mixing an application's own headers, no
    /// headers, and Nats-Msg-Id: each stored with its own headers and payload at its PubAck's sequence, and the
    /// repeated ids acknowledged as duplicates (Courier stores a batch without Nats-* headers in one append).
    /// </summary>
    [Fact]
    public Task Messages_with_an_applications_headers_keep_them_beside_msg_ids_and_plain_ones_in_one_burst() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var stream = await js.CreateStreamAsync(new StreamConfig(NatsNetClient.NameFor(p), [$"{p}.>"]), ct);
            var sent = new List<(ValueTask<PubAckResponse> Ack, int I, string Kind)>();
            for (var i = 0; i < 300; i++)
            {
                var kind = (i % 3) switch { 0 => "app", 1 => "plain", _ => "id" };
                var headers = kind switch
                {
                    "app" => new NATS.Client.Core.NatsHeaders { ["X-Trace"] = $"trace-{i}", ["Content-Type"] = "text/plain" },
                    "id" => new NATS.Client.Core.NatsHeaders { ["X-Trace"] = $"trace-{i}" },
                    _ => null,
                };
                var opts = kind == "id" ? new NatsJSPubOpts { MsgId = $"id-{i % 30}" } : null; // ids repeat: ten of each
                sent.Add((js.PublishAsync($"{p}.m.{i % 7}", $"payload {i}", headers: headers, opts: opts, cancellationToken: ct), i, kind));
            }

            var firstOfId = new Dictionary<string, ulong>();
            var stored = new Dictionary<ulong, (int I, string Kind)>();
            foreach (var (pending, i, kind) in sent)
            {
                var ack = await pending;
                Assert.Null(ack.Error); // EnsureSuccess would throw at a duplicate
                if (kind == "id" && !firstOfId.TryAdd($"id-{i % 30}", ack.Seq))
                {
                    Assert.True(ack.Duplicate, $"message {i} repeats id-{i % 30}");
                    Assert.Equal(firstOfId[$"id-{i % 30}"], ack.Seq);
                    continue;
                }

                Assert.False(ack.Duplicate);
                stored.Add(ack.Seq, (i, kind));
            }

            await stream.RefreshAsync(ct);
            Assert.Equal(stored.Count, (int)stream.Info.State.Messages);
            foreach (var (seq, (i, kind)) in stored)
            {
                var got = (await stream.GetAsync(new StreamMsgGetRequest { Seq = seq }, ct)).Message;
                Assert.Equal($"payload {i}", System.Text.Encoding.UTF8.GetString(got.Data.Span));
                Assert.Equal($"{p}.m.{i % 7}", got.Subject);
                var headers = got.Hdrs is null ? "" : System.Text.Encoding.UTF8.GetString(Convert.FromBase64String(got.Hdrs));
                if (kind == "plain")
                {
                    Assert.Equal("", headers);
                    continue;
                }

                Assert.Contains($"X-Trace: trace-{i}\r\n", headers, StringComparison.Ordinal);
                Assert.Equal(kind == "app", headers.Contains("Content-Type: text/plain\r\n", StringComparison.Ordinal));
                Assert.Equal(kind == "id", headers.Contains($"Nats-Msg-Id: id-{i % 30}\r\n", StringComparison.Ordinal));
            }
        });

    private Task WithJetStreamAsync(Func<NatsJSContext, string, CancellationToken, Task> test) => NatsNetClient.WithJetStreamAsync(_server, test);
}

[Trait("server", "nats-server")]
public sealed class NatsNetJetStreamTests_NatsServer(NatsServerFixture server) : NatsNetJetStreamTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsNetJetStreamTests_Courier(CourierFixture server) : NatsNetJetStreamTests<CourierFixture>(server);
