using System.Collections.Concurrent;
using System.Text;
using Courier.Actors.Connections;
using Courier.Actors.JetStream;
using Courier.Actors.Tests.Server;
using Xunit;

namespace Courier.Actors.Tests.JetStream;

/// <summary>The stream's ack subscription decodes acks from the wire as clients send them.</summary>
public sealed class AckSinkTests
{
    [Fact]
    public async Task Acks_of_every_kind_are_decoded_from_what_a_client_publishes()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InProcessClient(harness.Broker.Connections);
        var received = new ConcurrentQueue<AckEntry>();
        client.Subscribe("$JS.ACK.S.>", null, new AckSink(batch =>
        {
            foreach (var ack in batch)
            {
                received.Enqueue(ack);
            }
        }));
        await client.FlushAsync();

        using var publisher = await harness.ConnectAsync();
        var acks = new (string Subject, string? Reply, string Body)[]
        {
            ("$JS.ACK.S.C1.1.10.1.1700000000000000000.5", null, ""),
            ("$JS.ACK.S.C1.1.11.2.1700000000000000000.4", "confirm.1", "+ACK"),
            ("$JS.ACK.S.C2.2.12.3.1700000000000000000.3", null, "-NAK"),
            ("$JS.ACK.S.C2.1.13.4.1700000000000000000.2", null, "-NAK {\"delay\": 2000000000}"),
            ("$JS.ACK.S.C2.1.14.5.1700000000000000000.2", null, "-NAK {not json"),
            ("$JS.ACK.S.C1.1.15.6.1700000000000000000.1", null, "+WPI"),
            ("$JS.ACK.S.C1.1.16.7.1700000000000000000.0", null, "+TERM"),
            ("$JS.ACK.S.C1.1.17.8.1700000000000000000.0", "_INBOX.next", "+NXT"),
            ("$JS.ACK.S.C1.1.18.9.1700000000000000000.0", null, "huh"),
            ("$JS.ACK.S.C1.1.notanumber.9.1700000000000000000.0", null, "+ACK"), // not an ack subject: dropped
            ("$JS.ACK.S.C1.1.19", null, "+ACK"), // too few tokens: dropped
        };
        var burst = new StringBuilder();
        foreach (var (subject, reply, body) in acks)
        {
            burst.Append(reply is null ? $"PUB {subject} {body.Length}\r\n{body}\r\n" : $"PUB {subject} {reply} {body.Length}\r\n{body}\r\n");
        }

        burst.Append("PING\r\n");
        await publisher.SendAsync(burst.ToString());
        await publisher.ExpectLineAsync("PONG");
        var deadline = DateTime.UtcNow.AddSeconds(5);
        while (received.Count < 9 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10);
        }

        await client.FlushAsync();
        AckEntry[] expected =
        [
            new("C1", 10, AckKind.Ack, 0, null),
            new("C1", 11, AckKind.Ack, 0, "confirm.1"),
            new("C2", 12, AckKind.Nak, 0, null),
            new("C2", 13, AckKind.Nak, 2_000_000_000, null),
            new("C2", 14, AckKind.Nak, 0, null),
            new("C1", 15, AckKind.Progress, 0, null),
            new("C1", 16, AckKind.Term, 0, null),
            new("C1", 17, AckKind.Next, 0, "_INBOX.next"),
            new("C1", 18, AckKind.Other, 0, null),
        ];
        Assert.Equal(expected, received.ToArray());
    }

    [Fact]
    public void An_ack_reply_has_nats_servers_nine_tokens()
    {
        var reply = new AckReply(AckReply.MakePrefix("ORDERS", "worker"), 2, 18_446_744_073_709_551_615, 7, 1_700_000_000_123_456_789, 0);
        Assert.Equal("$JS.ACK.ORDERS.worker.2.18446744073709551615.7.1700000000123456789.0", reply.ToString());
        Assert.Equal(reply.ToString().Length, reply.Length); // what max_bytes counts, without formatting
        Assert.Equal("$JS.ACK.S.C.1.1.1.0.0", new AckReply(AckReply.MakePrefix("S", "C"), 1, 1, 1, 0, -1).ToString());
    }
}
