using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.WebSocket;

/// <summary>
/// Where Courier is stricter than nats-server 2.9.10, which has no frame size limit (it trusts a
/// declared 64-bit length and waits for the bytes) and may lose its close frame in a race with the
/// socket's close: Courier refuses an oversized frame from its header, and always says why.
/// </summary>
[Trait("server", "courier")]
public sealed class WebSocketCourierTests(CourierWebSocketFixture fixture) : IClassFixture<CourierWebSocketFixture>
{
    private async Task<RawWebSocket> OpenAsync()
    {
        var ws = await RawWebSocket.ConnectAsync(fixture.Server);
        Assert.Equal(101, ws.Status);
        await ws.ExpectTextAsync("INFO ");
        return ws;
    }

    [Fact]
    public async Task A_frame_declaring_more_than_max_pending_gets_a_1009_close_before_any_payload_is_sent()
    {
        await using var other = await OpenAsync();
        await other.SendAsync("CONNECT {\"verbose\":false}\r\nSUB ws.still 1\r\nPING\r\n");
        await other.ExpectTextAsync("PONG\r\n");

        await using var ws = await OpenAsync();
        await ws.SendRawAsync(RawWebSocket.Frame(ServerFrame.Binary, [], declaredLength: 1UL << 40));
        var close = await ws.ExpectCloseAsync();
        Assert.Equal(1009, close.CloseStatus);
        Assert.StartsWith("frame payload bigger than maximum allowed", close.CloseReason, StringComparison.Ordinal);

        await other.SendAsync("PUB ws.still 2\r\nok\r\nPING\r\n");
        Assert.Equal("MSG ws.still 1 2\r\nok\r\nPONG\r\n", await other.ExpectTextAsync("PONG\r\n"));
    }

    [Theory]
    [InlineData("control frame length bigger than maximum allowed of 125 bytes")]
    [InlineData("control frame does not have final bit set")]
    [InlineData("invalid continuation frame")]
    [InlineData("new message started before final frame for previous message was received")]
    [InlineData("unknown opcode 3")]
    [InlineData("mask bit missing")]
    public async Task Every_framing_violation_gets_its_1002_close_frame(string reason)
    {
        await using var ws = await OpenAsync();
        await ws.SendRawAsync(WebSocketWireTests<CourierWebSocketFixture>.ViolationFor(reason));
        var close = await ws.ExpectCloseAsync();
        Assert.Equal(1002, close.CloseStatus);
        Assert.Equal(reason, close.CloseReason);
    }

    [Fact]
    public async Task A_request_head_that_never_ends_is_refused_with_431()
    {
        var huge = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: " + new string('a', 70 * 1024);
        await using var ws = await RawWebSocket.ConnectAsync(fixture.Server, huge);
        Assert.Equal(431, ws.Status);
    }
}
