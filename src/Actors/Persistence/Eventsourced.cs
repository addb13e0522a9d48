using Courier.Actors.Runtime;
using Courier.Actors.Runtime.Internal;
using Courier.Storage.Persistence;

namespace Courier.Actors.Persistence;

/// <summary>
/// An event-sourced actor (Akka.Persistence <c>Eventsourced</c>/<c>PersistentActor</c>): it recovers its state
/// from the newest snapshot and the events after it, then handles commands, persisting events with
/// <see cref="Persist{TEvent}"/> and friends and applying them in handlers that run once they are stored.
/// </summary>
/// <remarks>
/// <para><b>Order.</b> Handlers run in persist order. While a <see cref="Persist{TEvent}"/> or
/// <see cref="PersistAll{TEvent}"/> is in flight, new commands are stashed and handled after its handlers ran;
/// <see cref="PersistAsync{TEvent}"/> and <see cref="PersistAllAsync{TEvent}"/> do not stash (commands go on
/// while the write runs; the handlers still run in order). <see cref="DeferAsync{TEvent}"/> runs its handler
/// after the handlers of everything persisted before it. Commands that arrive during recovery wait for it.</para>
/// <para><b>Batching.</b> The events a command persists go to the journal together when the command's handler
/// returns, as one <see cref="WriteMessages"/>; while one is in flight the next ones accumulate, and the journal
/// commits the writes of many actors with one fsync. Per event, nothing is written but the event's record.</para>
/// <para><b>Failures.</b> A failed write stops the actor (<see cref="OnPersistFailure"/>): its state may not
/// match the journal, and a new incarnation recovers from it. A rejected event (no codec) is reported by
/// <see cref="OnPersistRejected"/> and the actor goes on. A failed recovery stops the actor
/// (<see cref="OnRecoveryFailure"/>).</para>
/// <para>Replies from the journal to an earlier incarnation (after a restart) are recognised by the instance id
/// and ignored, as in Akka.</para>
/// </remarks>
public abstract partial class Eventsourced : ActorBase
{
    private static int _instanceCounter;

    private readonly int _instanceId;
    private readonly string _writerGuid;
    private readonly UnboundedStash _internalStash;
    private readonly PersistenceExtension _extension;
    private readonly Queue<PendingInvocation> _pendingInvocations = new();
    private readonly List<IPersistentEnvelope> _eventBatch = [];
    private List<IPersistentEnvelope> _journalBatch = [];
    private bool _isWriteInProgress;
    private long _sequenceNr;
    private long _pendingStashingPersistInvocations;

    /// <summary>Binds the actor to its system's persistence (<see cref="PersistenceExtension.Register"/> must have run).</summary>
    protected Eventsourced()
    {
        _extension = PersistenceExtension.Get(Context.System);
        _instanceId = Interlocked.Increment(ref _instanceCounter);
        _writerGuid = Guid.NewGuid().ToString();
        _internalStash = new UnboundedStash(Cell);
    }

    /// <summary>The id its events and snapshots are stored under; stable across restarts and processes.</summary>
    public abstract string PersistenceId { get; }

    /// <summary>How to recover; <see cref="Recovery.Default"/> unless overridden.</summary>
    public virtual Recovery Recovery => Recovery.Default;

    /// <summary>The journal actor.</summary>
    public IActorRef Journal => _extension.Journal;

    /// <summary>The snapshot-store actor.</summary>
    public IActorRef SnapshotStore => _extension.SnapshotStore;

    /// <summary>The id snapshots are stored under: <see cref="PersistenceId"/>.</summary>
    public string SnapshotterId => PersistenceId;

    /// <summary>True until recovery has replayed everything (false from the <see cref="RecoveryCompleted"/> handler on).</summary>
    public bool IsRecovering => _recoveryRunning;

    /// <summary>Not <see cref="IsRecovering"/>.</summary>
    public bool IsRecoveryFinished => !_recoveryRunning;

    /// <summary>The sequence number of the last event replayed or stored (handlers see their own event's).</summary>
    public long LastSequenceNr { get; private set; }

    /// <summary>The sequence number a snapshot taken now covers: <see cref="LastSequenceNr"/>.</summary>
    public long SnapshotSequenceNr => LastSequenceNr;

    /// <summary>The codecs (to register event and snapshot types).</summary>
    protected PersistenceSerialization Serialization => _extension.Serialization;

    /// <summary>Handles replayed events, a <see cref="SnapshotOffer"/>, and <see cref="RecoveryCompleted"/> last.</summary>
    protected abstract bool ReceiveRecover(object message);

