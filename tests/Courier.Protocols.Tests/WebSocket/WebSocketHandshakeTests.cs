using System.Buffers;
using System.Text;
using Courier.Protocols.Tests.Nats;
using Courier.Protocols.WebSocket;
using Xunit;

namespace Courier.Protocols.Tests.WebSocket;

public sealed class WebSocketHandshakeTests
{
    private const string Key = "dGhlIHNhbXBsZSBub25jZQ=="; // RFC 6455 §1.3's example key

    private static readonly WebSocketUpgradePolicy Open = new(false, new WebSocketOriginPolicy(false, []), null);

    private static string Request(string extra = "", string method = "GET", string path = "/") =>
        $"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n" +
        $"Sec-WebSocket-Key: {Key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n";

    private static WebSocketHandshakeRequest Parse(string text)
    {
        var status = WebSocketHandshakeParser.TryParse(new ReadOnlySequence<byte>(Encoding.Latin1.GetBytes(text)), 4096, out var request, out _);
        Assert.Equal(HandshakeParseStatus.Complete, status);
        return request!;
    }

    private static WebSocketUpgradeResult Evaluate(string text, WebSocketUpgradePolicy? policy = null) =>
        WebSocketHandshake.Evaluate(Parse(text), policy ?? Open, tls: false, earlyData: false);

    [Fact]
    public void The_accept_key_is_rfc_6455s_example()
    {
        Assert.Equal("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", WebSocketUpgradeResult.AcceptKey(Key));
    }

    [Fact]
    public void A_request_head_parses_the_same_at_every_split_and_needs_more_until_the_blank_line()
    {
        var bytes = Encoding.Latin1.GetBytes(Request());
        for (var i = 0; i <= bytes.Length; i++)
        {
            var sequence = Sequences.SplitAt(bytes, i);
            Assert.Equal(HandshakeParseStatus.Complete, WebSocketHandshakeParser.TryParse(sequence, 4096, out var request, out var consumed));
            Assert.Equal(bytes.Length, consumed);
            Assert.Equal(Key, request!.Get("sec-websocket-key"));
            var partial = new ReadOnlySequence<byte>(bytes, 0, i == bytes.Length ? 0 : i);
            Assert.Equal(HandshakeParseStatus.NeedMoreData, WebSocketHandshakeParser.TryParse(partial, 4096, out _, out var none));
            Assert.Equal(0, none);
        }

        Assert.Equal(HandshakeParseStatus.Complete, WebSocketHandshakeParser.TryParse(Sequences.ByteByByte(bytes), 4096, out _, out _));
    }

