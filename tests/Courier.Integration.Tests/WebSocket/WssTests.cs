using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;

namespace Courier.Integration.Tests.WebSocket;

/// <summary>
/// wss: <c>websocket { tls { } }</c>, the TLS handshake before the HTTP upgrade, against both servers.
/// nats.ws in Node trusting the test CA, the raw RFC 6455 client over TLS, mutual TLS with
/// <c>verify</c>, and plain clients on the wss port refused with nats-server's (Go's) answer and log line.
/// </summary>
public abstract class WssTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;
    private readonly TlsCertificatesFixture _tls;

    protected WssTests(TServer server, TlsCertificatesFixture tls)
    {
        _server = server;
        _tls = tls;
    }

    private TestCertificates Certs => _tls.Certificates;

    private string WssConfig(string tlsExtra = "", string wsExtra = "") => $$"""
        websocket {
          host: 127.0.0.1
          port: -1
          {{_tls.TlsBlock(tlsExtra)}}
          {{wsExtra}}
        }
        """;

    private static string WssUrl(ServerProcess server) => $"wss://127.0.0.1:{server.WebSocketPort}";

    [Fact]
    public async Task Nats_ws_trusting_the_test_ca_publishes_subscribes_and_requests_over_wss()
    {
        await using var server = await _server.StartServerAsync(WssConfig());

        await NodeScript.RunAsync("ws_pub_sub", server, WssUrl(server), new Dictionary<string, string>
        {
            ["WS_COMPRESSION"] = "0",
            ["NATS_TLS_CA"] = Certs.CaFile,
        });
    }

    [Fact]
    public async Task Nats_ws_over_wss_negotiates_compression_when_configured()
    {
        await using var server = await _server.StartServerAsync(WssConfig(wsExtra: "compression: true"));

        await NodeScript.RunAsync("ws_pub_sub", server, WssUrl(server), new Dictionary<string, string>
        {
            ["WS_COMPRESSION"] = "1",
            ["NATS_TLS_CA"] = Certs.CaFile,
        });
    }

    [Fact]
    public async Task The_raw_client_upgrades_over_tls_and_publishes_and_subscribes_in_frames()
    {
        await using var server = await _server.StartServerAsync(WssConfig());
        await using var ws = await RawWebSocket.ConnectAsync(server, caFile: Certs.CaFile);

        Assert.Equal(101, ws.Status);
        Assert.NotNull(ws.TlsProtocol);
        var info = await ws.ReadDataFrameAsync();
        Assert.StartsWith("INFO {", info.Text, StringComparison.Ordinal);
        await ws.SendAsync("CONNECT {\"verbose\":false}\r\nSUB wss.raw 1\r\nPUB wss.raw 5\r\nhello\r\nPING\r\n");
        await ws.ExpectTextAsync("MSG wss.raw 1 5\r\nhello\r\nPONG\r\n");

        // nats-server 2.9.10's connz reports TLS only for connections whose handshake it ran itself, not
        // for wss (its HTTP server's): Courier does the same.
        using var monitor = new MonitorClient(server);
        var connection = await monitor.GetConnectionAsync(ws.LocalPort);
        Assert.False(connection.TryGetProperty("tls_version", out _), connection.ToString());
        Assert.Equal("Client", connection.GetProperty("kind").GetString());
        Assert.Equal("websocket", connection.GetProperty("type").GetString());
    }

    [Fact]
    public async Task A_plain_http_upgrade_on_the_wss_port_gets_gos_400_answer_and_the_server_serves_others()
    {
        await using var server = await _server.StartServerAsync(WssConfig());

        await using var plain = await RawWebSocket.ConnectAsync(server);
        Assert.Equal(400, plain.Status);
        Assert.StartsWith("HTTP/1.0 400 Bad Request", plain.ResponseHead, StringComparison.Ordinal);
        Assert.Contains("Client sent an HTTP request to an HTTPS server.", await plain.ReadToEndAsync(), StringComparison.Ordinal);

        await using var good = await RawWebSocket.ConnectAsync(server, caFile: Certs.CaFile);
        Assert.Equal(101, good.Status);
        await good.ExpectTextAsync("INFO ");
    }

    [Fact]
    public async Task Bytes_that_are_not_tls_are_closed_with_nats_servers_log_line()
    {
        await using var server = await _server.StartServerAsync(WssConfig());
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.WebSocketPort), cts.Token);

        await socket.SendAsync("\x01\x02\x03\x04\x05 not a tls record\r\n"u8.ToArray(), SocketFlags.None, cts.Token);

        // Whatever the server answers (a TLS alert), it ends the connection: read to the end, bounded.
        var sink = new byte[1024];
        try
        {
            while (await socket.ReceiveAsync(sink, SocketFlags.None, cts.Token) > 0)
            {
            }
        }
        catch (SocketException)
        {
            // reset by the server: closed as well
        }

        await ExpectLogAsync(server, "websocket: TLS handshake error from 127.0.0.1:");
    }

    [Fact]
    public async Task Handshake_timeout_bounds_the_tls_handshake_of_a_silent_client()
    {
        await using var server = await _server.StartServerAsync(WssConfig(wsExtra: "handshake_timeout: \"1s\""));
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(8)); // the listener's default limit is 10 s
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.WebSocketPort), cts.Token);

        var sink = new byte[64];
        try
        {
            Assert.Equal(0, await socket.ReceiveAsync(sink, SocketFlags.None, cts.Token));
        }
        catch (SocketException)
        {
            // reset: closed as well
        }

        await ExpectLogAsync(server, "websocket: TLS handshake error from 127.0.0.1:");
        Assert.Contains("i/o timeout", server.Log.All(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Verify_accepts_a_client_certificate_from_the_ca_and_refuses_a_client_without_one()
    {
        await using var server = await _server.StartServerAsync(WssConfig($$"""
            ca_file: "{{Certs.CaFile}}"
            verify: true
            """));

        await using (var alice = await RawWebSocket.ConnectAsync(server, caFile: Certs.CaFile, clientCertificate: Certs.LoadClient("alice")))
        {
            Assert.Equal(101, alice.Status);
            await alice.ExpectTextAsync("INFO ");
        }

        // TLS 1.3 finishes the client's side before the server has judged its (missing) certificate:
        // the refusal shows as the upgrade failing, or as the connection ending before its answer.
        var refused = await Record.ExceptionAsync(async () =>
        {
            await using var anonymous = await RawWebSocket.ConnectAsync(server, caFile: Certs.CaFile);
        });
        Assert.NotNull(refused);
        Assert.True(refused is AuthenticationException or IOException or Xunit.Sdk.XunitException, refused.ToString());
        await ExpectLogAsync(server, "websocket: TLS handshake error from 127.0.0.1:");

        await NodeScript.RunAsync("ws_publish_one", server, WssUrl(server), new Dictionary<string, string>
        {
            ["NATS_TLS_CA"] = Certs.CaFile,
            ["NATS_TLS_CERT"] = Certs.ClientCert("alice"),
            ["NATS_TLS_KEY"] = Certs.ClientKey("alice"),
        });
    }

    [Fact]
    public async Task Verify_and_map_in_the_websocket_block_names_the_websocket_client_by_its_certificate()
    {
        await using var server = await _server.StartServerAsync(WssConfig($$"""
            ca_file: "{{Certs.CaFile}}"
            verify_and_map: true
            """) + $$"""

            authorization {
              users = [
                { user: "{{TestCertificates.AliceSubject}}", permissions: { publish: ["alice.>"], subscribe: ["alice.>"] } }
              ]
            }
            """);

        await using var alice = await RawWebSocket.ConnectAsync(server, caFile: Certs.CaFile, clientCertificate: Certs.LoadClient("alice"));
        await alice.ExpectTextAsync("INFO ");
        await alice.SendAsync("CONNECT {\"verbose\":false}\r\nSUB alice.x 1\r\nPUB alice.x 2\r\nhi\r\nPUB bob.x 2\r\nno\r\nPING\r\n");
        var text = await alice.ExpectTextAsync("PONG\r\n");
        Assert.Contains("MSG alice.x 1 2\r\nhi\r\n", text, StringComparison.Ordinal);
        Assert.Contains("-ERR 'Permissions Violation for Publish to \"bob.x\"'", text, StringComparison.Ordinal);
    }

    /// <summary>Waits (bounded) for the server to log a line containing <paramref name="text"/>.</summary>
    private static async Task ExpectLogAsync(ServerProcess server, string text)
    {
        for (var i = 0; i < 100 && !server.Log.All().Contains(text, StringComparison.Ordinal); i++)
        {
            await Task.Delay(100);
        }

        Assert.True(server.Log.All().Contains(text, StringComparison.Ordinal), $"no log line with \"{text}\"\n{server.Diagnostics()}");
    }
}

[Trait("server", "nats-server")]
public sealed class WssTests_NatsServer(NatsServerFixture server, TlsCertificatesFixture tls)
    : WssTests<NatsServerFixture>(server, tls), IClassFixture<TlsCertificatesFixture>;

[Trait("server", "courier")]
public sealed class WssTests_Courier(CourierFixture server, TlsCertificatesFixture tls)
    : WssTests<CourierFixture>(server, tls), IClassFixture<TlsCertificatesFixture>;
