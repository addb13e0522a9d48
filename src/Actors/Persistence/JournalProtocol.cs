using Courier.Actors.Runtime;

namespace Courier.Actors.Persistence;

// The journal's messages (Akka.Persistence JournalProtocol.cs, same names and meanings). A persistent actor
// sends WriteMessages, ReplayMessages and DeleteMessagesTo to the journal actor; everything else is a reply.

/// <summary>What a <see cref="WriteMessages"/> carries: an <see cref="AtomicWrite"/> or a <see cref="NonPersistentMessage"/>.</summary>
public interface IPersistentEnvelope
{
    /// <summary>The event(s) or the deferred message.</summary>
    object Payload { get; }

    /// <summary>The sender of the command that produced it.</summary>
    IActorRef? Sender { get; }

    /// <summary>How many replies it gets (one per event, one for a deferred message).</summary>
    int Size { get; }
}

/// <summary>Events of one persistence id stored all together or not at all (<c>PersistAll</c> makes one of several).</summary>
public sealed class AtomicWrite : IPersistentEnvelope
{
    /// <summary>An atomic write of one event.</summary>
    public AtomicWrite(Persistent @event)
        : this([@event])
    {
    }

    /// <summary>An atomic write of several events of one persistence id, ascending sequence numbers.</summary>
    public AtomicWrite(IReadOnlyList<Persistent> events)
    {
        ArgumentNullException.ThrowIfNull(events);
        if (events.Count == 0)
        {
            throw new ArgumentException("An atomic write needs at least one event.", nameof(events));
        }

        var pid = events[0].PersistenceId;
        for (var i = 1; i < events.Count; i++)
        {
            if (!string.Equals(events[i].PersistenceId, pid, StringComparison.Ordinal))
            {
                throw new ArgumentException("An atomic write holds events of one persistence id.", nameof(events));
            }
        }

        Events = events;
    }

    /// <summary>The events.</summary>
    public IReadOnlyList<Persistent> Events { get; }

    /// <inheritdoc/>
    public object Payload => Events;

    /// <inheritdoc/>
    public IActorRef? Sender => Events[0].Sender;

    /// <inheritdoc/>
    public int Size => Events.Count;

    /// <summary>Whose events these are.</summary>
    public string PersistenceId => Events[0].PersistenceId;

    /// <summary>The first event's sequence number.</summary>
    public long LowestSequenceNr => Events[0].SequenceNr;

    /// <summary>The last event's sequence number.</summary>
    public long HighestSequenceNr => Events[^1].SequenceNr;

    /// <inheritdoc/>
    public override string ToString() => $"AtomicWrite<pid: {PersistenceId}, {LowestSequenceNr}..{HighestSequenceNr}>";
}

/// <summary>A <c>DeferAsync</c> message: not stored, looped back in order with the writes around it.</summary>
public sealed class NonPersistentMessage(object payload, IActorRef? sender) : IPersistentEnvelope
{
    /// <inheritdoc/>
    public object Payload { get; } = payload ?? throw new ArgumentNullException(nameof(payload));

    /// <inheritdoc/>
    public IActorRef? Sender { get; } = sender;

    /// <inheritdoc/>
    public int Size => 1;
}

/// <summary>Request: store these (the journal answers <see cref="WriteMessagesSuccessful"/> or
/// <see cref="WriteMessagesFailed"/>, then one reply per event and per deferred message, in order).</summary>
public sealed class WriteMessages(IReadOnlyList<IPersistentEnvelope> messages, IActorRef persistentActor, int actorInstanceId)
{
    /// <summary>The atomic writes and deferred messages, in order.</summary>
    public IReadOnlyList<IPersistentEnvelope> Messages { get; } = messages ?? throw new ArgumentNullException(nameof(messages));

    /// <summary>Who gets the replies.</summary>
    public IActorRef PersistentActor { get; } = persistentActor ?? throw new ArgumentNullException(nameof(persistentActor));

