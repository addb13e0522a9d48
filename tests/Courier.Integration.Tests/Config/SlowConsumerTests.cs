using System.Text;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Config;

/// <summary>A subscriber that stops reading is cut off once its pending bytes pass max_pending.</summary>
public abstract class SlowConsumerTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    // max_payload may not exceed max_pending (nats-server refuses to start); equal is allowed.
    // nats-server may also be blocked writing to the full socket when the limit is passed; then
    // write_deadline decides (default 10 s), so it is short here too. Either way it is a slow consumer.
    private const string Config = """
        max_pending: 65536
        max_payload: 65536
        write_deadline: "1s"
        """;

    private const int MessageSize = 60_000; // bytes: one message takes pending bytes close to the limit
    private const int MaxMessages = 2_000; // about 120 MB: far more than loopback socket buffers hold
    private const int CheckEvery = 5; // messages between /varz polls
    private static readonly TimeSpan FloodLimit = TimeSpan.FromSeconds(60);

    private readonly TServer _server;

    protected SlowConsumerTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Subscriber_that_stops_reading_is_closed_as_a_slow_consumer_and_counted()
    {
        var p = Subjects.NewPrefix();
        await using var server = await _server.StartServerAsync(Config);
        using var monitor = new MonitorClient(server);
        await using var slow = await WireClient.ConnectAsync(server, receiveBufferSize: 4096);
        await slow.HandshakeAsync();
        await slow.SendAsync($"SUB {p} 1\r\n");
        await slow.PingPongAsync();
        var slowPort = slow.LocalPort;
        await using var pub = await WireClient.ConnectAsync(server);
        pub.Timeout = TimeSpan.FromSeconds(20); // nats-server stalls a fast producer for a while
        await pub.HandshakeAsync();

        var frame = Encoding.ASCII.GetBytes($"PUB {p} {MessageSize}\r\n{new string('s', MessageSize)}\r\n");
        var started = DateTime.UtcNow;
        var sent = 0;
        long slowConsumers = 0;
        while (slowConsumers == 0)
        {
            Assert.True(
                sent < MaxMessages && DateTime.UtcNow - started < FloodLimit,
                $"no slow consumer after {sent} messages of {MessageSize} bytes\n{server.Diagnostics()}");
            await pub.SendAsync(frame);
            sent++;
            if (sent % CheckEvery == 0)
            {
                slowConsumers = (await monitor.GetJsonAsync("/varz")).GetProperty("slow_consumers").GetInt64();
            }
        }

        // The publisher is unaffected; the subscriber gets what was buffered, then the close.
        await pub.PingPongAsync();
        slow.Timeout = TimeSpan.FromSeconds(20);
        var received = await slow.ExpectMessagesThenClosedAsync(maxFrames: sent);
        Assert.True(received < sent, $"the slow consumer received all {sent} messages");
        Assert.True(slowConsumers >= 1);

        // /connz?state=closed keeps the reason: "Slow Consumer (Pending Bytes)" or "(Write Deadline)".
        var closed = await monitor.GetConnectionAsync(slowPort, "state=closed");
        var reason = closed.GetProperty("reason").GetString();
        Assert.True(reason is not null && reason.StartsWith("Slow Consumer", StringComparison.Ordinal), $"closed connection: {closed}");
    }
}

[Trait("server", "nats-server")]
public sealed class SlowConsumerTests_NatsServer(NatsServerFixture server) : SlowConsumerTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class SlowConsumerTests_Courier(CourierFixture server) : SlowConsumerTests<CourierFixture>(server);
