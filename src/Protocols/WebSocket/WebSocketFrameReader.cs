using System.Buffers.Binary;
using System.Runtime.CompilerServices;

namespace Courier.Protocols.WebSocket;

/// <summary>
/// Decodes client frames (RFC 6455 §5.2) from a mutable buffer, unmasking payloads in place. One
/// event per call; a frame's payload may come in many <see cref="WebSocketReadStatus.Data"/> events
/// as its bytes arrive, so nothing is buffered or allocated here.
/// </summary>
/// <remarks>
/// Rules, as nats-server's <c>wsRead</c> checks them, in its order: client frames must be masked
/// (unless the client asked for <c>Nats-No-Masking</c>); control frames carry at most 125 bytes and
/// are never fragmented; a data message may not start before the previous one's final frame; a
/// continuation needs an open message and never carries RSV1; unknown opcodes are errors. Beyond
/// nats-server, a declared payload length over <c>maxFramePayload</c> is refused from the header
/// alone (1009), before any of it is read, and RSV2/RSV3 (and RSV1 unless compression was
/// negotiated) are protocol errors, as RFC 6455 §5.2 requires.
/// </remarks>
internal sealed class WebSocketFrameReader
{
    private const int MaxControlPayload = 125; // bytes, RFC 6455 §5.5
    private const byte FinBit = 0x80;
    private const byte Rsv1Bit = 0x40;
    private const byte Rsv23Bits = 0x30;
    private const byte MaskBit = 0x80;

    private readonly long _maxFramePayload;
    private readonly bool _requireMask;
    private readonly bool _compressionNegotiated;

    // The data frame being read: payload bytes still to come, its mask and position in it.
    private bool _inFrame;
    private long _remaining;
    private bool _frameMasked;
    private uint _mask;
    private int _maskPosition;
    private bool _frameFinal;

    // The message being read: true once a data frame without FIN started it (continuations expected).
    private bool _messageOpen;
    private bool _messageCompressed;

