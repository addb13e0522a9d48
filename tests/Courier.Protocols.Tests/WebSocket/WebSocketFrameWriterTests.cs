using Courier.Protocols.WebSocket;
using Xunit;

namespace Courier.Protocols.Tests.WebSocket;

public sealed class WebSocketFrameWriterTests
{
    [Theory]
    [InlineData(0, new byte[] { 0x82, 0 })]
    [InlineData(125, new byte[] { 0x82, 125 })]
    [InlineData(126, new byte[] { 0x82, 126, 0, 126 })]
    [InlineData(65535, new byte[] { 0x82, 126, 0xff, 0xff })]
    [InlineData(65536, new byte[] { 0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0 })]
    public void A_binary_header_uses_the_shortest_length_form_and_no_mask(long length, byte[] expected)
    {
        var header = new byte[WebSocketFrameWriter.MaxHeaderSize];
        var size = WebSocketFrameWriter.WriteHeader(header, WebSocketOpcode.Binary, length);
        Assert.Equal(expected, header[..size]);
    }

    [Fact]
    public void A_compressed_header_sets_rsv1()
    {
        var header = new byte[WebSocketFrameWriter.MaxHeaderSize];
        WebSocketFrameWriter.WriteHeader(header, WebSocketOpcode.Binary, 3, compressed: true);
        Assert.Equal(0xC2, header[0]);
    }

    [Fact]
    public void A_close_frame_carries_the_status_and_a_reason_cut_to_fit_as_nats_server()
    {
        Assert.Equal(new byte[] { 0x88, 4, 0x03, 0xea, (byte)'n', (byte)'o' }, WebSocketFrameWriter.Close(1002, "no"));
        var longClose = WebSocketFrameWriter.Close(1002, new string('a', 200));
        Assert.Equal(2 + 125, longClose.Length);
        Assert.Equal("aa..."u8.ToArray(), longClose[^5..]);
    }

    [Fact]
    public void A_close_reply_echoes_the_status_and_refuses_a_reason_that_is_not_utf8()
    {
        Assert.Equal(WebSocketFrameWriter.Close(1000, "bye"), WebSocketFrameWriter.CloseReply([0x03, 0xe8, (byte)'b', (byte)'y', (byte)'e']));
        Assert.Equal(WebSocketFrameWriter.Close(1005, ""), WebSocketFrameWriter.CloseReply([]));
        Assert.Equal(WebSocketFrameWriter.Close(1007, "invalid utf8 body in close frame"), WebSocketFrameWriter.CloseReply([0x03, 0xe8, 0xff]));
    }

    [Fact]
    public void Deflate_round_trips_without_the_sync_tail()
    {
        var text = string.Concat(Enumerable.Repeat("MSG foo 1 5\r\nhello\r\n", 50));
        var data = System.Text.Encoding.ASCII.GetBytes(text);
        using var compressed = new MemoryStream();
        PerMessageDeflate.Compress([new ArraySegment<byte>(data, 0, 100), new ArraySegment<byte>(data, 100, data.Length - 100)], compressed);
        Assert.True(compressed.Length < data.Length);
        Assert.False(compressed.ToArray().AsSpan().EndsWith(new byte[] { 0, 0, 0xff, 0xff }));
        var output = new System.Buffers.ArrayBufferWriter<byte>();
        Assert.True(PerMessageDeflate.TryDecompress(compressed.ToArray(), 1 << 20, output));
        Assert.Equal(data, output.WrittenSpan.ToArray());
    }

    [Fact]
    public void Inflating_past_the_limit_or_garbage_fails()
    {
        var data = new byte[100_000];
        using var compressed = new MemoryStream();
        PerMessageDeflate.Compress([new ArraySegment<byte>(data)], compressed);
        Assert.False(PerMessageDeflate.TryDecompress(compressed.ToArray(), 10_000, new System.Buffers.ArrayBufferWriter<byte>()));
        Assert.False(PerMessageDeflate.TryDecompress([0xff, 0xff, 0xff, 0xff, 0xff], 10_000, new System.Buffers.ArrayBufferWriter<byte>()));
    }
}
