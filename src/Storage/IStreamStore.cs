using Courier.Protocols.JetStream;

namespace Courier.Storage;

/// <summary>
/// One JetStream stream's messages: the contract both <c>FileStore</c> and <c>MemoryStore</c>
/// implement, with nats-server's store semantics (server/store.go). Shaped for a stream actor that
/// appends a batch, calls <see cref="Flush"/> once, and only then sends the batch's PubAcks.
/// </summary>
/// <remarks>
/// <para><b>Durability.</b> <see cref="Append"/> makes a message visible to reads at once but not
/// durable. <see cref="Flush"/> makes everything appended or removed before it durable: FileStore
/// writes all buffered records with one write per touched block file and, under
/// <see cref="SyncPolicy.Always"/> (the default), one fsync per touched file, before returning.
/// <see cref="AppendBatch"/> is Append for each message followed by Flush. Purge, Compact,
/// Truncate and EraseMessage flush before they return. MemoryStore is never durable; its Flush
/// does nothing.</para>
/// <para><b>Sequences.</b> Each stored message gets LastSeq + 1. Sequences are never reused: after a
/// delete or purge the next append continues from LastSeq + 1 (a purged stream has
/// FirstSeq = LastSeq + 1). Only <see cref="Truncate"/> moves LastSeq back.</para>
/// <para><b>Threads.</b> Every member is safe to call from any thread (one lock inside). Appends and
/// removes are expected from one owner (the stream actor); reads may come from others. Flush
/// does its write and fsync outside the lock, so readers are not held up by the disk.</para>
/// <para><b>Filters.</b> Wherever a filter subject is taken, null, empty and <c>&gt;</c> mean every
/// subject, and <c>*</c> / <c>&gt;</c> wildcards match as in NATS subscriptions.</para>
/// </remarks>
public interface IStreamStore : IDisposable
{
    /// <summary>Bytes a message takes as a FileStore record: subject + headers + payload + 32.</summary>
    static ulong MessageSize(int subjectLength, int headersLength, int payloadLength) =>
        (ulong)subjectLength + (ulong)headersLength + (ulong)payloadLength + 32;

    /// <summary>
    /// Bytes a message counts for in <see cref="StreamState.Bytes"/> and max_bytes, as nats-server's
    /// stores count it (so byte limits bite at the same message): subject + headers + payload + 30
    /// in a file store (its record: length 4, sequence 8, time 8, subject length 2, checksum 8;
    /// nats-server adds 4 more for a header length when there are headers, which Courier's index
    /// cannot tell on recovery, so it does not), + 16 in a memory store (sequence and time).
    /// </summary>
    static ulong CountedSize(StorageType type, int subjectLength, int headersLength, int payloadLength) =>
        (ulong)subjectLength + (ulong)headersLength + (ulong)payloadLength + CountedOverhead(type);

    /// <summary>What <see cref="CountedSize"/> adds to subject + headers + payload.</summary>
    static ulong CountedOverhead(StorageType type) => type == StorageType.Memory ? 16UL : 30UL;

    /// <summary>File or memory.</summary>
    StorageType Type { get; }

    /// <summary>The limits in force.</summary>
    StoreConfig Config { get; }

    /// <summary>
    /// When this store fsyncs: the FileStore's <see cref="FileStoreOptions.Sync"/>; <see cref="SyncPolicy.Always"/>
    /// for a MemoryStore (it has nothing to sync). Under an interval the owner calls <see cref="Sync"/>
    /// every <see cref="SyncPolicy.Period"/>.
    /// </summary>
    SyncPolicy SyncPolicy { get; }

    /// <summary>Damage found on recovery or on read, oldest first (a copy).</summary>
    IReadOnlyList<StoreWarning> Warnings { get; }

    /// <summary>Counters of the damage found since open (<see cref="Warnings"/> and <see cref="StreamState.Lost"/> in brief).</summary>
    StoreDamage Damage { get; }

    /// <summary>Replaces the limits and enforces lowered ones at once (discard old only, as nats-server).</summary>
    void UpdateConfig(StoreConfig config);

    /// <summary>
    /// Told of each message an append removes to keep max_msgs_per_subject, before it goes (null: no
    /// one is). The stream hands such a message to consumers that were told of it and have not read it
    /// yet, so a KV watcher sees every value even when the next put of its key is stored first.
    /// </summary>
    IDisplacementObserver? DisplacementObserver { get; set; }

    // ---- Appends ----

    /// <summary>
    /// Stores one message after the limit checks: max_msg_size, then with discard new
    /// max_msgs_per_subject / max_msgs / max_bytes; then removes what the limits require (the
    /// subject's oldest beyond max_msgs_per_subject; with discard old the stream's oldest beyond
    /// max_msgs / max_bytes). Visible to reads at once, durable after the next <see cref="Flush"/>.
    /// </summary>
    /// <param name="subject">UTF-8 subject without wildcards, 1 to 65,535 bytes.</param>
    /// <param name="headers">The NATS header block, or empty.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="timestamp">Unix nanoseconds; 0 means now.</param>
    StoreResult Append(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, long timestamp = 0);

    /// <summary>
    /// Appends every message (results[i] for messages[i]) and then flushes once: when this returns,
    /// every stored message of the batch is durable (group commit: one write and one fsync).
    /// </summary>
    void AppendBatch(ReadOnlySpan<StoreMessage> messages, Span<StoreResult> results);

