using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.WebSocket;

/// <summary>
/// The unmodified nats.ws client (nats.js over WebSocket, npm <c>nats.ws</c>, with npm <c>ws</c> as
/// the global WebSocket) against the server's WebSocket listener, with compression off and on.
/// </summary>
public abstract class NatsWsTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected NatsWsTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public Task Nats_ws_publishes_subscribes_requests_and_keeps_order_without_compression() =>
        NodeScript.RunAsync("ws_pub_sub", _server.Server, _server.Server.WebSocketUrl, new Dictionary<string, string> { ["WS_COMPRESSION"] = "0" });

    [Fact]
    public async Task Nats_ws_negotiates_permessage_deflate_and_round_trips_compressed_frames()
    {
        await using var server = await _server.StartServerAsync(WebSocketConfig.Compressing);
        await NodeScript.RunAsync("ws_pub_sub", server, server.WebSocketUrl, new Dictionary<string, string> { ["WS_COMPRESSION"] = "1" });
    }

    [Fact]
    public async Task Nats_ws_talks_to_a_plain_nats_client_on_the_same_server()
    {
        await using var server = await _server.StartServerAsync(WebSocketConfig.Plain);
        await using var tcp = await WireClient.ConnectAsync(server);
        await tcp.HandshakeAsync(WireClient.QuietConnect);
        await tcp.SendAsync("SUB ws.bridge.> 1\r\nPING\r\n");
        await tcp.ExpectAsync("PONG\r\n");
        await NodeScript.RunAsync("ws_publish_one", server, server.WebSocketUrl);
        await tcp.ExpectAsync("MSG ws.bridge.hello 1 8\r\nfrom ws!\r\n");
    }
}

[Trait("server", "nats-server")]
public sealed class NatsWsTests_NatsServer(NatsServerWebSocketFixture server) : NatsWsTests<NatsServerWebSocketFixture>(server);

[Trait("server", "courier")]
public sealed class NatsWsTests_Courier(CourierWebSocketFixture server) : NatsWsTests<CourierWebSocketFixture>(server);
