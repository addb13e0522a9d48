using Courier.Storage.IO;

namespace Courier.Storage.FileStorage;

/// <summary>
/// One block file (<c>NNNNNNNNNN.blk</c>) of a FileStore: a 32-byte <see cref="BlockHeader"/> and then
/// records, append-only. Only the newest block (the write block) takes appends; records appended but
/// not yet flushed wait in <see cref="Buffer"/>, records being flushed in <see cref="Inflight"/>.
/// All fields are guarded by the store's lock.
/// </summary>
internal sealed class MsgBlock : IDisposable
{
    private const int InitialBuffer = 64 * 1024;      // bytes; grows by doubling for larger batches
    private const int MaxKeptBuffer = 4 * 1024 * 1024; // bytes; larger buffers are dropped after a flush

    private readonly StoreFileSystem _fileSystem;
    private StoreFile? _handle;
    private byte[]? _spare;

    public MsgBlock(StoreFileSystem fileSystem, string directory, uint id)
    {
        _fileSystem = fileSystem;
        Id = id;
        DataPath = Path.Combine(directory, FileName(id, "blk"));
        IndexPath = Path.Combine(directory, FileName(id, "idx"));
    }

    public uint Id { get; }

    public string DataPath { get; }

    public string IndexPath { get; }

    /// <summary>Bytes written to the file (everything below is on disk, or at least in the OS).</summary>
    public long FileLength { get; set; }

    /// <summary>Records appended but not yet written; <see cref="BufferStart"/> is their file offset.</summary>
    public byte[] Buffer { get; private set; } = [];

    public int BufferLength { get; private set; }

    public long BufferStart { get; private set; }

    /// <summary>Records a Flush is writing right now (outside the lock); still served to readers from here.</summary>
    public byte[]? Inflight { get; private set; }

    public long InflightStart { get; private set; }

    public int InflightLength { get; private set; }

    /// <summary>The block's logical length: written plus buffered bytes.</summary>
    public long Length => BufferStart + BufferLength;

    /// <summary>Messages in this block still in the stream.</summary>
    public int LiveMsgs { get; set; }

    /// <summary>Sequences this block holds tombstones for whose messages live in older blocks.</summary>
    public List<ulong> HeldTombstones { get; } = [];

    /// <summary>True when an index file matches the block as it is.</summary>
    public bool IndexCurrent { get; set; }

    /// <summary>True once a newer block took over appends.</summary>
    public bool Sealed { get; set; }

    /// <summary>Written since its last fsync.</summary>
    public bool Unsynced { get; set; }

    /// <summary>Scheduled for deletion at the next flush.</summary>
    public bool Doomed { get; set; }

    /// <summary>The file's length as far as the store knows: <see cref="FileLength"/>, or more once preallocated.</summary>
    public long Allocated { get; set; }

    /// <summary>
    /// The file holds zeros ahead of its records (a prepared spare, or extended ahead by a flush), so it is
    /// longer than <see cref="Length"/> until it is cut back (when sealed, on stop, or by
    /// <see cref="TruncateFile"/>). Appends overwrite allocated space and an fsync writes no file size.
    /// </summary>
    public bool Preallocated => Allocated > Length;

    public static string FileName(uint id, string extension) => $"{id:D10}.{extension}";

    /// <summary>The file handle, opened on first use (read-write, shared, so a crashed instance's handles never block a new one).</summary>
    public StoreFile Handle => _handle ??= _fileSystem.Open(DataPath, FileMode.OpenOrCreate);

    public bool HasHandle => _handle is not null;

    /// <summary>Starts the append buffer at the end of the file.</summary>
    public void StartAppending(long fileLength)
    {
        FileLength = fileLength;
        Allocated = fileLength;
        BufferStart = fileLength;
        BufferLength = 0;
    }

    /// <summary>Room for <paramref name="size"/> more bytes at the end of the buffer; the caller fills all of it.</summary>
    public Span<byte> Reserve(int size)
    {
        var needed = BufferLength + size;
        if (needed > Buffer.Length)
        {
            var capacity = Math.Max(InitialBuffer, Buffer.Length);
            while (capacity < needed)
            {
                capacity = capacity > int.MaxValue / 2 ? int.MaxValue : capacity * 2;
            }

            var grown = _spare is { } s && s.Length >= needed ? s : GC.AllocateUninitializedArray<byte>(capacity);
            _spare = null;
            Buffer.AsSpan(0, BufferLength).CopyTo(grown);
            Buffer = grown;
        }

        var span = Buffer.AsSpan(BufferLength, size);
        BufferLength += size;
        return span;
    }

    /// <summary>Moves the buffered records to <see cref="Inflight"/> for a flush; returns false when nothing is buffered.</summary>
    public bool BeginFlush()
    {
        if (BufferLength == 0)
        {
            return false;
        }

        Inflight = Buffer;
        InflightStart = BufferStart;
        InflightLength = BufferLength;
        Buffer = _spare ?? [];
        _spare = null;
        BufferStart += BufferLength;
        BufferLength = 0;
        return true;
    }

    /// <summary>The flush wrote <see cref="Inflight"/>: the file now holds it.</summary>
    public void EndFlush()
    {
        if (Inflight is null)
        {
            return;
        }

        FileLength = InflightStart + InflightLength;
        if (!Sealed && Inflight.Length <= MaxKeptBuffer)
        {
            _spare = Inflight;
        }

        Inflight = null;
        InflightLength = 0;
        Unsynced = true;
        if (Sealed && BufferLength == 0)
        {
            Buffer = [];
        }
    }

    /// <summary>The bytes [offset, offset + length) if they are still in memory (buffered or in flight).</summary>
    public bool TryGetBuffered(long offset, int length, out ReadOnlySpan<byte> bytes)
    {
        if (offset >= BufferStart && offset + length <= BufferStart + BufferLength)
        {
            bytes = Buffer.AsSpan((int)(offset - BufferStart), length);
            return true;
        }

        if (Inflight is not null && offset >= InflightStart && offset + length <= InflightStart + InflightLength)
        {
            bytes = Inflight.AsSpan((int)(offset - InflightStart), length);
            return true;
        }

        bytes = default;
        return false;
    }

    /// <summary>Mutable view of buffered bytes (erase rewrites a record still in the buffer).</summary>
    public bool TryGetBufferedForWrite(long offset, int length, out Span<byte> bytes)
    {
        if (offset >= BufferStart && offset + length <= BufferStart + BufferLength)
        {
            bytes = Buffer.AsSpan((int)(offset - BufferStart), length);
            return true;
        }

        bytes = default;
        return false;
    }

    /// <summary>Cuts the file (and the buffer, which must be empty) to <paramref name="length"/> bytes.</summary>
    public void TruncateFile(long length)
    {
        Handle.SetLength(length);
        StartAppending(length);
    }

    /// <summary>Closes the handle if open (it reopens on demand).</summary>
    public void CloseHandle()
    {
        _handle?.Dispose();
        _handle = null;
    }

    public void Dispose() => CloseHandle();

    public override string ToString() => $"block {Id} ({Length} B, {LiveMsgs} live)";
}
