using System.Buffers;
using Courier.Actors.Runtime;
using Courier.Storage.Persistence;

namespace Courier.Actors.Persistence;

/// <summary>
/// The snapshot-store actor (Akka.Persistence's <c>SnapshotStore</c>) over an <see cref="ISnapshotStore"/>:
/// serializes snapshots with the registered codecs and answers each request to its sender. One per system, at
/// <c>/user/persistence-snapshot-store</c>. Requests are handled one at a time on its turn (snapshots are rare:
/// one per N events per actor).
/// </summary>
internal sealed class SnapshotStoreActor : ActorBase
{
    private readonly ISnapshotStore _store;
    private readonly PersistenceSerialization _serialization;
    private readonly PersistenceSettings _settings;
    private const int KeptBufferCapacity = 1 << 20; // bytes: a bigger snapshot's buffer is dropped after the save

    private ArrayBufferWriter<byte> _buffer = new(1024);

    public SnapshotStoreActor(ISnapshotStore store, PersistenceSerialization serialization, PersistenceSettings settings)
    {
        _store = store;
        _serialization = serialization;
        _settings = settings;
    }

    public static Props Props(ISnapshotStore store, PersistenceSerialization serialization, PersistenceSettings settings) =>
        Runtime.Props.Create(() => new SnapshotStoreActor(store, serialization, settings));

    protected override bool Receive(object message)
    {
        switch (message)
        {
            case LoadSnapshot load:
                Sender.Tell(Load(load), Self);
                return true;
            case SaveSnapshot save:
                Sender.Tell(Save(save), Self);
                return true;
            case DeleteSnapshot delete:
                Sender.Tell(Run(() => _store.Delete(delete.Metadata), delete, new DeleteSnapshotSuccess(delete.Metadata), e => new DeleteSnapshotFailure(delete.Metadata, e)), Self);
                return true;
            case DeleteSnapshots delete:
                Sender.Tell(Run(() => _store.Delete(delete.PersistenceId, delete.Criteria), delete, new DeleteSnapshotsSuccess(delete.Criteria), e => new DeleteSnapshotsFailure(delete.Criteria, e)), Self);
                return true;
            default:
                return false;
        }
    }

    private object Load(LoadSnapshot load)
    {
        try
        {
            var stored = _store.Load(load.PersistenceId, load.Criteria.Limit(load.ToSequenceNr));
            var selected = stored is null
                ? null
                : new SelectedSnapshot(stored.Metadata, _serialization.Deserialize(stored.Manifest, stored.Payload));
            return new LoadSnapshotResult(selected, load.ToSequenceNr);
        }
        catch (Exception e)
        {
            return new LoadSnapshotFailed(e);
        }
    }

    private object Save(SaveSnapshot save)
    {
        try
        {
            _buffer.ResetWrittenCount();
            var manifest = _serialization.Serialize(save.Snapshot, _buffer);
            _store.Save(save.Metadata, manifest, _buffer.WrittenSpan);
            return new SaveSnapshotSuccess(save.Metadata);
        }
        catch (Exception e)
        {
            return new SaveSnapshotFailure(save.Metadata, e);
        }
        finally
        {
            if (_buffer.Capacity > KeptBufferCapacity)
            {
                _buffer = new ArrayBufferWriter<byte>(1024);
            }
        }
    }

    private object Run(Action action, object command, object success, Func<Exception, object> failure)
    {
        try
        {
            action();
            if (_settings.PublishPluginCommands)
            {
                Context.System.EventStream.Publish(command);
            }

            return success;
        }
        catch (Exception e)
        {
            return failure(e);
        }
    }
}
