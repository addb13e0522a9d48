namespace Courier.Storage;

/// <summary>
/// A stream's totals (nats-server's <c>StreamState</c>). When the stream is empty, <see cref="FirstSeq"/>
/// is <see cref="LastSeq"/> + 1 (0 and 0 for a stream that never held a message).
/// </summary>
public readonly record struct StreamState
{
    /// <summary>Messages stored.</summary>
    public ulong Msgs { get; init; }

    /// <summary>Bytes stored: the sum of <see cref="IStreamStore.MessageSize"/> over the messages.</summary>
    public ulong Bytes { get; init; }

    /// <summary>The first stored sequence.</summary>
    public ulong FirstSeq { get; init; }

    /// <summary>The last sequence assigned (it may have been deleted since; it never goes back except by Truncate).</summary>
    public ulong LastSeq { get; init; }

    /// <summary>Timestamp of the first message, Unix nanoseconds; 0 when empty.</summary>
    public long FirstTime { get; init; }

    /// <summary>Timestamp of the last message stored, Unix nanoseconds; 0 before the first.</summary>
    public long LastTime { get; init; }

    /// <summary>Sequences between first and last that hold no message (interior deletes and lost records).</summary>
    public ulong NumDeleted { get; init; }

    /// <summary>Distinct subjects with at least one message.</summary>
    public int NumSubjects { get; init; }

    /// <summary>Messages found corrupt (on recovery or on read), or null when none.</summary>
    public LostData? Lost { get; init; }
}

/// <summary>Messages lost to corruption (nats-server's <c>LostStreamData</c>).</summary>
/// <param name="Msgs">The lost sequences, ascending.</param>
/// <param name="Bytes">Their bytes, as far as they could be told.</param>
public sealed record LostData(IReadOnlyList<ulong> Msgs, ulong Bytes);
