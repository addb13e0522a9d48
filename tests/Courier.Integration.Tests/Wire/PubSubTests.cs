using System.Text;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>SUB/PUB/MSG and UNSUB as exact wire transcripts.</summary>
public abstract class PubSubTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected PubSubTests(TServer server)
    {
        _server = server;
    }

    private async Task<WireClient> ConnectedAsync()
    {
        var c = await _server.ConnectAsync();
        await c.HandshakeAsync();
        return c;
    }

    [Fact]
    public async Task Pub_is_delivered_as_msg_with_exact_bytes()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        // SUB <subject> <sid>;  PUB <subject> <#bytes>  ->  MSG <subject> <sid> <#bytes>
        await c.SendAsync($"SUB {p}.foo 1\r\nPUB {p}.foo 5\r\nhello\r\n");
        await c.ExpectAsync($"MSG {p}.foo 1 5\r\nhello\r\n");
    }

    [Fact]
    public async Task Reply_subject_is_carried_into_msg()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        // PUB <subject> <reply> <#bytes>  ->  MSG <subject> <sid> <reply> <#bytes>
        await c.SendAsync($"SUB {p}.svc 7\r\nPUB {p}.svc {p}.inbox.1 4\r\nping\r\n");
        await c.ExpectAsync($"MSG {p}.svc 7 {p}.inbox.1 4\r\nping\r\n");
    }

    [Fact]
    public async Task Messages_flow_between_two_connections()
    {
        var p = Subjects.NewPrefix();
        await using var sub = await ConnectedAsync();
        await using var pub = await ConnectedAsync();

        await sub.SendAsync($"SUB {p} 1\r\n");
        await sub.PingPongAsync(); // the subscription is in place before anyone publishes
        await pub.SendAsync($"PUB {p} 3\r\none\r\nPUB {p} r 3\r\ntwo\r\n");
        await pub.PingPongAsync();

        await sub.ExpectAsync($"MSG {p} 1 3\r\none\r\nMSG {p} 1 r 3\r\ntwo\r\n");
        await sub.PingPongAsync();
    }

    [Fact]
    public async Task Payload_may_contain_crlf_and_protocol_text()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();
        const string payload = "a\r\nPING\r\nMSG x 1 1\r\n\r\n";

        await c.SendAsync($"SUB {p} 1\r\nPUB {p} {payload.Length}\r\n{payload}\r\n");
        await c.ExpectAsync($"MSG {p} 1 {payload.Length}\r\n{payload}\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Zero_length_payload_is_delivered()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p} 1\r\nPUB {p} 0\r\n\r\nPUB {p} r 0\r\n\r\n");
        await c.ExpectAsync($"MSG {p} 1 0\r\n\r\nMSG {p} 1 r 0\r\n\r\n");
    }

    [Fact]
    public async Task Binary_payload_is_delivered_unchanged()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();
        var payload = Enumerable.Range(0, 256).Select(i => (byte)i).ToArray();

        byte[] frame = [.. Encoding.ASCII.GetBytes($"SUB {p} 1\r\nPUB {p} 256\r\n"), .. payload, .. "\r\n"u8];
        await c.SendAsync(frame);
        var msg = await c.ExpectMsgAsync();

        Assert.Equal(p, msg.Subject);
        Assert.Equal(payload, msg.Payload);
    }

    [Fact]
    public async Task Commands_sent_one_byte_at_a_time_are_parsed()
    {
        var p = Subjects.NewPrefix();
        await using var c = await _server.ConnectAsync();

        await c.SendByteByByteAsync(
            $"CONNECT {WireClient.QuietConnect}\r\nSUB {p} q 1\r\nPUB {p} r 5\r\nhe\r\no\r\n" +
            $"HPUB {p} 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p} 1 r 5\r\nhe\r\no\r\nHMSG {p} 1 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\nPONG\r\n");
    }

    [Fact]
    public async Task Commands_split_in_two_writes_at_every_position_are_parsed()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();
        await c.SendAsync($"SUB {p} 1\r\n");
        var input = $"PUB {p} r 5\r\nhello\r\nHPUB {p} 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPING\r\n";
        var output = $"MSG {p} 1 r 5\r\nhello\r\nHMSG {p} 1 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPONG\r\n";

        for (var split = 1; split < input.Length; split++)
        {
            await c.SendAsync(input[..split]);
            await Task.Delay(1); // let the first part arrive on its own
            await c.SendAsync(input[split..]);
            await c.ExpectAsync(output);
        }
    }

    [Fact]
    public async Task Many_commands_in_one_write_are_all_processed_in_order()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();
        var send = new StringBuilder($"SUB {p}.* 1\r\n");
        var expected = new StringBuilder();
        for (var i = 0; i < 100; i++)
        {
            send.Append($"PUB {p}.{i} {i.ToString().Length}\r\n{i}\r\n");
            expected.Append($"MSG {p}.{i} 1 {i.ToString().Length}\r\n{i}\r\n");
        }

        await c.SendAsync(send.Append("PING\r\n").ToString());
        await c.ExpectAsync(expected.Append("PONG\r\n").ToString());
    }

    [Fact]
    public async Task Extra_whitespace_and_tabs_between_arguments_are_accepted()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB  {p}\t 1\r\nPUB\t{p}   2 \r\nhi\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p} 1 2\r\nhi\r\nPONG\r\n");
    }

    [Fact]
    public async Task Star_wildcard_matches_exactly_one_token()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync(
            $"SUB {p}.*.b 1\r\nPUB {p}.a.b 1\r\n1\r\nPUB {p}.a.c 1\r\n2\r\nPUB {p}.a.x.b 1\r\n3\r\n" +
            $"PUB {p}.b 1\r\n4\r\nPUB {p}.z.b 1\r\n5\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p}.a.b 1 1\r\n1\r\nMSG {p}.z.b 1 1\r\n5\r\nPONG\r\n");
    }

    [Fact]
    public async Task Full_wildcard_matches_one_or_more_trailing_tokens()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync(
            $"SUB {p}.> 1\r\nPUB {p} 1\r\n1\r\nPUB {p}.a 1\r\n2\r\nPUB {p}.a.b.c 1\r\n3\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p}.a 1 1\r\n2\r\nMSG {p}.a.b.c 1 1\r\n3\r\nPONG\r\n");
    }

    [Fact]
    public async Task Overlapping_subscriptions_on_one_connection_each_get_a_copy()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p}.a 1\r\nSUB {p}.* 2\r\nSUB {p}.> 3\r\nPUB {p}.a 1\r\nx\r\nPING\r\n");
        var sids = new List<string>();
        for (var i = 0; i < 3; i++)
        {
            var msg = await c.ExpectMsgAsync();
            Assert.Equal($"{p}.a", msg.Subject);
            Assert.Equal("x", msg.PayloadText);
            sids.Add(msg.Sid);
        }

        await c.ExpectAsync("PONG\r\n");
        Assert.Equal(["1", "2", "3"], sids.Order());
    }

    [Fact]
    public async Task Queue_group_delivers_each_message_to_exactly_one_member()
    {
        const int count = 100;
        var p = Subjects.NewPrefix();
        await using var a = await ConnectedAsync();
        await using var b = await ConnectedAsync();
        await using var plain = await ConnectedAsync();
        await a.SendAsync($"SUB {p} workers 1\r\n");
        await b.SendAsync($"SUB {p} workers 2\r\n");
        await plain.SendAsync($"SUB {p} 9\r\n");
        await Task.WhenAll(a.PingPongAsync(), b.PingPongAsync(), plain.PingPongAsync());

        await using var pub = await ConnectedAsync();
        var send = new StringBuilder();
        for (var i = 0; i < count; i++)
        {
            send.Append($"PUB {p} {i.ToString().Length}\r\n{i}\r\n");
        }

        await pub.SendAsync(send.ToString());
        await pub.PingPongAsync(); // every message has been routed once this returns

        // The plain subscriber sees all of them; its PONG comes after them.
        for (var i = 0; i < count; i++)
        {
            Assert.Equal(i.ToString(), (await plain.ExpectMsgAsync()).PayloadText);
        }

        await plain.PingPongAsync();
        var toA = await DrainMessagesAsync(a, "1");
        var toB = await DrainMessagesAsync(b, "2");

        Assert.Equal(count, toA.Count + toB.Count);
        Assert.Equal(Enumerable.Range(0, count).Select(i => i.ToString()).Order(), toA.Concat(toB).Order());
        Assert.True(toA.Count > 0 && toB.Count > 0, $"queue group not spread: {toA.Count} / {toB.Count}");
    }

    // Reads MSG frames up to the PONG that answers our PING.
    private static async Task<List<string>> DrainMessagesAsync(WireClient c, string sid)
    {
        await c.SendAsync("PING\r\n");
        var payloads = new List<string>();
        for (var i = 0; i < 10_000; i++)
        {
            var frame = await c.ReadFrameAsync("MSG or PONG");
            if (frame.AsSpan().SequenceEqual("PONG\r\n"u8))
            {
                return payloads;
            }

            var msg = WireMessage.TryParse(frame);
            Assert.True(msg is not null && msg.Sid == sid, $"expected MSG for sid {sid}, got {WireClient.Show(frame)}");
            payloads.Add(msg!.PayloadText);
        }

        Assert.Fail("no PONG after 10000 frames");
        return payloads;
    }

    [Fact]
    public async Task Queue_subscribers_and_plain_subscribers_on_one_connection_both_receive()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p} g 1\r\nSUB {p} 2\r\nPUB {p} 1\r\nx\r\nPING\r\n");
        var sids = new[] { (await c.ExpectMsgAsync()).Sid, (await c.ExpectMsgAsync()).Sid };
        await c.ExpectAsync("PONG\r\n");
        Assert.Equal(["1", "2"], sids.Order());
    }

    [Fact]
    public async Task Unsub_stops_delivery()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p} 1\r\nPUB {p} 1\r\na\r\nUNSUB 1\r\nPUB {p} 1\r\nb\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p} 1 1\r\na\r\nPONG\r\n");
    }

    [Fact]
    public async Task Unsub_of_an_unknown_sid_is_ignored()
    {
        await using var c = await ConnectedAsync();

        await c.SendAsync("UNSUB 999\r\nUNSUB 998 5\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Unsub_with_max_auto_unsubscribes_after_that_many_messages()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();
        var send = new StringBuilder($"SUB {p} 22\r\nUNSUB 22 2\r\n");
        for (var i = 0; i < 10; i++)
        {
            send.Append($"PUB {p} 2\r\nok\r\n");
        }

        await c.SendAsync(send.Append("PING\r\n").ToString());
        await c.ExpectAsync($"MSG {p} 22 2\r\nok\r\nMSG {p} 22 2\r\nok\r\nPONG\r\n");
        await c.SendAsync($"PUB {p} 2\r\nok\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Unsub_max_counts_messages_already_delivered()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        // One delivered, then "UNSUB 1 3": two more, not three.
        await c.SendAsync(
            $"SUB {p} 1\r\nPUB {p} 1\r\n1\r\nUNSUB 1 3\r\nPUB {p} 1\r\n2\r\nPUB {p} 1\r\n3\r\nPUB {p} 1\r\n4\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p} 1 1\r\n1\r\nMSG {p} 1 1\r\n2\r\nMSG {p} 1 1\r\n3\r\nPONG\r\n");
    }

    [Fact]
    public async Task Unsub_max_already_reached_removes_the_subscription_at_once()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p} 1\r\nPUB {p} 1\r\n1\r\nUNSUB 1 1\r\nPUB {p} 1\r\n2\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p} 1 1\r\n1\r\nPONG\r\n");
    }

    [Fact]
    public async Task Second_sub_with_a_sid_in_use_is_ignored()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p}.a 1\r\nSUB {p}.b 1\r\nPUB {p}.a 1\r\n1\r\nPUB {p}.b 1\r\n2\r\nPING\r\n");
        await c.ExpectAsync($"MSG {p}.a 1 1\r\n1\r\nPONG\r\n");
    }

    [Fact]
    public async Task Echo_false_suppresses_own_messages_but_not_others()
    {
        var p = Subjects.NewPrefix();
        await using var quiet = await _server.ConnectAsync();
        await quiet.HandshakeAsync("{\"verbose\":false,\"pedantic\":false,\"echo\":false}");
        await using var other = await ConnectedAsync();
        await quiet.SendAsync($"SUB {p} 1\r\n");
        await other.SendAsync($"SUB {p} 2\r\n");
        await Task.WhenAll(quiet.PingPongAsync(), other.PingPongAsync());

        await quiet.SendAsync($"PUB {p} 4\r\nmine\r\n");
        await quiet.PingPongAsync(); // routed: nothing came back to the publisher
        await other.SendAsync($"PUB {p} 6\r\ntheirs\r\nPING\r\n");
        await other.ExpectAsync($"MSG {p} 2 4\r\nmine\r\nMSG {p} 2 6\r\ntheirs\r\nPONG\r\n");

        await quiet.ExpectAsync($"MSG {p} 1 6\r\ntheirs\r\n");
        await quiet.PingPongAsync();
    }

    [Fact]
    public async Task Publish_with_no_subscribers_is_accepted_silently()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"PUB {p}.nobody 5\r\nhello\r\nPUB {p}.nobody {p}.reply 5\r\nhello\r\n");
        await c.PingPongAsync();
    }
}

[Trait("server", "nats-server")]
public sealed class PubSubTests_NatsServer(NatsServerFixture server) : PubSubTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class PubSubTests_Courier(CourierFixture server) : PubSubTests<CourierFixture>(server);
