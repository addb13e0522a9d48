using System.Buffers;

namespace Courier.Protocols.Nats;

/// <summary>The operations a NATS client may send to a server.</summary>
public enum ClientOp : byte
{
    None,
    Connect,
    Ping,
    Pong,
    Pub,
    HPub,
    Sub,
    Unsub,
    Info,
    Ok,
    Err,
}

/// <summary>What <see cref="NatsParser.TryRead"/> found at the reader's position.</summary>
public enum ParseStatus : byte
{
    /// <summary>A whole command was read; the reader is past it.</summary>
    Command,

    /// <summary>The buffer holds only part of a command; the reader is unmoved.</summary>
    NeedMoreData,

    /// <summary>The input is not a valid command; the connection must get the error and close.</summary>
    Error,
}

/// <summary>A fatal protocol error, each with the exact text nats-server sends.</summary>
public enum ParseError : byte
{
    None,

    /// <summary><c>-ERR 'Unknown Protocol Operation'</c>: an unknown op, or no CRLF after a payload.</summary>
    UnknownOperation,

    /// <summary>
    /// Bad arguments to a known op (wrong count, a size that is not a number): nats-server closes
    /// the connection without sending an error.
    /// </summary>
    InvalidArguments,

    /// <summary><c>-ERR 'maximum control line exceeded'</c>.</summary>
    MaxControlLineExceeded,

    /// <summary><c>-ERR 'Maximum Payload Violation'</c>.</summary>
    MaxPayloadViolation,
}

/// <summary>
/// One parsed client command. Spans point into the read buffer (or the parser's line buffer when the
/// control line spanned segments) and are valid until the next <see cref="NatsParser.TryRead"/> call
/// or until the buffer is advanced past them; the payload is a slice of the read buffer, not a copy.
/// </summary>
public ref struct ClientCommand
{
    /// <summary>The operation.</summary>
    public ClientOp Op;

    /// <summary>PUB/HPUB/SUB subject.</summary>
    public ReadOnlySpan<byte> Subject;


    /// <summary>PUB/HPUB reply subject; empty when none.</summary>
    public ReadOnlySpan<byte> ReplyTo;

    /// <summary>SUB queue group; empty when none.</summary>
    public ReadOnlySpan<byte> Queue;

    /// <summary>SUB/UNSUB subscription id.</summary>
    public ReadOnlySpan<byte> Sid;

    /// <summary>UNSUB max messages; -1 when absent or not a number (then UNSUB is immediate, as nats-server).</summary>
    public long Max;

    /// <summary>HPUB header block size in bytes; -1 for PUB.</summary>
    public int HeaderSize;

    // The payload, or (when _payloadOffset > 0: the offset plus one) the sequence it is a slice of.
    // The canonical PUB path leaves the slice to be taken when the payload is read, so a message
    // nobody receives never pays for building it (that was 14% of a publish-only server's CPU).
    private ReadOnlySequence<byte> _payload;
    private long _payloadOffset;
    private int _payloadLength;

    /// <summary>PUB: the payload. HPUB: the header block followed by the payload.</summary>
    public ReadOnlySequence<byte> Payload
    {
        readonly get => _payloadOffset > 0 ? _payload.Slice(_payloadOffset - 1, _payloadLength) : _payload;
        set
        {
            _payload = value;
            _payloadOffset = 0;
        }
    }

    /// <summary>Bytes in <see cref="Payload"/>, without taking the slice.</summary>
    public readonly long PayloadLength => _payloadOffset > 0 ? _payloadLength : _payload.Length;

    /// <summary>Sets <see cref="Payload"/> to <paramref name="length"/> bytes at <paramref name="offset"/> in <paramref name="source"/>, sliced when read.</summary>
    internal void SetPayloadSlice(in ReadOnlySequence<byte> source, long offset, int length)
    {
        _payload = source;
        _payloadOffset = offset + 1; // 0 is "no slice pending", the default
        _payloadLength = length;
    }

    /// <summary>CONNECT/INFO JSON, or the -ERR text.</summary>
    public ReadOnlySpan<byte> Arguments;
}
