using System.Collections.Concurrent;

namespace Courier.Actors.Connections;

/// <summary>
/// The 64 KB chunks outbound buffers are built from. A dedicated pool: write pumps return whole
/// batches of chunks at once, which overflows <c>ArrayPool.Shared</c>'s small per-core caches and
/// turns every later rent into a fresh allocation; this pool keeps enough for the chunks in flight.
/// </summary>
internal static class OutboundChunkPool
{
    /// <summary>Bytes per chunk: large enough that a burst of small messages is one write.</summary>
    public const int ChunkSize = 64 * 1024;

    /// <summary>Chunks kept when returned (16 MB); beyond that they are left to the GC.</summary>
    private const int MaxRetained = 256;

    private static readonly ConcurrentQueue<byte[]> Free = new();
    private static int _count;

    public static byte[] Rent()
    {
        if (Free.TryDequeue(out var chunk))
        {
            Interlocked.Decrement(ref _count);
            return chunk;
        }

        return GC.AllocateUninitializedArray<byte>(ChunkSize);
    }

    public static void Return(byte[] chunk)
    {
        if (chunk.Length != ChunkSize || Interlocked.Increment(ref _count) > MaxRetained)
        {
            if (chunk.Length == ChunkSize)
            {
                Interlocked.Decrement(ref _count);
            }

            return;
        }

        Free.Enqueue(chunk);
    }
}
