using Courier.Actors.Runtime;

namespace Courier.Actors.Persistence;

/// <summary>
/// One event with its journal metadata (Akka.Persistence <c>Persistent</c> / <c>IPersistentRepresentation</c>).
/// Immutable. Written inside an <see cref="AtomicWrite"/>; handed back in <see cref="WriteMessageSuccess"/> and
/// <see cref="ReplayedMessage"/>.
/// </summary>
public sealed class Persistent
{
    /// <summary>Creates the representation.</summary>
    /// <param name="payload">The event.</param>
    /// <param name="sequenceNr">Its sequence number, 1, 2, 3, ... per persistence id.</param>
    /// <param name="persistenceId">Whose event it is.</param>
    /// <param name="manifest">The codec's manifest (set by the journal on write and replay).</param>
    /// <param name="sender">The sender of the command that persisted it (not stored; handed back with the write's reply).</param>
    /// <param name="writerGuid">The writing actor incarnation's id.</param>
    /// <param name="timestamp">Unix nanoseconds when stored; 0 until then.</param>
    public Persistent(object payload, long sequenceNr = 0, string persistenceId = "", string manifest = "", IActorRef? sender = null, string writerGuid = "", long timestamp = 0)
    {
        ArgumentNullException.ThrowIfNull(payload);
        Payload = payload;
        SequenceNr = sequenceNr;
        PersistenceId = persistenceId ?? "";
        Manifest = manifest ?? "";
        Sender = sender;
        WriterGuid = writerGuid ?? "";
        Timestamp = timestamp;
    }

    /// <summary>The event.</summary>
    public object Payload { get; }

    /// <summary>The sequence number.</summary>
    public long SequenceNr { get; }

    /// <summary>Whose event it is.</summary>
    public string PersistenceId { get; }

    /// <summary>The codec's manifest.</summary>
    public string Manifest { get; }

    /// <summary>The sender of the command that persisted it; null on replay.</summary>
    public IActorRef? Sender { get; }

    /// <summary>The writing actor incarnation's id.</summary>
    public string WriterGuid { get; }

    /// <summary>Unix nanoseconds when stored (0 before).</summary>
    public long Timestamp { get; }

    /// <inheritdoc/>
    public override string ToString() => $"Persistent<pid: {PersistenceId}, seqNr: {SequenceNr}, payload: {Payload}>";
}