    /// <summary>Handles commands (the actor's behaviour until it becomes another).</summary>
    protected abstract bool ReceiveCommand(object message);

    /// <inheritdoc/>
    protected sealed override bool Receive(object message) => ReceiveCommand(message);

    // ---- Persisting ----

    /// <summary>
    /// Persists <paramref name="event"/> and runs <paramref name="handler"/> once it is stored, with
    /// <c>Sender</c> as it is now. Commands arriving until then are stashed.
    /// </summary>
    /// <exception cref="InvalidOperationException">Called during recovery.</exception>
    public void Persist<TEvent>(TEvent @event, Action<TEvent> handler)
        where TEvent : notnull
        => Enqueue([@event], handler, stashing: true);

    /// <summary>Persists <paramref name="events"/> as one atomic write and runs <paramref name="handler"/> for
    /// each once they are stored. Commands arriving until then are stashed.</summary>
    public void PersistAll<TEvent>(IEnumerable<TEvent> events, Action<TEvent> handler)
        where TEvent : notnull
        => Enqueue(events, handler, stashing: true);

    /// <summary>Persists <paramref name="event"/> without stashing commands; <paramref name="handler"/> runs once
    /// it is stored, in persist order. The high-rate path: no stash, events of many commands share a write.</summary>
    public void PersistAsync<TEvent>(TEvent @event, Action<TEvent> handler)
        where TEvent : notnull
        => Enqueue([@event], handler, stashing: false);

    /// <summary>Persists <paramref name="events"/> as one atomic write without stashing commands.</summary>
    public void PersistAllAsync<TEvent>(IEnumerable<TEvent> events, Action<TEvent> handler)
        where TEvent : notnull
        => Enqueue(events, handler, stashing: false);

    // One atomic write of the events; their handlers queue in persist order (stashing ones hold commands back).
    private void Enqueue<TEvent>(IEnumerable<TEvent>? events, Action<TEvent> handler, bool stashing)
        where TEvent : notnull
    {
        ThrowIfRecovering();
        ArgumentNullException.ThrowIfNull(handler);
        var persistents = new List<Persistent>();
        foreach (var @event in events ?? [])
        {
            if (stashing)
            {
                _pendingStashingPersistInvocations++;
            }

            _pendingInvocations.Enqueue(new PendingInvocation(@event, o => handler((TEvent)o), stashing));
            persistents.Add(NewPersistent(@event));
        }

        if (persistents.Count > 0)
        {
            _eventBatch.Add(new AtomicWrite(persistents));
        }
    }

    /// <summary>Runs <paramref name="handler"/> with <paramref name="event"/> (not persisted) after the handlers
    /// of everything persisted before it; at once if nothing is pending.</summary>
    public void DeferAsync<TEvent>(TEvent @event, Action<TEvent> handler)
        where TEvent : notnull
    {
        ThrowIfRecovering();
        ArgumentNullException.ThrowIfNull(handler);
        if (_pendingInvocations.Count == 0)
        {
            handler(@event);
            return;
        }

        _pendingInvocations.Enqueue(new PendingInvocation(@event, o => handler((TEvent)o), Stashing: false));
        _eventBatch.Add(new NonPersistentMessage(@event, Sender));
    }

    /// <summary>Deletes the events up to <paramref name="toSequenceNr"/> (<c>long.MaxValue</c>: all so far); the
    /// reply is <see cref="DeleteMessagesSuccess"/> or <see cref="DeleteMessagesFailure"/>.</summary>
    public void DeleteMessages(long toSequenceNr)
    {
        if (toSequenceNr == long.MaxValue || toSequenceNr <= LastSequenceNr)
        {
            Journal.Tell(new DeleteMessagesTo(PersistenceId, toSequenceNr == long.MaxValue ? LastSequenceNr : toSequenceNr, Self), Self);
        }
        else
        {
            Self.Tell(
                new DeleteMessagesFailure(
                    new InvalidOperationException($"toSequenceNr [{toSequenceNr}] must be less than or equal to LastSequenceNr [{LastSequenceNr}]"),
                    toSequenceNr),
                Self);
        }
    }

    // ---- Snapshots (Akka's Snapshotter) ----

    /// <summary>Saves <paramref name="snapshot"/> as the state at <see cref="SnapshotSequenceNr"/>; the reply is
    /// <see cref="SaveSnapshotSuccess"/> or <see cref="SaveSnapshotFailure"/>.</summary>
    public void SaveSnapshot(object snapshot)
    {
        ArgumentNullException.ThrowIfNull(snapshot);
        SnapshotStore.Tell(new SaveSnapshot(new SnapshotMetadata(SnapshotterId, SnapshotSequenceNr, DateTime.UtcNow), snapshot), Self);
    }

