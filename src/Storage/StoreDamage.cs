namespace Courier.Storage;

/// <summary>
/// Damage a store found since it was opened, as counters (cheap to read: for /jsz and stream info).
/// The details are in <see cref="IStreamStore.Warnings"/>; the lost sequences in <see cref="StreamState.Lost"/>.
/// </summary>
/// <param name="Detected">Problems found on recovery or on read (one per warning: a torn tail, a record,
/// a block header or an index that failed its checksum, a damaged snapshot).</param>
/// <param name="MessagesLost">Messages lost to the damage (never served).</param>
/// <param name="BytesLost">Their bytes, where known.</param>
public readonly record struct StoreDamage(long Detected, long MessagesLost, ulong BytesLost);
