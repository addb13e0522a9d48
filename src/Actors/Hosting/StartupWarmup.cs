using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;
using Akka.Actor;
using Akka.Persistence;
using Courier.Actors.JetStream;
using Courier.Protocols.JetStream;
using Courier.Protocols.Nats;
using Courier.Storage;

namespace Courier.Actors.Hosting;

/// <summary>
/// First-use work a fresh server would otherwise do inside a client's first requests, done once on a
/// pool thread as soon as the listeners accept: a consumer's journal round trip, every JSON type
/// of the protocol contexts through the serializer, a memory and a file store through their API.
/// </summary>
/// <remarks>
/// With QuickJit off (kept for the JetStream rows' throughput) every method the ReadyToRun image cannot
/// hold is compiled fully optimized at first call: framework generics over our types (the stores'
/// among them) and the JSON metadata. The first consumer create took a few hundred ms on
/// that; a client library's test waiting 10-100 ms for it failed. Best effort: nothing here is needed
/// for correctness, and a failure only leaves that work for the first request.
/// </remarks>
internal static class StartupWarmup
{
    private const int Messages = 32; // enough appends to go through the batch and index paths

    private static readonly TimeSpan JournalTimeout = TimeSpan.FromSeconds(30);

    public static Task RunAsync(ActorSystem system, string? storeDirectory) => Task.Run(async () =>
    {
        Task journal = Task.CompletedTask;
        if (storeDirectory is not null)
        {
            // A consumer's journal round: recover, persist, snapshot, delete (as the first durable consumer does).
            journal = system.ActorOf(Props.Create(() => new JournalWarmup()), "warmup-journal")
                .Ask<JournalWarmup.Done>(JournalWarmup.Start.Instance, JournalTimeout);
        }

        JsonContexts(jetStream: storeDirectory is not null);
        if (storeDirectory is not null)
        {
            Stores(Path.Combine(storeDirectory, "warmup"));
        }

        try
        {
            await journal.ConfigureAwait(false);
        }
        catch (Exception e) when (e is AskTimeoutException or OperationCanceledException)
        {
            // A journal slower than that (or a server stopping): the first consumer does the rest.
        }
    });

    // Without JetStream (a route-only cluster node, say) its contexts would be compiled for nothing, on
    // CPU the node's first clients want: only the client protocol's.
    private static void JsonContexts(bool jetStream)
    {
        JsonSerializerContext[] contexts = jetStream
            ? [JetStreamJsonContext.Default, ConsumerJsonContext.Default, NatsJsonContext.Default]
            : [NatsJsonContext.Default];
        foreach (var context in contexts)
        {
            foreach (var property in context.GetType().GetProperties())
            {
                if (property.GetIndexParameters().Length == 0 && property.GetValue(context) is JsonTypeInfo info)
                {
                    RoundTrip(info);
                }
            }
        }
    }

    private static void RoundTrip(JsonTypeInfo info)
    {
        var empty = info.Kind switch
        {
            JsonTypeInfoKind.Object or JsonTypeInfoKind.Dictionary => "{}"u8,
            JsonTypeInfoKind.Enumerable => "[]"u8,
            _ => default,
        };
        if (empty.IsEmpty)
        {
            return;
        }

        try
        {
            if (JsonSerializer.Deserialize(empty, info) is { } value)
            {
                JsonSerializer.SerializeToUtf8Bytes(value, info);
            }
        }
        catch (Exception e) when (e is JsonException or NotSupportedException or InvalidOperationException or ArgumentException)
        {
            // A type "{}" does not make (required members): its metadata is built all the same.
        }
    }

    private static void Stores(string directory)
    {
        if (Directory.Exists(directory))
        {
            Directory.Delete(directory, recursive: true); // left by a process killed while warming up
        }

        var config = new StoreConfig { Name = "warmup", MaxMsgsPerSubject = 16 };
        Exercise(StreamStores.CreateMemory(config));
        Exercise(StreamStores.OpenFile(directory, config));
        if (Directory.Exists(directory))
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    private static void Exercise(IStreamStore store)
    {
        try
        {
            var headers = "NATS/1.0\r\nNats-Msg-Id: warmup\r\n\r\n"u8;
            var payload = Encoding.ASCII.GetBytes(new string('w', 128));
            for (var i = 0; i < Messages; i++)
            {
                store.Append(i % 2 == 0 ? "warmup.a"u8 : "warmup.b"u8, i % 4 == 0 ? headers : default, payload);
            }

            store.Flush();
            store.LoadMessage(1);
            store.LoadNextMessage("warmup.b", 1);
            store.LoadNextMessage("warmup.*", 3);
            store.LoadLastMessage("warmup.a");
            store.State();
            store.FilteredState(1, "warmup.>");
            store.SubjectsState(">");
            store.RemoveMessage(3);
            store.DeletedSequences();
            store.Purge("warmup.a", 0, 1);
            store.Compact(10);
            store.Purge();
            store.Flush();
        }
        finally
        {
            store.Delete();
        }
    }

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
