using Courier.Actors.Persistence;
using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Courier.Storage.Persistence;
using Xunit;
using static Courier.Actors.Tests.Persistence.LedgerActor;

namespace Courier.Actors.Tests.Persistence;

/// <summary>
/// Persistent actors over the FileStore journal and the file snapshot store: recovery in a new actor system
/// over the same directory (after a clean shutdown and after a crash), and the JetStream-consumer routine of
/// PersistAsync at a high rate, a snapshot every N events and deletes below it.
/// </summary>
public sealed class PersistentActorFileSpec : PersistenceTestKit
{
    public PersistentActorFileSpec()
        : base(onDisk: true)
    {
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_new_actor_system_over_the_same_directory_recovers_the_actor(bool cleanShutdown)
    {
        var reports = CreateTestProbe();
        var ledger = Sys.ActorOf(LedgerActor.Props("survivor", reports.Ref));
        reports.ExpectMsg<Recovered>();
        foreach (var item in new[] { "a", "b", "c" })
        {
            ledger.Tell(new Add(item), TestActor);
        }

        ledger.Tell(TakeSnapshot.Instance, TestActor);
        ledger.Tell(new AddAsync("d"), TestActor);
        Assert.Equal(3, reports.ExpectMsg<SaveSnapshotSuccess>().Metadata.SequenceNr);
        for (var i = 0; i < 4; i++)
        {
            ExpectMsg<Added>();
        }

        if (cleanShutdown)
        {
            await Sys.Terminate().WaitAsync(TimeSpan.FromSeconds(10));
            Journal.Dispose();
            Snapshots.Dispose();
        }

        // Otherwise the first system and its engines are simply abandoned, as by kill -9: no Stop, no flush.
        var (journal, snapshots) = OpenEngines(Directory);
        Own(journal);
        Own(snapshots);
        var second = ActorSystem.Create("second");
        try
        {
            PersistenceExtension.Register(second, journal, snapshots);
            var probe = new TestProbe(second, DefaultTimeout);
            var revived = second.ActorOf(LedgerActor.Props("survivor", probe.Ref));
            var offered = probe.ExpectMsg<Offered>();
            Assert.Equal(3, offered.SequenceNr);
            Assert.Equal(["a", "b", "c"], offered.Items);
            probe.ExpectMsg(new Replayed("d", 4));
            Assert.Equal(["a", "b", "c", "d"], probe.ExpectMsg<Recovered>().Items);

            revived.Tell(new Add("e"), probe.Ref);
            probe.ExpectMsg(new Added("e", 5)); // no sequence number is reused
        }
        finally
        {
            await second.Terminate().WaitAsync(TimeSpan.FromSeconds(10));
        }
    }

    [Fact]
    public void A_consumer_style_actor_snapshots_every_n_events_deletes_below_and_recovers_from_the_last_snapshot()
    {
        const int events = 250;
        const int snapshotEvery = 50;
        var reports = CreateTestProbe();
        var consumer = Sys.ActorOf(LedgerActor.Props("consumer", reports.Ref, snapshotEvery));
        reports.ExpectMsg<Recovered>();

        for (var i = 1; i <= events; i++)
        {
            consumer.Tell(new AddAsync($"d{i}"), TestActor);
        }

        var acked = 0;
        while (acked < events)
        {
            ExpectMsg<Added>();
            acked++;
        }

        var snapshots = new List<SnapshotMetadata>();
        for (var i = 0; i < events / snapshotEvery; i++)
        {
            snapshots.Add(reports.FishForMessage<SaveSnapshotSuccess>(_ => true).Metadata);
        }

        Assert.Equal([50L, 100, 150, 200, 250], snapshots.Select(s => s.SequenceNr));
        var last = snapshots[^1];
        AwaitAssert(() => Assert.Empty(StoredEvents("consumer"))); // events up to the snapshot are gone
        Assert.Equal(events, Journal.ReadHighestSequenceNr("consumer"));
        AwaitAssert(() => Assert.Null(Snapshots.Load("consumer", new SnapshotSelectionCriteria(last.SequenceNr - 1)))); // so are older snapshots
        Assert.True(Journal.Calls.Count < events / 2, $"{Journal.Calls.Count} journal writes for {events} events"); // PersistAsync events share writes

        Watch(consumer);
        Sys.Stop(consumer);
        ExpectTerminated(consumer);
        consumer = Sys.ActorOf(LedgerActor.Props("consumer", TestActor, snapshotEvery));
        consumer.Tell(new AddAsync("d251"), TestActor);
        consumer.Tell(new AddAsync("d252"), TestActor);
        FishForMessage<Recovered>(_ => true); // after the offer of snapshot 250 (checked below)
        ExpectMsg<Added>();
        ExpectMsg<Added>();
        Watch(consumer);
        Sys.Stop(consumer);
        ExpectTerminated(consumer);

        var revived = Sys.ActorOf(LedgerActor.Props("consumer", TestActor, snapshotEvery));
        var offered = ExpectMsg<Offered>();
        Assert.Equal(last.SequenceNr, offered.SequenceNr); // the last snapshot, then only the events after it
        ExpectMsg(new Replayed("d251", 251));
        ExpectMsg(new Replayed("d252", 252));

        Assert.Equal(Enumerable.Range(1, events + 2).Select(i => $"d{i}"), ExpectMsg<Recovered>().Items);
        revived.Tell(new AddAsync("next"), TestActor);
        ExpectMsg(new Added("next", events + 3));
    }
}

/// <summary>Recovery gives up after <see cref="PersistenceSettings.RecoveryEventTimeout"/> when the snapshot store does not answer.</summary>
public sealed class RecoveryTimeoutSpec : PersistenceTestKit
{
    public RecoveryTimeoutSpec()
        : base(onDisk: false, new PersistenceSettings { RecoveryEventTimeout = TimeSpan.FromMilliseconds(300) })
    {
    }

    [Fact]
    public void Recovery_that_gets_no_snapshot_answer_times_out_and_stops_the_actor()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        Watch(Persistence.SnapshotStore);
        Sys.Stop(Persistence.SnapshotStore); // LoadSnapshot now goes to dead letters
        ExpectTerminated(Persistence.SnapshotStore);

        var ledger = Sys.ActorOf(LedgerActor.Props("stuck", TestActor));
        Watch(ledger);
        ExpectTerminated(ledger);
        Assert.IsType<RecoveryTimedOutException>(failures.FishForMessage<ActorFailure>(f => f.Cause is RecoveryTimedOutException).Cause);
    }
}
