using System.Buffers;
using Courier.Actors.Connections;

namespace Courier.Testing;

/// <summary>
/// Feeds a socketless <see cref="ClientConnection"/> (tests, the embedded publish-path benchmarks) one
/// read batch through the steps of its read pump's loop, without a pipe: parse and process every
/// complete command, make pending SUB/UNSUB take effect in the routers before a later PUB (invariant 2),
/// then signal the touched outbounds once.
/// </summary>
internal static class ReadBatches
{
    /// <summary>Runs <paramref name="buffer"/> through <paramref name="client"/>'s read path; returns the bytes consumed.</summary>
    /// <remarks>Completes synchronously, without allocating, when the batch holds no SUB/UNSUB.</remarks>
    public static async ValueTask<long> ProcessBatchAsync(this ClientConnection client, ReadOnlySequence<byte> buffer)
    {
        var length = buffer.Length;
        while (client.Process(ref buffer) == ClientConnection.ReadOutcome.FlushSubscriptions)
        {
            await client.ApplySubscriptionChangesAsync().ConfigureAwait(false);
        }

        await client.ApplySubscriptionChangesAsync().ConfigureAwait(false);
        client.EndInProcessBatch();
        return length - buffer.Length;
    }
}
