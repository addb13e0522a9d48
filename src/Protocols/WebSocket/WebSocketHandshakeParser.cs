using System.Buffers;
using System.Text;

namespace Courier.Protocols.WebSocket;

/// <summary>What <see cref="WebSocketHandshakeParser.TryParse"/> found.</summary>
internal enum HandshakeParseStatus
{
    /// <summary>The head is not complete yet and is within the size limit; nothing consumed.</summary>
    NeedMoreData,

    /// <summary>A complete request head was parsed.</summary>
    Complete,

    /// <summary>The head is over the size limit: answer 431 and close.</summary>
    TooLarge,

    /// <summary>Not an HTTP/1.x request head: answer 400 and close.</summary>
    Malformed,
}

/// <summary>
/// Reads the HTTP/1.1 upgrade request head (request line, headers, blank line) incrementally, as
/// its bytes arrive, refusing a head longer than the limit before buffering more of it.
/// </summary>
/// <remarks>The handshake is a cold path: the head is decoded into strings once it is whole.</remarks>
internal static class WebSocketHandshakeParser
{
    // Bytes a request head may take; Go's net/http (nats-server's) default is 1 MB, but an upgrade
    // request with a JWT cookie is a few KB, so a much smaller bound keeps idle handshakes cheap.
    public const int DefaultMaxHeadSize = 64 * 1024;

    private static ReadOnlySpan<byte> HeadEnd => "\r\n\r\n"u8;

    /// <summary>
    /// Parses a request head from the start of <paramref name="buffer"/>. On <see cref="HandshakeParseStatus.Complete"/>,
    /// <paramref name="consumed"/> is the head's length including the blank line.
    /// </summary>
    public static HandshakeParseStatus TryParse(ReadOnlySequence<byte> buffer, int maxHeadSize, out WebSocketHandshakeRequest? request, out long consumed)
    {
        request = null;
        consumed = 0;
        var reader = new SequenceReader<byte>(buffer);
        if (!reader.TryReadTo(out ReadOnlySequence<byte> head, HeadEnd, advancePastDelimiter: true))
        {
            return buffer.Length > maxHeadSize ? HandshakeParseStatus.TooLarge : HandshakeParseStatus.NeedMoreData;
        }

        if (reader.Consumed > maxHeadSize)
        {
            return HandshakeParseStatus.TooLarge;
        }

        consumed = reader.Consumed;
        request = Parse(Encoding.Latin1.GetString(head));
        return request is null ? HandshakeParseStatus.Malformed : HandshakeParseStatus.Complete;
    }

    private static WebSocketHandshakeRequest? Parse(string head)
    {
        var lines = head.Split("\r\n");
        // Request-line = method SP request-target SP HTTP-version (RFC 9112 §3)
        var parts = lines[0].Split(' ');
        if (parts.Length != 3 || parts[0].Length == 0 || parts[1].Length == 0 || !parts[2].StartsWith("HTTP/1.", StringComparison.Ordinal))
        {
            return null;
        }

        var headers = new List<KeyValuePair<string, string>>(lines.Length - 1);
        for (var i = 1; i < lines.Length; i++)
        {
            // field-line = field-name ":" OWS field-value OWS; no whitespace before the colon.
            var line = lines[i];
            var colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon <= 0 || line.AsSpan(0, colon).ContainsAny(' ', '\t'))
            {
                return null;
            }

            headers.Add(new(line[..colon], line[(colon + 1)..].Trim(' ', '\t')));
        }

        return new WebSocketHandshakeRequest(parts[0], parts[1], parts[2], headers);
    }
}