    /// <summary>Deletes the snapshot at <paramref name="sequenceNr"/>; the reply is <see cref="DeleteSnapshotSuccess"/> or <see cref="DeleteSnapshotFailure"/>.</summary>
    public void DeleteSnapshot(long sequenceNr) =>
        SnapshotStore.Tell(new DeleteSnapshot(new SnapshotMetadata(SnapshotterId, sequenceNr, DateTime.SpecifyKind(DateTime.MinValue, DateTimeKind.Utc))), Self);

    /// <summary>Deletes the snapshots <paramref name="criteria"/> selects; the reply is <see cref="DeleteSnapshotsSuccess"/> or <see cref="DeleteSnapshotsFailure"/>.</summary>
    public void DeleteSnapshots(SnapshotSelectionCriteria criteria) =>
        SnapshotStore.Tell(new DeleteSnapshots(SnapshotterId, criteria), Self);

    /// <summary>Asks the snapshot store for a snapshot; the reply is <see cref="LoadSnapshotResult"/> or <see cref="LoadSnapshotFailed"/>.</summary>
    public void LoadSnapshot(string persistenceId, SnapshotSelectionCriteria criteria, long toSequenceNr) =>
        SnapshotStore.Tell(new LoadSnapshot(persistenceId, criteria, toSequenceNr), Self);

    // ---- Hooks ----

    /// <summary>Recovery failed (the actor stops after this). Default: reported on <c>ActorSystem.Failed</c>.</summary>
    /// <param name="reason">Why.</param>
    /// <param name="message">The replayed event whose handler threw, if that was it.</param>
    protected virtual void OnRecoveryFailure(Exception reason, object? message = null) =>
        Report(reason, Directive.Stop, message is null
            ? $"recovery of [{PersistenceId}] failed; last sequence number {LastSequenceNr}"
            : $"recovery of [{PersistenceId}] failed in the handler of {message.GetType().Name} #{LastSequenceNr}");

    /// <summary>An event could not be stored (the actor stops after this). Default: reported on <c>ActorSystem.Failed</c>.</summary>
    protected virtual void OnPersistFailure(Exception cause, object @event, long sequenceNr) =>
        Report(cause, Directive.Stop, $"failed to persist {@event.GetType().Name} #{sequenceNr} of [{PersistenceId}]");

    /// <summary>The journal rejected an event (the actor goes on; its handler does not run). Default: reported on <c>ActorSystem.Failed</c>.</summary>
    protected virtual void OnPersistRejected(Exception cause, object @event, long sequenceNr) =>
        Report(cause, null, $"journal rejected {@event.GetType().Name} #{sequenceNr} of [{PersistenceId}]: {cause.Message}");

    /// <summary>Every event is replayed, just before <see cref="RecoveryCompleted"/>.</summary>
    protected virtual void OnReplaySuccess()
    {
    }

    // ---- Internals ----

    private Persistent NewPersistent(object @event) =>
        new(@event, NextSequenceNr(), PersistenceId, "", Sender, _writerGuid);

    private long NextSequenceNr() => ++_sequenceNr;

    private void UpdateLastSequenceNr(Persistent persistent)
    {
        if (persistent.SequenceNr > LastSequenceNr)
        {
            LastSequenceNr = persistent.SequenceNr;
        }
    }

    private void ThrowIfRecovering()
    {
        if (IsRecovering)
        {
            throw new InvalidOperationException("Cannot persist during replay. Events can be persisted when receiving RecoveryCompleted or later.");
        }
    }

    /// <summary>Moves the events the last handler persisted to the journal batch and sends it if no write is in flight.</summary>
    private void FlushBatch()
    {
        if (_eventBatch.Count > 0)
        {
            _journalBatch.AddRange(_eventBatch);
            _eventBatch.Clear();
        }

        FlushJournalBatch();
    }

    private void FlushJournalBatch()
    {
        if (!_isWriteInProgress && _journalBatch.Count > 0)
        {
            Journal.Tell(new WriteMessages(_journalBatch, Self, _instanceId), Self);
            _journalBatch = [];
            _isWriteInProgress = true;
        }
    }

    private void Report(Exception cause, Directive? directive, string description) =>
        Context.System.ReportFailure(Self, cause, directive, description);

    /// <summary>A handler waiting for its event's write (or a deferred message's loop).</summary>
    private sealed record PendingInvocation(object Event, Action<object> Handler, bool Stashing);
}
