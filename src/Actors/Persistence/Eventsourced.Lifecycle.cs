namespace Courier.Actors.Persistence;

/// <summary>Start, restart and stop (Akka's <c>Eventsourced.Lifecycle</c>): every incarnation recovers before its first command.</summary>
public abstract partial class Eventsourced
{
    /// <summary>Starts recovery, then runs the actor's <c>PreStart</c>.</summary>
    internal sealed override void AroundPreStart()
    {
        if (string.IsNullOrEmpty(PersistenceId))
        {
            throw new InvalidOperationException($"PersistenceId is empty for persistent actor [{Self.Path}].");
        }

        StartRecovery(Recovery);
        base.AroundPreStart();
    }

    /// <summary>Puts the stashed commands back for the next incarnation and sends what the failed one batched.</summary>
    internal sealed override void AroundPreRestart(Exception reason, object? message)
    {
        try
        {
            _internalStash.UnstashAll();
        }
        finally
        {
            var inner = message switch
            {
                WriteMessageSuccess success => success.Persistent,
                LoopMessageSuccess loop => loop.Message,
                ReplayedMessage replayed => replayed.Persistent,
                _ => message,
            };
            FlushJournalBatch();
            base.AroundPreRestart(reason, inner);
        }
    }

    /// <summary>The new incarnation recovers before its first command.</summary>
    internal sealed override void AroundPostRestart(Exception reason)
    {
        StartRecovery(Recovery);
        base.AroundPostRestart(reason);
    }

    /// <summary>Stashed commands go to dead letters.</summary>
    internal sealed override void AroundPostStop()
    {
        try
        {
            _internalStash.UnstashAll();
        }
        finally
        {
            base.AroundPostStop();
        }
    }

    /// <summary>Ignores <see cref="RecoveryCompleted"/>; reports failed snapshot and delete requests (Akka logs them).</summary>
    protected override void Unhandled(object message)
    {
        switch (message)
        {
            case RecoveryCompleted:
                return;
            case SaveSnapshotFailure failure:
                Report(failure.Cause, null, $"failed to save snapshot {failure.Metadata}");
                break;
            case DeleteSnapshotFailure failure:
                Report(failure.Cause, null, $"failed to delete snapshot {failure.Metadata}");
                break;
            case DeleteSnapshotsFailure failure:
                Report(failure.Cause, null, $"failed to delete snapshots of [{PersistenceId}] matching {failure.Criteria}");
                break;
            case DeleteMessagesFailure failure:
                Report(failure.Cause, null, $"failed to delete messages of [{PersistenceId}] up to {failure.ToSequenceNr}");
                break;
        }

        base.Unhandled(message);
    }
}
