using System.Text;
using Courier.Protocols.WebSocket;
using Xunit;

namespace Courier.Protocols.Tests.WebSocket;

public sealed class WebSocketFrameReaderTests
{
    private const long Max = 1 << 20; // bytes: the frame limit these readers are made with

    private static WebSocketFrameReader Reader() => new(Max);

    private static WebSocketFrameReader CompressingReader() => new(Max, compressionNegotiated: true);

    [Fact]
    public void A_masked_binary_frame_is_unmasked_at_every_split()
    {
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Binary("PUB foo 5\r\nhello\r\n"), "msg:PUB foo 5\r\nhello\r\n");
    }

    [Fact]
    public void A_text_frame_is_data_as_nats_server_reads_it()
    {
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Frame(WebSocketOpcode.Text, "PING\r\n"u8.ToArray()), "msg:PING\r\n");
    }

    [Fact]
    public void Sixteen_and_sixty_four_bit_lengths_are_read_at_every_split()
    {
        var payload = new string('x', 300);
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Binary(payload), "msg:" + payload);
        var big = Encoding.ASCII.GetBytes(payload);
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Frame(WebSocketOpcode.Binary, big, lengthForm: 64), "msg:" + payload);
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Frame(WebSocketOpcode.Binary, "ab"u8.ToArray(), lengthForm: 16), "msg:ab");
    }

    [Fact]
    public void A_fragmented_message_with_a_ping_between_fragments_is_one_message_and_one_ping()
    {
        var input = ClientFrames.Concat(
            ClientFrames.Binary("PUB foo", final: false),
            ClientFrames.Frame(WebSocketOpcode.Ping, "hi"u8.ToArray()),
            ClientFrames.Frame(WebSocketOpcode.Continuation, " 2\r\n"u8.ToArray(), final: false),
            ClientFrames.Frame(WebSocketOpcode.Continuation, "ok\r\n"u8.ToArray()),
            ClientFrames.Binary("PING\r\n"));
        FrameFeeds.AssertEveryFeeding(Reader, input, "ping:hi", "msg:PUB foo 2\r\nok\r\n", "msg:PING\r\n");
    }

    [Fact]
    public void Empty_frames_pong_and_close_are_events()
    {
        var input = ClientFrames.Concat(
            ClientFrames.Binary(""),
            ClientFrames.Frame(WebSocketOpcode.Pong, []),
            ClientFrames.Frame(WebSocketOpcode.Close, [0x03, 0xe8, (byte)'b', (byte)'y', (byte)'e']));
        FrameFeeds.AssertEveryFeeding(Reader, input, "msg:", "pong:", "close:\u0003\u00e8bye");
    }

    [Fact]
    public void A_compressed_message_is_flagged_on_its_data_when_negotiated()
    {
        var input = ClientFrames.Concat(
            ClientFrames.Frame(WebSocketOpcode.Binary, "ab"u8.ToArray(), final: false, rsv: 0x40),
            ClientFrames.Frame(WebSocketOpcode.Continuation, "cd"u8.ToArray()));
        FrameFeeds.AssertEveryFeeding(CompressingReader, input, "zmsg:abcd");
    }

    [Fact]
    public void An_unmasked_client_frame_is_a_protocol_error()
    {
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Frame(WebSocketOpcode.Binary, "x"u8.ToArray(), masked: false),
            "error:1002:mask bit missing");
    }

    [Fact]
    public void An_unmasked_frame_is_accepted_when_the_client_asked_for_no_masking()
    {
        FrameFeeds.AssertEveryFeeding(() => new WebSocketFrameReader(Max, requireMask: false),
            ClientFrames.Frame(WebSocketOpcode.Binary, "x"u8.ToArray(), masked: false), "msg:x");
    }

    [Fact]
    public void A_control_frame_over_125_bytes_is_a_protocol_error()
    {
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Frame(WebSocketOpcode.Ping, new byte[126]),
            "error:1002:control frame length bigger than maximum allowed of 125 bytes");
    }

    [Fact]
    public void A_fragmented_control_frame_is_a_protocol_error()
    {
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Frame(WebSocketOpcode.Ping, "a"u8.ToArray(), final: false),
            "error:1002:control frame does not have final bit set");
    }

    [Fact]
    public void A_new_message_before_the_final_fragment_is_a_protocol_error()
    {
        var input = ClientFrames.Concat(ClientFrames.Binary("a", final: false), ClientFrames.Binary("b"));
        FrameFeeds.AssertEveryFeeding(Reader, input,
            "error:1002:new message started before final frame for previous message was received");
    }

    [Fact]
    public void A_continuation_without_a_message_is_a_protocol_error()
    {
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Frame(WebSocketOpcode.Continuation, "a"u8.ToArray()),
            "error:1002:invalid continuation frame");
    }

    [Fact]
    public void A_continuation_with_rsv1_is_a_protocol_error()
    {
        var input = ClientFrames.Concat(
            ClientFrames.Frame(WebSocketOpcode.Binary, "a"u8.ToArray(), final: false, rsv: 0x40),
            ClientFrames.Frame(WebSocketOpcode.Continuation, "b"u8.ToArray(), rsv: 0x40));
        FrameFeeds.AssertEveryFeeding(CompressingReader, input, "error:1002:invalid continuation frame");
    }

    [Fact]
    public void An_unknown_opcode_is_a_protocol_error()
    {
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Frame((WebSocketOpcode)0x3, "a"u8.ToArray()), "error:1002:unknown opcode 3");
    }

    [Fact]
    public void Reserved_bits_are_a_protocol_error_and_rsv1_is_one_without_compression()
    {
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Frame(WebSocketOpcode.Binary, "a"u8.ToArray(), rsv: 0x20), "error:1002:reserved bits set");
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Frame(WebSocketOpcode.Binary, "a"u8.ToArray(), rsv: 0x40), "error:1002:reserved bits set");
        FrameFeeds.AssertEveryFeeding(CompressingReader, ClientFrames.Frame(WebSocketOpcode.Ping, "a"u8.ToArray(), rsv: 0x40), "error:1002:reserved bits set");
    }

    [Fact]
    public void A_frame_declaring_more_than_the_limit_is_refused_from_its_header()
    {
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Header64(WebSocketOpcode.Binary, Max + 1),
            $"error:1009:frame payload bigger than maximum allowed of {Max} bytes");
        FrameFeeds.AssertEveryFeeding(Reader, ClientFrames.Header64(WebSocketOpcode.Binary, ulong.MaxValue),
            $"error:1009:frame payload bigger than maximum allowed of {Max} bytes");
        FrameFeeds.AssertEveryFeeding(() => new WebSocketFrameReader(100), ClientFrames.Frame(WebSocketOpcode.Binary, new byte[101]),
            "error:1009:frame payload bigger than maximum allowed of 100 bytes");
    }

    [Fact]
    public void Unmask_continues_the_key_across_calls_of_any_length()
    {
        var payload = Enumerable.Range(0, 37).Select(i => (byte)i).ToArray();
        var key = 0x12345678u;
        byte[] keyBytes = [0x12, 0x34, 0x56, 0x78];
        var expected = payload.Select((b, i) => (byte)(b ^ keyBytes[i & 3])).ToArray();
        for (var split = 0; split <= payload.Length; split++)
        {
            var data = (byte[])payload.Clone();
            var position = WebSocketFrameReader.Unmask(data.AsSpan(0, split), key, 0);
            WebSocketFrameReader.Unmask(data.AsSpan(split), key, position);
            Assert.Equal(expected, data);
        }
    }
}
