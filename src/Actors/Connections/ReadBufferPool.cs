using System.Buffers;
using System.IO.Pipelines;

namespace Courier.Actors.Connections;

/// <summary>
/// One connection's read buffers, sized as nats-server sizes its read buffer: small until reads fill
/// it, then 64 KB, and small again after a run of short reads. A client that only sends CONNECT,
/// SUB and PING never holds more than a small buffer; a publisher reads 64 KB at a time.
/// </summary>
/// <remarks>
/// Without it every connection's first read took a 64 KB buffer, held across the wait for its SUBs
/// to reach the routers: 5,000 clients connecting at once held 320 MB of read buffers, which the
/// GC kept committed long after. The arrays come from <see cref="ArrayPool{T}.Shared"/>; the owner
/// objects are reused, so a read allocates nothing. Not thread-safe: the connection's read loop is
/// the only caller (the pipe rents and returns segments inside ReadAsync, AdvanceTo and Complete).
/// </remarks>
internal sealed class ReadBufferPool : MemoryPool<byte>
{
    /// <summary>Bytes of a connection's buffer until a read fills it.</summary>
    public const int SmallSize = 4 * 1024;

    /// <summary>Bytes of a busy connection's buffer: a full socket read of small messages.</summary>
    public const int LargeSize = 64 * 1024;

    /// <summary>Consecutive reads under <see cref="SmallSize"/> after which a large buffer shrinks back.</summary>
    private const int ShortReadsToShrink = 16;

    private int _size = SmallSize;
    private int _shortReads;
    private Owner? _free;

    /// <summary>The size the next segment is rented at.</summary>
    public int SegmentSize => _size;

    /// <summary>No limit: the pipe rents every segment here, so <see cref="SegmentSize"/> always applies.</summary>
    public override int MaxBufferSize => int.MaxValue;

    /// <summary>
    /// Options for a connection's pipe reader renting from this pool. Zero-byte reads keep an idle
    /// connection from holding a buffer at all; below 4 KB free, a new segment is rented before reading.
    /// </summary>
    public StreamPipeReaderOptions ReaderOptions() =>
        new(pool: this, bufferSize: SmallSize, minimumReadSize: SmallSize, leaveOpen: true, useZeroByteReads: true);

    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        var owner = _free ?? new Owner(this);
        _free = owner.Next;
        owner.Next = null;
        owner.Array = ArrayPool<byte>.Shared.Rent(Math.Max(minBufferSize, _size));
        return owner;
    }

    /// <summary>
    /// Called after each read with the bytes the reader holds: a read that filled the buffer grows
    /// the next one; a run of short reads shrinks it.
    /// </summary>
    public void Observe(long buffered)
    {
        if (buffered >= _size)
        {
            _size = LargeSize;
            _shortReads = 0;
        }
        else if (_size != SmallSize && buffered < SmallSize && ++_shortReads >= ShortReadsToShrink)
        {
            _size = SmallSize;
            _shortReads = 0;
        }
    }

    protected override void Dispose(bool disposing)
    {
    }

    private sealed class Owner(ReadBufferPool pool) : IMemoryOwner<byte>
    {
        public byte[]? Array;
        public Owner? Next;

        public Memory<byte> Memory => Array;

        public void Dispose()
        {
            if (Array is { } array)
            {
                Array = null;
                ArrayPool<byte>.Shared.Return(array);
                Next = pool._free;
                pool._free = this;
            }
        }
    }
}
