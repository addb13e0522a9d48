using System.Globalization;
using Akka.Actor;
using Courier.Actors.JetStream;
using Courier.Actors.Tests.Server;
using Xunit;
using static Courier.Actors.Tests.JetStream.JetStreamWire;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// Kills a running stream actor: it restarts, recovers from its store and its durable consumer's
/// state file, and neither loses nor repeats an acknowledged message.
/// </summary>
public sealed class StreamFaultInjectionTests : JetStreamTestKit
{
    [Fact]
    public async Task A_killed_stream_actor_recovers_without_losing_or_repeating_acknowledged_messages()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var c = await ConnectRequesterAsync(harness);

        await JetStreamWire.RequestAsync(c, "$JS.API.STREAM.CREATE.FI", """{"name":"FI","subjects":["fi.>"]}""");
        for (var i = 1; i <= 10; i++)
        {
            var ack = await JetStreamWire.RequestAsync(c, $"fi.{i}", "x");
            Assert.Contains($"\"seq\":{i}", ack, StringComparison.Ordinal);
        }

        await JetStreamWire.RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.FI.D", """{"stream_name":"FI","config":{"durable_name":"D","ack_policy":"explicit"}}""");
        var first = await JetStreamWire.FetchAsync(c, 4);
        Assert.Equal([1UL, 2, 3, 4], first.Select(m => m.StreamSeq));
        foreach (var m in first)
        {
            // Double ack: the confirmation comes once the ack is recorded.
            await JetStreamWire.RequestAsync(c, m.AckSubject, "+ACK");
        }

        var stream = await JetStreamActors.StreamAsync(harness.Broker.JetStream!, "FI");
        stream.Tell(Kill.Instance);

        // The restarted stream answers again, with every message and the next sequence.
        var info = "";
        for (var attempt = 0; attempt < 50 && !info.Contains("\"messages\":10", StringComparison.Ordinal); attempt++)
        {
            await Task.Delay(50);
            info = await JetStreamWire.RequestAsync(c, "$JS.API.STREAM.INFO.FI", "");
        }

        Assert.Contains("\"messages\":10", info, StringComparison.Ordinal);
        Assert.Contains("\"seq\":11", await JetStreamWire.RequestAsync(c, "fi.11", "x"), StringComparison.Ordinal);

        var rest = await JetStreamWire.FetchAsync(c, 20, noWait: true);
        Assert.Equal([5UL, 6, 7, 8, 9, 10, 11], rest.Select(m => m.StreamSeq));
    }

    [Fact]
    public async Task A_killed_consumer_actor_recovers_its_acks_from_the_journal_and_snapshot()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var c = await ConnectRequesterAsync(harness);

        // More single acks than the consumer's snapshot interval: recovery reads a snapshot and the events after it.
        const int Messages = ConsumerActor.SnapshotEvery + 300;
        await JetStreamWire.RequestAsync(c, "$JS.API.STREAM.CREATE.FI", """{"name":"FI","subjects":["fi.>"]}""");
        var publishes = new System.Text.StringBuilder();
        for (var i = 1; i <= Messages; i++)
        {
            publishes.Append(CultureInfo.InvariantCulture, $"PUB fi.{i} 1\r\nx\r\n");
        }

        await c.SendAsync(publishes.ToString() + "PING\r\n");
        await c.ExpectLineAsync("PONG");
        await JetStreamWire.RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.FI.D", """{"stream_name":"FI","config":{"durable_name":"D","ack_policy":"explicit","max_ack_pending":2000}}""");

        // Acknowledge all but the last 5 delivered, one double ack (one journal event) at a time.
        var first = await JetStreamWire.FetchAsync(c, Messages - 10);
        Assert.Equal(Messages - 10, first.Count);
        foreach (var m in first.Take(first.Count - 5))
        {
            await JetStreamWire.RequestAsync(c, m.AckSubject, "+ACK");
        }

        var snapshots = Path.Combine(StoreDirectory, "jetstream", "$G", "snapshots");
        for (var attempt = 0; attempt < 50 && !Directory.EnumerateFiles(snapshots, "*.snap").Any(); attempt++)
        {
            await Task.Delay(20);
        }

        Assert.NotEmpty(Directory.EnumerateFiles(snapshots, "*.snap")); // so recovery starts from a snapshot
        var stream = await JetStreamActors.StreamAsync(harness.Broker.JetStream!, "FI");
        var consumer = await JetStreamActors.ConsumerAsync(stream, "D");
        consumer.Tell(Kill.Instance);

        // The restarted consumer redelivers exactly the 5 unacknowledged deliveries (second delivery), then the rest.
        List<JetStreamWire.Delivered> rest = [];
        for (var attempt = 0; attempt < 50 && rest.Count == 0; attempt++)
        {
            await Task.Delay(50);
            rest = await JetStreamWire.FetchAsync(c, 100, noWait: true);
        }

        var expected = Enumerable.Range(Messages - 14, 15).Select(i => (ulong)i).ToList();
        Assert.Equal(expected, rest.Select(m => m.StreamSeq));
        Assert.All(rest.Take(5), m => Assert.Equal("2", m.AckSubject.Split('.')[4]));
        Assert.All(rest.Skip(5), m => Assert.Equal("1", m.AckSubject.Split('.')[4]));

        var info = await JetStreamWire.RequestAsync(c, "$JS.API.CONSUMER.INFO.FI.D", "");
        using var json = System.Text.Json.JsonDocument.Parse(info);
        Assert.Equal((ulong)(Messages - 15), json.RootElement.GetProperty("ack_floor").GetProperty("stream_seq").GetUInt64());
        Assert.Equal(15, json.RootElement.GetProperty("num_ack_pending").GetInt32());
        Assert.Equal(5, json.RootElement.GetProperty("num_redelivered").GetInt32());
    }

    [Fact]
    public async Task A_stream_actor_that_fails_past_its_restart_limit_is_started_again_from_its_store()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var c = await ConnectRequesterAsync(harness);
        await JetStreamWire.RequestAsync(c, "$JS.API.STREAM.CREATE.FI", """{"name":"FI","subjects":["fi.>"]}""");
        for (var i = 1; i <= 5; i++)
        {
            Assert.Contains($"\"seq\":{i}", await JetStreamWire.RequestAsync(c, $"fi.{i}", "x"), StringComparison.Ordinal);
        }

        // Eleven failures in a row: more than the supervisor's ten restarts a minute, so the actor stops.
        var first = await JetStreamActors.StreamAsync(harness.Broker.JetStream!, "FI");
        for (var i = 0; i < 11; i++)
        {
            first.Tell(Kill.Instance);
        }

        var second = first;
        // Between the old actor's end and the new one's start the stream has no actor (Nobody).
        for (var attempt = 0; attempt < 100 && (second.Equals(first) || second.Equals(ActorRefs.Nobody)); attempt++)
        {
            await Task.Delay(20);
            second = await JetStreamActors.StreamAsync(harness.Broker.JetStream!, "FI");
        }

        Assert.NotEqual(first, second);
        Assert.NotEqual(ActorRefs.Nobody, second);
        var info = await JetStreamWire.RequestAsync(c, "$JS.API.STREAM.INFO.FI", "");
        Assert.Contains("\"messages\":5", info, StringComparison.Ordinal);
        Assert.Contains("\"seq\":6", await JetStreamWire.RequestAsync(c, "fi.6", "x"), StringComparison.Ordinal);
    }
}
