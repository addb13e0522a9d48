using System.Runtime.CompilerServices;
using Courier.Actors.Runtime;
using Courier.Storage.Persistence;

namespace Courier.Actors.Persistence;

/// <summary>
/// Persistence for one actor system (Akka.Persistence's <c>PersistenceExtension</c>): the journal actor and the
/// snapshot-store actor over their engines, the codecs, the settings. <see cref="Register"/> it once, before
/// the first persistent actor starts; persistent actors find it with <see cref="Get"/>.
/// </summary>
/// <remarks>The engines stay the caller's: dispose them after the system has terminated.</remarks>
public sealed class PersistenceExtension
{
    private static readonly ConditionalWeakTable<ActorSystem, PersistenceExtension> Registry = new();

    private PersistenceExtension(ActorSystem system, IJournalStore journal, ISnapshotStore snapshotStore, PersistenceSettings settings)
    {
        System = system;
        JournalStore = journal;
        SnapshotStoreEngine = snapshotStore;
        Settings = settings;
        Serialization = new PersistenceSerialization();
        Journal = system.ActorOf(JournalActor.Props(journal, Serialization, settings), "persistence-journal");
        SnapshotStore = system.ActorOf(SnapshotStoreActor.Props(snapshotStore, Serialization, settings), "persistence-snapshot-store");
    }

    /// <summary>The system.</summary>
    public ActorSystem System { get; }

    /// <summary>The journal actor.</summary>
    public IActorRef Journal { get; }

    /// <summary>The snapshot-store actor.</summary>
    public IActorRef SnapshotStore { get; }

    /// <summary>The journal engine.</summary>
    public IJournalStore JournalStore { get; }

    /// <summary>The snapshot engine.</summary>
    public ISnapshotStore SnapshotStoreEngine { get; }

    /// <summary>The codecs events and snapshots are written with.</summary>
    public PersistenceSerialization Serialization { get; }

    /// <summary>The settings.</summary>
    public PersistenceSettings Settings { get; }

    /// <summary>
    /// Starts persistence in <paramref name="system"/>: the journal actor (<c>/user/persistence-journal</c>) over
    /// <paramref name="journal"/> and the snapshot-store actor (<c>/user/persistence-snapshot-store</c>) over
    /// <paramref name="snapshotStore"/>.
    /// </summary>
    /// <exception cref="InvalidOperationException">Persistence is already registered in the system.</exception>
    public static PersistenceExtension Register(ActorSystem system, IJournalStore journal, ISnapshotStore snapshotStore, PersistenceSettings? settings = null)
    {
        ArgumentNullException.ThrowIfNull(system);
        ArgumentNullException.ThrowIfNull(journal);
        ArgumentNullException.ThrowIfNull(snapshotStore);
        lock (Registry)
        {
            if (Registry.TryGetValue(system, out _))
            {
                throw new InvalidOperationException($"Persistence is already registered in {system}.");
            }

            var extension = new PersistenceExtension(system, journal, snapshotStore, settings ?? new PersistenceSettings());
            Registry.Add(system, extension);
            return extension;
        }
    }

    /// <summary>The system's persistence.</summary>
    /// <exception cref="InvalidOperationException">Not registered: call <see cref="Register"/> first.</exception>
    public static PersistenceExtension Get(ActorSystem system)
    {
        ArgumentNullException.ThrowIfNull(system);
        return Registry.TryGetValue(system, out var extension)
            ? extension
            : throw new InvalidOperationException($"No persistence is registered in {system}: call PersistenceExtension.Register(system, journal, snapshotStore) first.");
    }

    /// <summary>The journal actor (Akka's name; there is one journal per system, so the plugin id is ignored).</summary>
    public IActorRef JournalFor(string? journalPluginId = null) => Journal;

    /// <summary>The snapshot-store actor (Akka's name; the plugin id is ignored).</summary>
    public IActorRef SnapshotStoreFor(string? snapshotPluginId = null) => SnapshotStore;
}
