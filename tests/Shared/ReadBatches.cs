using System.Buffers;
using Courier.Actors.Connections;

namespace Courier.Testing;

/// <summary>
/// Feeds a socketless <see cref="Connection"/> (tests, the embedded publish-path benchmarks) one
/// read batch through the steps of its read pump's loop, without a pipe: parse and process every
/// complete command, make pending SUB/UNSUB take effect in the routers before a later PUB (invariant 2),
/// then signal the touched outbounds once.
/// </summary>
internal static class ReadBatches
{
    /// <summary>Runs <paramref name="buffer"/> through <paramref name="client"/>'s read path; returns the bytes consumed.</summary>
    /// <remarks>Completes synchronously, without allocating, when the batch holds no SUB/UNSUB.</remarks>
    public static async ValueTask<long> ProcessBatchAsync(this Connection client, ReadOnlySequence<byte> buffer)
    {
        var length = buffer.Length;
        var outcome = Connection.ReadOutcome.Continue;
        while ((outcome = client.Process(ref buffer)) == Connection.ReadOutcome.Wait)
        {
            if (await client.ContinueAsync().ConfigureAwait(false) != Connection.ReadOutcome.Continue)
            {
                break;
            }
        }

        if (outcome != Connection.ReadOutcome.Close)
        {
            await client.ApplySubscriptionChangesAsync().ConfigureAwait(false); // SUB/UNSUB at the batch's end
        }

        client.Publisher.Flush();
        return length - buffer.Length;
    }
}
