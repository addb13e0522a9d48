using System.Buffers.Binary;
using System.Text;
using System.Text.Unicode;

namespace Courier.Protocols.WebSocket;

/// <summary>
/// Formats server frames (RFC 6455 §5.2): never masked; data goes out as one binary frame per
/// write batch, with the header sized for the whole batch.
/// </summary>
internal static class WebSocketFrameWriter
{
    /// <summary>Bytes: the largest header of an unmasked server frame (2 + 8-byte length).</summary>
    public const int MaxHeaderSize = 10;

    private const int MaxControlPayload = 125; // bytes, RFC 6455 §5.5

    /// <summary>
    /// Writes the header of a final, unmasked frame carrying <paramref name="length"/> payload bytes;
    /// returns its size (2, 4 or 10 bytes).
    /// </summary>
    public static int WriteHeader(Span<byte> destination, WebSocketOpcode opcode, long length, bool compressed = false, bool final = true)
    {
        var b0 = (byte)opcode;
        if (final)
        {
            b0 |= 0x80;
        }

        if (compressed)
        {
            b0 |= 0x40; // RSV1: permessage-deflate, RFC 7692 §6
        }

        destination[0] = b0;
        if (length <= 125)
        {
            destination[1] = (byte)length;
            return 2;
        }

        if (length <= ushort.MaxValue)
        {
            destination[1] = 126;
            BinaryPrimitives.WriteUInt16BigEndian(destination[2..], (ushort)length);
            return 4;
        }

        destination[1] = 127;
        BinaryPrimitives.WriteUInt64BigEndian(destination[2..], (ulong)length);
        return 10;
    }

    /// <summary>A whole control frame (ping, pong) with <paramref name="payload"/> (at most 125 bytes).</summary>
    public static byte[] Control(WebSocketOpcode opcode, ReadOnlySpan<byte> payload)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(payload.Length, MaxControlPayload);
        var frame = new byte[2 + payload.Length];
        WriteHeader(frame, opcode, payload.Length);
        payload.CopyTo(frame.AsSpan(2));
        return frame;
    }

    /// <summary>
    /// A close frame: the 2-byte status then <paramref name="reason"/>, which, as nats-server does,
    /// is cut to 120 bytes and ends in "..." when it would not fit the 125-byte control payload.
    /// </summary>
    public static byte[] Close(ushort status, string reason)
    {
        var text = Encoding.UTF8.GetBytes(reason);
        if (text.Length > MaxControlPayload - 2)
        {
            var cut = new byte[MaxControlPayload - 2];
            text.AsSpan(0, MaxControlPayload - 5).CopyTo(cut);
            "..."u8.CopyTo(cut.AsSpan(MaxControlPayload - 5));
            text = cut;
        }

        var payload = new byte[2 + text.Length];
        BinaryPrimitives.WriteUInt16BigEndian(payload, status);
        text.CopyTo(payload, 2);
        return Control(WebSocketOpcode.Close, payload);
    }

    /// <summary>
    /// The close frame answering a client's close frame with <paramref name="payload"/>: its status
    /// echoed (1005 when it had none), and 1007 when its reason is not UTF-8, as nats-server.
    /// </summary>
    public static byte[] CloseReply(ReadOnlySpan<byte> payload)
    {
        if (payload.Length < 2)
        {
            return Close(WebSocketCloseStatus.NoStatusReceived, "");
        }

        var status = BinaryPrimitives.ReadUInt16BigEndian(payload);
        var body = payload[2..];
        if (!Utf8.IsValid(body))
        {
            return Close(WebSocketCloseStatus.InvalidPayloadData, "invalid utf8 body in close frame");
        }

        return Close(status, Encoding.UTF8.GetString(body));
    }
}
