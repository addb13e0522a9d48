using System.Collections.Concurrent;
using System.Text;
using Courier.Actors.Connections;
using Courier.Actors.Tests.Server;
using Xunit;

namespace Courier.Actors.Tests.Connections;

/// <summary>Courier's in-process client reaches the subject space as a network client does, without protocol text.</summary>
public sealed class InProcessClientTests
{
    [Fact]
    public async Task An_internal_subscriber_receives_what_a_network_client_publishes_in_batches_with_reply_and_headers()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InProcessClient(harness.Broker.Connections);
        var received = new ConcurrentQueue<InternalMessage>();
        var batches = 0;
        client.Subscribe("internal.>", null, batch =>
        {
            Interlocked.Increment(ref batches);
            foreach (var m in batch)
            {
                received.Enqueue(m);
            }
        });
        await client.FlushAsync();

        using var publisher = await harness.ConnectAsync();
        var burst = new StringBuilder();
        for (var i = 0; i < 100; i++)
        {
            burst.Append(CultureInfo($"PUB internal.{i} reply.{i} 1\r\n{i % 10}\r\n"));
        }

        burst.Append("HPUB internal.h 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPING\r\n");
        await publisher.SendAsync(burst.ToString());
        await publisher.ExpectLineAsync("PONG");
        await WaitUntil(() => received.Count == 101);

