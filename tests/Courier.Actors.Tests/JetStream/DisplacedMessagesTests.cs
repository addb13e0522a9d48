using Courier.Actors.Tests.Server;
using Xunit;
using static Courier.Actors.Tests.JetStream.JetStreamWire;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// A consumer that is delivering gets every message it was waiting for, even when a later append
/// removes one (max_msgs_per_subject, a KV bucket's history) before the consumer's turn reads it.
/// </summary>
public sealed class DisplacedMessagesTests : JetStreamTestKit
{
    [Fact]
    public async Task A_waiting_consumer_gets_a_value_that_the_next_put_of_its_subject_replaced_before_the_consumer_read_it()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var c = await ConnectRequesterAsync(harness);
        await JetStreamWire.RequestAsync(c, "$JS.API.STREAM.CREATE.FI", """{"name":"FI","subjects":["fi.>"],"max_msgs_per_subject":1}""");
        await JetStreamWire.RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.FI.D", """{"stream_name":"FI","config":{"durable_name":"D","ack_policy":"none"}}""");

        // A pull request waits for two messages; consumer info (through the same mailbox) shows it is waiting.
        const string Request = """{"batch":2,"expires":5000000000}""";
        await c.SendAsync($"PUB $JS.API.CONSUMER.MSG.NEXT.FI.D _INBOX.t.fetch {Request.Length}\r\n{Request}\r\n");
        Assert.Contains("\"num_waiting\":1", await JetStreamWire.RequestAsync(c, "$JS.API.CONSUMER.INFO.FI.D", ""), StringComparison.Ordinal);

        // Two puts of one key in one read: the stream stores both (the second removing the first) in one
        // turn, before the consumer hears of either.
        await c.SendAsync("PUB fi.key 6\r\nvalue1\r\nPUB fi.key 6\r\nvalue2\r\n");

        var delivered = new List<(string Line, string? Payload)>();
        for (var i = 0; i < 2; i++)
        {
            var line = await c.ReadLineAsync() ?? throw new Xunit.Sdk.XunitException("connection closed");
            delivered.Add((line, await c.ReadLineAsync()));
        }

        Assert.All(delivered, d => Assert.StartsWith("MSG fi.key 1 $JS.ACK.FI.D.1.", d.Line, StringComparison.Ordinal));
        Assert.Equal([("1.1", "value1"), ("2.2", "value2")], delivered.Select(d => (string.Join('.', d.Line.Split(' ')[3].Split('.')[5..7]), d.Payload)));
    }
}
