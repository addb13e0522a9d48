namespace Courier.Storage.Persistence;

/// <summary>Snapshots in memory, with <see cref="FileSnapshotStore"/>'s semantics and nothing durable. For tests.</summary>
public sealed class MemorySnapshotStore : ISnapshotStore
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, List<StoredSnapshot>> _snapshots = new(StringComparer.Ordinal);

    /// <summary>Always empty: memory is never damaged.</summary>
    public IReadOnlyList<StoreWarning> Warnings => [];

    /// <inheritdoc/>
    public void Save(SnapshotMetadata metadata, string manifest, ReadOnlySpan<byte> payload)
    {
        ArgumentNullException.ThrowIfNull(metadata);
        ArgumentNullException.ThrowIfNull(manifest);
        var snapshot = new StoredSnapshot(metadata, manifest, payload.ToArray());
        lock (_lock)
        {
            if (!_snapshots.TryGetValue(metadata.PersistenceId, out var list))
            {
                list = [];
                _snapshots.Add(metadata.PersistenceId, list);
            }

            list.RemoveAll(s => s.Metadata.SequenceNr == metadata.SequenceNr);
            list.Add(snapshot);
        }
    }

    /// <inheritdoc/>
    public StoredSnapshot? Load(string persistenceId, SnapshotSelectionCriteria criteria)
    {
        ArgumentNullException.ThrowIfNull(criteria);
        lock (_lock)
        {
            return _snapshots.TryGetValue(persistenceId, out var list)
                ? list.Where(s => criteria.IsMatch(s.Metadata))
                    .OrderByDescending(s => s.Metadata.SequenceNr)
                    .ThenByDescending(s => s.Metadata.Timestamp)
                    .FirstOrDefault()
                : null;
        }
    }

    /// <inheritdoc/>
    public void Delete(SnapshotMetadata metadata)
    {
        ArgumentNullException.ThrowIfNull(metadata);
        var any = metadata.Timestamp == DateTime.MinValue;
        lock (_lock)
        {
            if (_snapshots.TryGetValue(metadata.PersistenceId, out var list))
            {
                list.RemoveAll(s => s.Metadata.SequenceNr == metadata.SequenceNr && (any || s.Metadata.Timestamp <= metadata.Timestamp));
            }
        }
    }

    /// <inheritdoc/>
    public void Delete(string persistenceId, SnapshotSelectionCriteria criteria)
    {
        ArgumentNullException.ThrowIfNull(criteria);
        lock (_lock)
        {
            if (_snapshots.TryGetValue(persistenceId, out var list))
            {
                list.RemoveAll(s => criteria.IsMatch(s.Metadata));
            }
        }
    }

    /// <summary>Drops every snapshot.</summary>
    public void Dispose()
    {
        lock (_lock)
        {
            _snapshots.Clear();
        }
    }
}
