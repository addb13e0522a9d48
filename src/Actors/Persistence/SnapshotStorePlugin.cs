using Akka.Configuration;
using Akka.Event;
using Akka.Persistence;
using Akka.Persistence.Snapshot;
using Courier.Storage.Persistence;
using EngineCriteria = Courier.Storage.Persistence.SnapshotSelectionCriteria;
using EngineMetadata = Courier.Storage.Persistence.SnapshotMetadata;

namespace Courier.Actors.Persistence;

/// <summary>
/// Akka.Persistence's snapshot store on Courier's snapshot files (plugin id
/// <c>courier.persistence.snapshot-store</c>): one checksummed file per snapshot, written durably; a
/// corrupt one is set aside and the next older one served. Its calls run on the plugin's dispatcher
/// (courier.io-dispatcher), which exists for such blocking file I/O.
/// </summary>
internal sealed class SnapshotStorePlugin : SnapshotStore
{
    private readonly ISnapshotStore _store;

    public SnapshotStorePlugin(Config config)
    {
        var directory = PluginSettings.Directory(config);
        _store = directory is null ? new Courier.Storage.Persistence.MemorySnapshotStore() : FileSnapshotStore.Open(directory, Hosting.StoreEncryptionSetup.Of(Context.System));
        var log = Context.GetLogger();
        foreach (var warning in _store.Warnings)
        {
            log.Warning("snapshot store {0}: {1}", directory, warning);
        }
    }

    protected override void PostStop()
    {
        _store.Dispose();
        base.PostStop();
    }

    protected override Task<SelectedSnapshot?> LoadAsync(string persistenceId, Akka.Persistence.SnapshotSelectionCriteria criteria, CancellationToken cancellationToken)
    {
        var stored = _store.Load(persistenceId, ToEngine(criteria));
        if (stored is null)
        {
            return Task.FromResult<SelectedSnapshot?>(null);
        }

        var snapshot = PayloadSerialization.Deserialize(Context.System, stored.Payload.ToArray(), stored.Manifest);
        var metadata = new Akka.Persistence.SnapshotMetadata(stored.Metadata.PersistenceId, stored.Metadata.SequenceNr, stored.Metadata.Timestamp);
        return Task.FromResult<SelectedSnapshot?>(new SelectedSnapshot(metadata, snapshot));
    }

    protected override Task SaveAsync(Akka.Persistence.SnapshotMetadata metadata, object snapshot, CancellationToken cancellationToken)
    {
        var (bytes, manifest) = PayloadSerialization.Serialize(Context.System, snapshot);
        _store.Save(ToEngine(metadata), manifest, bytes);
        return Task.CompletedTask;
    }

    protected override Task DeleteAsync(Akka.Persistence.SnapshotMetadata metadata, CancellationToken cancellationToken)
    {
        _store.Delete(ToEngine(metadata));
        return Task.CompletedTask;
    }

    protected override Task DeleteAsync(string persistenceId, Akka.Persistence.SnapshotSelectionCriteria criteria, CancellationToken cancellationToken)
    {
        _store.Delete(persistenceId, ToEngine(criteria));
        return Task.CompletedTask;
    }

    private static EngineMetadata ToEngine(Akka.Persistence.SnapshotMetadata metadata) =>
        new(metadata.PersistenceId, metadata.SequenceNr, metadata.Timestamp);

    private static EngineCriteria ToEngine(Akka.Persistence.SnapshotSelectionCriteria criteria) =>
        new(criteria.MaxSequenceNr, criteria.MaxTimeStamp, criteria.MinSequenceNr, criteria.MinTimestamp ?? DateTime.MinValue);
}
