using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Config;

/// <summary>Server-initiated PING keep-alive: ping_interval and ping_max.</summary>
public abstract class KeepAliveTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    // A PING every 300 ms; a client with more than 2 unanswered PINGs is stale.
    private const string AnsweringConfig = """
        ping_interval: "300ms"
        ping_max: 3
        """;

    private const string Config = """
        ping_interval: "300ms"
        ping_max: 2
        """;

    private readonly TServer _server;

    protected KeepAliveTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Client_that_never_answers_pings_gets_ping_max_pings_then_stale_connection_and_is_closed()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await WireClient.ConnectAsync(server);
        c.AnswerServerPings = false;

        await c.SendAsync($"CONNECT {WireClient.QuietConnect}\r\n");
        await c.ExpectAsync("PING\r\nPING\r\n-ERR 'Stale Connection'\r\n");
        await c.ExpectClosedAsync();
    }

    [Fact]
    public async Task Client_that_never_sends_connect_is_also_pinged_and_closed_as_stale()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await WireClient.ConnectAsync(server);
        c.AnswerServerPings = false;

        await c.ExpectAsync("PING\r\nPING\r\n-ERR 'Stale Connection'\r\n");
        await c.ExpectClosedAsync();
    }

    [Fact]
    public async Task Client_that_answers_pings_stays_connected()
    {
        // ping_max 3 leaves each PONG 900 ms to arrive on a loaded 2-core CI machine; 5 answered
        // PINGs are still more than ping_max.
        await using var server = await _server.StartServerAsync(AnsweringConfig);
        await using var c = await WireClient.ConnectAsync(server);
        c.AnswerServerPings = false;
        await c.SendAsync($"CONNECT {WireClient.QuietConnect}\r\n");

        // More PINGs than ping_max, each answered: the connection must survive them all.
        for (var i = 0; i < 5; i++)
        {
            await c.ExpectAsync("PING\r\n");
            await c.SendAsync("PONG\r\n");
        }

        c.AnswerServerPings = true;
        await c.PingPongAsync();
    }
}

[Trait("server", "nats-server")]
public sealed class KeepAliveTests_NatsServer(NatsServerFixture server) : KeepAliveTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class KeepAliveTests_Courier(CourierFixture server) : KeepAliveTests<CourierFixture>(server);
