using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Features;

/// <summary>
/// Consumer pause and resume (nats-server 2.11: <c>pause_until</c>, <c>$JS.API.CONSUMER.PAUSE</c>, the
/// consumer_pause advisory), which nats-server 2.9.10 lacks, so Courier only: through NATS.Net's
/// PauseConsumerAsync / ResumeConsumerAsync, and raw transcripts for the answers' shape.
/// </summary>
[Trait("server", "courier")]
public sealed class ConsumerPauseTests(CourierFixture fixture) : IClassFixture<CourierFixture>
{
    [Fact]
    public Task A_paused_pull_consumer_delivers_nothing_until_resumed_and_says_so_in_its_info_and_advisories() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (nats, js, p, ct) =>
        {
            var stream = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(stream, [p + ".>"]), ct);
            var consumer = await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
            await using var advisories = await nats.SubscribeCoreAsync<byte[]>($"$JS.EVENT.ADVISORY.CONSUMER.PAUSE.{stream}.C", cancellationToken: ct);
            await nats.PingAsync(ct);
            for (var i = 0; i < 3; i++)
            {
                await js.PublishAsync($"{p}.x", i, cancellationToken: ct);
            }

            var until = DateTimeOffset.UtcNow.AddHours(1);
            var paused = await js.PauseConsumerAsync(stream, "C", until, ct);
            Assert.True(paused.IsPaused);
            Assert.Equal(until.ToUnixTimeMilliseconds(), paused.PauseUntil.ToUnixTimeMilliseconds());
            Assert.InRange(paused.PauseRemaining ?? TimeSpan.Zero, TimeSpan.FromMinutes(59), TimeSpan.FromHours(1));

            var advisory = await NatsJson.NextAsync(advisories, ct);
            Assert.Equal("io.nats.jetstream.advisory.v1.consumer_pause", advisory.GetProperty("type").GetString());
            Assert.True(advisory.GetProperty("paused").GetBoolean());
            Assert.Equal((stream, "C"), (advisory.GetProperty("stream").GetString(), advisory.GetProperty("consumer").GetString()));

            await consumer.RefreshAsync(ct);
            Assert.True(consumer.Info.IsPaused);
            Assert.True(consumer.Info.PauseRemaining > TimeSpan.FromMinutes(59));
            Assert.Equal(until.ToUnixTimeMilliseconds(), consumer.Info.Config.PauseUntil?.ToUnixTimeMilliseconds());

