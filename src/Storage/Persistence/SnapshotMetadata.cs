namespace Courier.Storage.Persistence;

/// <summary>
/// Which snapshot: whose, taken at which sequence number, when (Akka.Persistence <c>SnapshotMetadata</c>;
/// equal when all three are).
/// </summary>
public sealed record SnapshotMetadata
{
    /// <summary>Creates the metadata.</summary>
    /// <param name="persistenceId">The persistent actor's id; not empty.</param>
    /// <param name="sequenceNr">The sequence number of the last event the snapshot covers.</param>
    /// <param name="timestamp">When it was taken (UTC). <see cref="DateTime.MinValue"/> in a delete means "any time".</param>
    public SnapshotMetadata(string persistenceId, long sequenceNr, DateTime timestamp)
    {
        ArgumentException.ThrowIfNullOrEmpty(persistenceId);
        ArgumentOutOfRangeException.ThrowIfNegative(sequenceNr);
        PersistenceId = persistenceId;
        SequenceNr = sequenceNr;
        Timestamp = timestamp;
    }

    /// <summary>The persistent actor's id.</summary>
    public string PersistenceId { get; }

    /// <summary>The sequence number of the last event the snapshot covers.</summary>
    public long SequenceNr { get; }

    /// <summary>When the snapshot was taken (UTC); stored to the tick.</summary>
    public DateTime Timestamp { get; }

    /// <inheritdoc/>
    public override string ToString() => $"SnapshotMetadata<pid: {PersistenceId}, seqNr: {SequenceNr}, timestamp: {Timestamp:O}>";
}
