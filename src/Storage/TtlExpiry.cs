namespace Courier.Storage;

/// <summary>A stored message whose <c>Nats-TTL</c> has run out (<see cref="IStreamStore.ExpiredByTtl"/>).</summary>
/// <param name="Sequence">Its sequence.</param>
/// <param name="Subject">Its subject.</param>
/// <param name="Expires">When it expired, Unix nanoseconds.</param>
public readonly record struct TtlExpiry(ulong Sequence, string Subject, long Expires);
