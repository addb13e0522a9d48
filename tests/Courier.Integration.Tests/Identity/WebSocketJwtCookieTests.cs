using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Identity;

/// <summary>
/// <c>websocket { jwt_cookie: "jwt" }</c> in operator mode: a WebSocket client whose CONNECT has no
/// <c>jwt</c> logs in with the JWT of that cookie of its upgrade request (a bearer user JWT needs no
/// signature of the nonce); a CONNECT's own JWT wins over the cookie, as in nats-server 2.9.10.
/// </summary>
public abstract class WebSocketJwtCookieTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string QuietConnect = "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true}\r\n";

    private readonly TServer _server;
    private readonly TestOperator _operator = new();

    protected WebSocketJwtCookieTests(TServer server)
    {
        _server = server;
    }

    private Task<ServerProcess> StartAsync(TestAccount account) =>
        _server.StartServerAsync(_operator.Config([account]) + "\nwebsocket { host: 127.0.0.1, port: -1, no_tls: true, jwt_cookie: \"jwt\" }\n");

    private static async Task<RawWebSocket> OpenAsync(ServerProcess server, string? cookie)
    {
        var ws = await RawWebSocket.ConnectAsync(server, RawWebSocket.UpgradeRequest(server.WebSocketPort, cookie is null ? "" : $"Cookie: theme=dark; jwt={cookie}\r\n"));
        Assert.Equal(101, ws.Status);
        await ws.ExpectTextAsync("INFO ");
        return ws;
    }

    [Fact]
    public async Task A_bearer_user_JWT_in_the_cookie_logs_in_a_CONNECT_without_one()
    {
        var p = Subjects.NewPrefix();
        var account = _operator.NewAccount("A");
        var bearer = TestOperator.NewUser(account, nats => nats["bearer_token"] = true);
        await using var server = await StartAsync(account);

        await using var ws = await OpenAsync(server, bearer.Jwt);
        await ws.SendAsync(QuietConnect + $"SUB {p} 1\r\nPING\r\n");
        await ws.ExpectTextAsync("PONG\r\n");

        // It is in account A: a TCP user of A reaches it.
        await using var tcp = await WireClient.ConnectAsync(server);
        await tcp.SendAsync($"CONNECT {TestOperator.NewUser(account).Connect(tcp.Info.GetProperty("nonce").GetString()!)}\r\nPUB {p} 2\r\nhi\r\n");
        await tcp.PingPongAsync();
        Assert.Contains($"MSG {p} 1 2\r\nhi\r\n", await ws.ExpectTextAsync("hi\r\n"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Without_the_cookie_or_a_JWT_the_websocket_client_is_refused()
    {
        var account = _operator.NewAccount("A");
        await using var server = await StartAsync(account);

        await using var ws = await OpenAsync(server, null);
        await ws.SendAsync(QuietConnect + "PING\r\n");
        Assert.Contains("-ERR 'Authorization Violation'", await ws.ExpectTextAsync("-ERR"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_JWT_in_the_CONNECT_wins_over_the_cookie()
    {
        var account = _operator.NewAccount("A");
        var unknown = _operator.NewAccount("NOT_PRELOADED");
        var bearer = TestOperator.NewUser(account, nats => nats["bearer_token"] = true);
        var stranger = TestOperator.NewUser(unknown, nats => nats["bearer_token"] = true);
        await using var server = await StartAsync(account);

        // The cookie names a user of an account the resolver does not know; the CONNECT's JWT is used.
        await using var ws = await OpenAsync(server, stranger.Jwt);
        await ws.SendAsync($"CONNECT {{\"verbose\":false,\"pedantic\":false,\"jwt\":\"{bearer.Jwt}\"}}\r\nPING\r\n");
        await ws.ExpectTextAsync("PONG\r\n");

        await using var refused = await OpenAsync(server, stranger.Jwt);
        await refused.SendAsync(QuietConnect + "PING\r\n");
        Assert.Contains("-ERR 'Authorization Violation'", await refused.ExpectTextAsync("-ERR"), StringComparison.Ordinal);
    }
}

[Trait("server", "nats-server")]
public sealed class WebSocketJwtCookieTests_NatsServer(NatsServerFixture server) : WebSocketJwtCookieTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class WebSocketJwtCookieTests_Courier(CourierFixture server) : WebSocketJwtCookieTests<CourierFixture>(server);
