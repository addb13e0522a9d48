namespace Courier.Storage.Persistence;

/// <summary>A snapshot as the engine stores it: its metadata, the serializer's manifest and the serialized state.</summary>
/// <param name="Metadata">Whose, at which sequence number, when.</param>
/// <param name="Manifest">Tells the serializer what the payload is; may be empty.</param>
/// <param name="Payload">The serialized state (the reader's own buffer).</param>
public sealed record StoredSnapshot(SnapshotMetadata Metadata, string Manifest, ReadOnlyMemory<byte> Payload)
{
    /// <inheritdoc/>
    public override string ToString() => $"StoredSnapshot({Metadata}, {Manifest}, {Payload.Length} B)";
}
