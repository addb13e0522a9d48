namespace Courier.Storage;

/// <summary>One message of a batch handed to <see cref="IStreamStore.AppendBatch"/>.</summary>
/// <param name="Subject">The subject, UTF-8, no wildcards.</param>
/// <param name="Headers">The NATS header block (<c>NATS/1.0\r\n...</c>), or empty.</param>
/// <param name="Payload">The payload.</param>
/// <param name="Timestamp">Unix nanoseconds; 0 means "now".</param>
public readonly record struct StoreMessage(
    ReadOnlyMemory<byte> Subject,
    ReadOnlyMemory<byte> Headers,
    ReadOnlyMemory<byte> Payload,
    long Timestamp = 0);
