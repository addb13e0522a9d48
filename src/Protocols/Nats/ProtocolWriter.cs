using System.Buffers.Text;
using System.Text;
using System.Text.Json;

namespace Courier.Protocols.Nats;

/// <summary>The server-to-client frames, as bytes.</summary>
public static class ProtocolWriter
{
    /// <summary>PING\r\n</summary>
    public static ReadOnlySpan<byte> Ping => "PING\r\n"u8;

    /// <summary>PONG\r\n</summary>
    public static ReadOnlySpan<byte> Pong => "PONG\r\n"u8;

    /// <summary>+OK\r\n</summary>
    public static ReadOnlySpan<byte> Ok => "+OK\r\n"u8;

    /// <summary>CRLF that ends every payload.</summary>
    public static ReadOnlySpan<byte> CrLf => "\r\n"u8;

    /// <summary>The no-responders status header block (16 bytes), as nats-server 2.9/2.10.</summary>
    public static ReadOnlySpan<byte> NoRespondersHeader => "NATS/1.0 503\r\n\r\n"u8;

    /// <summary>-ERR '&lt;text&gt;'\r\n</summary>
    public static byte[] Error(string text) => Encoding.UTF8.GetBytes($"-ERR '{text}'\r\n");

    /// <summary>INFO {json}\r\n</summary>
    public static byte[] Info(ServerInfo info) => Info(JsonSerializer.SerializeToUtf8Bytes(info, NatsJsonContext.Default.ServerInfo));

    /// <summary>INFO {json}\r\n for a route.</summary>
    public static byte[] Info(RouteInfo info) => Info(JsonSerializer.SerializeToUtf8Bytes(info, NatsJsonContext.Default.RouteInfo));

    /// <summary>INFO {json}\r\n around JSON already serialized.</summary>
    public static byte[] Info(byte[] json)
    {
        var frame = new byte[5 + json.Length + 2];
        "INFO "u8.CopyTo(frame);
        json.CopyTo(frame.AsSpan(5));
        "\r\n"u8.CopyTo(frame.AsSpan(5 + json.Length));
        return frame;
    }

    /// <summary>
    /// Formats the parts of a MSG/HMSG control line that are the same for every subscriber of one
    /// publish: <c>MSG &lt;subject&gt; </c> then <c>[ reply] &lt;#bytes&gt;\r\n</c>; only the sid goes
    /// between them. Returns false when <paramref name="destination"/> is too small.
    /// </summary>
    /// <remarks>
    /// MSG &lt;subject&gt; &lt;sid&gt; [reply-to] &lt;#bytes&gt;\r\n[payload]\r\n
    /// HMSG &lt;subject&gt; &lt;sid&gt; [reply-to] &lt;#header bytes&gt; &lt;#total bytes&gt;\r\n[headers][payload]\r\n
    /// </remarks>
    public static bool TryFormatMsgTemplate(
        Span<byte> destination,
        ReadOnlySpan<byte> subject,
        ReadOnlySpan<byte> replyTo,
        int headerSize,
        int totalSize,
        out int prefixLength,
        out int suffixLength)
    {
        prefixLength = suffixLength = 0;
        var op = headerSize >= 0 ? "HMSG "u8 : "MSG "u8;
        // op + subject + space + (space + reply) + two numbers of up to 10 digits + spaces + CRLF.
        var needed = op.Length + subject.Length + 1 + 1 + replyTo.Length + 24;
        if (destination.Length < needed)
        {
            return false;
        }

        var p = 0;
        op.CopyTo(destination);
        p += op.Length;
        subject.CopyTo(destination[p..]);
        p += subject.Length;
        destination[p++] = (byte)' ';
        prefixLength = p;

        if (!replyTo.IsEmpty)
        {
            destination[p++] = (byte)' ';
            replyTo.CopyTo(destination[p..]);
            p += replyTo.Length;
        }

        destination[p++] = (byte)' ';
        int written;
        if (headerSize >= 0)
        {
            Utf8Formatter.TryFormat(headerSize, destination[p..], out written);
            p += written;
            destination[p++] = (byte)' ';
        }

        Utf8Formatter.TryFormat(totalSize, destination[p..], out written);
        p += written;
        destination[p++] = (byte)'\r';
        destination[p++] = (byte)'\n';
        suffixLength = p - prefixLength;
        return true;
    }
}