            // A pull request waits while paused: it ends at its expiry with nothing.
            var fetched = 0;
            await foreach (var _ in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 3, Expires = TimeSpan.FromSeconds(1) }, cancellationToken: ct))
            {
                fetched++;
            }

            Assert.Equal(0, fetched);

            Assert.True(await js.ResumeConsumerAsync(stream, "C", ct));
            var resumed = await NatsJson.NextAsync(advisories, ct);
            Assert.False(resumed.GetProperty("paused").GetBoolean());
            await consumer.RefreshAsync(ct);
            Assert.False(consumer.Info.IsPaused);
            Assert.Null(consumer.Info.Config.PauseUntil);

            var values = new List<int>();
            await foreach (var msg in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 3, Expires = TimeSpan.FromSeconds(10) }, cancellationToken: ct))
            {
                values.Add(msg.Data);
                await msg.AckAsync(cancellationToken: ct);
            }

            Assert.Equal([0, 1, 2], values);
        });

    [Fact]
    public Task A_consumer_created_paused_resumes_by_itself_at_its_time_and_a_waiting_pull_request_gets_the_messages() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (nats, js, p, ct) =>
        {
            var stream = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(stream, [p + ".>"]), ct);
            await js.PublishAsync($"{p}.x", 7, cancellationToken: ct);
            await using var advisories = await nats.SubscribeCoreAsync<byte[]>($"$JS.EVENT.ADVISORY.CONSUMER.PAUSE.{stream}.C", cancellationToken: ct);
            await nats.PingAsync(ct);

            var until = DateTimeOffset.UtcNow.AddSeconds(2);
            var consumer = await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit, PauseUntil = until }, ct);
            Assert.True(consumer.Info.IsPaused);
            Assert.True((await NatsJson.NextAsync(advisories, ct)).GetProperty("paused").GetBoolean());

            // Created again with another pause_until: nats-server keeps the running one (only PAUSE changes it).
            var again = await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.Explicit, PauseUntil = until.AddHours(5) }, ct);
            Assert.Equal(until.ToUnixTimeMilliseconds(), again.Info.Config.PauseUntil?.ToUnixTimeMilliseconds());

            // Asked before the pause ends, answered after it (with a generous expiry).
            var values = new List<int>();
            await foreach (var msg in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 1, Expires = TimeSpan.FromSeconds(20) }, cancellationToken: ct))
            {
                values.Add(msg.Data);
            }

            Assert.Equal([7], values);
            Assert.True(DateTimeOffset.UtcNow >= until);
            Assert.False((await NatsJson.NextAsync(advisories, ct)).GetProperty("paused").GetBoolean());
            await consumer.RefreshAsync(ct);
            Assert.False(consumer.Info.IsPaused);
        });

    [Fact]
    public async Task A_paused_push_consumer_sends_heartbeats_but_no_messages_until_resumed()
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await JetStreamApiWire.ConnectAsync(server);
            await c.SendAsync("SUB deliver.here 2\r\n");
            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            await c.SendAsync("PUB s.a 5\r\nfirst\r\n");
            using (var created = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"explicit","deliver_subject":"deliver.here","idle_heartbeat":200000000,"pause_until":"2099-01-01T00:00:00Z"}}"""))
            {
                Assert.True(created.RootElement.GetProperty("paused").GetBoolean(), created.RootElement.ToString());
                Assert.Equal("2099-01-01T00:00:00Z", created.RootElement.GetProperty("config").GetProperty("pause_until").GetString());
            }

            // Heartbeats while paused, and not the message.
            for (var i = 0; i < 2; i++)
            {
                var heartbeat = await c.ExpectMsgAsync();
                Assert.Equal(("deliver.here", "HMSG"), (heartbeat.Subject, heartbeat.Op));
                Assert.StartsWith("NATS/1.0 100 Idle Heartbeat", heartbeat.HeaderText);
            }

            // Resumed (an empty body): the answer and the message, in either order; heartbeats may come between.
            await c.SendAsync("PUB $JS.API.CONSUMER.PAUSE.S.P _INBOX.api 0\r\n\r\n");
            string? answer = null, delivered = null;
            for (var frames = 0; (answer is null || delivered is null) && frames < 50; frames++)
            {
                var message = await c.ExpectMsgAsync();
                if (message.Subject == "_INBOX.api")
                {
                    answer = message.PayloadText;
                }
                else if (message.Sid == "2" && message.Op == "MSG")
                {
                    Assert.Equal("s.a", message.Subject); // a push delivery shows the message's subject
                    delivered = message.PayloadText;
                }
            }

            Assert.Equal("""{"type":"io.nats.jetstream.api.v1.consumer_pause_response","paused":false,"pause_until":"0001-01-01T00:00:00Z"}""", answer);
            Assert.Equal("first", delivered);
        });
    }

    [Fact]
    public async Task Pause_requests_get_nats_servers_answers_for_unknown_consumers_and_bad_bodies()
    {
        await fixture.WithJetStreamAsync(async server =>
        {
            await using var c = await JetStreamApiWire.ConnectAsync(server);
            using (var missing = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.PAUSE.S.C", "{}"))
            {
                Wire.JetStreamStrictApiTests.AssertError(missing, "io.nats.jetstream.api.v1.consumer_pause_response", 404, 10059, "stream not found");
            }

            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            using (var missing = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.PAUSE.S.C", """{"pause_until":"2099-01-01T00:00:00Z"}"""))
            {
                Wire.JetStreamStrictApiTests.AssertError(missing, "io.nats.jetstream.api.v1.consumer_pause_response", 404, 10014, "consumer not found");
            }

            using (await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.CREATE.S.C", """{"stream_name":"S","config":{"name":"C","ack_policy":"explicit"}}""")) { }
            using (var unknown = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.PAUSE.S.C", """{"pause_until":"2099-01-01T00:00:00Z","until":1}"""))
            {
                Wire.JetStreamStrictApiTests.AssertError(unknown, "io.nats.jetstream.api.v1.consumer_pause_response", 400, 10025, "invalid JSON: json: unknown field \"until\"");
            }

            using (var paused = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.PAUSE.S.C", """{"pause_until":"2099-01-01T00:00:00Z"}"""))
            {
                Assert.True(paused.RootElement.GetProperty("paused").GetBoolean());
                Assert.Equal("2099-01-01T00:00:00Z", paused.RootElement.GetProperty("pause_until").GetString());
                Assert.True(paused.RootElement.GetProperty("pause_remaining").GetInt64() > 0);
            }

            // A time already past: not paused, the time kept as given (nats-server).
            using var past = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.PAUSE.S.C", """{"pause_until":"2001-01-01T00:00:00Z"}""");
            Assert.False(past.RootElement.GetProperty("paused").GetBoolean());
            Assert.False(past.RootElement.TryGetProperty("pause_remaining", out _));
            using var info = await JetStreamApiWire.RequestAsync(c, "$JS.API.CONSUMER.INFO.S.C", "");
            Assert.False(info.RootElement.TryGetProperty("paused", out _));
            Assert.Equal("2001-01-01T00:00:00Z", info.RootElement.GetProperty("config").GetProperty("pause_until").GetString());
        });
    }

    [Fact]
    public Task A_durable_consumers_pause_survives_a_restart()
    {
        var until = DateTimeOffset.UtcNow.AddHours(1);
        return NatsNetClient.AcrossRestartAsync(
            fixture,
            async (nats, js, p, ct) =>
            {
                var stream = NatsNetClient.NameFor(p);
                await js.CreateStreamAsync(new StreamConfig(stream, [p + ".>"]), ct);
                await js.CreateOrUpdateConsumerAsync(stream, new ConsumerConfig("D") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
                await js.PauseConsumerAsync(stream, "D", until, ct);
                await js.PublishAsync($"{p}.x", 1, cancellationToken: ct);
            },
            async (nats, js, p, ct) =>
            {
                var consumer = await js.GetConsumerAsync(NatsNetClient.NameFor(p), "D", ct);
                Assert.True(consumer.Info.IsPaused);
                Assert.Equal(until.ToUnixTimeMilliseconds(), consumer.Info.Config.PauseUntil?.ToUnixTimeMilliseconds());
                var fetched = 0;
                await foreach (var _ in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 1, Expires = TimeSpan.FromSeconds(1) }, cancellationToken: ct))
                {
                    fetched++;
                }

                Assert.Equal(0, fetched);
            });
    }
}
