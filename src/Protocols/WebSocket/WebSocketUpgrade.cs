using System.Globalization;
using System.Net;
using System.Security.Cryptography;
using System.Text;

namespace Courier.Protocols.WebSocket;

/// <summary>Which server a WebSocket request reaches, chosen by its path as nats-server does.</summary>
internal enum WebSocketKind
{
    /// <summary>Any other path: a NATS client.</summary>
    Client,

    /// <summary>A path starting <c>/mqtt</c>: an MQTT client (answered with <c>Sec-WebSocket-Protocol: mqtt</c>).</summary>
    Mqtt,

    /// <summary>A path starting <c>/leafnode</c>: a leaf node.</summary>
    Leaf,
}

/// <summary>How the listener answers upgrade requests (from the <c>websocket {}</c> block).</summary>
internal sealed record WebSocketUpgradePolicy(bool Compression, WebSocketOriginPolicy Origins, string? JwtCookie);

/// <summary>The outcome of an upgrade request: accepted with its negotiated options, or an HTTP error.</summary>
internal sealed class WebSocketUpgradeResult
{
    private WebSocketUpgradeResult()
    {
    }

    public bool Accepted { get; private init; }

    /// <summary>The HTTP status of a refused request.</summary>
    public int Status { get; private init; }

    /// <summary>Why a request was refused, in nats-server's words (for the log).</summary>
    public string Reason { get; private init; } = "";

    public WebSocketKind Kind { get; private init; }

    /// <summary>permessage-deflate is on for this connection.</summary>
    public bool Compress { get; private init; }

    /// <summary>The client asked (<c>Nats-No-Masking: true</c>) to send unmasked frames.</summary>
    public bool NoMasking { get; private init; }

    /// <summary>The <c>User-Agent</c> starts <c>Mozilla/</c>.</summary>
    public bool Browser { get; private init; }

    /// <summary>
    /// Safari with compression: its compressed messages must not be fragmented (nats-server's
    /// <c>nocompfrag</c>: a <c>User-Agent</c> with both <c>Version/</c> and <c>Safari/</c>).
    /// </summary>
    public bool SafariCompression { get; private init; }

    /// <summary>The value of the <c>jwt_cookie</c> cookie, if configured and sent.</summary>
    public string? CookieJwt { get; private init; }

    /// <summary>The first <c>X-Forwarded-For</c> value when it is an IP address.</summary>
    public string? ForwardedFor { get; private init; }

    /// <summary>The 101 response to write before the connection switches to frames.</summary>
    public byte[] Response { get; private init; } = [];

    public static WebSocketUpgradeResult Refuse(int status, string reason) => new() { Status = status, Reason = reason, Response = ErrorResponse(status) };

    public static WebSocketUpgradeResult Accept(WebSocketHandshakeRequest request, string key, WebSocketKind kind, bool compress, string? cookieJwt)
    {
        var noMasking = request.Get("Nats-No-Masking") == "true";
        var forwarded = request.Get("X-Forwarded-For");
        var userAgent = request.Get("User-Agent");
        var browser = userAgent is not null && userAgent.StartsWith("Mozilla/", StringComparison.Ordinal);
        return new WebSocketUpgradeResult
        {
            Accepted = true,
            Status = 101,
            Kind = kind,
            Compress = compress,
            NoMasking = noMasking,
            Browser = browser,
            SafariCompression = browser && compress && userAgent!.Contains("Version/", StringComparison.Ordinal) && userAgent.Contains("Safari/", StringComparison.Ordinal),
            CookieJwt = cookieJwt,
            ForwardedFor = forwarded is not null && IPAddress.TryParse(forwarded, out _) ? forwarded : null,
            Response = SwitchingProtocols(key, compress, noMasking, kind == WebSocketKind.Mqtt),
        };
    }

    /// <summary>
    /// <c>Sec-WebSocket-Accept</c>: base64 of the SHA-1 of the client's key and RFC 6455's GUID (§4.2.2).
    /// </summary>
    public static string AcceptKey(string key) =>
        Convert.ToBase64String(SHA1.HashData(Encoding.ASCII.GetBytes(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")));

    // HTTP/1.1 101 Switching Protocols, with nats-server's header lines in its order.
    private static byte[] SwitchingProtocols(string key, bool compress, bool noMasking, bool mqtt)
    {
        var response = new StringBuilder("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ")
            .Append(AcceptKey(key)).Append("\r\n");
        if (compress)
        {
            response.Append("Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n");
        }

        if (noMasking)
        {
            response.Append("Nats-No-Masking: true\r\n");
        }

        if (mqtt)
        {
            response.Append("Sec-Websocket-Protocol: mqtt\r\n");
        }

        return Encoding.ASCII.GetBytes(response.Append("\r\n").ToString());
    }

    /// <summary>
    /// An error answer as Go's <c>http.Error</c> writes it (status text and a newline as a plain-text
    /// body, <c>Sec-Websocket-Version: 13</c>), plus <c>Connection: close</c>: Courier closes after it.
    /// </summary>
    public static byte[] ErrorResponse(int status)
    {
        var text = StatusText(status);
        var body = text + "\n";
        var head = string.Create(CultureInfo.InvariantCulture,
            $"HTTP/1.1 {status} {text}\r\nContent-Type: text/plain; charset=utf-8\r\nSec-Websocket-Version: 13\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Length: {body.Length}\r\n\r\n{body}");
        return Encoding.ASCII.GetBytes(head);
    }

    private static string StatusText(int status) => status switch
    {
        400 => "Bad Request",
        403 => "Forbidden",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Internal Server Error",
    };
}
