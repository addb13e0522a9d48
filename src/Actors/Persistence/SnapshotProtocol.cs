using Courier.Storage.Persistence;

namespace Courier.Actors.Persistence;

// The snapshot store's messages (Akka.Persistence SnapshotProtocol.cs, same names and meanings). Requests
// are answered to their sender. SnapshotMetadata and SnapshotSelectionCriteria are the engine's types
// (Courier.Storage.Persistence).

/// <summary>A loaded snapshot: its metadata and the deserialized state.</summary>
public sealed class SelectedSnapshot(SnapshotMetadata metadata, object snapshot)
{
    /// <summary>Whose, at which sequence number, when.</summary>
    public SnapshotMetadata Metadata { get; } = metadata;

    /// <summary>The state.</summary>
    public object Snapshot { get; } = snapshot;

    /// <inheritdoc/>
    public override string ToString() => $"SelectedSnapshot<{Metadata}>";
}

/// <summary>Offered to <c>ReceiveRecover</c> when recovery starts from a snapshot, before the events after it.</summary>
public sealed class SnapshotOffer(SnapshotMetadata metadata, object snapshot)
{
    /// <summary>Whose, at which sequence number, when.</summary>
    public SnapshotMetadata Metadata { get; } = metadata;

    /// <summary>The state.</summary>
    public object Snapshot { get; } = snapshot;

    /// <inheritdoc/>
    public override string ToString() => $"SnapshotOffer<{Metadata}>";
}

/// <summary>Request: the newest snapshot of <see cref="PersistenceId"/> that <see cref="Criteria"/> selects, at or below <see cref="ToSequenceNr"/>.</summary>
public sealed class LoadSnapshot(string persistenceId, SnapshotSelectionCriteria criteria, long toSequenceNr)
{
    /// <summary>Whose.</summary>
    public string PersistenceId { get; } = persistenceId ?? throw new ArgumentNullException(nameof(persistenceId));

    /// <summary>Which snapshots qualify.</summary>
    public SnapshotSelectionCriteria Criteria { get; } = criteria ?? throw new ArgumentNullException(nameof(criteria));

    /// <summary>Upper sequence number bound, inclusive (also the replay's).</summary>
    public long ToSequenceNr { get; } = toSequenceNr;

    /// <inheritdoc/>
    public override string ToString() => $"LoadSnapshot<{PersistenceId}, {Criteria}, {ToSequenceNr}>";
}

/// <summary>Reply: the snapshot, or null when none qualifies.</summary>
public sealed class LoadSnapshotResult(SelectedSnapshot? snapshot, long toSequenceNr)
{
    /// <summary>The snapshot, if any.</summary>
    public SelectedSnapshot? Snapshot { get; } = snapshot;

    /// <summary>As requested.</summary>
    public long ToSequenceNr { get; } = toSequenceNr;

    /// <inheritdoc/>
    public override string ToString() => $"LoadSnapshotResult<{Snapshot?.ToString() ?? "none"}, {ToSequenceNr}>";
}

/// <summary>Reply: the load failed.</summary>
public sealed class LoadSnapshotFailed(Exception cause)
{
    /// <summary>Why.</summary>
    public Exception Cause { get; } = cause;

    /// <inheritdoc/>
    public override string ToString() => $"LoadSnapshotFailed<{Cause.Message}>";
}

/// <summary>Request: store this snapshot.</summary>
public sealed class SaveSnapshot(SnapshotMetadata metadata, object snapshot)
{
    /// <summary>Whose, at which sequence number, when.</summary>
    public SnapshotMetadata Metadata { get; } = metadata ?? throw new ArgumentNullException(nameof(metadata));

    /// <summary>The state.</summary>
    public object Snapshot { get; } = snapshot ?? throw new ArgumentNullException(nameof(snapshot));

    /// <inheritdoc/>
    public override string ToString() => $"SaveSnapshot<{Metadata}>";
}

/// <summary>Reply: the snapshot is stored durably.</summary>
public sealed record SaveSnapshotSuccess(SnapshotMetadata Metadata);

/// <summary>Reply: the snapshot could not be stored.</summary>
public sealed record SaveSnapshotFailure(SnapshotMetadata Metadata, Exception Cause);

/// <summary>Request: delete one snapshot (see <see cref="ISnapshotStore.Delete(SnapshotMetadata)"/>).</summary>
public sealed record DeleteSnapshot(SnapshotMetadata Metadata);

/// <summary>Reply: deleted (or there was nothing to delete).</summary>
public sealed record DeleteSnapshotSuccess(SnapshotMetadata Metadata);

/// <summary>Reply: the delete failed.</summary>
public sealed record DeleteSnapshotFailure(SnapshotMetadata Metadata, Exception Cause);

/// <summary>Request: delete every snapshot of <see cref="PersistenceId"/> that <see cref="Criteria"/> selects.</summary>
public sealed record DeleteSnapshots(string PersistenceId, SnapshotSelectionCriteria Criteria);

/// <summary>Reply: deleted.</summary>
public sealed record DeleteSnapshotsSuccess(SnapshotSelectionCriteria Criteria);

/// <summary>Reply: the delete failed.</summary>
public sealed record DeleteSnapshotsFailure(SnapshotSelectionCriteria Criteria, Exception Cause);
