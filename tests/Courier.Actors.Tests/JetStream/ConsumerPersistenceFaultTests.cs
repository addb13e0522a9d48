using Akka.Actor;
using Akka.Persistence.TestKit;
using Courier.Actors.JetStream;
using Courier.Actors.Tests.Server;
using Xunit;
using static Courier.Actors.Tests.JetStream.JetStreamWire;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// A durable consumer whose journal or snapshot store fails, through Akka.Persistence.TestKit's
/// TestJournal and TestSnapshotStore in place of Courier's plugins. Per Akka's semantics a failed write
/// stops the persistent actor, a rejected one skips its handler and the actor goes on, and a failed
/// recovery stops it; the stream starts a stopped durable consumer again from its journal. Whatever the
/// server confirmed (a double ack's reply) is never delivered again.
/// </summary>
public sealed class ConsumerPersistenceFaultTests : JetStreamTestKit
{
    private const string TestPlugins = """
        akka.persistence.journal.plugin = "akka.persistence.journal.test"
        akka.persistence.journal.test {
          class = "Akka.Persistence.TestKit.TestJournal, Akka.Persistence.TestKit"
          plugin-dispatcher = "akka.actor.default-dispatcher"
        }
        akka.persistence.snapshot-store.plugin = "akka.persistence.snapshot-store.test"
        akka.persistence.snapshot-store.test {
          class = "Akka.Persistence.TestKit.TestSnapshotStore, Akka.Persistence.TestKit"
          plugin-dispatcher = "akka.actor.default-dispatcher"
        }
        """;

    public ConsumerPersistenceFaultTests()
        : base(TestPlugins)
    {
    }

    private ITestJournal Journal => TestJournal.FromRef(Akka.Persistence.Persistence.Instance.Apply(Sys).JournalFor(null));

    private ITestSnapshotStore Snapshots => TestSnapshotStore.FromRef(Akka.Persistence.Persistence.Instance.Apply(Sys).SnapshotStoreFor(null));

    [Fact]
    public async Task A_consumer_whose_journal_write_fails_is_started_again_and_redelivers_only_what_was_not_confirmed()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var c = await SetUpAsync(harness, messages: 20);
        var first = await FetchAsync(c, 10);
        foreach (var m in first.Take(5))
        {
            Assert.Equal("", await RequestAsync(c, m.AckSubject, "+ACK")); // confirmed: its event is stored
        }

        // Watched first: once stopped it is started again soon, under a new ref.
        var consumer = await ConsumerAsync(harness);
        Watch(consumer);
        await Journal.OnWrite.Fail();
        await c.SendAsync($"PUB {first[5].AckSubject} _INBOX.t.reply 4\r\n+ACK\r\n"); // its event fails: no confirmation
        ExpectTerminated(consumer, TimeSpan.FromSeconds(10)); // Akka stops a persistent actor whose write failed
        await Journal.OnWrite.Pass();