    public WebSocketFrameReader(long maxFramePayload, bool requireMask = true, bool compressionNegotiated = false)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxFramePayload);
        _maxFramePayload = maxFramePayload;
        _requireMask = requireMask;
        _compressionNegotiated = compressionNegotiated;
    }

    /// <summary>
    /// Reads the next event from <paramref name="input"/>. <paramref name="consumed"/> bytes of it are
    /// used up (the caller keeps the rest for the next call); the event's payload range lies within them.
    /// </summary>
    public WebSocketReadStatus Read(Span<byte> input, out int consumed, out WebSocketFrame frame)
    {
        if (_inFrame)
        {
            return ReadPayload(input, 0, out consumed, out frame);
        }

        consumed = 0;
        frame = default;
        if (input.Length < 2)
        {
            return WebSocketReadStatus.NeedMoreData;
        }

        var b0 = input[0];
        var b1 = input[1];
        var opcode = (WebSocketOpcode)(b0 & 0x0F);
        var final = (b0 & FinBit) != 0;
        var compressed = (b0 & Rsv1Bit) != 0;
        var masked = (b1 & MaskBit) != 0;

        // The order of checks is nats-server's: mask, then control frame rules, then opcode rules.
        if (!masked && _requireMask)
        {
            return Fail(WebSocketCloseStatus.ProtocolError, "mask bit missing", out frame);
        }

        var length7 = b1 & 0x7F;
        var isControl = opcode is WebSocketOpcode.Close or WebSocketOpcode.Ping or WebSocketOpcode.Pong;
        switch (opcode)
        {
            case WebSocketOpcode.Close or WebSocketOpcode.Ping or WebSocketOpcode.Pong:
                if (length7 > MaxControlPayload)
                {
                    return Fail(WebSocketCloseStatus.ProtocolError, "control frame length bigger than maximum allowed of 125 bytes", out frame);
                }

                if (!final)
                {
                    return Fail(WebSocketCloseStatus.ProtocolError, "control frame does not have final bit set", out frame);
                }

                break;
            case WebSocketOpcode.Text or WebSocketOpcode.Binary:
                if (_messageOpen)
                {
                    return Fail(WebSocketCloseStatus.ProtocolError, "new message started before final frame for previous message was received", out frame);
                }

                break;
            case WebSocketOpcode.Continuation:
                if (!_messageOpen || compressed)
                {
                    return Fail(WebSocketCloseStatus.ProtocolError, "invalid continuation frame", out frame);
                }

                break;
            default:
                return UnknownOpcode(opcode, out frame);
        }

        if ((b0 & Rsv23Bits) != 0 || (compressed && (!_compressionNegotiated || isControl)))
        {
            return Fail(WebSocketCloseStatus.ProtocolError, "reserved bits set", out frame);
        }

        var headerLength = 2 + (length7 == 126 ? 2 : length7 == 127 ? 8 : 0) + (masked ? 4 : 0);
        if (input.Length < headerLength)
        {
            return WebSocketReadStatus.NeedMoreData;
        }

        long length = length7;
        var position = 2;
        if (length7 == 126)
        {
            length = BinaryPrimitives.ReadUInt16BigEndian(input[2..]);
            position = 4;
        }
        else if (length7 == 127)
        {
            var length64 = BinaryPrimitives.ReadUInt64BigEndian(input[2..]);
            position = 10;
            if (length64 > (ulong)_maxFramePayload)
            {
                return TooBig(out frame);
            }

            length = (long)length64;
        }

        if (length > _maxFramePayload)
        {
            return TooBig(out frame);
        }

        var mask = 0u;
        if (masked)
        {
            mask = BinaryPrimitives.ReadUInt32BigEndian(input[position..]);
            position += 4;
        }

        if (isControl)
        {
            // A control frame is returned whole (at most 14 + 125 bytes): it interleaves with a
            // fragmented message and is answered at once.
            if (input.Length < position + length)
            {
                return WebSocketReadStatus.NeedMoreData;
            }

            var payload = input.Slice(position, (int)length);
            if (masked)
            {
                Unmask(payload, mask, 0);
            }

            consumed = position + (int)length;
            frame = new WebSocketFrame(opcode, position, (int)length, false, true);
            return WebSocketReadStatus.Control;
        }

        if (opcode != WebSocketOpcode.Continuation)
        {
            _messageCompressed = compressed;
        }

        _messageOpen = !final;
        _inFrame = true;
        _remaining = length;
        _frameMasked = masked;
        _mask = mask;
        _maskPosition = 0;
        _frameFinal = final;
        return ReadPayload(input, position, out consumed, out frame);
    }

    private WebSocketReadStatus ReadPayload(Span<byte> input, int start, out int consumed, out WebSocketFrame frame)
    {
        var available = input.Length - start;
        if (available == 0 && _remaining > 0)
        {
            consumed = start;
            frame = new WebSocketFrame(WebSocketOpcode.Binary, start, 0, _messageCompressed, false);
            return start == 0 ? WebSocketReadStatus.NeedMoreData : WebSocketReadStatus.Data;
        }

        var count = (int)Math.Min(_remaining, available);
        var payload = input.Slice(start, count);
        if (_frameMasked)
        {
            _maskPosition = Unmask(payload, _mask, _maskPosition);
        }

        _remaining -= count;
        var endOfFrame = _remaining == 0;
        if (endOfFrame)
        {
            _inFrame = false;
        }

        consumed = start + count;
        frame = new WebSocketFrame(WebSocketOpcode.Binary, start, count, _messageCompressed, endOfFrame && _frameFinal);
        return WebSocketReadStatus.Data;
    }

    /// <summary>XORs <paramref name="payload"/> with the 4-byte key starting at key byte <paramref name="position"/>; returns the next position.</summary>
    public static int Unmask(Span<byte> payload, uint key, int position)
    {
        // The key rotated so that byte 0 of the payload meets key byte `position`, as a big-endian word.
        var rotated = position == 0 ? key : (key << (8 * position)) | (key >> (32 - (8 * position)));
        var i = 0;
        if (payload.Length >= 8)
        {
            var wide = BitConverter.IsLittleEndian
                ? BinaryPrimitives.ReverseEndianness(((ulong)rotated << 32) | rotated)
                : ((ulong)rotated << 32) | rotated;
            var words = System.Runtime.InteropServices.MemoryMarshal.Cast<byte, ulong>(payload[..(payload.Length & ~7)]);
            for (var w = 0; w < words.Length; w++)
            {
                words[w] ^= wide;
            }

            i = payload.Length & ~7;
        }

        for (; i < payload.Length; i++)
        {
            payload[i] ^= (byte)(rotated >> (24 - (8 * ((i - (i & ~3)) & 3))));
        }

        return (position + payload.Length) & 3;
    }

    private static WebSocketReadStatus Fail(ushort status, string error, out WebSocketFrame frame)
    {
        frame = new WebSocketFrame(WebSocketOpcode.Close, 0, 0, false, true, status, error);
        return WebSocketReadStatus.Error;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WebSocketReadStatus UnknownOpcode(WebSocketOpcode opcode, out WebSocketFrame frame) =>
        Fail(WebSocketCloseStatus.ProtocolError, $"unknown opcode {(int)opcode}", out frame);

    private WebSocketReadStatus TooBig(out WebSocketFrame frame) =>
        Fail(WebSocketCloseStatus.MessageTooBig, $"frame payload bigger than maximum allowed of {_maxFramePayload} bytes", out frame);
}
