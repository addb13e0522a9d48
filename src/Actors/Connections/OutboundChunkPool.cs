namespace Courier.Actors.Connections;

/// <summary>
/// The chunks outbound buffers are built from: 64 KB, and 4 KB for the first chunk of a quiet
/// client's batch (an INFO, a PONG, a few replies), so a burst of new connections does not hold a
/// 64 KB chunk each. A dedicated pool: write pumps return whole batches of chunks at once, which
/// overflows <c>ArrayPool.Shared</c>'s small per-core caches and turns every later rent into a fresh
/// allocation; this pool keeps enough for the chunks in flight.
/// </summary>
internal static class OutboundChunkPool
{
    /// <summary>Bytes per chunk: large enough that a burst of small messages is one write.</summary>
    public const int ChunkSize = 64 * 1024;

    /// <summary>Bytes per small chunk: a quiet client's whole batch.</summary>
    public const int SmallChunkSize = 4 * 1024;

    private static readonly Shelf Large = new(ChunkSize, 256); // 16 MB kept
    private static readonly Shelf Small = new(SmallChunkSize, 1024); // 4 MB kept

    public static byte[] Rent() => Large.Rent();

    public static byte[] RentSmall() => Small.Rent();

    /// <summary>Takes back a chunk of either size (anything else is left to the GC).</summary>
    public static void Return(byte[] chunk)
    {
        if (chunk.Length == ChunkSize)
        {
            Large.Return(chunk);
        }
        else if (chunk.Length == SmallChunkSize)
        {
            Small.Return(chunk);
        }
    }

    /// <summary>
    /// Chunks of one size, at most <c>retained</c> of them kept; beyond that they are left to the GC. A
    /// fixed array under a lock (taken once per chunk, not per message), so neither renting nor
    /// returning ever allocates: a publisher that moves a batch to a large chunk returns the small one.
    /// </summary>
    private sealed class Shelf(int size, int retained)
    {
        private readonly Lock _lock = new();
        private readonly byte[]?[] _free = new byte[retained][];
        private int _count;

        public byte[] Rent()
        {
            lock (_lock)
            {
                if (_count > 0)
                {
                    var chunk = _free[--_count]!;
                    _free[_count] = null;
                    return chunk;
                }
            }

            return GC.AllocateUninitializedArray<byte>(size);
        }

        public void Return(byte[] chunk)
        {
            lock (_lock)
            {
                if (_count < _free.Length)
                {
                    _free[_count++] = chunk;
                }
            }
        }
    }
}