    /// <summary>The writing incarnation (replies to an earlier incarnation are ignored by the actor).</summary>
    public int ActorInstanceId { get; } = actorInstanceId;

    /// <inheritdoc/>
    public override string ToString() => $"WriteMessages<{Messages.Count} envelopes, instance {ActorInstanceId}>";
}

/// <summary>Reply: the whole batch was stored (per-event replies follow).</summary>
public sealed class WriteMessagesSuccessful
{
    private WriteMessagesSuccessful()
    {
    }

    /// <summary>The instance.</summary>
    public static WriteMessagesSuccessful Instance { get; } = new();
}

/// <summary>Reply: the batch could not be stored (<see cref="WriteMessageFailure"/> per event follows).</summary>
public sealed class WriteMessagesFailed(Exception cause, int writeCount)
{
    /// <summary>Why.</summary>
    public Exception Cause { get; } = cause;

    /// <summary>How many atomic writes the batch had.</summary>
    public int WriteCount { get; } = writeCount;

    /// <inheritdoc/>
    public override string ToString() => $"WriteMessagesFailed<{WriteCount}: {Cause.Message}>";
}

/// <summary>Reply: this event is stored. Its sender is the sender of the command that persisted it.</summary>
public sealed class WriteMessageSuccess(Persistent persistent, int actorInstanceId)
{
    /// <summary>The event as written.</summary>
    public Persistent Persistent { get; } = persistent;

    /// <summary>The incarnation that wrote it.</summary>
    public int ActorInstanceId { get; } = actorInstanceId;

    /// <inheritdoc/>
    public override string ToString() => $"WriteMessageSuccess<{Persistent}>";
}

/// <summary>Reply: this event was not stored (it could not be serialized or the journal refused it); the actor goes on.</summary>
public sealed class WriteMessageRejected(Persistent persistent, Exception cause, int actorInstanceId)
{
    /// <summary>The event.</summary>
    public Persistent Persistent { get; } = persistent;

    /// <summary>Why.</summary>
    public Exception Cause { get; } = cause;

    /// <summary>The incarnation that wrote it.</summary>
    public int ActorInstanceId { get; } = actorInstanceId;

    /// <inheritdoc/>
    public override string ToString() => $"WriteMessageRejected<{Persistent}: {Cause.Message}>";
}

/// <summary>Reply: this event may or may not be stored (the write failed); the actor stops.</summary>
public sealed class WriteMessageFailure(Persistent persistent, Exception cause, int actorInstanceId)
{
    /// <summary>The event.</summary>
    public Persistent Persistent { get; } = persistent;

    /// <summary>Why.</summary>
    public Exception Cause { get; } = cause;

    /// <summary>The incarnation that wrote it.</summary>
    public int ActorInstanceId { get; } = actorInstanceId;

    /// <inheritdoc/>
    public override string ToString() => $"WriteMessageFailure<{Persistent}: {Cause.Message}>";
}

/// <summary>Reply: a deferred message, looped back in order.</summary>
public sealed class LoopMessageSuccess(object message, int actorInstanceId)
{
    /// <summary>The deferred message.</summary>
    public object Message { get; } = message;

    /// <summary>The incarnation that deferred it.</summary>
    public int ActorInstanceId { get; } = actorInstanceId;
}

/// <summary>Request: replay events <see cref="FromSequenceNr"/>..<see cref="ToSequenceNr"/> (at most <see cref="Max"/>)
/// to <see cref="PersistentActor"/> as <see cref="ReplayedMessage"/>s, then <see cref="RecoverySuccess"/>.</summary>
public sealed class ReplayMessages(long fromSequenceNr, long toSequenceNr, long max, string persistenceId, IActorRef persistentActor)
{
    /// <summary>First sequence number, inclusive.</summary>
    public long FromSequenceNr { get; } = fromSequenceNr;

    /// <summary>Last sequence number, inclusive.</summary>
    public long ToSequenceNr { get; } = toSequenceNr;

