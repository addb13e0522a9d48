namespace Courier.Storage.Persistence;

/// <summary>
/// An atomic write (Akka.Persistence <c>AtomicWrite</c>): events of one persistence id that are
/// stored all together or not at all. <c>Persist</c> makes one of one event, <c>PersistAll</c> one
/// of several.
/// </summary>
public sealed class JournalWrite
{
    /// <summary>An atomic write of one event (the common case: <c>Persist</c>/<c>PersistAsync</c>).</summary>
    public JournalWrite(JournalRecord record)
        : this([record])
    {
    }

    /// <summary>An atomic write of several events.</summary>
    /// <exception cref="ArgumentException">No events, events of different persistence ids, an empty
    /// persistence id, or sequence numbers that are not positive and ascending.</exception>
    public JournalWrite(IReadOnlyList<JournalRecord> records)
    {
        ArgumentNullException.ThrowIfNull(records);
        if (records.Count == 0)
        {
            throw new ArgumentException("An atomic write needs at least one event.", nameof(records));
        }

        var first = records[0];
        ArgumentException.ThrowIfNullOrEmpty(first.PersistenceId, nameof(records));
        var previous = 0L;
        foreach (var record in records)
        {
            if (!string.Equals(record.PersistenceId, first.PersistenceId, StringComparison.Ordinal))
            {
                throw new ArgumentException(
                    $"An atomic write holds events of one persistence id: [{first.PersistenceId}] and [{record.PersistenceId}].", nameof(records));
            }

            if (record.SequenceNr <= previous)
            {
                throw new ArgumentException(
                    $"Sequence numbers must be positive and ascending: {record.SequenceNr} after {previous}.", nameof(records));
            }

            previous = record.SequenceNr;
        }

        Records = records;
        PersistenceId = first.PersistenceId;
        LowestSequenceNr = first.SequenceNr;
        HighestSequenceNr = previous;
    }

    /// <summary>The events, ascending by sequence number.</summary>
    public IReadOnlyList<JournalRecord> Records { get; }

    /// <summary>Whose events these are.</summary>
    public string PersistenceId { get; }

    /// <summary>The first event's sequence number.</summary>
    public long LowestSequenceNr { get; }

    /// <summary>The last event's sequence number.</summary>
    public long HighestSequenceNr { get; }

    /// <inheritdoc/>
    public override string ToString() => $"JournalWrite({PersistenceId} #{LowestSequenceNr}..{HighestSequenceNr})";
}
