using System.Text;
using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>
/// Push consumer flow control on the wire, where a client library would hide it: the
/// <c>100 FlowControl Request</c>, the stall when it goes unanswered, the idle heartbeats naming
/// the request in <c>Nats-Consumer-Stalled</c>, and delivery resuming once it is answered.
/// </summary>
public abstract class JetStreamFlowControlTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const int Count = 400;
    private const int Size = 8000; // bytes per payload: 400 of them are 3.2 MB, past the first 2 MiB window

    private readonly TServer _server;

    protected JetStreamFlowControlTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task An_unanswered_flow_control_request_stalls_delivery_and_heartbeats_name_it_until_answered()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            var p = Subjects.NewPrefix();
            var stream = p.Replace('.', '_').ToUpperInvariant();
            var deliver = $"{p}.deliver";

            // SUB <subject> <sid>: API replies (1), PubAcks (2), the consumer's deliveries (3).
            await c.SendAsync($"SUB {p}.api 1\r\nSUB {p}.acks 2\r\nSUB {deliver} 3\r\n");
            await RequestAsync(c, $"$JS.API.STREAM.CREATE.{stream}", $"{p}.api", $$"""{"name":"{{stream}}","subjects":["{{p}}.m"],"storage":"memory"}""");

            // PUB <subject> <reply> <#bytes>, acknowledged one by one: every message stored before the consumer starts.
            var payload = new string('x', Size);
            var publishes = new StringBuilder();
            for (var i = 0; i < Count; i++)
            {
                publishes.Append(System.Globalization.CultureInfo.InvariantCulture, $"PUB {p}.m {p}.acks {Size}\r\n{payload}\r\n");
            }

            await c.SendAsync(publishes.ToString());
            for (var i = 0; i < Count; i++)
            {
                Assert.Equal("2", (await c.ExpectMsgAsync()).Sid);
            }

            // CONSUMER.CREATE.<stream>.<name>; its reply and the first deliveries may arrive in either order.
            var create = $$$"""{"stream_name":"{{{stream}}}","config":{"durable_name":"FC","deliver_subject":"{{{deliver}}}","ack_policy":"none","flow_control":true,"idle_heartbeat":250000000}}""";
            await c.SendAsync($"PUB $JS.API.CONSUMER.CREATE.{stream}.FC {p}.api {Encoding.UTF8.GetByteCount(create)}\r\n{create}\r\n");

            // Messages until the flow control request, more until the window is full, then only heartbeats.
            var delivered = 0;
            var created = false;
            string? request = null;
            string? stalled = null;
            while (stalled is null || !created) // on a busy machine the create reply can trail the first heartbeat
            {
                var m = await c.ExpectMsgAsync();
                if (m.Sid == "1")
                {
                    AssertNoError(m, "consumer create");
                    created = true;
                }
                else if (m.Payload.Length == Size)
                {
                    Assert.StartsWith($"$JS.ACK.{stream}.FC.1.", m.Reply);
                    delivered++;
                }
                else if (m.HeaderText.StartsWith("NATS/1.0 100 FlowControl Request\r\n", StringComparison.Ordinal))
                {
                    Assert.Null(request);
                    Assert.Equal("NATS/1.0 100 FlowControl Request\r\n\r\n", m.HeaderText);
                    Assert.StartsWith($"$JS.FC.{stream}.FC.", m.Reply);
                    request = m.Reply;
                }
                else
                {
                    Assert.StartsWith("NATS/1.0 100 Idle Heartbeat\r\n", m.HeaderText);
                    stalled = Header(m, "Nats-Consumer-Stalled");
                }
            }

            Assert.True(created, "no reply to the consumer create request");
            Assert.NotNull(request);
            Assert.Equal(request, stalled);
            Assert.InRange(delivered, 1, Count - 1);
            Assert.Equal(delivered.ToString(System.Globalization.CultureInfo.InvariantCulture), Header(await ExpectHeartbeatAsync(c, stalled), "Nats-Last-Consumer"));

            // PUB <flow control reply> 0: delivery resumes and completes.
            await c.SendAsync($"PUB {request} 0\r\n\r\n");
            while (delivered < Count)
            {
                var m = await c.ExpectMsgAsync();
                if (m.Payload.Length == Size)
                {
                    delivered++;
                }
                else if (m.Reply is { } next && next.StartsWith("$JS.FC.", StringComparison.Ordinal))
                {
                    await c.SendAsync($"PUB {next} 0\r\n\r\n");
                }
            }
        });
    }

    // PUB <api subject> <reply> <#bytes>: the JSON reply must not be an error.
    private static async Task RequestAsync(WireClient c, string subject, string reply, string json)
    {
        await c.SendAsync($"PUB {subject} {reply} {Encoding.UTF8.GetByteCount(json)}\r\n{json}\r\n");
        var response = await c.ExpectMsgAsync();
        Assert.Equal("1", response.Sid);
        AssertNoError(response, subject);
    }

    private static void AssertNoError(WireMessage response, string what)
    {
        using var doc = JsonDocument.Parse(response.Payload);
        Assert.False(doc.RootElement.TryGetProperty("error", out var error), $"{what}: {error}");
    }

    // While stalled nothing but heartbeats arrives, each naming the same request.
    private static async Task<WireMessage> ExpectHeartbeatAsync(WireClient c, string request)
    {
        var m = await c.ExpectMsgAsync();
        Assert.StartsWith("NATS/1.0 100 Idle Heartbeat\r\n", m.HeaderText);
        Assert.Empty(m.Payload);
        Assert.Equal(request, Header(m, "Nats-Consumer-Stalled"));
        return m;
    }

    private static string? Header(WireMessage m, string name)
    {
        foreach (var line in m.HeaderText.Split("\r\n"))
        {
            if (line.StartsWith(name + ": ", StringComparison.Ordinal))
            {
                return line[(name.Length + 2)..];
            }
        }

        return null;
    }
}

[Trait("server", "nats-server")]
public sealed class JetStreamFlowControlTests_NatsServer(NatsServerFixture server) : JetStreamFlowControlTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class JetStreamFlowControlTests_Courier(CourierFixture server) : JetStreamFlowControlTests<CourierFixture>(server);
