using Akka.Actor;
using Akka.Persistence;
using Courier.Actors.JetStream;

namespace Courier.Benchmarks.Persistence;

/// <summary>
/// A persistent actor with a durable consumer's journal traffic: each turn persists one real
/// <see cref="ConsumerDelta"/> (one delivery, one ack) with <c>PersistAsync</c>, through the real
/// <see cref="ConsumerJournalSerializer"/>. It keeps one event in flight: the next turn starts when
/// the journal has confirmed the previous event, as a consumer's next ack batch follows the last.
/// </summary>
internal sealed class DeltaWriter : ReceivePersistentActor
{
    private readonly Countdown _countdown;
    private ulong _turn;
    private int _remaining;

    public DeltaWriter(string persistenceId, Countdown countdown)
    {
        PersistenceId = persistenceId;
        _countdown = countdown;
        Recover<ConsumerDelta>(_ => _turn++);
        Command<Protocol.Persist>(persist =>
        {
            _remaining = persist.Events;
            PersistNext();
        });
        Command<Protocol.Next>(_ => PersistNext());
        Command<Protocol.Truncate>(_ => DeleteMessages(LastSequenceNr));
        Command<DeleteMessagesSuccess>(_ => _countdown.Signal());
        Command<DeleteMessagesFailure>(failure => _countdown.Fail(failure.Cause));
    }

    public override string PersistenceId { get; }

    public static Props Props(string persistenceId, Countdown countdown) =>
        Akka.Actor.Props.Create(() => new DeltaWriter(persistenceId, countdown));

    protected override void OnPersistFailure(Exception cause, object @event, long sequenceNr)
    {
        _countdown.Fail(cause);
        base.OnPersistFailure(cause, @event, sequenceNr);
    }

    protected override void OnPersistRejected(Exception cause, object @event, long sequenceNr)
    {
        _countdown.Fail(cause);
        base.OnPersistRejected(cause, @event, sequenceNr);
    }

    private void PersistNext()
    {
        // A fresh delta per turn, as ConsumerActor.Checkpoint makes: message n delivered, n - 1 acked.
        var n = ++_turn;
        var delta = new ConsumerDelta
        {
            DeliveredStream = n,
            DeliveredConsumer = n,
            AckFloorStream = n - 1,
            AckFloorConsumer = n - 1,
        };
        delta.Delivered.Add(new PendingRecord(n, n, 1));
        delta.Removed.Add(n - 1);
        PersistAsync(delta, _ =>
        {
            if (--_remaining > 0)
            {
                Self.Tell(Protocol.Next.Instance);
            }
            else
            {
                _countdown.Signal();
            }
        });
    }

    /// <summary>The benchmark's commands.</summary>
    internal static class Protocol
    {
        /// <summary>Persist this many events, one at a time, then signal the countdown.</summary>
        public sealed class Persist
        {
            public Persist(int events)
            {
                ArgumentOutOfRangeException.ThrowIfNegativeOrZero(events);
                Events = events;
            }

            public int Events { get; }

            public override string ToString() => $"Persist({Events})";
        }

        /// <summary>The previous event is stored: persist the next one.</summary>
        public sealed class Next
        {
            public static readonly Next Instance = new();

            private Next()
            {
            }
        }

        /// <summary>Delete every event persisted so far (bounds the journal), then signal the countdown.</summary>
        public sealed class Truncate
        {
            public static readonly Truncate Instance = new();

            private Truncate()
            {
            }
        }
    }
}
