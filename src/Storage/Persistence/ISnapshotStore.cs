namespace Courier.Storage.Persistence;

/// <summary>
/// Snapshots of persistent actors' state (the engine side of Akka.Persistence's <c>SnapshotStore</c>:
/// <c>SaveAsync</c>, <c>LoadAsync</c>, <c>DeleteAsync</c>). No actors here: the snapshot-store actor
/// (Courier.Actors.Persistence) calls it.
/// </summary>
/// <remarks>
/// Every member is safe from any thread. A snapshot that fails its checksum is never served: the load
/// falls back to the next older match and the damage is listed in <see cref="Warnings"/>.
/// </remarks>
public interface ISnapshotStore : IDisposable
{
    /// <summary>Stores a snapshot durably (it survives a crash once this returns), replacing any other of
    /// the same persistence id and sequence number.</summary>
    void Save(SnapshotMetadata metadata, string manifest, ReadOnlySpan<byte> payload);

    /// <summary>The newest snapshot of <paramref name="persistenceId"/> that <paramref name="criteria"/> selects
    /// (highest sequence number, then latest timestamp), or null.</summary>
    StoredSnapshot? Load(string persistenceId, SnapshotSelectionCriteria criteria);

    /// <summary>Deletes the snapshot with <paramref name="metadata"/>'s persistence id and sequence number,
    /// taken at or before its timestamp (<see cref="DateTime.MinValue"/>: at any time). Nothing to delete is not an error.</summary>
    void Delete(SnapshotMetadata metadata);

    /// <summary>Deletes every snapshot of <paramref name="persistenceId"/> that <paramref name="criteria"/> selects.</summary>
    void Delete(string persistenceId, SnapshotSelectionCriteria criteria);

    /// <summary>Damage found (corrupt snapshot files set aside), oldest first.</summary>
    IReadOnlyList<StoreWarning> Warnings { get; }
}
