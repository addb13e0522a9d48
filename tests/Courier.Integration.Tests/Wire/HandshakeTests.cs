using System.Text.Json;
using System.Text.RegularExpressions;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>INFO, CONNECT, PING/PONG, verbose and pedantic modes, operation case.</summary>
public abstract class HandshakeTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected HandshakeTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Info_is_sent_first_and_carries_the_required_fields()
    {
        await using var c = await _server.ConnectAsync();
        var info = c.Info;
        var context = $"INFO was {c.InfoLine}\n{_server.Server.Diagnostics()}";

        Assert.Matches(new Regex(@"^INFO \{.*\} ?\r\n$", RegexOptions.Singleline), c.InfoLine);
        Assert.True(info.GetProperty("server_id").GetString() is { Length: > 0 }, context);
        Assert.True(info.GetProperty("server_name").GetString() is { Length: > 0 }, context);
        Assert.True(info.GetProperty("version").GetString() is { Length: > 0 }, context);
        Assert.True(info.GetProperty("proto").GetInt32() >= 1, context);
        Assert.True(info.GetProperty("host").GetString() is { Length: > 0 }, context);
        Assert.True(info.GetProperty("port").GetInt32() == _server.Port, context);
        Assert.True(info.GetProperty("headers").GetBoolean(), context);
        Assert.True(info.GetProperty("max_payload").GetInt64() == 1024 * 1024, context);
        Assert.True(info.GetProperty("client_id").GetUInt64() > 0, context);
        Assert.True(info.GetProperty("client_ip").GetString() == "127.0.0.1", context);
        Assert.False(
            info.TryGetProperty("auth_required", out var auth) && auth.ValueKind == JsonValueKind.True,
            $"auth_required must be absent or false without auth\n{context}");
    }

    [Fact]
    public async Task Each_connection_gets_its_own_client_id()
    {
        await using var a = await _server.ConnectAsync();
        await using var b = await _server.ConnectAsync();

        Assert.NotEqual(a.Info.GetProperty("client_id").GetUInt64(), b.Info.GetProperty("client_id").GetUInt64());
        Assert.Equal(a.Info.GetProperty("server_id").GetString(), b.Info.GetProperty("server_id").GetString());
    }

    [Fact]
    public async Task Verbose_connect_acknowledges_connect_sub_and_pub_with_ok_but_not_ping()
    {
        var p = Subjects.NewPrefix();
        await using var c = await _server.ConnectAsync();

        await c.SendAsync("CONNECT {\"verbose\":true,\"pedantic\":false}\r\n");
        await c.ExpectAsync("+OK\r\n");
        await c.SendAsync($"SUB {p} 1\r\n");
        await c.ExpectAsync("+OK\r\n");
        await c.SendAsync($"PUB {p} 2\r\nhi\r\n");
        await c.ExpectAsync($"+OK\r\nMSG {p} 1 2\r\nhi\r\n");
        await c.SendAsync("UNSUB 1\r\n");
        await c.ExpectAsync("+OK\r\n");
        await c.SendAsync("PING\r\n");
        await c.ExpectAsync("PONG\r\n");
    }

    [Fact]
    public async Task Connect_without_verbose_field_defaults_to_verbose()
    {
        await using var c = await _server.ConnectAsync();

        await c.SendAsync("CONNECT {}\r\nPING\r\n");
        await c.ExpectAsync("+OK\r\nPONG\r\n");
    }

    [Fact]
    public async Task Quiet_connect_sends_nothing_back()
    {
        await using var c = await _server.ConnectAsync();

        await c.SendAsync($"CONNECT {WireClient.QuietConnect}\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Ping_is_answered_with_pong_before_and_after_connect()
    {
        await using var c = await _server.ConnectAsync();

        await c.SendAsync("PING\r\n");
        await c.ExpectAsync("PONG\r\n");
        await c.HandshakeAsync();
        await c.SendAsync("PING\r\nPING\r\nPING\r\n");
        await c.ExpectAsync("PONG\r\nPONG\r\nPONG\r\n");
    }

    [Fact]
    public async Task Pong_from_the_client_is_accepted_silently()
    {
        await using var c = await _server.ConnectAsync();
        await c.HandshakeAsync();

        await c.SendAsync("PONG\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Operations_are_case_insensitive()
    {
        var p = Subjects.NewPrefix();
        await using var c = await _server.ConnectAsync();

        await c.SendAsync($"connect {WireClient.QuietConnect}\r\nPiNg\r\n");
        await c.ExpectAsync("PONG\r\n");
        await c.SendAsync($"sub {p} 1\r\npub {p} 2\r\nhi\r\nSuB {p}.x 2\r\nPuB {p}.x 2\r\nho\r\nunsub 1\r\npub {p} 2\r\nno\r\nping\r\n");
        await c.ExpectAsync($"MSG {p} 1 2\r\nhi\r\nMSG {p}.x 2 2\r\nho\r\nPONG\r\n");
    }

    [Fact]
    public async Task Hpub_and_ping_are_case_insensitive_too()
    {
        var p = Subjects.NewPrefix();
        await using var c = await _server.ConnectAsync();
        await c.HandshakeAsync();

        await c.SendAsync($"sub {p} 1\r\nhpub {p} 12 14\r\nNATS/1.0\r\n\r\nhi\r\npInG\r\n");
        await c.ExpectAsync($"HMSG {p} 1 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPONG\r\n");
    }

    [Fact]
    public async Task Pedantic_publish_to_a_wildcard_subject_is_rejected_and_the_connection_stays_open()
    {
        var p = Subjects.NewPrefix();
        await using var c = await _server.ConnectAsync();
        await c.HandshakeAsync("{\"verbose\":false,\"pedantic\":true}");

        await c.SendAsync($"PUB {p}.* 2\r\nhi\r\n");
        await c.ExpectAsync("-ERR 'Invalid Publish Subject'\r\n");
        await c.SendAsync($"PUB {p}.> 2\r\nhi\r\n");
        await c.ExpectAsync("-ERR 'Invalid Publish Subject'\r\n");
        await c.SendAsync($"PUB {p}..x 2\r\nhi\r\n");
        await c.ExpectAsync("-ERR 'Invalid Publish Subject'\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Pedantic_publish_to_a_valid_subject_is_accepted()
    {
        var p = Subjects.NewPrefix();
        await using var c = await _server.ConnectAsync();
        await c.HandshakeAsync("{\"verbose\":false,\"pedantic\":true}");

        await c.SendAsync($"SUB {p}.x 1\r\nPUB {p}.x 2\r\nhi\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p}.x 1 2\r\nhi\r\nPONG\r\n");
    }

    [Fact]
    public async Task Non_pedantic_publish_to_a_wildcard_subject_gets_no_error()
    {
        var p = Subjects.NewPrefix();
        await using var c = await _server.ConnectAsync();
        await c.HandshakeAsync();

        await c.SendAsync($"PUB {p}.* 2\r\nhi\r\nPUB {p}.> 2\r\nhi\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Connect_with_no_responders_but_without_headers_is_rejected_and_closed()
    {
        await using var c = await _server.ConnectAsync();

        await c.SendAsync("CONNECT {\"verbose\":false,\"no_responders\":true}\r\n");
        await c.ExpectErrAndCloseAsync("no responders requires headers support");
    }
}

[Trait("server", "nats-server")]
public sealed class HandshakeTests_NatsServer(NatsServerFixture server) : HandshakeTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class HandshakeTests_Courier(CourierFixture server) : HandshakeTests<CourierFixture>(server);
