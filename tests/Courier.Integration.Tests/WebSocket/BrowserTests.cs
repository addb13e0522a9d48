using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.WebSocket;

/// <summary>
/// A page in headless Chromium connects with nats.ws through the browser's own WebSocket,
/// subscribes and publishes, and calls a service answered by a plain NATS client on TCP.
/// </summary>
public abstract class BrowserTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected BrowserTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task A_browser_page_publishes_subscribes_and_requests_over_websocket()
    {
        var server = _server.Server;
        await using var service = await WireClient.ConnectAsync(server);
        await service.HandshakeAsync(WireClient.QuietConnect);
        await service.SendAsync("SUB browser.service 1\r\nPING\r\n");
        await service.ExpectAsync("PONG\r\n");
        var answering = Task.Run(async () =>
        {
            var request = await service.ExpectMsgAsync();
            await service.SendAsync($"PUB {request.Reply} 4\r\npong\r\n");
        });

        await using var browser = new HeadlessBrowser();
        browser.Serve("/pub_sub.html", "text/html", await File.ReadAllBytesAsync(Path.Combine(RepositoryLayout.JsDirectory, "browser", "pub_sub.html")));
        browser.Serve("/nats.js", "text/javascript", await File.ReadAllBytesAsync(Path.Combine(RepositoryLayout.JsDirectory, "node_modules", "nats.ws", "esm", "nats.js")));
        var result = await browser.RunAsync("/pub_sub.html", $"?ws={Uri.EscapeDataString(server.WebSocketUrl)}");

        Assert.Equal("PASS pong", result);
        await answering;
    }
}

[Trait("server", "nats-server")]
public sealed class BrowserTests_NatsServer(NatsServerWebSocketFixture server) : BrowserTests<NatsServerWebSocketFixture>(server);

[Trait("server", "courier")]
public sealed class BrowserTests_Courier(CourierWebSocketFixture server) : BrowserTests<CourierWebSocketFixture>(server);
