using Courier.Protocols.Nats;

namespace Courier.Actors.Connections;

/// <summary>
/// The MSG/HMSG control-line parts shared by all deliveries of one publish (formatted once, the sid
/// written between them per subscriber), and, formatted on first need, the plain MSG variant for
/// subscribers without header support (the header block stripped, as nats-server).
/// </summary>
internal ref struct MsgTemplates
{
    private readonly byte[] _buffer;
    private readonly int _plainOffset;
    private readonly ReadOnlySpan<byte> _replyTo;
    private readonly int _size;
    private int _plainPrefixLength;
    private int _plainSuffixLength;

    public MsgTemplates(byte[] buffer, int prefixLength, int suffixLength, int plainOffset, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, int size)
    {
        _buffer = buffer;
        Prefix = new ReadOnlySpan<byte>(buffer, 0, prefixLength);
        Suffix = new ReadOnlySpan<byte>(buffer, prefixLength, suffixLength);
        _plainOffset = plainOffset;
        Subject = subject;
        _replyTo = replyTo;
        HeaderSize = headerSize;
        _size = size;
        _plainPrefixLength = -1;
    }

    /// <summary>The subject the subscriber sees.</summary>
    public ReadOnlySpan<byte> Subject { get; }

    public readonly ReadOnlySpan<byte> ReplyTo => _replyTo;

    /// <summary>The header block size, -1 without headers.</summary>
    public int HeaderSize { get; }

    public ReadOnlySpan<byte> Prefix { get; }

    public ReadOnlySpan<byte> Suffix { get; }

    public readonly ReadOnlySpan<byte> PlainPrefix => new(_buffer, _plainOffset, _plainPrefixLength);

    public readonly ReadOnlySpan<byte> PlainSuffix => new(_buffer, _plainOffset + _plainPrefixLength, _plainSuffixLength);

    public void FormatPlain()
    {
        if (_plainPrefixLength >= 0)
        {
            return;
        }

        // The plain half is as long as the first (the buffer may hold more after it: a mapped subject).
        ProtocolWriter.TryFormatMsgTemplate(_buffer.AsSpan(_plainOffset, _plainOffset), Subject, _replyTo, -1, _size - HeaderSize, out _plainPrefixLength, out _plainSuffixLength);
    }
}