    /// <summary>
    /// The durability point: writes everything appended or removed so far and, under
    /// <see cref="SyncPolicy.Always"/>, fsyncs it before returning. Send PubAcks after this.
    /// Throws <see cref="IOException"/> if the disk fails; the store then refuses appends.
    /// </summary>
    void Flush();

    /// <summary>Flushes and fsyncs regardless of the sync policy (the owner's timer under <see cref="SyncPolicy.Interval"/>).</summary>
    void Sync();

    // ---- Reads ----

    /// <summary>The message at <paramref name="sequence"/>, or NotFound (deleted, below first) / EndOfStream (past last) / Corrupt.</summary>
    LoadResult LoadMessage(ulong sequence);

    /// <summary>The first message with sequence &gt;= <paramref name="startSequence"/> whose subject matches <paramref name="filter"/>; EndOfStream when there is none.</summary>
    LoadResult LoadNextMessage(string? filter, ulong startSequence);

    /// <summary>The last message whose subject matches <paramref name="subject"/> (which may have wildcards); NotFound when there is none.</summary>
    LoadResult LoadLastMessage(string? subject);

    /// <summary>The first sequence whose timestamp is &gt;= <paramref name="timestamp"/> (Unix ns); LastSeq + 1 when every message is older.</summary>
    ulong GetSequenceFromTime(long timestamp);

    // ---- Deletes ----

    /// <summary>Deletes one message (an interior delete leaves a tombstone). False when there was none. Durable after the next Flush.</summary>
    bool RemoveMessage(ulong sequence);

    /// <summary>Deletes one message and overwrites its bytes where they are stored. Durable on return.</summary>
    bool EraseMessage(ulong sequence);

    /// <summary>Removes every message; FirstSeq becomes LastSeq + 1. Returns how many were removed. Durable on return.</summary>
    ulong Purge();

    /// <summary>
    /// nats-server's PurgeEx. With an empty or <c>&gt;</c> subject: (0, 0) purges all, a sequence above
    /// 1 compacts to it. Otherwise removes messages matching <paramref name="subject"/>, only those
    /// below <paramref name="sequence"/> when it is above 1, and keeps the newest
    /// <paramref name="keep"/> matching ones when it is above 0. Returns how many were removed.
    /// </summary>
    ulong Purge(string? subject, ulong sequence, ulong keep);

    /// <summary>Removes every message below <paramref name="sequence"/> (past the end: purges and the next append gets <paramref name="sequence"/>). 0 purges. Durable on return.</summary>
    ulong Compact(ulong sequence);

    /// <summary>Removes every message above <paramref name="sequence"/>, which must be a stored message; LastSeq becomes it. 0 resets the store to empty with LastSeq 0. Durable on return.</summary>
    StoreError Truncate(ulong sequence);

    /// <summary>
    /// Removes messages older than max_age at <paramref name="now"/> (Unix ns), from the front, as nats-server's
    /// expiry timer; with <see cref="StoreConfig.AllowMsgTtl"/> a message whose <c>Nats-TTL</c> is <c>never</c>
    /// stays. Returns how many.
    /// </summary>
    ulong ExpireByAge(long now);

    /// <summary>
    /// With <see cref="StoreConfig.AllowMsgTtl"/>: messages whose <c>Nats-TTL</c> has run out at
    /// <paramref name="now"/> (Unix ns), earliest expiry first, at most <paramref name="max"/>. They stay stored:
    /// the owner removes each (or replaces it with a subject delete marker), so a replicated stream's leader
    /// can put the removal through its log. The index is rebuilt when a FileStore opens.
    /// </summary>
    IReadOnlyList<TtlExpiry> ExpiredByTtl(long now, int max);

    /// <summary>
    /// What <see cref="ExpireByAge"/> would remove at <paramref name="now"/> (Unix ns), oldest first, at most
    /// <paramref name="max"/>, left stored: for a stream with subject delete markers, whose owner puts a marker in
    /// place of a subject's last message.
    /// </summary>
    IReadOnlyList<TtlExpiry> AgedOut(long now, int max);

    // ---- State ----

    /// <summary>The stream's totals.</summary>
    StreamState State();

    /// <summary>Messages, first and last sequence matching <paramref name="filter"/> from <paramref name="startSequence"/> on.</summary>
    SubjectState FilteredState(ulong startSequence, string? filter);

    /// <summary>Per-subject state of every subject matching <paramref name="filter"/>.</summary>
    IReadOnlyDictionary<string, SubjectState> SubjectsState(string? filter);

    /// <summary>
    /// Messages matching <paramref name="filter"/> from <paramref name="startSequence"/> on (with
    /// <paramref name="lastPerSubject"/>: subjects whose last message is at or after it), and the
    /// last sequence the count is valid through.
    /// </summary>
    (ulong Total, ulong ValidThrough) NumPending(ulong startSequence, string? filter, bool lastPerSubject);

    /// <summary>The interior sequences between FirstSeq and LastSeq that hold no message, ascending.</summary>
    ulong[] DeletedSequences();

    // ---- Lifecycle ----

    /// <summary>Flushes, writes indexes and closes the files (FileStore); releases the messages (MemoryStore). Idempotent.
    /// Throws <see cref="IOException"/> if the final flush fails (Dispose does not).</summary>
    void Stop();

    /// <summary>Stops and deletes everything stored (the stream's directory for FileStore).</summary>
    void Delete();
}