        var messages = received.ToArray();
        Assert.Equal("internal.0", messages[0].Subject);
        Assert.Equal("reply.0", messages[0].ReplyTo);
        Assert.Equal("0"u8.ToArray(), messages[0].Payload);
        var withHeaders = messages[^1];
        Assert.Equal("internal.h", withHeaders.Subject);
        Assert.Equal("NATS/1.0\r\n\r\n"u8.ToArray(), withHeaders.Headers);
        Assert.Equal("hi"u8.ToArray(), withHeaders.Payload);
        Assert.True(batches < 101, $"{batches} batches for 101 messages: expected them grouped per publisher batch");
    }

    [Fact]
    public async Task What_an_internal_client_publishes_reaches_network_subscribers()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InProcessClient(harness.Broker.Connections);
        using var subscriber = await harness.ConnectAsync();
        await subscriber.SendAsync("SUB from.inside 5\r\nPING\r\n");
        await subscriber.ExpectLineAsync("PONG");

        client.Publish("from.inside", "answer.here", default, "payload"u8);
        client.Publish("from.inside", null, "NATS/1.0\r\n\r\n"u8, "x"u8);
        await client.FlushAsync();

        Assert.Equal("MSG from.inside 5 answer.here 7", await subscriber.ReadLineAsync());
        Assert.Equal("payload", await subscriber.ReadLineAsync());
        Assert.Equal("HMSG from.inside 5 12 13", await subscriber.ReadLineAsync());
        Assert.Equal("NATS/1.0", await subscriber.ReadLineAsync());
        Assert.Equal("", await subscriber.ReadLineAsync());
        Assert.Equal("x", await subscriber.ReadLineAsync());
        Assert.Equal(1, harness.Broker.Monitoring.ConnectionCount); // the internal connection is not a client
    }

    [Fact]
    public async Task A_turn_larger_than_one_batch_reaches_the_subscriber_whole_and_in_order()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InProcessClient(harness.Broker.Connections);
        using var subscriber = await harness.ConnectAsync();
        await subscriber.SendAsync("SUB deferred.> 1\r\nPING\r\n");
        await subscriber.ExpectLineAsync("PONG");

        // 600 KB in one turn: handed to the pipeline in pieces during the turn and the rest at its end.
        const int Count = 600;
        var payload = new byte[1000];
        var publisher = client.CreatePublisher();
        publisher.BeginTurn();
        try
        {
            for (var i = 0; i < Count; i++)
            {
                payload[0] = (byte)('0' + (i % 10));
                publisher.Publish(CultureInfo($"deferred.{i}"), null, default, payload);
            }
        }
        finally
        {
            publisher.EndTurn();
        }

        for (var i = 0; i < Count; i++)
        {
            Assert.Equal(CultureInfo($"MSG deferred.{i} 1 1000"), await subscriber.ReadLineAsync());
            var body = await subscriber.ReadLineAsync() ?? "";
            Assert.Equal((char)('0' + (i % 10)), body[0]);
            Assert.Equal(1000, body.Length);
        }
    }

    [Fact]
    public async Task What_a_turn_publishes_waits_for_the_turns_end_and_goes_at_once_outside_a_turn()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InProcessClient(harness.Broker.Connections);
        using var subscriber = await harness.ConnectAsync();
        await subscriber.SendAsync("SUB turn.* 1\r\nPING\r\n");
        await subscriber.ExpectLineAsync("PONG");
        var publisher = client.CreatePublisher();

        publisher.BeginTurn();
        publisher.Publish("turn.a", null, default, "a"u8);
        await client.FlushAsync(); // everything handed to the pipeline is delivered; the turn's batch is not handed yet
        await subscriber.SendAsync("PING\r\n");
        Assert.Equal("PONG", await subscriber.ReadLineAsync());

        publisher.EndTurn();
        publisher.Publish("turn.b", null, default, "b"u8); // outside a turn: at once
        Assert.Equal("MSG turn.a 1 1", await subscriber.ReadLineAsync());
        Assert.Equal("a", await subscriber.ReadLineAsync());
        Assert.Equal("MSG turn.b 1 1", await subscriber.ReadLineAsync());
        Assert.Equal("b", await subscriber.ReadLineAsync());
    }

    [Fact]
    public async Task A_publish_after_a_subscribe_reaches_the_new_subscription()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InProcessClient(harness.Broker.Connections);
        await using var other = new InProcessClient(harness.Broker.Connections);
        for (var i = 0; i < 50; i++)
        {
            // No flush between them: the publish waits in the client's queue until the SUB is in effect (invariant 2).
            var got = new TaskCompletionSource<InternalMessage>(TaskCreationOptions.RunContinuationsAsynchronously);
            var sid = other.Subscribe(CultureInfo($"order.{i}"), null, batch => got.TrySetResult(batch[0]));
            await other.FlushAsync();
            var reply = client.Subscribe(CultureInfo($"reply.{i}"), null, _ => { });
            client.Publish(CultureInfo($"order.{i}"), CultureInfo($"reply.{i}"), default, "x"u8);
            var message = await got.Task.WaitAsync(TimeSpan.FromSeconds(5));
            Assert.Equal(CultureInfo($"reply.{i}"), message.ReplyTo);
            other.Unsubscribe(sid);
            client.Unsubscribe(reply);
        }
    }

    [Fact]
    public async Task An_in_process_subscription_takes_jetstream_style_deliveries_with_their_own_subject()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InProcessClient(harness.Broker.Connections);
        using var subscriber = await harness.ConnectAsync();
        await subscriber.SendAsync("CONNECT {\"headers\":true}\r\nSUB deliver.here 9\r\nPING\r\n");
        await subscriber.ExpectLineAsync("PONG");
        var publisher = client.CreatePublisher();

        var ack = new Courier.Actors.JetStream.AckReply(Courier.Actors.JetStream.AckReply.MakePrefix("S", "C"), 1, 42, 7, 1700000000000000000, 3);
        publisher.Deliver("deliver.here", "orders.eu", ack, "NATS/1.0\r\n\r\n"u8, "hi"u8);

        Assert.Equal("HMSG orders.eu 9 $JS.ACK.S.C.1.42.7.1700000000000000000.3 12 14", await subscriber.ReadLineAsync());
        Assert.Equal("NATS/1.0", await subscriber.ReadLineAsync());
        Assert.Equal("", await subscriber.ReadLineAsync());
        Assert.Equal("hi", await subscriber.ReadLineAsync());
    }

    private static string CultureInfo(FormattableString text) => text.ToString(System.Globalization.CultureInfo.InvariantCulture);

    private static async Task WaitUntil(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow.AddSeconds(5);
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "condition not met within 5 s");
            await Task.Delay(10);
        }
    }
}
