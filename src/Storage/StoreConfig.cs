using Courier.Protocols.JetStream;

namespace Courier.Storage;

/// <summary>
/// The limits a store enforces on append, with nats-server's meanings: a limit of zero or less is
/// no limit. The stream actor maps a JetStream stream config onto this.
/// </summary>
public sealed record StoreConfig
{
    /// <summary>The stream name (for messages and logs only).</summary>
    public string Name { get; init; } = "";

    /// <summary><c>max_msgs</c>: the most messages the stream keeps.</summary>
    public long MaxMsgs { get; init; } = -1;

    /// <summary><c>max_bytes</c>: the most bytes (sum of <see cref="IStreamStore.MessageSize"/>) the stream keeps.</summary>
    public long MaxBytes { get; init; } = -1;

    /// <summary><c>max_age</c>: messages older than this are removed by <see cref="IStreamStore.ExpireByAge"/>.</summary>
    public TimeSpan MaxAge { get; init; } = TimeSpan.Zero;

    /// <summary><c>max_msgs_per_subject</c>: the most messages kept per subject (the oldest go first).</summary>
    public long MaxMsgsPerSubject { get; init; } = -1;

    /// <summary><c>max_msg_size</c>: the largest headers + payload accepted, in bytes.</summary>
    public int MaxMsgSize { get; init; } = -1;

    /// <summary><c>discard</c>: what happens to a message that would exceed max_msgs or max_bytes.</summary>
    public DiscardPolicy Discard { get; init; } = DiscardPolicy.Old;

    /// <summary><c>discard_new_per_subject</c>: with <see cref="DiscardPolicy.New"/>, refuse a message whose subject is at max_msgs_per_subject.</summary>
    public bool DiscardNewPerSubject { get; init; }

    /// <summary>
    /// <c>allow_msg_ttl</c>: messages with a <c>Nats-TTL</c> header are indexed by their expiry
    /// (<see cref="IStreamStore.ExpiredByTtl"/>), and those whose TTL is <c>never</c> outlive max_age.
    /// </summary>
    public bool AllowMsgTtl { get; init; }

    /// <summary><c>first_seq</c>: the sequence the first message of a new stream gets (0 or 1: start at 1).</summary>
    public ulong FirstSeq { get; init; }
}
