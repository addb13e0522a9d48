using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>
/// The consumer-create rules and the max_deliver limit as nats-server 2.9 applies them, on the wire:
/// each refusal with nats-server's status, code and text, and a message NAKed max_deliver times
/// not delivered again, with the max_deliver advisory.
/// </summary>
public abstract class JetStreamConsumerRulesTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected JetStreamConsumerRulesTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Consumer_names_backoff_and_description_are_checked_with_nats_servers_codes()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.api 1\r\n");
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory"}""")) { }

            async Task AssertRefusedAsync(string subject, string config, int status, int code, string description)
            {
                using var reply = await RequestAsync(c, subject, $$"""{"stream_name":"R","config":{{config}}}""");
                var error = reply.RootElement.GetProperty("error");
                Assert.Equal((status, code, description), (error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32(), error.GetProperty("description").GetString()));
            }

            await AssertRefusedAsync("$JS.API.CONSUMER.DURABLE.CREATE.R.D", """{"durable_name":"X","ack_policy":"explicit"}""",
                400, 10017, "consumer name in subject does not match durable name in request");
            await AssertRefusedAsync("$JS.API.CONSUMER.DURABLE.CREATE.R.D", """{"ack_policy":"explicit"}""",
                400, 10018, "consumer expected to be durable but a durable name was not set");
            await AssertRefusedAsync("$JS.API.CONSUMER.CREATE.R.N", """{"durable_name":"X","ack_policy":"explicit"}""",
                400, 10017, "consumer name in subject does not match durable name in request");
            await AssertRefusedAsync("$JS.API.CONSUMER.CREATE.R", """{"durable_name":"X","ack_policy":"explicit"}""",
                400, 10020, "consumer expected to be ephemeral but a durable name was set in request");
            await AssertRefusedAsync("$JS.API.CONSUMER.DURABLE.CREATE.R.B", """{"durable_name":"B","ack_policy":"explicit","backoff":[1000000000,2000000000],"max_deliver":2}""",
                400, 10116, "max deliver is required to be > length of backoff values");
            await AssertRefusedAsync("$JS.API.CONSUMER.DURABLE.CREATE.R.B", """{"durable_name":"B","ack_policy":"explicit","backoff":[1000000000]}""",
                400, 10116, "max deliver is required to be > length of backoff values");
            await AssertRefusedAsync("$JS.API.CONSUMER.DURABLE.CREATE.R.L", $$"""{"durable_name":"L","ack_policy":"explicit","description":"{{new string('d', 4097)}}"}""",
                400, 10107, "consumer description is too long, maximum allowed is 4096");
            // A single server replicates no consumer: any count above 1 (5 or 7 alike).
            foreach (var replicas in new[] { 3, 7 })
            {
                await AssertRefusedAsync("$JS.API.CONSUMER.CREATE.R", $$"""{"ack_policy":"explicit","num_replicas":{{replicas}}}""",
                    500, 10074, "replicas > 1 not supported in non-clustered mode");
            }

            // The same names and limits within the rules are accepted.
            using var accepted = await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.R.B",
                $$$"""{"stream_name":"R","config":{"durable_name":"B","ack_policy":"explicit","backoff":[1000000000,2000000000],"max_deliver":3,"description":"{{{new string('d', 4096)}}}"}}""");
            Assert.Equal("B", accepted.RootElement.GetProperty("name").GetString());
            using var named = await RequestAsync(c, "$JS.API.CONSUMER.CREATE.R.N", """{"stream_name":"R","config":{"durable_name":"N","ack_policy":"explicit"}}""");
            Assert.Equal("N", named.RootElement.GetProperty("name").GetString());
            Assert.False(server.HasExited, server.Diagnostics());
        });
    }

    [Fact]
    public async Task A_message_nakked_max_deliver_times_is_not_delivered_again_and_the_advisory_says_so()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.api 1\r\nSUB $JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.M.D 2\r\nSUB _INBOX.fetch 3\r\n");
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.M", """{"name":"M","subjects":["m.>"],"storage":"memory"}""")) { }
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.MAXD", """{"name":"MAXD","subjects":["$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>"],"storage":"memory"}""")) { }
            using (await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.M.D", """{"stream_name":"M","config":{"durable_name":"D","ack_policy":"explicit","max_deliver":2}}""")) { }
            await c.SendAsync("PUB m.1 1\r\na\r\n");
            await c.PingPongAsync();

            // Delivery 1 of m.1, NAK; delivery 2 of m.1, NAK: that was the last one allowed. m.1 is the only
            // message while it is NAKed: nats-server handles acks on the consumer's own goroutine, so a fetch
            // can overtake the NAK before it; with nothing else to deliver, that fetch waits for the NAK.
            for (var delivery = 1; delivery <= 2; delivery++)
            {
                await c.SendAsync("PUB $JS.API.CONSUMER.MSG.NEXT.M.D _INBOX.fetch 11\r\n{\"batch\":1}\r\n");
                var m = await c.ExpectMsgAsync();
                Assert.Equal(("m.1", "3"), (m.Subject, m.Sid));
                Assert.StartsWith($"$JS.ACK.M.D.{delivery}.1.", m.Reply, StringComparison.Ordinal);
                await c.SendAsync($"PUB {m.Reply} 4\r\n-NAK\r\n");
                await c.PingPongAsync();
            }

            // A waiting fetch: m.1 is not delivered a third time, the advisory names it instead (whether the
            // fetch or the NAK comes first); then m.2 is published and is what the fetch gets.
            await c.SendAsync("PUB $JS.API.CONSUMER.MSG.NEXT.M.D _INBOX.fetch 11\r\n{\"batch\":1}\r\n");
            var advisory = await c.ExpectMsgAsync();
            Assert.Equal(("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.M.D", "2"), (advisory.Subject, advisory.Sid));
            await c.SendAsync("PUB m.2 1\r\nb\r\n");
            var next = await c.ExpectMsgAsync();
            Assert.Equal(("m.2", "3", "b"), (next.Subject, next.Sid, next.PayloadText));
            using var json = JsonDocument.Parse(advisory.Payload);
            Assert.Equal("io.nats.jetstream.advisory.v1.max_deliver", json.RootElement.GetProperty("type").GetString());
            Assert.Equal(("M", "D", 1UL, 2L), (json.RootElement.GetProperty("stream").GetString(), json.RootElement.GetProperty("consumer").GetString(),
                json.RootElement.GetProperty("stream_seq").GetUInt64(), json.RootElement.GetProperty("deliveries").GetInt64()));

            // A stream capturing the advisories stores it, as any message of the account.
            using var maxd = await RequestAsync(c, "$JS.API.STREAM.INFO.MAXD", "");
            Assert.Equal(1, maxd.RootElement.GetProperty("state").GetProperty("messages").GetInt64());
        });
    }

    [Fact]
    public async Task Deliver_last_with_a_filter_starts_at_the_filters_last_message_and_push_bound_follows_the_deliver_subjects_interest()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.api 1\r\nSUB _INBOX.fetch 3\r\n");
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.L", """{"name":"L","subjects":["l.>"],"storage":"memory"}""")) { }
            await c.SendAsync("PUB l.a 1\r\n1\r\nPUB l.a 1\r\n2\r\nPUB l.b 1\r\n3\r\n");
            await c.PingPongAsync();

            // The stream's last message is l.b (3); the filter's is the second l.a (2).
            using (await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.L.LA", """{"stream_name":"L","config":{"durable_name":"LA","ack_policy":"explicit","deliver_policy":"last","filter_subject":"l.a"}}""")) { }
            await c.SendAsync("PUB $JS.API.CONSUMER.MSG.NEXT.L.LA _INBOX.fetch 11\r\n{\"batch\":1}\r\n");
            var first = await c.ExpectMsgAsync();
            Assert.Equal(("l.a", "2"), (first.Subject, first.PayloadText));
            Assert.StartsWith("$JS.ACK.L.LA.1.2.1.", first.Reply, StringComparison.Ordinal);

            // A push consumer is bound while someone subscribes to its deliver subject.
            using (var created = await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.L.P", """{"stream_name":"L","config":{"durable_name":"P","ack_policy":"explicit","deliver_subject":"push.l"}}"""))
            {
                Assert.False(created.RootElement.TryGetProperty("push_bound", out _));
            }

            await c.SendAsync("SUB push.l 4\r\n"); // deliveries start at once; RequestAsync passes over them
            var bound = false;
            for (var attempt = 0; attempt < 100 && !bound; attempt++)
            {
                using var info = await RequestAsync(c, "$JS.API.CONSUMER.INFO.L.P", "");
                bound = info.RootElement.TryGetProperty("push_bound", out var pushBound) && pushBound.GetBoolean();
                if (!bound)
                {
                    await Task.Delay(100);
                }
            }

            Assert.True(bound, "push_bound never became true with a subscriber on the deliver subject");
        });
    }

    [Fact]
    public async Task A_streams_max_consumers_is_enforced()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.api 1\r\n");
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.M", """{"name":"M","subjects":["m.>"],"storage":"memory","max_consumers":1}""")) { }
            using (var first = await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.M.A", """{"stream_name":"M","config":{"durable_name":"A","ack_policy":"explicit"}}"""))
            {
                Assert.Equal("A", first.RootElement.GetProperty("name").GetString());
            }

            using var second = await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.M.B", """{"stream_name":"M","config":{"durable_name":"B","ack_policy":"explicit"}}""");
            var error = second.RootElement.GetProperty("error");
            Assert.Equal((400, 10026, "maximum consumers limit reached"), (error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32(), error.GetProperty("description").GetString()));

            // The consumer that exists may still be created again (it is not a new one).
            using var again = await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.M.A", """{"stream_name":"M","config":{"durable_name":"A","ack_policy":"explicit"}}""");
            Assert.False(again.RootElement.TryGetProperty("error", out _), again.RootElement.ToString());
        });
    }

    [Fact]
    public async Task Leader_stepdowns_on_a_single_server_answer_that_clustering_is_required_even_for_a_stream_named_STEPDOWN()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.api 1\r\n");
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.STEPDOWN", """{"name":"STEPDOWN","subjects":["sd.>"],"storage":"memory"}""")) { }
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}""")) { }
            using (await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.S.C", """{"stream_name":"S","config":{"durable_name":"C","ack_policy":"explicit"}}""")) { }

            foreach (var (subject, type) in new[]
            {
                ("$JS.API.CONSUMER.LEADER.STEPDOWN.S.C", "io.nats.jetstream.api.v1.consumer_leader_stepdown_response"),
                ("$JS.API.STREAM.LEADER.STEPDOWN.S", "io.nats.jetstream.api.v1.stream_leader_stepdown_response"),
            })
            {
                using var reply = await RequestAsync(c, subject, "");
                var error = reply.RootElement.GetProperty("error");
                Assert.Equal((type, 503, 10010, "JetStream clustering support required"),
                    (reply.RootElement.GetProperty("type").GetString(), error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32(), error.GetProperty("description").GetString()));
            }
        });
    }

    private static async Task<JsonDocument> RequestAsync(WireClient c, string subject, string body)
    {
        await c.SendAsync($"PUB {subject} _INBOX.api {body.Length}\r\n{body}\r\n");
        while (true)
        {
            var reply = await c.ExpectMsgAsync();
            if (reply.Subject == "_INBOX.api")
            {
                return JsonDocument.Parse(reply.Payload); // other frames (push deliveries) are passed over
            }
        }
    }
}

[Trait("server", "nats-server")]
public sealed class JetStreamConsumerRulesTests_NatsServer(NatsServerFixture server) : JetStreamConsumerRulesTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class JetStreamConsumerRulesTests_Courier(CourierFixture server) : JetStreamConsumerRulesTests<CourierFixture>(server);