        // The stream starts it again from its journal: 1-5 stay acknowledged, 6-10 come back (second delivery).
        var rest = await FetchUntilAsync(c, 20);
        Assert.Equal(Enumerable.Range(6, 15).Select(i => (ulong)i), rest.Select(m => m.StreamSeq));
        Assert.All(rest.Take(5), m => Assert.Equal("2", m.AckSubject.Split('.')[4]));
        Assert.All(rest.Skip(5), m => Assert.Equal("1", m.AckSubject.Split('.')[4]));
    }

    [Fact]
    public async Task A_consumer_whose_journal_write_is_rejected_goes_on_and_never_confirms_the_rejected_ack()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var c = await SetUpAsync(harness, messages: 10);
        var delivered = await FetchAsync(c, 10);
        Assert.Equal("", await RequestAsync(c, delivered[0].AckSubject, "+ACK"));
        var consumer = await ConsumerAsync(harness);
        Watch(consumer);

        await Journal.OnWrite.Reject();
        await c.SendAsync($"PUB {delivered[1].AckSubject} _INBOX.t.reply 4\r\n+ACK\r\n");
        ExpectNoMsg(TimeSpan.FromMilliseconds(300)); // rejected: the actor goes on (no Terminated)
        await Journal.OnWrite.Pass();
        Assert.Equal("", await RequestAsync(c, delivered[2].AckSubject, "+ACK")); // the next one is stored and confirmed
        var reply = await c.ReadLineAsync(TimeSpan.FromMilliseconds(300)).ContinueWith(t => t.IsCompletedSuccessfully ? t.Result : null);
        Assert.Null(reply); // the rejected ack was never confirmed

        // After a restart from the journal, the confirmed acks (1 and 3) are never delivered again.
        consumer.Tell(Kill.Instance);
        var again = await FetchUntilAsync(c, 20, minimum: 7);
        Assert.DoesNotContain(1UL, again.Select(m => m.StreamSeq));
        Assert.DoesNotContain(3UL, again.Select(m => m.StreamSeq));
        Assert.Contains(4UL, again.Select(m => m.StreamSeq));
    }

    [Fact]
    public async Task A_snapshot_store_that_fails_to_load_does_not_lose_the_consumer()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var c = await SetUpAsync(harness, messages: 10);
        var delivered = await FetchAsync(c, 4);
        foreach (var m in delivered)
        {
            Assert.Equal("", await RequestAsync(c, m.AckSubject, "+ACK"));
        }

        await Snapshots.OnLoad.Fail();
        var consumer = await ConsumerAsync(harness);
        Watch(consumer);
        consumer.Tell(Kill.Instance); // restarts, and its recovery fails: Akka stops it
        ExpectTerminated(consumer, TimeSpan.FromSeconds(10));
        await Task.Delay(300); // the stream keeps starting it again meanwhile (with a backoff), and it keeps failing
        await Snapshots.OnLoad.Pass();

        var rest = await FetchUntilAsync(c, 20);
        Assert.Equal(Enumerable.Range(5, 6).Select(i => (ulong)i), rest.Select(m => m.StreamSeq));
    }

    [Fact]
    public async Task A_snapshot_that_fails_to_save_keeps_the_events_and_recovery_replays_them()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        const int Messages = ConsumerActor.SnapshotEvery + 50;
        using var c = await SetUpAsync(harness, Messages, maxAckPending: 2000);
        await Snapshots.OnSave.Fail();
        var delivered = await FetchAsync(c, Messages - 10);
        foreach (var m in delivered)
        {
            await RequestAsync(c, m.AckSubject, "+ACK"); // one event each: past the snapshot interval
        }

        var consumer = await ConsumerAsync(harness);
        consumer.Tell(Kill.Instance);
        var rest = await FetchUntilAsync(c, 100);
        Assert.Equal(Enumerable.Range(Messages - 9, 10).Select(i => (ulong)i), rest.Select(m => m.StreamSeq));
    }

    /// <summary>A client, stream FI with <paramref name="messages"/> messages, and durable D (explicit acks).</summary>
    private static async Task<LineClient> SetUpAsync(BrokerHarness harness, int messages, int maxAckPending = 1000)
    {
        var c = await ConnectRequesterAsync(harness);
        await RequestAsync(c, "$JS.API.STREAM.CREATE.FI", """{"name":"FI","subjects":["fi.>"]}""");
        var publishes = new System.Text.StringBuilder();
        for (var i = 1; i <= messages; i++)
        {
            publishes.Append(System.Globalization.CultureInfo.InvariantCulture, $"PUB fi.{i} 1\r\nx\r\n");
        }

        await c.SendAsync(publishes + "PING\r\n");
        await c.ExpectLineAsync("PONG");
        await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.FI.D", $$$"""{"stream_name":"FI","config":{"durable_name":"D","ack_policy":"explicit","max_ack_pending":{{{maxAckPending}}}}}""");
        return c;
    }

    private static async Task<IActorRef> ConsumerAsync(BrokerHarness harness)
    {
        var stream = await JetStreamActors.StreamAsync(harness.Broker.JetStream!, "FI");
        return await JetStreamActors.ConsumerAsync(stream, "D");
    }

    /// <summary>no_wait fetches until one returns at least <paramref name="minimum"/> messages (the consumer may be restarting).</summary>
    private static async Task<List<Delivered>> FetchUntilAsync(LineClient c, int batch, int minimum = 1)
    {
        List<Delivered> got = [];
        for (var attempt = 0; attempt < 100 && got.Count < minimum; attempt++)
        {
            await Task.Delay(50);
            got = await FetchAsync(c, batch, noWait: true);
        }

        return got;
    }
}
