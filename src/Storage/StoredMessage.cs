namespace Courier.Storage;

/// <summary>A message read back from a store. Immutable; the buffers are the reader's own.</summary>
public sealed class StoredMessage
{
    internal StoredMessage(string subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload, ulong sequence, long timestamp)
    {
        Subject = subject;
        Headers = headers;
        Payload = payload;
        Sequence = sequence;
        Timestamp = timestamp;
    }

    /// <summary>The subject the message was stored under.</summary>
    public string Subject { get; }

    /// <summary>The NATS header block, or empty.</summary>
    public ReadOnlyMemory<byte> Headers { get; }

    /// <summary>The payload.</summary>
    public ReadOnlyMemory<byte> Payload { get; }

    /// <summary>The stream sequence.</summary>
    public ulong Sequence { get; }

    /// <summary>When it was stored, Unix nanoseconds.</summary>
    public long Timestamp { get; }

    /// <inheritdoc/>
    public override string ToString() => $"#{Sequence} {Subject} ({Headers.Length}+{Payload.Length} B)";
}
