using Courier.Actors.Runtime;

namespace Courier.Actors.Persistence;

/// <summary>
/// The state machine every message goes through (Akka's <c>EventsourcedState</c>s): loading the snapshot,
/// replaying, processing commands, persisting (commands stashed). Messages the current phase does not take
/// wait in the internal stash; they are put back in front of the mailbox when the phase allows.
/// </summary>
public abstract partial class Eventsourced
{
    private static readonly object RecoveryTimerKey = new(); // a private key: never clashes with the actor's own timers

    private Phase _phase;
    private bool _recoveryRunning = true;
    private bool _eventSeenInInterval;
    private long _replayMax;

    private enum Phase
    {
        NotStarted,
        LoadingSnapshot,
        Replaying,
        ProcessingCommands,
        PersistingEvents,
        RecoveryFailed,
    }

    /// <summary>Every user message enters here, with the behaviour on top of the stack (the commands).</summary>
    internal sealed override bool AroundReceive(Receive receive, object message)
    {
        switch (_phase)
        {
            case Phase.LoadingSnapshot:
                OnLoadingSnapshot(message);
                break;
            case Phase.Replaying:
                OnReplaying(message);
                break;
            case Phase.ProcessingCommands:
                OnProcessingCommands(receive, message);
                break;
            case Phase.PersistingEvents:
                OnPersistingEvents(message);
                break;
            default:
                _internalStash.Stash(); // stopping after a failed recovery: to dead letters with the rest
                break;
        }

        return true;
    }

    private TimeSpan RecoveryTimeout => _extension.Settings.RecoveryEventTimeout;

    /// <summary>Asks for the snapshot; the events follow once it is in (Akka's <c>StartRecovery</c>).</summary>
    private void StartRecovery(Recovery recovery)
    {
        _recoveryRunning = true;
        _replayMax = recovery.ReplayMax;
        _phase = Phase.LoadingSnapshot;
        Cell.Timers.StartSingleTimer(RecoveryTimerKey, new RecoveryTick(snapshot: true), RecoveryTimeout);
        LoadSnapshot(SnapshotterId, recovery.FromSnapshot, recovery.ToSequenceNr);
    }

    private void OnLoadingSnapshot(object message)
    {
        switch (message)
        {
            case LoadSnapshotResult result:
                Cell.Timers.Cancel(RecoveryTimerKey);
                if (result.Snapshot is { } snapshot)
                {
                    var offer = new SnapshotOffer(snapshot.Metadata, snapshot.Snapshot);
                    var before = LastSequenceNr;
                    try
                    {
                        LastSequenceNr = snapshot.Metadata.SequenceNr;
                        if (!ReceiveRecover(offer))
                        {
                            LastSequenceNr = before;
                            Unhandled(offer);
                        }
                    }
                    catch (Exception e)
                    {
                        FailRecovery(e, offer);
                        return;
                    }
                }

                _phase = Phase.Replaying;
                _eventSeenInInterval = false;
                Cell.Timers.StartPeriodicTimer(RecoveryTimerKey, new RecoveryTick(snapshot: false), RecoveryTimeout);
                Journal.Tell(new ReplayMessages(LastSequenceNr + 1, result.ToSequenceNr, _replayMax, PersistenceId, Self) { ReplayId = _instanceId }, Self);
                break;
            case LoadSnapshotFailed failed:
                FailRecovery(failed.Cause, null);
                break;
            case ReplayedMessage or RecoverySuccess or ReplayMessagesFailure:
                break; // an earlier incarnation's replay (this one has not asked yet)
            case RecoveryTick { Snapshot: true }:
                FailRecovery(new RecoveryTimedOutException($"Recovery timed out, didn't get snapshot within {RecoveryTimeout.TotalSeconds}s."), null);
                break;
            case RecoveryTick:
                break;
            default:
                _internalStash.Stash();
                break;
        }
    }

    private void OnReplaying(object message)
    {
        switch (message)
        {
            case var stale when IsStaleReplay(stale):
                break; // the replay an earlier incarnation asked for, still running when it was restarted
            case ReplayedMessage replayed:
                try
                {
                    _eventSeenInInterval = true;
                    UpdateLastSequenceNr(replayed.Persistent);
                    if (!ReceiveRecover(replayed.Persistent.Payload))
                    {
                        Unhandled(replayed.Persistent.Payload);
                    }
                }
                catch (Exception e)
                {
                    FailRecovery(e, replayed.Persistent.Payload);
                }

                break;
            case RecoverySuccess success:
                Cell.Timers.Cancel(RecoveryTimerKey);
                OnReplaySuccess();
                var highest = Math.Max(success.HighestSequenceNr, LastSequenceNr);
                _sequenceNr = highest;
                LastSequenceNr = highest;
                _recoveryRunning = false;
                try
                {
                    if (!ReceiveRecover(RecoveryCompleted.Instance))
                    {
                        Unhandled(RecoveryCompleted.Instance);
                    }
                }
                finally
                {
                    TransitToProcessingState(); // also when the handler threw: the supervisor decides then
                }

                break;
            case ReplayMessagesFailure failure:
                FailRecovery(failure.Cause, null);
                break;
            case RecoveryTick { Snapshot: false }:
                if (!_eventSeenInInterval)
                {
                    FailRecovery(
                        new RecoveryTimedOutException($"Recovery timed out, didn't get event within {RecoveryTimeout.TotalSeconds}s, highest sequence number seen {LastSequenceNr}."),
                        null);
                }
                else
                {
                    _eventSeenInInterval = false;
                }

                break;
            case RecoveryTick:
                break;
            default:
                _internalStash.Stash();
                break;
        }
    }

