namespace Courier.Storage.Persistence;

/// <summary>
/// Which snapshots a load or delete considers (Akka.Persistence <c>SnapshotSelectionCriteria</c>):
/// those with <see cref="MinSequenceNr"/> &lt;= sequence number &lt;= <see cref="MaxSequenceNr"/> and
/// <see cref="MinTimestamp"/> &lt;= timestamp &lt;= <see cref="MaxTimeStamp"/>. A load takes the newest match.
/// </summary>
/// <param name="MaxSequenceNr">Upper sequence number bound, inclusive.</param>
/// <param name="MaxTimeStamp">Upper timestamp bound, inclusive (Akka's spelling).</param>
/// <param name="MinSequenceNr">Lower sequence number bound, inclusive.</param>
/// <param name="MinTimestamp">Lower timestamp bound, inclusive.</param>
public sealed record SnapshotSelectionCriteria(long MaxSequenceNr, DateTime MaxTimeStamp, long MinSequenceNr = 0, DateTime MinTimestamp = default)
{
    /// <summary>Only a sequence number upper bound.</summary>
    public SnapshotSelectionCriteria(long maxSequenceNr)
        : this(maxSequenceNr, DateTime.MaxValue)
    {
    }

    /// <summary>Every snapshot: a load gets the newest.</summary>
    public static SnapshotSelectionCriteria Latest { get; } = new(long.MaxValue, DateTime.MaxValue);

    /// <summary>No snapshot (recovery from events only).</summary>
    public static SnapshotSelectionCriteria None { get; } = new(0L, DateTime.MinValue);

    /// <summary>True when <paramref name="metadata"/> is selected.</summary>
    public bool IsMatch(SnapshotMetadata metadata)
    {
        ArgumentNullException.ThrowIfNull(metadata);
        return metadata.SequenceNr <= MaxSequenceNr && metadata.Timestamp <= MaxTimeStamp
            && metadata.SequenceNr >= MinSequenceNr && metadata.Timestamp >= MinTimestamp;
    }

    /// <summary>These criteria with the upper sequence number bound lowered to <paramref name="toSequenceNr"/> if it is lower.</summary>
    public SnapshotSelectionCriteria Limit(long toSequenceNr) =>
        toSequenceNr < MaxSequenceNr ? this with { MaxSequenceNr = toSequenceNr } : this;

    /// <inheritdoc/>
    public override string ToString() =>
        $"SnapshotSelectionCriteria<maxSeqNr: {MaxSequenceNr}, maxTimestamp: {MaxTimeStamp:O}, minSeqNr: {MinSequenceNr}, minTimestamp: {MinTimestamp:O}>";
}
