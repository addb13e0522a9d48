using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>HPUB/HMSG and the no-responders status message.</summary>
public abstract class HeaderTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string Headers = "NATS/1.0\r\nX-Trace: abc\r\n\r\n"; // 25 bytes

    private readonly TServer _server;

    protected HeaderTests(TServer server)
    {
        _server = server;
    }

    private async Task<WireClient> ConnectedAsync(string connect = WireClient.QuietConnect)
    {
        var c = await _server.ConnectAsync();
        await c.HandshakeAsync(connect);
        return c;
    }

    [Fact]
    public async Task Hpub_is_delivered_as_hmsg_with_exact_bytes()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        // HPUB <subject> <#header bytes> <#total bytes>  ->  HMSG <subject> <sid> <#header bytes> <#total bytes>
        await c.SendAsync($"SUB {p} 1\r\nHPUB {p} {Headers.Length} {Headers.Length + 5}\r\n{Headers}hello\r\n");
        await c.ExpectAsync($"HMSG {p} 1 {Headers.Length} {Headers.Length + 5}\r\n{Headers}hello\r\n");
    }

    [Fact]
    public async Task Hpub_with_reply_subject_is_delivered_with_it()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p} 3\r\nHPUB {p} {p}.reply {Headers.Length} {Headers.Length + 2}\r\n{Headers}hi\r\n");
        await c.ExpectAsync($"HMSG {p} 3 {p}.reply {Headers.Length} {Headers.Length + 2}\r\n{Headers}hi\r\n");
    }

    [Fact]
    public async Task Header_only_message_has_equal_header_and_total_sizes()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p} 1\r\nHPUB {p} {Headers.Length} {Headers.Length}\r\n{Headers}\r\n");
        var msg = await c.ExpectMsgAsync();

        Assert.Equal("HMSG", msg.Op);
        Assert.Equal(Headers, msg.HeaderText);
        Assert.Empty(msg.Payload);
    }

    [Fact]
    public async Task Header_block_with_a_status_line_is_passed_through_unchanged()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();
        const string headers = "NATS/1.0 100 Idle Heartbeat\r\nA: 1\r\nA: 2\r\nB:  spaced value \r\n\r\n";

        await c.SendAsync($"SUB {p} 1\r\nHPUB {p} {headers.Length} {headers.Length + 3}\r\n{headers}abc\r\n");
        await c.ExpectAsync($"HMSG {p} 1 {headers.Length} {headers.Length + 3}\r\n{headers}abc\r\n");
    }

    [Fact]
    public async Task Hpub_reaches_a_subscriber_without_header_support_as_msg_without_the_header_block()
    {
        var p = Subjects.NewPrefix();
        await using var subscriber = await ConnectedAsync("""{"verbose":false,"pedantic":false,"headers":false}""");
        await using var publisher = await ConnectedAsync();
        await subscriber.SendAsync($"SUB {p}.> 1\r\n");
        await subscriber.PingPongAsync();

        await publisher.SendAsync($"HPUB {p}.a {Headers.Length} {Headers.Length + 5}\r\n{Headers}hello\r\n");
        await publisher.SendAsync($"HPUB {p}.b {p}.reply {Headers.Length} {Headers.Length}\r\n{Headers}\r\n");
        await publisher.SendAsync($"PUB {p}.c 2\r\nhi\r\n");

        await subscriber.ExpectAsync($"MSG {p}.a 1 5\r\nhello\r\n");
        await subscriber.ExpectAsync($"MSG {p}.b 1 {p}.reply 0\r\n\r\n");
        await subscriber.ExpectAsync($"MSG {p}.c 1 2\r\nhi\r\n");
    }

    [Fact]
    public async Task Plain_pub_reaches_a_headers_subscriber_as_msg()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p} 1\r\nPUB {p} 2\r\nhi\r\n");
        await c.ExpectAsync($"MSG {p} 1 2\r\nhi\r\n");
    }

    [Fact]
    public async Task Echo_false_with_headers_suppresses_own_hpub_only()
    {
        var p = Subjects.NewPrefix();
        await using var quiet = await ConnectedAsync("{\"verbose\":false,\"pedantic\":false,\"headers\":true,\"echo\":false}");
        await using var other = await ConnectedAsync();
        await quiet.SendAsync($"SUB {p} 1\r\n");
        await other.SendAsync($"SUB {p} 2\r\n");
        await Task.WhenAll(quiet.PingPongAsync(), other.PingPongAsync());

        await quiet.SendAsync($"HPUB {p} {Headers.Length} {Headers.Length + 4}\r\n{Headers}mine\r\n");
        await quiet.PingPongAsync();
        await other.SendAsync($"HPUB {p} {Headers.Length} {Headers.Length + 6}\r\n{Headers}theirs\r\nPING\r\n");
        await other.ExpectAsync(
            $"HMSG {p} 2 {Headers.Length} {Headers.Length + 4}\r\n{Headers}mine\r\n" +
            $"HMSG {p} 2 {Headers.Length} {Headers.Length + 6}\r\n{Headers}theirs\r\nPONG\r\n");

        await quiet.ExpectAsync($"HMSG {p} 1 {Headers.Length} {Headers.Length + 6}\r\n{Headers}theirs\r\n");
        await quiet.PingPongAsync();
    }

    [Fact]
    public async Task Request_to_nobody_gets_a_503_no_responders_status_with_exact_bytes()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        // As nats-server 2.9.10: a bare status line, no description, no payload.
        await c.SendAsync($"SUB {p}.inbox 1\r\nPUB {p}.nobody {p}.inbox 2\r\nhi\r\n");
        await c.ExpectAsync($"HMSG {p}.inbox 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Hpub_request_to_nobody_gets_the_same_no_responders_status()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p}.inbox.* 1\r\nHPUB {p}.nobody {p}.inbox.7 {Headers.Length} {Headers.Length}\r\n{Headers}\r\n");
        await c.ExpectAsync($"HMSG {p}.inbox.7 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task No_responders_status_follows_an_unsubscribe_of_the_last_responder()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync(
            $"SUB {p}.svc 5\r\nSUB {p}.inbox 1\r\nPUB {p}.svc {p}.inbox 1\r\nq\r\nUNSUB 5\r\nPUB {p}.svc {p}.inbox 1\r\nq\r\nPING\r\n");
        await c.ExpectAsync(
            $"MSG {p}.svc 5 {p}.inbox 1\r\nq\r\nHMSG {p}.inbox 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\nPONG\r\n");
    }

    [Fact]
    public async Task No_responders_status_is_not_sent_without_a_reply_subject()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p}.other 1\r\nPUB {p}.nobody 2\r\nhi\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task No_responders_status_is_not_sent_unless_the_client_asked_for_it()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync("{\"verbose\":false,\"pedantic\":false,\"headers\":true}");

        await c.SendAsync($"SUB {p}.inbox 1\r\nPUB {p}.nobody {p}.inbox 2\r\nhi\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task No_responders_status_goes_only_to_the_requesters_own_reply_subscription()
    {
        var p = Subjects.NewPrefix();
        await using var requester = await ConnectedAsync();
        await using var listener = await ConnectedAsync();
        await listener.SendAsync($"SUB {p}.inbox 1\r\n");
        await listener.PingPongAsync();

        // The requester has no subscription on its reply subject: nobody gets a status,
        // not even another connection subscribed there.
        await requester.SendAsync($"PUB {p}.nobody {p}.inbox 0\r\n\r\n");
        await requester.PingPongAsync();
        await listener.PingPongAsync();
    }
}

[Trait("server", "nats-server")]
public sealed class HeaderTests_NatsServer(NatsServerFixture server) : HeaderTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class HeaderTests_Courier(CourierFixture server) : HeaderTests<CourierFixture>(server);
