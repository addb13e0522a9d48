namespace Courier.Storage.Persistence;

/// <summary>
/// The journal on a MemoryStore: the same code and semantics as <see cref="FileJournalStore"/>,
/// nothing durable. For tests and for actors whose state need not survive the process.
/// </summary>
public sealed class MemoryJournalStore : IJournalStore
{
    private readonly StreamJournal _journal = new(StreamStores.CreateMemory(new StoreConfig { Name = "journal" }));

    /// <inheritdoc/>
    public IReadOnlyList<StoreWarning> Warnings => _journal.Warnings;

    /// <inheritdoc/>
    public void WriteMessages(ReadOnlySpan<JournalWrite> writes, Span<Exception?> rejections) => _journal.WriteMessages(writes, rejections);

    /// <inheritdoc/>
    public long ReplayMessages(string persistenceId, long fromSequenceNr, long toSequenceNr, long max, Action<JournalRecord> onReplayed) =>
        _journal.ReplayMessages(persistenceId, fromSequenceNr, toSequenceNr, max, onReplayed);

    /// <inheritdoc/>
    public long ReadHighestSequenceNr(string persistenceId, long fromSequenceNr = 0) => _journal.ReadHighestSequenceNr(persistenceId, fromSequenceNr);

    /// <inheritdoc/>
    public void DeleteMessagesTo(string persistenceId, long toSequenceNr) => _journal.DeleteMessagesTo(persistenceId, toSequenceNr);

    /// <summary>Drops every event.</summary>
    public void Dispose() => _journal.Dispose();
}