    [Fact]
    public void A_head_over_the_limit_is_refused_before_its_end_arrives()
    {
        var start = Encoding.Latin1.GetBytes("GET / HTTP/1.1\r\nX-Long: " + new string('a', 200));
        Assert.Equal(HandshakeParseStatus.TooLarge, WebSocketHandshakeParser.TryParse(new ReadOnlySequence<byte>(start), 100, out _, out _));
        var whole = Encoding.Latin1.GetBytes(Request("X-Long: " + new string('a', 200) + "\r\n"));
        Assert.Equal(HandshakeParseStatus.TooLarge, WebSocketHandshakeParser.TryParse(new ReadOnlySequence<byte>(whole), 100, out _, out _));
        Assert.Contains("431 Request Header Fields Too Large", Encoding.ASCII.GetString(WebSocketUpgradeResult.ErrorResponse(431)), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("GARBAGE\r\n\r\n")]
    [InlineData("GET / SPDY/3\r\nHost: x\r\n\r\n")]
    [InlineData("GET / HTTP/1.1\r\nNo colon here\r\n\r\n")]
    [InlineData("GET / HTTP/1.1\r\nBad name: x\r\n\r\n")]
    public void A_head_that_is_not_http_is_malformed(string text)
    {
        Assert.Equal(HandshakeParseStatus.Malformed,
            WebSocketHandshakeParser.TryParse(new ReadOnlySequence<byte>(Encoding.Latin1.GetBytes(text)), 4096, out _, out _));
    }

    [Fact]
    public void An_upgrade_is_answered_with_101_and_the_accept_key_as_nats_server()
    {
        var result = Evaluate(Request());
        Assert.True(result.Accepted);
        Assert.Equal(WebSocketKind.Client, result.Kind);
        Assert.Equal(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
            Encoding.ASCII.GetString(result.Response));
    }

    [Fact]
    public void A_subprotocol_offer_is_not_answered_on_the_nats_path_and_mqtt_is_on_the_mqtt_path()
    {
        var nats = Evaluate(Request("Sec-WebSocket-Protocol: nats, mqtt\r\n"));
        Assert.DoesNotContain("Sec-WebSocket-Protocol", Encoding.ASCII.GetString(nats.Response), StringComparison.OrdinalIgnoreCase);
        var mqtt = Evaluate(Request("Sec-WebSocket-Protocol: mqtt\r\n", path: "/mqtt"));
        Assert.Equal(WebSocketKind.Mqtt, mqtt.Kind);
        Assert.Contains("Sec-Websocket-Protocol: mqtt\r\n", Encoding.ASCII.GetString(mqtt.Response), StringComparison.Ordinal);
        Assert.Equal(WebSocketKind.Leaf, Evaluate(Request(path: "/leafnode")).Kind);
    }

    [Fact]
    public void Permessage_deflate_is_answered_only_when_configured_and_offered()
    {
        var compressing = Open with { Compression = true };
        var offer = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n";
        var on = Evaluate(Request(offer), compressing);
        Assert.True(on.Compress);
        Assert.Contains("Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n",
            Encoding.ASCII.GetString(on.Response), StringComparison.Ordinal);
        Assert.False(Evaluate(Request(offer)).Compress);
        Assert.False(Evaluate(Request(), compressing).Compress);
    }

    [Fact]
    public void No_masking_is_granted_when_asked()
    {
        var result = Evaluate(Request("Nats-No-Masking: true\r\n"));
        Assert.True(result.NoMasking);
        Assert.Contains("Nats-No-Masking: true\r\n", Encoding.ASCII.GetString(result.Response), StringComparison.Ordinal);
    }

    [Fact]
    public void The_jwt_cookie_browser_and_forwarded_address_are_read()
    {
        var result = Evaluate(Request("Cookie: a=1; jwt=\"eyJabc\"; b=2\r\nUser-Agent: Mozilla/5.0 (X11)\r\nX-Forwarded-For: 10.1.2.3\r\n"),
            Open with { JwtCookie = "jwt" });
        Assert.Equal("eyJabc", result.CookieJwt);
        Assert.True(result.Browser);
        Assert.Equal("10.1.2.3", result.ForwardedFor);
    }

    [Theory]
    [InlineData("POST / HTTP/1.1\r\nHost: h\r\n\r\n", 405, "request method must be GET")]
    [InlineData("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n", 400, "'Host' missing in request")]
    [InlineData("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n", 400, "invalid value for header 'Upgrade'")]
    [InlineData("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: close\r\n\r\n", 400, "invalid value for header 'Connection'")]
    [InlineData("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n", 400, "key missing")]
    [InlineData("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Version: 8\r\n\r\n", 400, "invalid version")]
    public void Each_missing_or_wrong_header_is_refused_with_nats_servers_status_and_reason(string text, int status, string reason)
    {
        var result = Evaluate(text);
        Assert.False(result.Accepted);
        Assert.Equal(status, result.Status);
        Assert.Equal(reason, result.Reason);
        var response = Encoding.ASCII.GetString(result.Response);
        Assert.StartsWith($"HTTP/1.1 {status} ", response, StringComparison.Ordinal);
        Assert.Contains("Sec-Websocket-Version: 13\r\n", response, StringComparison.Ordinal);
    }

    [Fact]
    public void Data_sent_before_the_answer_is_refused()
    {
        var result = WebSocketHandshake.Evaluate(Parse(Request()), Open, tls: false, earlyData: true);
        Assert.Equal(400, result.Status);
        Assert.Equal("client sent data before handshake is complete", result.Reason);
    }

    [Theory]
    [InlineData(true, new string[0], "http://127.0.0.1:8080", null)]
    [InlineData(true, new string[0], "http://127.0.0.1:8081", "not same origin")]
    [InlineData(true, new string[0], "https://127.0.0.1:8080", null)]
    [InlineData(true, new string[0], "", null)]
    [InlineData(false, new[] { "http://example.com" }, "http://example.com", null)]
    [InlineData(false, new[] { "http://example.com" }, "http://example.com:80", null)]
    [InlineData(false, new[] { "http://example.com" }, "https://example.com", "not in the allowed list")]
    [InlineData(false, new[] { "https://example.com:8443" }, "https://EXAMPLE.com:8443", null)]
    [InlineData(false, new[] { "http://example.com" }, "http://other.com", "not in the allowed list")]
    [InlineData(true, new[] { "http://example.com" }, "http://127.0.0.1:8080", "not in the allowed list")]
    public void Origins_are_checked_as_nats_server(bool sameOrigin, string[] allowed, string origin, string? error)
    {
        var policy = Open with { Origins = new WebSocketOriginPolicy(sameOrigin, allowed) };
        var result = Evaluate(Request(origin.Length > 0 ? $"Origin: {origin}\r\n" : ""), policy);
        if (error is null)
        {
            Assert.True(result.Accepted, result.Reason);
        }
        else
        {
            Assert.Equal(403, result.Status);
            Assert.Equal($"origin not allowed: {error}", result.Reason);
        }
    }
}
