using System.Text;
using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.WebSocket;

/// <summary>
/// RFC 6455 framing against the WebSocket listener with a hand-written client: the handshake and its
/// refusals, masked and fragmented frames, ping/pong/close, protocol errors that close only that
/// client, permessage-deflate, origins and the websocket block's own authorization.
/// </summary>
public abstract class WebSocketWireTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string Connect = "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true}\r\n";

    private readonly TServer _server;

    protected WebSocketWireTests(TServer server)
    {
        _server = server;
    }

    private ServerProcess Server => _server.Server;

    private async Task<RawWebSocket> OpenAsync(ServerProcess? server = null, string extraHeaders = "")
    {
        server ??= Server;
        var ws = await RawWebSocket.ConnectAsync(server, RawWebSocket.UpgradeRequest(server.WebSocketPort, extraHeaders));
        Assert.Equal(101, ws.Status);
        return ws;
    }

    [Fact]
    public async Task Upgrade_is_answered_with_101_and_the_accept_key_then_info_in_an_unmasked_binary_frame()
    {
        const string key = "x3JJHMbDL1EzLkh9GBhXDw==";
        await using var ws = await RawWebSocket.ConnectAsync(Server, RawWebSocket.UpgradeRequest(Server.WebSocketPort, key: key));
        Assert.Equal(101, ws.Status);
        Assert.StartsWith("HTTP/1.1 101 Switching Protocols\r\n", ws.ResponseHead, StringComparison.Ordinal);
        Assert.Contains($"Sec-WebSocket-Accept: {RawWebSocket.AcceptFor(key)}", ws.ResponseHead, StringComparison.Ordinal);
        Assert.DoesNotContain("Sec-WebSocket-Extensions", ws.ResponseHead, StringComparison.OrdinalIgnoreCase);
        var info = await ws.ReadDataFrameAsync();
        Assert.Equal(ServerFrame.Binary, info.Opcode);
        Assert.True(info.Final);
        Assert.False(info.Masked);
        Assert.StartsWith("INFO {", info.Text, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_subprotocol_offer_is_not_answered()
    {
        await using var ws = await OpenAsync(extraHeaders: "Sec-WebSocket-Protocol: nats\r\n");
        Assert.DoesNotContain("Sec-WebSocket-Protocol", ws.ResponseHead, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task Commands_in_masked_frames_publish_and_deliver_in_frames()
    {
        await using var ws = await OpenAsync();
        await ws.ExpectTextAsync("INFO ");
        await ws.SendAsync(Connect + "SUB ws.raw 1\r\nPUB ws.raw 5\r\nhello\r\nPING\r\n");
        var text = await ws.ExpectTextAsync("PONG\r\n");
        Assert.Equal("MSG ws.raw 1 5\r\nhello\r\nPONG\r\n", text);
    }

    [Fact]
    public async Task A_message_fragmented_over_frames_with_a_ping_between_is_reassembled_and_the_ping_answered()
    {
        await using var ws = await OpenAsync();
        await ws.ExpectTextAsync("INFO ");
        await ws.SendAsync(Connect + "SUB ws.frag 1\r\n");
        await ws.SendRawAsync([
            .. RawWebSocket.Binary("PUB ws.fr", final: false),
            .. RawWebSocket.Frame(ServerFrame.Ping, "are you there"u8),
            .. RawWebSocket.Frame(ServerFrame.Continuation, "ag 3\r\nab"u8, final: false),
            .. RawWebSocket.Frame(ServerFrame.Continuation, "c\r\nPING\r\n"u8),
        ]);
        var pong = await ws.ReadFrameAsync();
        Assert.NotNull(pong);
        Assert.Equal(ServerFrame.Pong, pong.Opcode);
        Assert.Equal("are you there", Encoding.ASCII.GetString(pong.Payload));
        Assert.Equal("MSG ws.frag 1 3\r\nabc\r\nPONG\r\n", await ws.ExpectTextAsync("PONG\r\n"));
    }

    [Fact]
    public async Task A_payload_over_64_KB_arrives_with_a_64_bit_frame_length_both_ways()
    {
        await using var ws = await OpenAsync();
        await ws.ExpectTextAsync("INFO ");
        var payload = new string('z', 70_000);
        await ws.SendAsync(Connect + $"SUB ws.big 1\r\nPUB ws.big {payload.Length}\r\n{payload}\r\nPING\r\n");
        var text = await ws.ExpectTextAsync("PONG\r\n");
        Assert.Equal($"MSG ws.big 1 {payload.Length}\r\n{payload}\r\nPONG\r\n", text);
    }

    [Fact]
    public async Task A_browser_gets_frames_of_at_most_4_KB_each_a_whole_message()
    {
        await using var ws = await OpenAsync(extraHeaders: "User-Agent: Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0\r\n");
        await ws.ExpectTextAsync("INFO ");
        var payload = new string('b', 10_000);
        await ws.SendAsync(Connect + $"SUB ws.browser 1\r\nPUB ws.browser {payload.Length}\r\n{payload}\r\nPING\r\n");
        var text = new StringBuilder();
        while (!text.ToString().EndsWith("PONG\r\n", StringComparison.Ordinal))
        {
            var frame = await ws.ReadDataFrameAsync();
            Assert.Equal(ServerFrame.Binary, frame.Opcode);
            Assert.True(frame.Final);
            Assert.InRange(frame.Payload.Length, 1, 4096);
            text.Append(frame.Text);
        }

        Assert.Equal($"MSG ws.browser 1 {payload.Length}\r\n{payload}\r\nPONG\r\n", text.ToString());
    }

    [Fact]
    public async Task A_browser_with_compression_gets_a_large_message_as_4_KB_fragments_of_one_compressed_message()
    {
        await using var server = await _server.StartServerAsync(WebSocketConfig.Compressing);
        await using var ws = await RawWebSocket.ConnectAsync(server, RawWebSocket.UpgradeRequest(server.WebSocketPort,
            "Sec-WebSocket-Extensions: permessage-deflate\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0\r\n"));
        Assert.Equal(101, ws.Status);
        Assert.StartsWith("INFO ", (await ws.ReadDataFrameAsync()).Text, StringComparison.Ordinal);
        var random = new Random(42);
        var payload = new string(Enumerable.Range(0, 30_000).Select(_ => (char)random.Next('a', 'z' + 1)).ToArray());
        await ws.SendAsync(Connect + $"SUB ws.zb 1\r\nPUB ws.zb {payload.Length}\r\n{payload}\r\nPING\r\n");

        var fragments = new List<ServerFrame>();
        do
        {
            fragments.Add(await ws.ReadDataFrameAsync());
        }
        while (!fragments[^1].Final);

        Assert.True(fragments.Count > 1, "a compressed 30 KB message should come in several fragments");
        Assert.True(fragments[0].Compressed);
        Assert.Equal(ServerFrame.Binary, fragments[0].Opcode);
        Assert.All(fragments.Skip(1), f => Assert.Equal(ServerFrame.Continuation, f.Opcode));
        Assert.All(fragments, f => Assert.InRange(f.Payload.Length, 1, 4096));
        var text = Encoding.ASCII.GetString(RawWebSocket.Inflate([.. fragments.SelectMany(f => f.Payload)]));
        Assert.StartsWith($"MSG ws.zb 1 {payload.Length}\r\n{payload}\r\n", text, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_close_frame_is_answered_with_the_same_status_and_the_connection_ends()
    {
        await using var ws = await OpenAsync();
        await ws.ExpectTextAsync("INFO ");
        await ws.SendRawAsync(RawWebSocket.Frame(ServerFrame.Close, [0x03, 0xe8, .. "bye"u8]));
        var close = await ws.ExpectCloseAsync();
        Assert.Equal(1000, close.CloseStatus);
        Assert.Equal("bye", close.CloseReason);
    }

    [Fact]
    public async Task An_unmasked_frame_ends_only_that_client()
    {
        await using var other = await OpenAsync();
        await other.ExpectTextAsync("INFO ");
        await other.SendAsync(Connect + "SUB ws.survivor 1\r\nPING\r\n");
        await other.ExpectTextAsync("PONG\r\n");

        await using var ws = await OpenAsync();
        await ws.ExpectTextAsync("INFO ");
        await ws.SendRawAsync(RawWebSocket.Frame(ServerFrame.Binary, "PING\r\n"u8, masked: false));
        if (await ws.ExpectEndAsync() is { } close)
        {
            // nats-server may lose this frame racing the socket's close; Courier always sends it.
            Assert.Equal(1002, close.CloseStatus);
            Assert.Equal("mask bit missing", close.CloseReason);
        }

        await other.SendAsync("PUB ws.survivor 2\r\nok\r\nPING\r\n");
        Assert.Equal("MSG ws.survivor 1 2\r\nok\r\nPONG\r\n", await other.ExpectTextAsync("PONG\r\n"));
    }

    [Theory]
    [InlineData("control frame length bigger than maximum allowed of 125 bytes")]
    [InlineData("control frame does not have final bit set")]
    [InlineData("invalid continuation frame")]
    [InlineData("new message started before final frame for previous message was received")]
    [InlineData("unknown opcode 3")]
    public async Task Framing_violations_end_the_client_with_nats_servers_reason(string reason)
    {
        await using var ws = await OpenAsync();
        await ws.ExpectTextAsync("INFO ");
        await ws.SendRawAsync(ViolationFor(reason));

        // nats-server queues its 1002 close frame but, racing the socket's close, does not always
        // get it out; when it arrives it says why. (Courier always sends it: WebSocketCourierTests.)
        if (await ws.ExpectEndAsync() is { } close)
        {
            Assert.Equal(1002, close.CloseStatus);
            Assert.Equal(reason, close.CloseReason);
        }
    }

    /// <summary>Client frames that break the rule nats-server names with <paramref name="reason"/>.</summary>
    internal static byte[] ViolationFor(string reason) => reason switch
    {
        "control frame length bigger than maximum allowed of 125 bytes" => RawWebSocket.Frame(ServerFrame.Ping, new byte[126]),
        "control frame does not have final bit set" => RawWebSocket.Frame(ServerFrame.Ping, "x"u8, final: false),
        "invalid continuation frame" => RawWebSocket.Frame(ServerFrame.Continuation, "x"u8),
        "new message started before final frame for previous message was received" =>
            [.. RawWebSocket.Binary("PI", final: false), .. RawWebSocket.Binary("NG\r\n")],
        "mask bit missing" => RawWebSocket.Frame(ServerFrame.Binary, "PING\r\n"u8, masked: false),
        _ => RawWebSocket.Frame(0x3, "x"u8),
    };

    [Fact]
    public async Task A_nats_protocol_error_over_websocket_gets_the_err_then_a_close_frame()
    {
        await using var ws = await OpenAsync();
        await ws.ExpectTextAsync("INFO ");
        await ws.SendAsync("FOO BAR\r\n");
        Assert.Contains("-ERR 'Unknown Protocol Operation'", await ws.ExpectTextAsync("-ERR"), StringComparison.Ordinal);
        var close = await ws.ExpectCloseAsync();
        Assert.Equal(1002, close.CloseStatus);
    }

    [Theory]
    [InlineData("POST / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Version: 13\r\n\r\n", 405)]
    [InlineData("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Version: 13\r\n\r\n", 400)]
    [InlineData("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Version: 13\r\n\r\n", 400)]
    [InlineData("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n", 400)]
    [InlineData("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: k\r\nSec-WebSocket-Version: 8\r\n\r\n", 400)]
    public async Task A_bad_upgrade_request_is_refused_with_nats_servers_status(string request, int status)
    {
        await using var ws = await RawWebSocket.ConnectAsync(Server, request);
        Assert.Equal(status, ws.Status);
        Assert.Contains("Sec-Websocket-Version: 13", ws.ResponseHead, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task Origins_outside_allowed_origins_are_refused_with_403_and_listed_ones_accepted()
    {
        await using var server = await _server.StartServerAsync(
            "websocket { host: 127.0.0.1, port: -1, no_tls: true, allowed_origins: [\"http://app.example.com:8080\"] }");
        await using (var refused = await RawWebSocket.ConnectAsync(server, RawWebSocket.UpgradeRequest(server.WebSocketPort, "Origin: http://evil.example.com:8080\r\n")))
        {
            Assert.Equal(403, refused.Status);
        }

        await using (var wrongScheme = await RawWebSocket.ConnectAsync(server, RawWebSocket.UpgradeRequest(server.WebSocketPort, "Origin: https://app.example.com:8080\r\n")))
        {
            Assert.Equal(403, wrongScheme.Status);
        }

        await using var accepted = await RawWebSocket.ConnectAsync(server, RawWebSocket.UpgradeRequest(server.WebSocketPort, "Origin: http://app.example.com:8080\r\n"));
        Assert.Equal(101, accepted.Status);
        await accepted.ExpectTextAsync("INFO ");
    }

    [Fact]
    public async Task Same_origin_accepts_the_requests_own_host_and_refuses_another()
    {
        await using var server = await _server.StartServerAsync("websocket { host: 127.0.0.1, port: -1, no_tls: true, same_origin: true }");
        await using (var refused = await RawWebSocket.ConnectAsync(server, RawWebSocket.UpgradeRequest(server.WebSocketPort, "Origin: http://127.0.0.1:1\r\n")))
        {
            Assert.Equal(403, refused.Status);
        }

        await using var same = await RawWebSocket.ConnectAsync(server, RawWebSocket.UpgradeRequest(server.WebSocketPort, $"Origin: http://127.0.0.1:{server.WebSocketPort}\r\n"));
        Assert.Equal(101, same.Status);
        await same.ExpectTextAsync("INFO ");
    }

    [Fact]
    public async Task With_compression_info_and_messages_come_compressed_and_compressed_commands_are_read()
    {
        await using var server = await _server.StartServerAsync(WebSocketConfig.Compressing);
        await using var ws = await RawWebSocket.ConnectAsync(server,
            RawWebSocket.UpgradeRequest(server.WebSocketPort, "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"));
        Assert.Equal(101, ws.Status);
        Assert.Contains("Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover",
            ws.ResponseHead, StringComparison.Ordinal);
        var info = await ws.ReadDataFrameAsync();
        Assert.True(info.Compressed, "INFO (over 64 bytes) should come compressed");
        Assert.StartsWith("INFO {", info.Text, StringComparison.Ordinal);

        var payload = new string('c', 300);
        var commands = Connect + $"SUB ws.z 1\r\nPUB ws.z {payload.Length}\r\n{payload}\r\nPING\r\n";
        await ws.SendRawAsync(RawWebSocket.Frame(ServerFrame.Binary, RawWebSocket.Deflate(commands), compressed: true));
        Assert.Equal($"MSG ws.z 1 {payload.Length}\r\n{payload}\r\nPONG\r\n", await ws.ExpectTextAsync("PONG\r\n"));
    }

    [Fact]
    public async Task Without_an_offer_compression_stays_off_even_when_configured()
    {
        await using var server = await _server.StartServerAsync(WebSocketConfig.Compressing);
        await using var ws = await OpenAsync(server);
        Assert.DoesNotContain("Sec-WebSocket-Extensions", ws.ResponseHead, StringComparison.OrdinalIgnoreCase);
        var info = await ws.ReadDataFrameAsync();
        Assert.False(info.Compressed);
    }

    [Fact]
    public async Task The_websocket_blocks_token_applies_to_websocket_clients_only()
    {
        await using var server = await _server.StartServerAsync(
            "websocket { host: 127.0.0.1, port: -1, no_tls: true, authorization { token: \"ws-secret\" } }");
        await using var tcp = await WireClient.ConnectAsync(server);
        Assert.False(tcp.Info.TryGetProperty("auth_required", out var tcpAuth) && tcpAuth.GetBoolean());
        await tcp.HandshakeAsync(WireClient.QuietConnect);
        await tcp.PingPongAsync();

        await using var denied = await OpenAsync(server);
        var info = await denied.ExpectTextAsync("\r\n");
        using (var json = JsonDocument.Parse(info[5..info.IndexOf("\r\n", StringComparison.Ordinal)]))
        {
            Assert.True(json.RootElement.GetProperty("auth_required").GetBoolean());
        }

        await denied.SendAsync(Connect + "PING\r\n");
        Assert.Contains("-ERR 'Authorization Violation'", await denied.ExpectTextAsync("-ERR"), StringComparison.Ordinal);
        var close = await denied.ExpectCloseAsync();
        Assert.Equal(1008, close.CloseStatus);

        await using var allowed = await OpenAsync(server);
        await allowed.ExpectTextAsync("INFO ");
        await allowed.SendAsync("CONNECT {\"verbose\":false,\"auth_token\":\"ws-secret\"}\r\nPING\r\n");
        Assert.Equal("PONG\r\n", await allowed.ExpectTextAsync("PONG\r\n"));
    }

    [Fact]
    public async Task No_auth_user_lets_a_websocket_client_without_credentials_in_as_that_user_with_its_permissions()
    {
        await using var server = await _server.StartServerAsync("""
            authorization {
              users: [
                { user: guest, password: gpw, permissions: { publish: "public.>", subscribe: "public.>" } }
                { user: admin, password: apw }
              ]
            }
            websocket { host: 127.0.0.1, port: -1, no_tls: true, no_auth_user: guest }
            """);

        // On TCP the server's authorization still applies: no credentials, no entry.
        await using var tcp = await WireClient.ConnectAsync(server);
        await tcp.SendAsync($"CONNECT {WireClient.QuietConnect}\r\nPING\r\n");
        await tcp.ExpectErrAndCloseAsync("Authorization Violation");

        await using var guest = await OpenAsync(server);
        await guest.ExpectTextAsync("INFO ");
        await guest.SendAsync(Connect + "SUB public.news 1\r\nPUB public.news 2\r\nhi\r\nPUB secret.plans 2\r\nno\r\nPING\r\n");
        var text = await guest.ExpectTextAsync("PONG\r\n");
        Assert.Contains("MSG public.news 1 2\r\nhi\r\n", text, StringComparison.Ordinal);
        Assert.Contains("-ERR 'Permissions Violation for Publish to \"secret.plans\"'", text, StringComparison.Ordinal);

        await using var admin = await OpenAsync(server);
        await admin.ExpectTextAsync("INFO ");
        await admin.SendAsync("CONNECT {\"verbose\":false,\"user\":\"admin\",\"pass\":\"apw\"}\r\nSUB secret.> 1\r\nPING\r\n");
        Assert.Equal("PONG\r\n", await admin.ExpectTextAsync("PONG\r\n"));
    }

    [Fact]
    public async Task The_websocket_blocks_user_and_password_replace_the_servers_for_websocket_clients()
    {
        await using var server = await _server.StartServerAsync("""
            authorization { user: tcpuser, password: tcppw }
            websocket { host: 127.0.0.1, port: -1, no_tls: true, authorization { user: webuser, password: webpw } }
            """);

        await using var tcpCredentials = await OpenAsync(server);
        await tcpCredentials.ExpectTextAsync("INFO ");
        await tcpCredentials.SendAsync("CONNECT {\"verbose\":false,\"user\":\"tcpuser\",\"pass\":\"tcppw\"}\r\nPING\r\n");
        Assert.Contains("-ERR 'Authorization Violation'", await tcpCredentials.ExpectTextAsync("-ERR"), StringComparison.Ordinal);

        await using var web = await OpenAsync(server);
        await web.ExpectTextAsync("INFO ");
        await web.SendAsync("CONNECT {\"verbose\":false,\"user\":\"webuser\",\"pass\":\"webpw\"}\r\nPING\r\n");
        Assert.Equal("PONG\r\n", await web.ExpectTextAsync("PONG\r\n"));

        await using var tcp = await WireClient.ConnectAsync(server);
        await tcp.HandshakeAsync("{\"verbose\":false,\"user\":\"tcpuser\",\"pass\":\"tcppw\"}");
        await tcp.PingPongAsync();
    }

    [Fact]
    public async Task Handshake_timeout_closes_a_client_whose_upgrade_request_never_ends()
    {
        await using var server = await _server.StartServerAsync("websocket { host: 127.0.0.1, port: -1, no_tls: true, handshake_timeout: \"1s\" }");
        using var socket = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(8)); // Courier's default limit is 10 s, nats-server has none
        await socket.ConnectAsync(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, server.WebSocketPort), cts.Token);
        await socket.SendAsync(Encoding.ASCII.GetBytes($"GET / HTTP/1.1\r\nHost: 127.0.0.1:{server.WebSocketPort}\r\n"), System.Net.Sockets.SocketFlags.None, cts.Token);

        // The head never ends: the server closes the connection (Go's HTTP server may answer 408 first).
        var answer = new StringBuilder();
        var sink = new byte[1024];
        try
        {
            int read;
            while ((read = await socket.ReceiveAsync(sink, System.Net.Sockets.SocketFlags.None, cts.Token)) > 0)
            {
                answer.Append(Encoding.ASCII.GetString(sink, 0, read));
            }
        }
        catch (System.Net.Sockets.SocketException)
        {
            // reset: closed as well
        }

        Assert.DoesNotContain("101 Switching Protocols", answer.ToString(), StringComparison.Ordinal);

        // A complete upgrade within the limit is served as usual.
        await using var ws = await RawWebSocket.ConnectAsync(server);
        Assert.Equal(101, ws.Status);
        await ws.ExpectTextAsync("INFO ");
    }

    [Fact]
    public async Task A_websocket_block_without_tls_or_no_tls_stops_the_server_from_starting()
    {
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => _server.StartServerAsync("websocket { host: 127.0.0.1, port: -1 }"));
        Assert.Contains("websocket requires TLS configuration", error.Message, StringComparison.Ordinal);
    }
}

[Trait("server", "nats-server")]
public sealed class WebSocketWireTests_NatsServer(NatsServerWebSocketFixture server) : WebSocketWireTests<NatsServerWebSocketFixture>(server);

[Trait("server", "courier")]
public sealed class WebSocketWireTests_Courier(CourierWebSocketFixture server) : WebSocketWireTests<CourierWebSocketFixture>(server);
