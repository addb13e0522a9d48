using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>
/// The stream and consumer action advisories nats-server 2.9.10 publishes in the account
/// (<c>$JS.EVENT.ADVISORY.STREAM.*</c>, <c>$JS.EVENT.ADVISORY.CONSUMER.*</c>; issue 37).
/// </summary>
public abstract class JetStreamAdvisoryTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected JetStreamAdvisoryTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Creating_updating_and_deleting_streams_and_consumers_publishes_their_action_advisories()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var watcher = await WireClient.ConnectAsync(server);
            await watcher.HandshakeAsync();
            await watcher.SendAsync("SUB $JS.EVENT.ADVISORY.STREAM.> 1\r\nSUB $JS.EVENT.ADVISORY.CONSUMER.> 2\r\n");
            await watcher.PingPongAsync();

            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.api 9\r\n");
            foreach (var (subject, body) in new[]
            {
                ("$JS.API.STREAM.CREATE.ADV", """{"name":"ADV","subjects":["adv.>"],"storage":"memory"}"""),
                ("$JS.API.STREAM.UPDATE.ADV", """{"name":"ADV","subjects":["adv.>"],"storage":"memory","max_msgs":10}"""),
                ("$JS.API.CONSUMER.DURABLE.CREATE.ADV.D", """{"stream_name":"ADV","config":{"durable_name":"D","ack_policy":"explicit"}}"""),
                ("$JS.API.CONSUMER.DURABLE.CREATE.ADV.D", """{"stream_name":"ADV","config":{"durable_name":"D","ack_policy":"explicit"}}"""), // the same again: no new advisory
                ("$JS.API.CONSUMER.DELETE.ADV.D", ""),
                ("$JS.API.STREAM.DELETE.ADV", ""),
            })
            {
                await c.SendAsync($"PUB {subject} _INBOX.api {body.Length}\r\n{body}\r\n");
                var reply = await c.ExpectMsgAsync();
                Assert.DoesNotContain("\"error\"", reply.PayloadText, StringComparison.Ordinal);
            }

            var expected = new[]
            {
                ("$JS.EVENT.ADVISORY.STREAM.CREATED.ADV", "io.nats.jetstream.advisory.v1.stream_action", "ADV", (string?)null, "create"),
                ("$JS.EVENT.ADVISORY.STREAM.UPDATED.ADV", "io.nats.jetstream.advisory.v1.stream_action", "ADV", null, "modify"),
                ("$JS.EVENT.ADVISORY.CONSUMER.CREATED.ADV.D", "io.nats.jetstream.advisory.v1.consumer_action", "ADV", "D", "create"),
                ("$JS.EVENT.ADVISORY.CONSUMER.DELETED.ADV.D", "io.nats.jetstream.advisory.v1.consumer_action", "ADV", "D", "delete"),
                ("$JS.EVENT.ADVISORY.STREAM.DELETED.ADV", "io.nats.jetstream.advisory.v1.stream_action", "ADV", null, "delete"),
            };
            var seen = new List<(string, string, string, string?, string)>();
            foreach (var _ in expected)
            {
                var msg = await watcher.ExpectMsgAsync();
                using var doc = JsonDocument.Parse(msg.Payload);
                var root = doc.RootElement;
                Assert.False(string.IsNullOrEmpty(root.GetProperty("id").GetString()));
                Assert.InRange(root.GetProperty("timestamp").GetDateTime(), DateTime.UtcNow.AddMinutes(-1), DateTime.UtcNow.AddMinutes(1));
                seen.Add((msg.Subject, root.GetProperty("type").GetString()!, root.GetProperty("stream").GetString()!,
                    root.TryGetProperty("consumer", out var consumer) ? consumer.GetString() : null, root.GetProperty("action").GetString()!));
            }

            // Each in order within its kind; streams and consumers are separate subscriptions, so compare as a set.
            Assert.Equal(expected.OrderBy(e => e.Item1, StringComparer.Ordinal), seen.OrderBy(e => e.Item1, StringComparer.Ordinal));
            await watcher.PingPongAsync(); // nothing more (the second create of D changed nothing)
        });
    }
}

[Trait("server", "nats-server")]
public sealed class JetStreamAdvisoryTests_NatsServer(NatsServerFixture server) : JetStreamAdvisoryTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class JetStreamAdvisoryTests_Courier(CourierFixture server) : JetStreamAdvisoryTests<CourierFixture>(server);
