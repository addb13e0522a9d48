using System.Collections.Concurrent;
using System.Text;
using Courier.Actors.JetStream;
using Courier.Actors.Tests.Server;
using Xunit;

namespace Courier.Actors.Tests.JetStream;

/// <summary>Courier's in-process client is an ordinary client of the broker.</summary>
public sealed class InternalClientTests
{
    [Fact]
    public async Task An_internal_subscriber_receives_what_a_network_client_publishes_in_batches_with_reply_and_headers()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InternalClient(harness.Broker);
        client.Start();
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
        Assert.True(batches < 101, $"{batches} batches for 101 messages: expected them grouped per read");
    }

    [Fact]
    public async Task What_an_internal_client_publishes_reaches_network_subscribers()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InternalClient(harness.Broker);
        client.Start();
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
        Assert.Equal(1, harness.Broker.ConnectionCount); // the internal connection is not a client
    }

    [Fact]
    public async Task A_deferred_turn_larger_than_one_write_reaches_the_subscriber_whole_and_in_order()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InternalClient(harness.Broker);
        client.Start();
        using var subscriber = await harness.ConnectAsync();
        await subscriber.SendAsync("SUB deferred.> 1\r\nPING\r\n");
        await subscriber.ExpectLineAsync("PONG");

        // 600 KB in one turn: written in pieces during the turn and the rest at its end.
        const int Count = 600;
        var payload = new byte[1000];
        InternalClient.BeginDeferred();
        try
        {
            for (var i = 0; i < Count; i++)
            {
                payload[0] = (byte)('0' + (i % 10));
                client.Publish(CultureInfo($"deferred.{i}"), null, default, payload);
            }
        }
        finally
        {
            InternalClient.EndDeferred();
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
    public async Task Two_clients_deferring_on_one_thread_both_deliver_when_the_turn_ends()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var first = new InternalClient(harness.Broker);
        await using var second = new InternalClient(harness.Broker);
        first.Start();
        second.Start();
        using var subscriber = await harness.ConnectAsync();
        await subscriber.SendAsync("SUB pair.* 1\r\nPING\r\n");
        await subscriber.ExpectLineAsync("PONG");

        InternalClient.BeginDeferred();
        InternalClient.BeginDeferred(); // nested: only the outermost end writes
        try
        {
            first.Publish("pair.a", null, default, "a"u8);
            second.Publish("pair.b", null, default, "b"u8);
        }
        finally
        {
            InternalClient.EndDeferred();
            InternalClient.EndDeferred();
        }

        var lines = new HashSet<string>();
        for (var i = 0; i < 4; i++)
        {
            lines.Add(await subscriber.ReadLineAsync() ?? "");
        }

        Assert.Equal(["MSG pair.a 1 1", "MSG pair.b 1 1", "a", "b"], lines.Order(StringComparer.Ordinal));
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
