namespace Courier.Protocols.WebSocket;

/// <summary>What <see cref="WebSocketFrameReader.Read"/> found.</summary>
internal enum WebSocketReadStatus
{
    /// <summary>Not enough bytes for the next frame header (or a whole control frame); nothing consumed.</summary>
    NeedMoreData,

    /// <summary>Unmasked payload bytes of a data message (possibly empty) are at the frame's range of the input.</summary>
    Data,

    /// <summary>A whole control frame (close, ping or pong); its unmasked payload is at the frame's range.</summary>
    Control,

    /// <summary>The peer broke the protocol: send a close frame with the status and reason, then close.</summary>
    Error,
}

/// <summary>
/// One event of the frame reader: a range of the input buffer (unmasked in place) and what it is.
/// </summary>
internal readonly record struct WebSocketFrame(
    WebSocketOpcode Opcode,
    int Offset,
    int Length,
    bool Compressed,
    bool EndOfMessage,
    ushort CloseStatus = 0,
    string? Error = null);
