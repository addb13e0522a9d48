namespace Courier.Storage.Persistence;

/// <summary>
/// One journal event as the engine stores it (Akka.Persistence <c>IPersistentRepresentation</c>
/// after serialization): whose it is, its sequence number, its serialized payload and the metadata
/// that travels with it.
/// </summary>
/// <param name="PersistenceId">The persistent actor's id; any non-empty string.</param>
/// <param name="SequenceNr">1, 2, 3, ... per persistence id.</param>
/// <param name="Payload">The serialized event. On replay it is a slice of the record read from the
/// store: immutable, the reader's own.</param>
/// <param name="Manifest">Tells the serializer what the payload is; may be empty.</param>
/// <param name="WriterGuid">Identifies the actor incarnation that wrote the event; may be empty.</param>
/// <param name="Timestamp">Unix nanoseconds; 0 on a write means "now" (set by the journal).</param>
public readonly record struct JournalRecord(
    string PersistenceId,
    long SequenceNr,
    ReadOnlyMemory<byte> Payload,
    string Manifest = "",
    string WriterGuid = "",
    long Timestamp = 0)
{
    /// <inheritdoc/>
    public override string ToString() => $"{PersistenceId}#{SequenceNr} ({Manifest}, {Payload.Length} B)";
}
