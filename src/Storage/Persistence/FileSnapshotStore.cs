using Courier.Storage.IO;

namespace Courier.Storage.Persistence;

/// <summary>
/// Snapshots as files in one directory (the shape of Akka.Persistence's <c>LocalSnapshotStore</c>), one
/// file per snapshot (<see cref="SnapshotFile"/>), each checksummed. A save writes a temporary file,
/// fsyncs it, renames it into place and fsyncs the directory, so a crash leaves either the old set of
/// snapshots or the new one, never a partial file under a snapshot's name.
/// </summary>
/// <remarks>
/// The directory is listed once, on open; an in-memory index (persistence id key -> sequence numbers and
/// timestamps) answers loads and deletes after that, so a load reads only the file it serves. A file that
/// fails verification is renamed <c>.corrupt</c>, reported in <see cref="Warnings"/>, and the load falls
/// back to the next older match. One lock serializes every operation (snapshots are rare and each
/// operation is a few file calls).
/// </remarks>
public sealed class FileSnapshotStore : ISnapshotStore
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, List<Entry>> _index = new(StringComparer.Ordinal);
    private readonly List<StoreWarning> _warnings = [];
    private readonly StoreFileSystem _fs;
    private readonly StoreEncryption? _encryption;
    private bool _disposed;

    private FileSnapshotStore(string directory, StoreFileSystem fs, StoreEncryption? encryption)
    {
        Directory = directory;
        _fs = fs;
        _encryption = encryption;
    }

    /// <summary>The snapshot directory.</summary>
    public string Directory { get; }

    /// <inheritdoc/>
    public IReadOnlyList<StoreWarning> Warnings
    {
        get
        {
            lock (_lock)
            {
                return [.. _warnings];
            }
        }
    }

    /// <summary>Opens or creates the store in <paramref name="directory"/>: lists the snapshots and removes
    /// temporary files left by a crash during a save.</summary>
    /// <param name="directory">The snapshot directory.</param>
    /// <param name="encryption">
    /// Encryption at rest: every snapshot is written sealed, and on open the files written in plaintext or
    /// under <c>prev_key</c> are sealed again with the current key. Null: plaintext.
    /// </param>
    /// <exception cref="StoreKeyException">A snapshot is encrypted and no key, or no configured key, opens it.</exception>
    public static FileSnapshotStore Open(string directory, StoreEncryption? encryption = null) => Open(directory, StoreFileSystem.Os, encryption);

    /// <summary>Opens the store on <paramref name="fs"/> (tests inject faults with it).</summary>
    internal static FileSnapshotStore Open(string directory, StoreFileSystem fs, StoreEncryption? encryption = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        var full = Path.GetFullPath(directory);
        fs.CreateDirectory(full);
        var store = new FileSnapshotStore(full, fs, encryption);
        foreach (var path in fs.ListFiles(full, "*"))
        {
            var name = Path.GetFileName(path);
            if (name.EndsWith(SnapshotFile.TempExtension, StringComparison.Ordinal))
            {
                fs.Delete(path); // a save that did not finish: its snapshot was never acknowledged
            }
            else if (SnapshotFile.TryParseName(name, out var key, out var seq, out var ticks))
            {
                store.EntriesOf(key).Add(new Entry(seq, ticks, name));
                store.CheckKey(path);
            }
        }

        return store;
    }

    /// <summary>
    /// On open: a snapshot that is encrypted must open with a configured key; one written in plaintext
    /// or under the previous key is sealed again with the current key (temporary file, synced, renamed).
    /// </summary>
    private void CheckKey(string path)
    {
        var data = _fs.ReadAllBytes(path);
        if (data is null)
        {
            return;
        }

        var isSealed = StoreEncryption.IsSealedFile(data);
        if (_encryption is null)
        {
            if (isSealed)
            {
                throw new StoreKeyException(StoreEncryption.NoEncryptionError);
            }

            return;
        }

        var previous = false;
        var plain = isSealed ? _encryption.OpenFile(SnapshotFile.EncryptionContext, data, out previous) : data;
        if (isSealed && !previous)
        {
            return;
        }

        var temp = path + SnapshotFile.TempExtension;
        using (var file = _fs.Open(temp, FileMode.Create))
        {
            file.Write(_encryption.SealFile(SnapshotFile.EncryptionContext, plain), 0);
            file.Sync();
        }

        _fs.Move(temp, path);
        _fs.SyncDirectory(Directory);
    }

    /// <inheritdoc/>
    public void Save(SnapshotMetadata metadata, string manifest, ReadOnlySpan<byte> payload)
    {
        ArgumentNullException.ThrowIfNull(metadata);
        ArgumentNullException.ThrowIfNull(manifest);
        var key = SnapshotFile.Key(metadata.PersistenceId);
        var name = SnapshotFile.FileName(key, metadata.SequenceNr, metadata.Timestamp.Ticks);
        var path = Path.Combine(Directory, name);
        lock (_lock)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            var temp = path + SnapshotFile.TempExtension;
            try
            {
                SnapshotFile.Write(_fs, temp, metadata, manifest, payload, _encryption);
                _fs.Move(temp, path);
            }
            catch
            {
                TryDelete(temp);
                throw;
            }

            _fs.SyncDirectory(Directory);
            var entries = EntriesOf(key);
            var replaced = false;
            for (var i = entries.Count - 1; i >= 0; i--)
            {
                var entry = entries[i];
                if (entry.SequenceNr == metadata.SequenceNr && entry.FileName != name)
                {
                    // Same sequence number, another timestamp: the new snapshot replaces it.
                    TryDelete(Path.Combine(Directory, entry.FileName));
                    entries.RemoveAt(i);
                    replaced = true;
                }
                else if (entry.FileName == name)
                {
                    entries.RemoveAt(i);
                }
            }

            entries.Add(new Entry(metadata.SequenceNr, metadata.Timestamp.Ticks, name));
            if (replaced)
            {
                _fs.SyncDirectory(Directory);
            }
        }
    }

    /// <inheritdoc/>
    public StoredSnapshot? Load(string persistenceId, SnapshotSelectionCriteria criteria)
    {
        ArgumentException.ThrowIfNullOrEmpty(persistenceId);
        ArgumentNullException.ThrowIfNull(criteria);
        lock (_lock)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            var key = SnapshotFile.Key(persistenceId);
            if (!_index.TryGetValue(key, out var entries))
            {
                return null;
            }

            var candidates = entries
                .Where(e => criteria.IsMatch(new SnapshotMetadata(persistenceId, e.SequenceNr, new DateTime(e.Ticks, DateTimeKind.Utc))))
                .OrderByDescending(e => e.SequenceNr)
                .ThenByDescending(e => e.Ticks)
                .ToList();
            foreach (var entry in candidates)
            {
                var path = Path.Combine(Directory, entry.FileName);
                StoredSnapshot? snapshot;
                string? problem;
                try
                {
                    snapshot = SnapshotFile.Read(_fs, path, persistenceId, entry.SequenceNr, entry.Ticks, out problem, _encryption);
                }
                catch (FileNotFoundException)
                {
                    entries.Remove(entry); // removed behind our back: nothing to serve
                    continue;
                }
                catch (IOException e)
                {
                    _warnings.Add(new StoreWarning(StoreWarningKind.CorruptSnapshot, $"snapshot {entry.FileName} could not be read ({e.Message}); an older one is used"));
                    continue;
                }

                if (snapshot is not null)
                {
                    return snapshot;
                }

                SetAside(entries, entry, problem!);
            }

            return null;
        }
    }

    /// <inheritdoc/>
    public void Delete(SnapshotMetadata metadata)
    {
        ArgumentNullException.ThrowIfNull(metadata);
        var any = metadata.Timestamp == DateTime.MinValue;
        DeleteWhere(metadata.PersistenceId, e => e.SequenceNr == metadata.SequenceNr && (any || e.Ticks <= metadata.Timestamp.Ticks));
    }

    /// <inheritdoc/>
    public void Delete(string persistenceId, SnapshotSelectionCriteria criteria)
    {
        ArgumentException.ThrowIfNullOrEmpty(persistenceId);
        ArgumentNullException.ThrowIfNull(criteria);
        DeleteWhere(persistenceId, e => criteria.IsMatch(new SnapshotMetadata(persistenceId, e.SequenceNr, new DateTime(e.Ticks, DateTimeKind.Utc))));
    }

    /// <summary>Nothing to release but the index; later calls throw <see cref="ObjectDisposedException"/>.</summary>
    public void Dispose()
    {
        lock (_lock)
        {
            _disposed = true;
            _index.Clear();
        }
    }

    /// <inheritdoc/>
    public override string ToString() => $"FileSnapshotStore({Directory})";

    private void DeleteWhere(string persistenceId, Func<Entry, bool> selected)
    {
        lock (_lock)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            if (!_index.TryGetValue(SnapshotFile.Key(persistenceId), out var entries))
            {
                return;
            }

            var deleted = false;
            for (var i = entries.Count - 1; i >= 0; i--)
            {
                if (selected(entries[i]))
                {
                    _fs.Delete(Path.Combine(Directory, entries[i].FileName));
                    entries.RemoveAt(i);
                    deleted = true;
                }
            }

            if (deleted)
            {
                _fs.SyncDirectory(Directory);
            }
        }
    }

    private void SetAside(List<Entry> entries, Entry entry, string problem)
    {
        entries.Remove(entry);
        var path = Path.Combine(Directory, entry.FileName);
        try
        {
            _fs.Move(path, path + SnapshotFile.CorruptExtension);
        }
        catch (IOException)
        {
            // Left in place: it is out of the index, so it is not served again by this instance.
        }

        _warnings.Add(new StoreWarning(
            StoreWarningKind.CorruptSnapshot,
            $"snapshot {entry.FileName} is damaged ({problem}); renamed {SnapshotFile.CorruptExtension}, an older one is used",
            (ulong)entry.SequenceNr));
    }

    private List<Entry> EntriesOf(string key)
    {
        if (!_index.TryGetValue(key, out var entries))
        {
            entries = [];
            _index.Add(key, entries);
        }

        return entries;
    }

    private void TryDelete(string path)
    {
        try
        {
            _fs.Delete(path);
        }
        catch (IOException)
        {
        }
    }

    private sealed record Entry(long SequenceNr, long Ticks, string FileName);
}
