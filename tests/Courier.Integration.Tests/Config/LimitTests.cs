using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Config;

/// <summary>Server limits from the config file: max_connections, max_subscriptions,
/// max_control_line, max_payload.</summary>
public abstract class LimitTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected LimitTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Connection_over_max_connections_gets_info_then_an_error_and_is_closed()
    {
        await using var server = await _server.StartServerAsync("max_connections: 2");
        await using var a = await WireClient.ConnectAsync(server);
        await using var b = await WireClient.ConnectAsync(server);
        await a.HandshakeAsync();
        await b.HandshakeAsync();

        // The server still sends INFO first (ConnectAsync expects it), then refuses.
        await using var c = await WireClient.ConnectAsync(server);
        await c.ExpectErrAndCloseAsync("maximum connections exceeded");
        await a.PingPongAsync();
        await b.PingPongAsync();
    }

    [Fact]
    public async Task Closing_a_connection_frees_its_place_under_max_connections()
    {
        await using var server = await _server.StartServerAsync("max_connections: 1");
        var first = await WireClient.ConnectAsync(server);
        await first.HandshakeAsync();
        await first.DisposeAsync();

        // The server notices the close asynchronously: retry, bounded.
        for (var attempt = 1; ; attempt++)
        {
            await using var next = await WireClient.ConnectAsync(server);
            var frame = await ReadFirstAsync(next);
            if (frame == "PONG\r\n")
            {
                return;
            }

            Assert.True(frame == "-ERR 'maximum connections exceeded'\r\n", $"unexpected reply {frame}\n{server.Diagnostics()}");
            Assert.True(attempt < 50, $"the closed connection's place was not freed after {attempt} attempts\n{server.Diagnostics()}");
            await Task.Delay(100);
        }
    }

    private static async Task<string> ReadFirstAsync(WireClient c)
    {
        await c.SendAsync($"CONNECT {WireClient.QuietConnect}\r\nPING\r\n");
        return System.Text.Encoding.UTF8.GetString(await c.ReadFrameAsync("PONG or -ERR"));
    }

    [Fact]
    public async Task Subscription_over_max_subscriptions_is_rejected_and_the_connection_stays_open()
    {
        var p = Subjects.NewPrefix();
        await using var server = await _server.StartServerAsync("max_subscriptions: 2");
        await using var c = await WireClient.ConnectAsync(server);
        await c.HandshakeAsync();

        await c.SendAsync($"SUB {p}.a 1\r\nSUB {p}.b 2\r\nSUB {p}.c 3\r\n");
        await c.ExpectAsync("-ERR 'maximum subscriptions exceeded'\r\n");
        await c.SendAsync($"PUB {p}.a 1\r\na\r\nPUB {p}.b 1\r\nb\r\nPUB {p}.c 1\r\nc\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p}.a 1 1\r\na\r\nMSG {p}.b 2 1\r\nb\r\nPONG\r\n");
    }

    [Fact]
    public async Task Unsubscribing_frees_a_place_under_max_subscriptions()
    {
        var p = Subjects.NewPrefix();
        await using var server = await _server.StartServerAsync("max_subscriptions: 2");
        await using var c = await WireClient.ConnectAsync(server);
        await c.HandshakeAsync();

        await c.SendAsync($"SUB {p}.a 1\r\nSUB {p}.b 2\r\nUNSUB 1\r\nSUB {p}.c 3\r\nPUB {p}.c 1\r\nc\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p}.c 3 1\r\nc\r\nPONG\r\n");
    }

    [Fact]
    public async Task Max_subscriptions_is_counted_per_connection()
    {
        var p = Subjects.NewPrefix();
        await using var server = await _server.StartServerAsync("max_subscriptions: 1");
        await using var a = await WireClient.ConnectAsync(server);
        await using var b = await WireClient.ConnectAsync(server);
        await a.HandshakeAsync();
        await b.HandshakeAsync();

        await a.SendAsync($"SUB {p} 1\r\n");
        await a.PingPongAsync();
        await b.SendAsync($"SUB {p} 1\r\n");
        await b.PingPongAsync();
    }

    [Fact]
    public async Task Control_line_over_a_configured_max_control_line_is_rejected_and_the_connection_closed()
    {
        var p = Subjects.NewPrefix();
        await using var server = await _server.StartServerAsync("max_control_line: 256");
        await using var ok = await WireClient.ConnectAsync(server);
        await using var c = await WireClient.ConnectAsync(server);
        await ok.HandshakeAsync();
        await c.HandshakeAsync();

        var fine = $"{p}.{new string('f', 150)}";
        await ok.SendAsync($"SUB {fine} 1\r\nPUB {fine} 2\r\nhi\r\n");
        await ok.ExpectAsync($"MSG {fine} 1 2\r\nhi\r\n");

        await c.SendAsync($"PUB {p}.{new string('x', 1000)} 2\r\n");
        await c.ExpectErrAndCloseAsync("maximum control line exceeded");
    }

    [Fact]
    public async Task Configured_max_payload_is_announced_and_enforced()
    {
        var p = Subjects.NewPrefix();
        await using var server = await _server.StartServerAsync("max_payload: 512");
        await using var c = await WireClient.ConnectAsync(server);
        Assert.True(c.Info.GetProperty("max_payload").GetInt64() == 512, $"INFO was {c.InfoLine}");
        await c.HandshakeAsync();

        var payload = new string('p', 512);
        await c.SendAsync($"SUB {p} 1\r\nPUB {p} 512\r\n{payload}\r\n");
        await c.ExpectAsync($"MSG {p} 1 512\r\n{payload}\r\n");
        await c.SendAsync($"PUB {p} 513\r\n");
        await c.ExpectErrAndCloseAsync("Maximum Payload Violation");
    }

    [Fact]
    public async Task Configured_max_payload_counts_headers_and_payload_together()
    {
        var p = Subjects.NewPrefix();
        await using var server = await _server.StartServerAsync("max_payload: 512");
        await using var c = await WireClient.ConnectAsync(server);
        await c.HandshakeAsync();

        await c.SendAsync($"HPUB {p} 100 513\r\n");
        await c.ExpectErrAndCloseAsync("Maximum Payload Violation");
    }
}

[Trait("server", "nats-server")]
public sealed class LimitTests_NatsServer(NatsServerFixture server) : LimitTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class LimitTests_Courier(CourierFixture server) : LimitTests<CourierFixture>(server);
