using Akka.Actor;
using Akka.Persistence;
using Akka.TestKit.Xunit2;
using Xunit;

namespace Courier.Actors.Tests.Persistence;

/// <summary>
/// Akka.NET persistent actors over Courier's file journal and snapshot store: recovery in a new actor
/// system over the same directory (after a clean shutdown and with the first system abandoned, as by
/// kill -9), and the JetStream consumer's routine of PersistAsync at a high rate, a snapshot every N
/// events and deletes below it.
/// </summary>
public sealed class PersistentActorRecoverySpec : PluginSpec
{
    public PersistentActorRecoverySpec()
        : base(onDisk: true)
    {
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_new_actor_system_over_the_same_directory_recovers_the_actor(bool cleanShutdown)
    {
        var reports = CreateTestProbe();
        var ledger = Sys.ActorOf(Ledger.Props("survivor", reports.Ref));
        reports.ExpectMsg<Ledger.Recovered>();
        foreach (var item in new[] { "a", "b", "c" })
        {
            ledger.Tell(new Ledger.Add(item));
        }

        ledger.Tell(Ledger.TakeSnapshot.Instance);
        ledger.Tell(new Ledger.Add("d", Async: true));
        Assert.Equal(3, reports.ExpectMsg<SaveSnapshotSuccess>().Metadata.SequenceNr);
        ReceiveN(4);

        if (cleanShutdown)
        {
            await Sys.Terminate().WaitAsync(TimeSpan.FromSeconds(10));
        }

        // Otherwise the first system is simply left running beside the second, as a killed process leaves its files.
        var second = ActorSystem.Create("second", Configure(StoreDirectory));
        try
        {
            var probe = new TestKit(second);
            var revived = second.ActorOf(Ledger.Props("survivor", probe.TestActor));
            var recovered = probe.ExpectMsg<Ledger.Recovered>();
            Assert.Equal(["a", "b", "c", "d"], recovered.Items);
            Assert.Equal(3, recovered.FromSnapshot);
            Assert.Equal(4, recovered.SequenceNr);

            revived.Tell(new Ledger.Add("e"), probe.TestActor);
            probe.ExpectMsg(new Ledger.Added("e", 5)); // no sequence number is reused
        }
        finally
        {
            await second.Terminate().WaitAsync(TimeSpan.FromSeconds(10));
        }
    }

    [Fact]
    public void A_consumer_style_actor_snapshots_every_n_events_deletes_below_and_recovers_from_the_last_snapshot()
    {
        const int Events = 250;
        const int SnapshotEvery = 50;
        var reports = CreateTestProbe();
        var consumer = Sys.ActorOf(Ledger.Props("consumer", reports.Ref, SnapshotEvery));
        reports.ExpectMsg<Ledger.Recovered>();
        for (var i = 1; i <= Events; i++)
        {
            consumer.Tell(new Ledger.Add($"d{i}", Async: true));
        }

        for (var i = 1; i <= Events; i++)
        {
            ExpectMsg(new Ledger.Added($"d{i}", i)); // PersistAsync handlers run in order
        }

        var snapshots = new List<long>();
        for (var i = 0; i < Events / SnapshotEvery; i++)
        {
            snapshots.Add(reports.FishForMessage<SaveSnapshotSuccess>(_ => true).Metadata.SequenceNr);
        }

        Assert.Equal([50L, 100, 150, 200, 250], snapshots);

        // The events up to the last snapshot are gone from the journal, but its highest sequence number stays.
        AwaitAssert(() =>
        {
            var replay = CreateTestProbe();
            Journal.Tell(new ReplayMessages(1, long.MaxValue, long.MaxValue, "consumer", replay.Ref));
            Assert.Equal(Events, replay.ExpectMsg<RecoverySuccess>().HighestSequenceNr);
        });

        Watch(consumer);
        Sys.Stop(consumer);
        ExpectTerminated(consumer);
        var revived = Sys.ActorOf(Ledger.Props("consumer", TestActor, SnapshotEvery));
        var recovered = ExpectMsg<Ledger.Recovered>();
        Assert.Equal(Events, recovered.FromSnapshot); // the last snapshot, and no events before it
        Assert.Equal(Enumerable.Range(1, Events).Select(i => $"d{i}"), recovered.Items);
        revived.Tell(new Ledger.Add("next", Async: true));
        ExpectMsg(new Ledger.Added("next", Events + 1));
    }

    /// <summary>A persistent list of strings; reports its recovery and snapshots to <c>reports</c>.</summary>
    private sealed class Ledger : ReceivePersistentActor
    {
        private readonly string _id;
        private List<string> _items = [];
        private long _fromSnapshot;

        public Ledger(string id, IActorRef reports, int snapshotEvery)
        {
            _id = id;
            Recover<SnapshotOffer>(offer =>
            {
                _items = [.. ((string)offer.Snapshot).Split('\n', StringSplitOptions.RemoveEmptyEntries)];
                _fromSnapshot = offer.Metadata.SequenceNr;
            });
            Recover<string>(item => _items.Add(item)); // not a method group: the snapshot replaces the list
            Recover<RecoveryCompleted>(_ => reports.Tell(new Recovered([.. _items], _fromSnapshot, LastSequenceNr)));
            Command<Add>(add =>
            {
                void Handler(string item)
                {
                    _items.Add(item);
                    Sender.Tell(new Added(item, LastSequenceNr));
                    if (snapshotEvery > 0 && LastSequenceNr % snapshotEvery == 0)
                    {
                        SaveSnapshot(string.Join('\n', _items));
                    }
                }

                if (add.Async)
                {
                    PersistAsync(add.Item, Handler);
                }
                else
                {
                    Persist(add.Item, Handler);
                }
            });
            Command<TakeSnapshot>(_ => SaveSnapshot(string.Join('\n', _items)));
            Command<SaveSnapshotSuccess>(saved =>
            {
                reports.Tell(saved);
                if (snapshotEvery > 0)
                {
                    DeleteMessages(saved.Metadata.SequenceNr);
                    DeleteSnapshots(new SnapshotSelectionCriteria(saved.Metadata.SequenceNr - 1));
                }
            });
            Command<DeleteMessagesSuccess>(_ => { });
            Command<DeleteSnapshotsSuccess>(_ => { });
        }

        public override string PersistenceId => _id;

        public static Props Props(string id, IActorRef reports, int snapshotEvery = 0) =>
            Akka.Actor.Props.Create(() => new Ledger(id, reports, snapshotEvery));

        public sealed record Add(string Item, bool Async = false);

        public sealed record Added(string Item, long SequenceNr);

        public sealed record Recovered(string[] Items, long FromSnapshot, long SequenceNr);

        public sealed class TakeSnapshot
        {
            public static readonly TakeSnapshot Instance = new();

            private TakeSnapshot()
            {
            }
        }
    }
}
