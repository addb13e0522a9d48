using Courier.Storage.Persistence;

namespace Courier.Actors.Persistence;

/// <summary>
/// How a persistent actor recovers (Akka.Persistence <c>Recovery</c>): from the newest snapshot
/// <see cref="FromSnapshot"/> selects, then the events after it up to <see cref="ToSequenceNr"/>, at most
/// <see cref="ReplayMax"/> of them.
/// </summary>
public sealed record Recovery(SnapshotSelectionCriteria FromSnapshot, long ToSequenceNr = long.MaxValue, long ReplayMax = long.MaxValue)
{
    /// <summary>Newest snapshot, then every event after it.</summary>
    public static Recovery Default { get; } = new(SnapshotSelectionCriteria.Latest);

    /// <summary>No snapshot and no events: the actor starts empty but continues the sequence numbers.</summary>
    public static Recovery None { get; } = new(SnapshotSelectionCriteria.Latest, 0);
}

/// <summary>Given to <c>ReceiveRecover</c> once recovery is done, before the first command (Akka.Persistence <c>RecoveryCompleted</c>).</summary>
public sealed class RecoveryCompleted
{
    private RecoveryCompleted()
    {
    }

    /// <summary>The instance.</summary>
    public static RecoveryCompleted Instance { get; } = new();

    /// <inheritdoc/>
    public override string ToString() => "RecoveryCompleted";
}

/// <summary>Recovery did not get a snapshot or an event within <see cref="PersistenceSettings.RecoveryEventTimeout"/>.</summary>
public sealed class RecoveryTimedOutException : Exception
{
    public RecoveryTimedOutException()
    {
    }

    public RecoveryTimedOutException(string message)
        : base(message)
    {
    }

    public RecoveryTimedOutException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
