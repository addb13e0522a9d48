namespace Courier.Storage.Persistence;

/// <summary>
/// The journal on a FileStore in its own directory: every <see cref="WriteMessages"/> call is one
/// write and one fsync (the FileStore's group commit), and reopening the directory after a crash
/// gives back everything that call returned for. See <see cref="IJournalStore"/> for the contract and
/// <c>JournalCodec</c> for the layout.
/// </summary>
public sealed class FileJournalStore : IJournalStore
{
    private readonly StreamJournal _journal;

    private FileJournalStore(string directory, StreamJournal journal)
    {
        Directory = directory;
        _journal = journal;
    }

    /// <summary>The journal's directory.</summary>
    public string Directory { get; }

    /// <inheritdoc/>
    public IReadOnlyList<StoreWarning> Warnings => _journal.Warnings;

    /// <summary>The FileStore underneath (tests count its writes and fsyncs).</summary>
    internal IStreamStore Store => _journal.Store;

    /// <summary>
    /// Opens (recovering) or creates the journal in <paramref name="directory"/>. A torn tail from a
    /// crash is cut off and listed in <see cref="Warnings"/>; only I/O failures throw.
    /// </summary>
    /// <param name="directory">The journal's own directory (not shared with a stream).</param>
    /// <param name="options">Block size and sync policy; the default syncs on every write call.</param>
    public static FileJournalStore Open(string directory, FileStoreOptions? options = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        var store = StreamStores.OpenFile(directory, new StoreConfig { Name = "journal" }, options);
        return new FileJournalStore(Path.GetFullPath(directory), new StreamJournal(store));
    }

    /// <inheritdoc/>
    public void WriteMessages(ReadOnlySpan<JournalWrite> writes, Span<Exception?> rejections) => _journal.WriteMessages(writes, rejections);

    /// <inheritdoc/>
    public long ReplayMessages(string persistenceId, long fromSequenceNr, long toSequenceNr, long max, Action<JournalRecord> onReplayed) =>
        _journal.ReplayMessages(persistenceId, fromSequenceNr, toSequenceNr, max, onReplayed);

    /// <inheritdoc/>
    public long ReadHighestSequenceNr(string persistenceId, long fromSequenceNr = 0) => _journal.ReadHighestSequenceNr(persistenceId, fromSequenceNr);

    /// <inheritdoc/>
    public void DeleteMessagesTo(string persistenceId, long toSequenceNr) => _journal.DeleteMessagesTo(persistenceId, toSequenceNr);

    /// <summary>Flushes and closes the files.</summary>
    /// <summary>
    /// Fsyncs what was written but not yet synced: under <see cref="SyncPolicy.Interval"/> the owner
    /// calls this on its timer (under <see cref="SyncPolicy.Always"/> every write is already synced).
    /// </summary>
    public void Sync() => _journal.Store.Sync();

    public void Dispose() => _journal.Dispose();

    /// <inheritdoc/>
    public override string ToString() => $"FileJournalStore({Directory})";
}