    /// <summary>Most events to replay.</summary>
    public long Max { get; } = max;

    /// <summary>Whose events.</summary>
    public string PersistenceId { get; } = persistenceId ?? throw new ArgumentNullException(nameof(persistenceId));

    /// <summary>Who gets them.</summary>
    public IActorRef PersistentActor { get; } = persistentActor ?? throw new ArgumentNullException(nameof(persistentActor));

    /// <summary>Copied into every reply, so an incarnation can ignore the replay an earlier one asked for (not in Akka, which shares the race).</summary>
    internal int ReplayId { get; init; }

    /// <inheritdoc/>
    public override string ToString() => $"ReplayMessages<{PersistenceId} {FromSequenceNr}..{ToSequenceNr} max {Max}>";
}

/// <summary>Reply: one replayed event.</summary>
public sealed class ReplayedMessage(Persistent persistent)
{
    /// <summary>The event.</summary>
    public Persistent Persistent { get; } = persistent;

    /// <summary>The <see cref="ReplayMessages"/> request's id.</summary>
    internal int ReplayId { get; init; }

    /// <inheritdoc/>
    public override string ToString() => $"ReplayedMessage<{Persistent}>";
}

/// <summary>Reply: the replay is complete; <see cref="HighestSequenceNr"/> is the highest ever stored for the id.</summary>
public sealed class RecoverySuccess(long highestSequenceNr)
{
    /// <summary>The highest sequence number stored (deletes do not lower it).</summary>
    public long HighestSequenceNr { get; } = highestSequenceNr;

    /// <summary>The <see cref="ReplayMessages"/> request's id.</summary>
    internal int ReplayId { get; init; }

    /// <inheritdoc/>
    public override string ToString() => $"RecoverySuccess<{HighestSequenceNr}>";
}

/// <summary>Reply: the replay failed.</summary>
public sealed class ReplayMessagesFailure(Exception cause)
{
    /// <summary>Why.</summary>
    public Exception Cause { get; } = cause;

    /// <summary>The <see cref="ReplayMessages"/> request's id.</summary>
    internal int ReplayId { get; init; }

    /// <inheritdoc/>
    public override string ToString() => $"ReplayMessagesFailure<{Cause.Message}>";
}

/// <summary>Request: delete the events of <see cref="PersistenceId"/> up to <see cref="ToSequenceNr"/>, inclusive.</summary>
public sealed class DeleteMessagesTo(string persistenceId, long toSequenceNr, IActorRef persistentActor)
{
    /// <summary>Whose events.</summary>
    public string PersistenceId { get; } = persistenceId ?? throw new ArgumentNullException(nameof(persistenceId));

    /// <summary>Last sequence number deleted.</summary>
    public long ToSequenceNr { get; } = toSequenceNr;

    /// <summary>Who gets the reply.</summary>
    public IActorRef PersistentActor { get; } = persistentActor ?? throw new ArgumentNullException(nameof(persistentActor));

    /// <inheritdoc/>
    public override string ToString() => $"DeleteMessagesTo<{PersistenceId} {ToSequenceNr}>";
}

/// <summary>Reply: the events are deleted.</summary>
public sealed class DeleteMessagesSuccess(long toSequenceNr)
{
    /// <summary>As requested.</summary>
    public long ToSequenceNr { get; } = toSequenceNr;

    /// <inheritdoc/>
    public override string ToString() => $"DeleteMessagesSuccess<{ToSequenceNr}>";
}

/// <summary>Reply: the delete failed.</summary>
public sealed class DeleteMessagesFailure(Exception cause, long toSequenceNr)
{
    /// <summary>Why.</summary>
    public Exception Cause { get; } = cause;

    /// <summary>As requested.</summary>
    public long ToSequenceNr { get; } = toSequenceNr;

    /// <inheritdoc/>
    public override string ToString() => $"DeleteMessagesFailure<{ToSequenceNr}: {Cause.Message}>";
}
