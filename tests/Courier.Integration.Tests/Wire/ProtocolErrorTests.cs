using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>
/// Bad input: the exact <c>-ERR</c> text nats-server 2.9.10 sends and whether the connection
/// survives it. Closing errors are checked with <see cref="WireClient.ExpectErrAndCloseAsync"/>;
/// protocol violations that nats-server answers by closing without any <c>-ERR</c> with
/// <see cref="WireClient.ExpectClosedAsync"/>.
/// </summary>
public abstract class ProtocolErrorTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const int DefaultMaxPayload = 1024 * 1024; // bytes, nats-server's default
    private const int DefaultMaxControlLine = 4096; // bytes, nats-server's default

    private readonly TServer _server;

    protected ProtocolErrorTests(TServer server)
    {
        _server = server;
    }

    private async Task<WireClient> ConnectedAsync()
    {
        var c = await _server.ConnectAsync();
        await c.HandshakeAsync();
        return c;
    }

    [Theory]
    [InlineData("ZZZ\r\n")]
    [InlineData("FOO bar\r\n")]
    [InlineData("PUBX foo 1\r\nx\r\n")]
    [InlineData("SUBZZZ foo 1\r\n")]
    [InlineData("MSG foo 1 1\r\nx\r\n")]
    [InlineData("\r\n")]
    [InlineData(" PING\r\n")]
    [InlineData("UNSUB\r\n")]
    [InlineData("\u0001\r\n")]
    public async Task Unknown_operation_is_rejected_and_the_connection_closed(string input)
    {
        await using var c = await ConnectedAsync();

        await c.SendAsync(input);
        await c.ExpectErrAndCloseAsync("Unknown Protocol Operation");
    }

    [Fact]
    public async Task Unknown_operation_before_connect_is_rejected_and_the_connection_closed()
    {
        await using var c = await _server.ConnectAsync();

        await c.SendAsync("ZZZ\r\n");
        await c.ExpectErrAndCloseAsync("Unknown Protocol Operation");
    }

    [Fact]
    public async Task Payload_longer_than_declared_is_an_unknown_operation_and_closes()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p} 1\r\nPUB {p} 5\r\nhelloXX\r\n");
        await c.ExpectErrAndCloseAsync("Unknown Protocol Operation");
    }

    [Fact]
    public async Task Pub_over_max_payload_is_rejected_and_the_connection_closed()
    {
        await using var c = await ConnectedAsync();

        // Rejected on the control line, before any payload byte is sent.
        await c.SendAsync($"PUB {Subjects.NewPrefix()} {DefaultMaxPayload + 1}\r\n");
        await c.ExpectErrAndCloseAsync("Maximum Payload Violation");
    }

    [Fact]
    public async Task Hpub_over_max_payload_is_rejected_and_the_connection_closed()
    {
        await using var c = await ConnectedAsync();

        await c.SendAsync($"HPUB {Subjects.NewPrefix()} 12 {DefaultMaxPayload + 1}\r\n");
        await c.ExpectErrAndCloseAsync("Maximum Payload Violation");
    }

    [Fact]
    public async Task Pub_of_exactly_max_payload_is_delivered()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();
        var payload = new string('m', DefaultMaxPayload);

        await c.SendAsync($"SUB {p} 1\r\nPUB {p} {DefaultMaxPayload}\r\n{payload}\r\n");
        var msg = await c.ExpectMsgAsync();

        Assert.Equal(DefaultMaxPayload, msg.Payload.Length);
        Assert.All(msg.Payload, b => Assert.Equal((byte)'m', b));
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Control_line_over_the_default_maximum_is_rejected_and_the_connection_closed()
    {
        await using var c = await ConnectedAsync();

        await c.SendAsync($"PUB {Subjects.NewPrefix()}.{new string('x', DefaultMaxControlLine + 100)} 2\r\n");
        await c.ExpectErrAndCloseAsync("maximum control line exceeded");
    }

    [Fact]
    public async Task Unterminated_control_line_over_the_maximum_is_rejected_without_waiting_for_crlf()
    {
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {new string('x', DefaultMaxControlLine + 100)}");
        await c.ExpectErrAndCloseAsync("maximum control line exceeded");
    }

    [Fact]
    public async Task Long_subject_under_the_control_line_maximum_is_fine()
    {
        var p = Subjects.NewPrefix();
        var subject = $"{p}.{new string('s', 3000)}";
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {subject} 1\r\nPUB {subject} 2\r\nhi\r\n");
        await c.ExpectAsync($"MSG {subject} 1 2\r\nhi\r\n");
    }

    [Theory]
    [InlineData("a..b")]
    [InlineData("a.")]
    [InlineData(".a")]
    [InlineData("a.>.b")]
    public async Task Sub_to_an_invalid_subject_is_rejected_and_the_connection_stays_open(string bad)
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p}.{bad} 1\r\n");
        await c.ExpectAsync("-ERR 'Invalid Subject'\r\n");
        await c.SendAsync($"SUB {p}.ok 2\r\nPUB {p}.ok 2\r\nok\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p}.ok 2 2\r\nok\r\nPONG\r\n");
    }

    [Fact]
    public async Task Sub_to_an_invalid_queue_subscription_subject_is_rejected_too()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p}..x q 1\r\n");
        await c.ExpectAsync("-ERR 'Invalid Subject'\r\n");
        await c.PingPongAsync();
    }

    [Theory]
    [InlineData("PUB foo\r\n")]
    [InlineData("PUB foo abc\r\n")]
    [InlineData("PUB foo -1\r\n")]
    [InlineData("PUB a b c 1\r\n")]
    [InlineData("SUB foo\r\n")]
    [InlineData("SUB a b c d\r\n")]
    [InlineData("HPUB foo 2\r\n")]
    [InlineData("HPUB foo 20 10\r\n")]
    [InlineData("CONNECT {bad json\r\n")]
    [InlineData("CONNECT\r\n")]
    [InlineData("CONNECT {\"verbose\":false} trailing\r\n")]
    [InlineData("-ERR 'client error'\r\n")]
    public async Task Malformed_arguments_close_the_connection_without_an_error_line(string input)
    {
        await using var c = await ConnectedAsync();

        await c.SendAsync(input);
        await c.ExpectClosedAsync();
    }

    [Theory]
    [InlineData("+OK\r\n")]
    [InlineData("INFO {}\r\n")]
    [InlineData("UNSUB not-a-number\r\n")]
    public async Task Server_style_or_odd_lines_from_a_client_are_ignored(string input)
    {
        await using var c = await ConnectedAsync();

        await c.SendAsync(input);
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Hpub_when_headers_were_not_negotiated_closes_the_connection_without_an_error_line()
    {
        await using var c = await _server.ConnectAsync();
        await c.HandshakeAsync("{\"verbose\":false,\"pedantic\":false}");

        await c.SendAsync($"HPUB {Subjects.NewPrefix()} 12 14\r\nNATS/1.0\r\n\r\nhi\r\n");
        await c.ExpectClosedAsync();
    }

    [Fact]
    public async Task One_bad_client_does_not_disturb_another()
    {
        var p = Subjects.NewPrefix();
        await using var good = await ConnectedAsync();
        await using var bad = await ConnectedAsync();
        await good.SendAsync($"SUB {p} 1\r\n");
        await good.PingPongAsync();

        await bad.SendAsync($"PUB {p} 2\r\nok\r\nZZZ\r\n");
        await bad.ExpectErrAndCloseAsync("Unknown Protocol Operation");

        await good.ExpectAsync($"MSG {p} 1 2\r\nok\r\n");
        await good.SendAsync($"PUB {p} 5\r\nstill\r\nPING\r\n");
        await good.ExpectAsync($"MSG {p} 1 5\r\nstill\r\nPONG\r\n");
    }
}

[Trait("server", "nats-server")]
public sealed class ProtocolErrorTests_NatsServer(NatsServerFixture server) : ProtocolErrorTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class ProtocolErrorTests_Courier(CourierFixture server) : ProtocolErrorTests<CourierFixture>(server);