    /// <summary>True for a reply to a replay this incarnation did not ask for.</summary>
    private bool IsStaleReplay(object message) => message switch
    {
        ReplayedMessage m => m.ReplayId != _instanceId,
        RecoverySuccess m => m.ReplayId != _instanceId,
        ReplayMessagesFailure m => m.ReplayId != _instanceId,
        _ => false,
    };

    private void FailRecovery(Exception cause, object? message)
    {
        Cell.Timers.Cancel(RecoveryTimerKey);
        _phase = Phase.RecoveryFailed;
        try
        {
            OnRecoveryFailure(cause, message);
        }
        finally
        {
            Context.Stop(Self);
        }
    }

    /// <summary>Recovery is done: send what the RecoveryCompleted handler persisted, then take commands.</summary>
    private void TransitToProcessingState()
    {
        if (_eventBatch.Count > 0)
        {
            FlushBatch();
        }

        if (_pendingStashingPersistInvocations > 0)
        {
            _phase = Phase.PersistingEvents;
        }
        else
        {
            _phase = Phase.ProcessingCommands;
            _internalStash.UnstashAll();
        }
    }

    private void OnProcessingCommands(Receive receive, object message)
    {
        var handled = OnJournalReply(message, error =>
        {
            _pendingInvocations.Dequeue();
            UnstashInternally(error);
        });
        if (handled)
        {
            return;
        }

        try
        {
            if (!receive(message))
            {
                Unhandled(message);
            }

            OnCommandHandled(error: false);
        }
        catch
        {
            OnCommandHandled(error: true);
            throw;
        }
    }

    /// <summary>After a command: send what it persisted; stash commands while a Persist is pending, else take the next stashed one.</summary>
    private void OnCommandHandled(bool error)
    {
        if (_eventBatch.Count > 0)
        {
            FlushBatch();
        }

        if (_pendingStashingPersistInvocations > 0)
        {
            _phase = Phase.PersistingEvents;
        }
        else
        {
            UnstashInternally(error);
        }
    }

    private void OnPersistingEvents(object message)
    {
        var handled = OnJournalReply(message, error =>
        {
            var invocation = _pendingInvocations.Dequeue();
            if (invocation.Stashing)
            {
                _pendingStashingPersistInvocations--;
            }

            if (_pendingStashingPersistInvocations == 0)
            {
                // Only PersistAsync handlers may still be pending: commands can go on.
                _phase = Phase.ProcessingCommands;
                UnstashInternally(error);
            }
        });

        if (!handled)
        {
            _internalStash.Stash();
        }
    }

    /// <summary>The journal's replies, in both command phases (Akka's <c>CommonProcessingStateBehavior</c>).</summary>
    private bool OnJournalReply(object message, Action<bool> onWriteMessageComplete)
    {
        switch (message)
        {
            case WriteMessageSuccess success:
                if (success.ActorInstanceId == _instanceId)
                {
                    UpdateLastSequenceNr(success.Persistent);
                    RunPendingHandler(success.Persistent.Payload, onWriteMessageComplete);
                }

                return true;
            case WriteMessageRejected rejected:
                if (rejected.ActorInstanceId == _instanceId)
                {
                    var p = rejected.Persistent;
                    UpdateLastSequenceNr(p);
                    onWriteMessageComplete(false);
                    OnPersistRejected(rejected.Cause, p.Payload, p.SequenceNr);
                }

                return true;
            case WriteMessageFailure failure:
                if (failure.ActorInstanceId == _instanceId)
                {
                    var p = failure.Persistent;
                    onWriteMessageComplete(false);
                    try
                    {
                        OnPersistFailure(failure.Cause, p.Payload, p.SequenceNr);
                    }
                    finally
                    {
                        Context.Stop(Self);
                    }
                }

                return true;
            case LoopMessageSuccess loop:
                if (loop.ActorInstanceId == _instanceId)
                {
                    RunPendingHandler(loop.Message, onWriteMessageComplete);
                }

                return true;
            case WriteMessagesSuccessful:
                _isWriteInProgress = false;
                FlushJournalBatch();
                return true;
            case WriteMessagesFailed failed:
                if (failed.WriteCount == 0)
                {
                    _isWriteInProgress = false; // otherwise a WriteMessageFailure follows and stops the actor
                }

                return true;
            case RecoveryTick:
                return true; // queued before recovery cancelled its timer
            case ReplayedMessage or RecoverySuccess or ReplayMessagesFailure:
                return true; // an earlier incarnation's replay: recovery is over
            default:
                return false;
        }
    }

    /// <summary>Runs the oldest pending handler with <paramref name="payload"/>, then sends what it persisted.</summary>
    private void RunPendingHandler(object payload, Action<bool> onWriteMessageComplete)
    {
        try
        {
            try
            {
                _pendingInvocations.Peek().Handler(payload);
            }
            finally
            {
                FlushBatch();
            }

            onWriteMessageComplete(false);
        }
        catch
        {
            onWriteMessageComplete(true);
            throw;
        }
    }

    private void UnstashInternally(bool all)
    {
        if (all)
        {
            _internalStash.UnstashAll();
        }
        else
        {
            _internalStash.Unstash();
        }
    }

    /// <summary>Recovery's timeout tick (Akka's <c>RecoveryTick</c>).</summary>
    private sealed class RecoveryTick(bool snapshot)
    {
        public bool Snapshot { get; } = snapshot;
    }
}
