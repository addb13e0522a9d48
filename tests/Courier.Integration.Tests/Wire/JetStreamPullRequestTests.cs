using System.Text;
using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>
/// Pull requests as nats-server 2.9.10 serves them: one whose reply subject lost its subscriber
/// takes no message, and a no_wait request with expires and heartbeats that max_ack_pending holds
/// up gets heartbeats and then its 408 at the expiry.
/// </summary>
public abstract class JetStreamPullRequestTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected JetStreamPullRequestTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task A_pull_request_whose_reply_subject_lost_its_subscriber_takes_no_message_into_ack_pending()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.Q", """{"name":"Q","subjects":["q.>"],"storage":"memory"}""")) { }
            using (await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.Q.D", """{"stream_name":"Q","config":{"durable_name":"D","ack_policy":"explicit"}}""")) { }

            // A request that waits, then its inbox goes away; then a message arrives.
            await c.SendAsync("SUB _INBOX.gone 7\r\n");
            await NextAsync(c, "Q", "D", "_INBOX.gone", """{"batch":1,"expires":30000000000}""");
            await c.PingPongAsync();
            await c.SendAsync("UNSUB 7\r\nPUB q.1 1\r\nx\r\n");
            await c.PingPongAsync();

            // The message is still the consumer's first delivery, for the next request that has a subscriber.
            await c.SendAsync("SUB _INBOX.live 8\r\n");
            await NextAsync(c, "Q", "D", "_INBOX.live", """{"batch":1,"expires":10000000000}""");
            var m = await c.ExpectMsgAsync();
            Assert.Equal(("q.1", "8", "x"), (m.Subject, m.Sid, m.PayloadText));
            Assert.StartsWith("$JS.ACK.Q.D.1.1.1.", m.Reply, StringComparison.Ordinal);

            using var info = await RequestAsync(c, "$JS.API.CONSUMER.INFO.Q.D", "");
            Assert.Equal((1, 1UL), (info.RootElement.GetProperty("num_ack_pending").GetInt32(), info.RootElement.GetProperty("delivered").GetProperty("consumer_seq").GetUInt64()));
        });
    }

    [Fact]
    public async Task A_waiting_request_whose_inbox_comes_back_before_a_message_does_still_gets_it()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory"}""")) { }
            using (await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.R.D", """{"stream_name":"R","config":{"durable_name":"D","ack_policy":"explicit"}}""")) { }

            // As a client whose connection drops and comes back: the inbox goes away for a while (longer
            // than any housekeeping tick), then is subscribed again, all within the request's expiry.
            await c.SendAsync("SUB _INBOX.back 7\r\n");
            await NextAsync(c, "R", "D", "_INBOX.back", """{"batch":1,"expires":30000000000}""");
            await c.PingPongAsync();
            await c.SendAsync("UNSUB 7\r\n");
            await c.PingPongAsync();
            await Task.Delay(TimeSpan.FromSeconds(2.5));
            await c.SendAsync("SUB _INBOX.back 9\r\n");
            await c.PingPongAsync();

            // nats-server checks the request's interest when a message is there for it: it has some again.
            await c.SendAsync("PUB r.1 1\r\nx\r\n");
            var m = await c.ExpectMsgAsync();
            Assert.Equal(("r.1", "9", "x"), (m.Subject, m.Sid, m.PayloadText));
            Assert.StartsWith("$JS.ACK.R.D.1.1.1.", m.Reply, StringComparison.Ordinal);
        });
    }

    [Fact]
    public async Task A_no_wait_request_with_expires_held_up_by_max_ack_pending_gets_heartbeats_then_408_at_its_expiry()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            c.Timeout = TimeSpan.FromSeconds(20); // the heartbeats and the expiry come seconds apart
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.P", """{"name":"P","subjects":["p.>"],"storage":"memory"}""")) { }
            using (await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.P.D", """{"stream_name":"P","config":{"durable_name":"D","ack_policy":"explicit","max_ack_pending":1}}""")) { }
            await c.SendAsync("PUB p.1 1\r\na\r\nPUB p.2 1\r\nb\r\n");
            await c.PingPongAsync();
            await c.SendAsync("SUB _INBOX.pull 2\r\n");
            await NextAsync(c, "P", "D", "_INBOX.pull", """{"batch":1}""");
            Assert.Equal("p.1", (await c.ExpectMsgAsync()).Subject); // unacknowledged: max_ack_pending is reached

            // nats-server 2.9.10 keeps such a one-shot until its expiry (it does not expire one-shots
            // while max ack pending holds them), sending its heartbeats meanwhile.
            await NextAsync(c, "P", "D", "_INBOX.pull", """{"batch":1,"no_wait":true,"expires":3000000000,"idle_heartbeat":1000000000}""");
            var frames = new List<WireMessage>();
            do
            {
                frames.Add(await c.ExpectMsgAsync());
            }
            while (!frames[^1].HeaderText.StartsWith("NATS/1.0 408", StringComparison.Ordinal) && frames.Count < 10);

            Assert.All(frames, f => Assert.Equal("_INBOX.pull", f.Subject));
            Assert.StartsWith("NATS/1.0 100 Idle Heartbeat\r\n", frames[0].HeaderText, StringComparison.Ordinal);
            Assert.StartsWith("NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 1\r\nNats-Pending-Bytes: 0\r\n", frames[^1].HeaderText, StringComparison.Ordinal);
            Assert.All(frames[..^1], f => Assert.StartsWith("NATS/1.0 100 Idle Heartbeat\r\n", f.HeaderText, StringComparison.Ordinal));
        });
    }

    private static Task NextAsync(WireClient c, string stream, string consumer, string inbox, string body) =>
        c.SendAsync($"PUB $JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer} {inbox} {Encoding.UTF8.GetByteCount(body)}\r\n{body}\r\n");

    private static Task<WireClient> ConnectAsync(ServerProcess server) => JetStreamApiWire.ConnectAsync(server);

    private static Task<JsonDocument> RequestAsync(WireClient c, string subject, string body) => JetStreamApiWire.RequestAsync(c, subject, body);
}

[Trait("server", "nats-server")]
public sealed class JetStreamPullRequestTests_NatsServer(NatsServerFixture server) : JetStreamPullRequestTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class JetStreamPullRequestTests_Courier(CourierFixture server) : JetStreamPullRequestTests<CourierFixture>(server);
