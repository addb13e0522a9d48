using Akka.Actor;
using Akka.Persistence;
using Courier.Actors.JetStream;

namespace Courier.Actors.Hosting;

/// <summary>
/// The consumer journal's first-use work, done once from the first JetStream API request on
/// (<see cref="Server.Broker.StartWarmUp"/>), beside that request: recover, persist, snapshot and delete
/// under a persistence id of its own, so the first durable consumer does not do it inside its create.
/// </summary>
/// <remarks>
/// It also went through every protocol JSON type and a memory and a file store, at start-up. Under the
/// composite ReadyToRun image that code is precompiled, and run beside the first request it only did
/// that request's own first-use work a second time, on the other core: the coldstart row's first stream
/// create took 68-88 ms with it and 50-60 without it, the first consumer create 22-29 ms either way (44-46
/// and 55-63 ms with no warm-up at all). Best effort: nothing here is needed for correctness, and a
/// failure only leaves that work for the first consumer.
/// </remarks>
internal static class FirstUseWarmup
{
    private static readonly TimeSpan JournalTimeout = TimeSpan.FromSeconds(30);

    public static Task RunAsync(ActorSystem system, string storeDirectory) => Task.Run(async () =>
    {
        // Left by a process of an earlier version killed while it exercised the stores there.
        var leftover = Path.Combine(storeDirectory, "warmup");
        if (Directory.Exists(leftover))
        {
            Directory.Delete(leftover, recursive: true);
        }

        try
        {
            await system.ActorOf(Props.Create(() => new JournalWarmup()), "warmup-journal")
                .Ask<JournalWarmup.Done>(JournalWarmup.Start.Instance, JournalTimeout).ConfigureAwait(false);
        }
        catch (Exception e) when (e is AskTimeoutException or OperationCanceledException)
        {
            // A journal slower than that (or a server stopping): the first consumer does the rest.
        }
    });

    /// <summary>
    /// Goes through the consumer journal's paths under its own persistence id and deletes what it wrote;
    /// a process killed half-way leaves events the next start recovers (that path too) and deletes.
    /// </summary>
    private sealed class JournalWarmup : ReceivePersistentActor
    {
        private IActorRef _replyTo = ActorRefs.Nobody;

        public JournalWarmup()
        {
            Recover<ConsumerDelta>(_ => { });
            Recover<SnapshotOffer>(_ => { });
            Command<Start>(_ =>
            {
                _replyTo = Sender;
                var delta = new ConsumerDelta { DeliveredStream = 2, DeliveredConsumer = 2, AckFloorStream = 1, AckFloorConsumer = 1 };
                delta.Delivered.Add(new PendingRecord(2, 2, 1));
                delta.Removed.Add(1);
                PersistAsync(delta, _ =>
                {
                    var snapshot = new ConsumerSnapshot { DeliveredStream = 2, DeliveredConsumer = 2, AckFloorStream = 1, AckFloorConsumer = 1 };
                    snapshot.Pending.Add(new PendingRecord(2, 2, 1));
                    SaveSnapshot(snapshot);
                });
            });
            Command<SaveSnapshotSuccess>(_ => DeleteEverything());
            Command<SaveSnapshotFailure>(_ => DeleteEverything());
            Command<DeleteMessagesSuccess>(_ => DeleteSnapshots(SnapshotSelectionCriteria.Latest));
            Command<DeleteMessagesFailure>(_ => DeleteSnapshots(SnapshotSelectionCriteria.Latest));
            Command<DeleteSnapshotsSuccess>(_ => Finish());
            Command<DeleteSnapshotsFailure>(_ => Finish());
        }

        public override string PersistenceId => "$courier/warmup";

        private void DeleteEverything() => DeleteMessages(LastSequenceNr);

        private void Finish()
        {
            _replyTo.Tell(Done.Instance);
            Context.Stop(Self);
        }

        public sealed class Start
        {
            public static readonly Start Instance = new();

            private Start()
            {
            }
        }

        public sealed class Done
        {
            public static readonly Done Instance = new();

            private Done()
            {
            }
        }
    }
}
