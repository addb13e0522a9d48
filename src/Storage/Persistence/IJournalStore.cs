namespace Courier.Storage.Persistence;

/// <summary>
/// The event journal behind Akka.Persistence-style persistent actors (the engine side of
/// Akka.Persistence's <c>AsyncWriteJournal</c>: <c>WriteMessagesAsync</c>, <c>ReplayMessagesAsync</c>,
/// <c>ReadHighestSequenceNrAsync</c>, <c>DeleteMessagesToAsync</c>). No actors here: the journal actor
/// (Courier.Actors.Persistence) calls it.
/// </summary>
/// <remarks>
/// <para><b>Durability.</b> <see cref="WriteMessages"/> is a group commit: every atomic write of the
/// call is durable (one write and one fsync, FileStore's <c>SyncPolicy.Always</c>) when it returns.
/// A failed write or fsync throws <see cref="IOException"/>: nothing of that call is acknowledged and
/// the journal refuses everything after it until it is reopened.</para>
/// <para><b>Sequence numbers.</b> The journal stores what it is given; the persistent actor numbers its
/// events 1, 2, 3, ... and continues from <see cref="ReadHighestSequenceNr"/> after recovery. That number
/// never goes back, not even when every event was deleted.</para>
/// <para><b>Threads.</b> Every member is safe from any thread; a replay may run while other ids are
/// written.</para>
/// </remarks>
public interface IJournalStore : IDisposable
{
    /// <summary>
    /// Stores the atomic writes in order with one write and one fsync. <paramref name="rejections"/>[i]
    /// is null when <paramref name="writes"/>[i] was stored, or why it was refused (nothing of it was
    /// stored; the others are not affected): Akka's <c>WriteMessageRejected</c>.
    /// </summary>
    /// <exception cref="IOException">The batch could not be made durable (Akka's <c>WriteMessagesFailed</c>).</exception>
    void WriteMessages(ReadOnlySpan<JournalWrite> writes, Span<Exception?> rejections);

    /// <summary>
    /// Calls <paramref name="onReplayed"/> for the stored, not deleted events of
    /// <paramref name="persistenceId"/> with <paramref name="fromSequenceNr"/> &lt;= sequence number
    /// &lt;= <paramref name="toSequenceNr"/>, ascending, at most <paramref name="max"/> of them.
    /// Returns how many were replayed.
    /// </summary>
    long ReplayMessages(string persistenceId, long fromSequenceNr, long toSequenceNr, long max, Action<JournalRecord> onReplayed);

    /// <summary>The highest sequence number ever stored for <paramref name="persistenceId"/> (0 when none);
    /// deletes do not lower it. <paramref name="fromSequenceNr"/> is a hint, as in Akka.</summary>
    long ReadHighestSequenceNr(string persistenceId, long fromSequenceNr = 0);

    /// <summary>
    /// Deletes the events of <paramref name="persistenceId"/> up to and including
    /// <paramref name="toSequenceNr"/> (at most the highest stored; <c>long.MaxValue</c> deletes all).
    /// Durable when it returns; replays never return them again.
    /// </summary>
    void DeleteMessagesTo(string persistenceId, long toSequenceNr);

    /// <summary>Damage found in the underlying store (torn tails cut off, corrupt records skipped).</summary>
    IReadOnlyList<StoreWarning> Warnings { get; }
}
