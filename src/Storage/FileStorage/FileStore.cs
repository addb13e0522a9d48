using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics;
using Courier.Protocols.JetStream;
using Courier.Storage.Internal;
using Courier.Storage.IO;

namespace Courier.Storage.FileStorage;

/// <summary>
/// The file store: a directory of append-only block files (<see cref="MsgBlock"/>) of bounded size,
/// each record checksummed (<see cref="RecordFormat"/>), one index file per sealed block
/// (<see cref="BlockIndex"/>), tombstones for interior deletes, floor records for front removals.
/// Semantics (limits, subjects, purges) are <see cref="StoreCore"/>'s; this class keeps the records.
/// </summary>
/// <remarks>
/// <para>Appends encode the record straight into the write block's buffer (no allocation for a known
/// subject). <see cref="Flush"/> is the group commit: one write per touched block and, under
/// <see cref="SyncPolicy.Always"/>, one fsync per touched file, done outside the store lock.</para>
/// <para>Locks: <see cref="_ioGate"/> serializes flushes and structural file changes (purge, compact,
/// truncate, erase, stop); it is always taken before <see cref="StoreCore.StateLock"/>, never after.</para>
/// </remarks>
internal sealed partial class FileStore : StoreCore
{
    private const long MaxBlockSize = 1L << 30; // 1 GiB: record offsets are 32-bit

    private readonly string _directory;
    private readonly FileStoreOptions _options;
    private readonly StoreFileSystem _fs;
    private readonly long _blockSize;
    private readonly Lock _ioGate = new();
    private readonly List<MsgBlock> _blocks = []; // ascending id; the last is the write block
    private readonly List<MsgBlock> _doomed = [];  // no live messages; deleted at the next flush
    private readonly List<MsgBlock> _pinned = [];  // no live messages, but tombstones still needed
    private MsgBlock _write = null!;
    private uint _nextBlockId = 1;
    private ulong _persistedFloor;
    private bool _directoryDirty;
    private bool _recovering;
    private bool _recheckPinned;
    private Exception? _failure;
    private long _lastSync = Stopwatch.GetTimestamp();

    private FileStore(string directory, StoreConfig config, FileStoreOptions options)
        : base(config)
    {
        _directory = directory;
        _options = options;
        _fs = options.FileSystem;
        _blockSize = Math.Clamp(options.BlockSize, BlockHeader.Size + RecordFormat.Overhead, MaxBlockSize);
    }

    /// <inheritdoc/>
    public override StorageType Type => StorageType.File;

    /// <inheritdoc/>
    public override SyncPolicy SyncPolicy => _options.Sync;

    /// <summary>fsyncs done so far (tests check the sync policy with it).</summary>
    internal int SyncCount { get; private set; }

    /// <summary>Flush writes done so far (tests check the group commit with it).</summary>
    internal int WriteCount { get; private set; }

    /// <summary>What the last open did (tests check the fast restart with it).</summary>
    internal RecoveryReport Recovery { get; } = new();

    /// <summary>The block files in use (tests).</summary>
    internal int BlockCount
    {
        get
        {
            lock (StateLock)
            {
                return _blocks.Count;
            }
        }
    }

    /// <summary>Opens or creates the store in <paramref name="directory"/>, recovering what is there.</summary>
    public static FileStore Open(string directory, StoreConfig config, FileStoreOptions options)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        ArgumentNullException.ThrowIfNull(options);
        options.FileSystem.CreateDirectory(Path.GetFullPath(directory));
        var store = new FileStore(Path.GetFullPath(directory), config, options);
        try
        {
            store.LoadKey(config);
            store.Recover();
        }
        catch
        {
            store.CloseAllHandles();
            throw;
        }

        return store;
    }

    /// <inheritdoc/>
    protected override bool WriteFailedLocked => _failure is not null;

    /// <inheritdoc/>
    protected override IoGate EnterIo() => IoGate.Enter(_ioGate);

    /// <inheritdoc/>
    protected override void StopBackend()
    {
        DiscardSpare();
        using (EnterIo())
        {
            try
            {
                FlushCore(forceSync: true, allowClosed: true);
                CutPreallocatedWriteBlock();
            }
            finally
            {
                lock (StateLock)
                {
                    if (_failure is null)
                    {
                        foreach (var block in BlocksNeedingIndex(includeWriteBlock: true) ?? [])
                        {
                            WriteIndex(block);
                        }
                    }

                    CloseAllHandles();
                }
            }
        }
    }

    /// <summary>On stop: the write block, if preallocated, is cut back to its records and synced, so a stopped store's files hold records only. I/O gate held.</summary>
    private void CutPreallocatedWriteBlock()
    {
        MsgBlock? block;
        lock (StateLock)
        {
            block = _write is { Preallocated: true, BufferLength: 0, Inflight: null } ? _write : null;
        }

        if (block is not null)
        {
            block.Handle.SetLength(block.Length);
            block.Handle.Sync();
            block.Allocated = block.Length;
            SyncCount++;
        }
    }

    /// <inheritdoc/>
    protected override void DeleteBackend()
    {
        _fs.DeleteDirectory(_directory);
    }

    /// <summary>The block with <paramref name="id"/>, or null (binary search; ids ascend).</summary>
    private MsgBlock? FindBlock(uint id)
    {
        int lo = 0, hi = _blocks.Count - 1;
        while (lo <= hi)
        {
            var mid = (lo + hi) >>> 1;
            var b = _blocks[mid];
            if (b.Id == id)
            {
                return b;
            }

            if (b.Id < id)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid - 1;
            }
        }

        return null;
    }

    private static ulong Pack(uint blockId, long offset) => ((ulong)blockId << 32) | (uint)offset;

    private static uint BlockOf(ulong location) => (uint)(location >> 32);

    private static uint OffsetOf(ulong location) => (uint)location;

    /// <summary>
    /// Blocks whose data is all in the file, synced, and that need an index file (sealed ones; the write
    /// block too on stop). Synced first: recovery trusts an index that covers no more than the file, and a
    /// preallocated file is long before its records are durable (under an interval, a crash can drop them
    /// and leave zeros that such an index would vouch for). Lock held.
    /// </summary>
    private List<MsgBlock>? BlocksNeedingIndex(bool includeWriteBlock)
    {
        List<MsgBlock>? result = null;
        foreach (var block in _blocks)
        {
            if ((block.Sealed || includeWriteBlock) && !block.IndexCurrent && !block.Doomed && !block.Unsynced && block.BufferLength == 0 && block.Inflight is null)
            {
                (result ??= []).Add(block);
            }
        }

        return result;
    }

    /// <summary>
    /// Writes a block's index file from the block file itself: a sequential read of a block the OS
    /// just wrote (usually from the page cache) that also verifies every record once more, in 256 KiB
    /// pieces so nothing per record is kept in memory. A block with damage gets its index from a
    /// resynchronizing scan instead. I/O gate held (the block cannot change); the store lock need not be.
    /// </summary>
    private void WriteIndex(MsgBlock block)
    {
        if (!TryWriteIndexStreaming(block))
        {
            var entries = new List<IndexEntry>();
            ScanRegion(block, BlockHeader.Size, block.FileLength, entries, claims: null, report: false);
            BlockIndex.Write(_fs, block.IndexPath, block.Id, block.FileLength, entries, _key);
        }

        block.IndexCurrent = true;
    }

    private bool TryWriteIndexStreaming(MsgBlock block)
    {
        if (_key is not null)
        {
            return false; // sealed records: the scan decrypts them (the index is sealed whole anyway)
        }

        const int Chunk = 256 * 1024; // bytes read per call
        var end = block.FileLength;
        var buffer = ArrayPool<byte>.Shared.Rent(Chunk);
        try
        {
            using var writer = new BlockIndex.Writer(_fs, block.IndexPath, block.Id, key: null);
            long readAt = BlockHeader.Size;   // next file offset to read
            long recordAt = BlockHeader.Size; // file offset of buffer[pos]
            int pos = 0, filled = 0;
            while (recordAt < end)
            {
                var available = filled - pos;
                var need = RecordFormat.HeaderSize;
                if (available >= RecordFormat.HeaderSize)
                {
                    var h = RecordFormat.ReadHeader(buffer.AsSpan(pos));
                    if (!RecordFormat.IsPlausible(h, end - recordAt))
                    {
                        return false;
                    }

                    need = (int)h.Length;
                    if (available >= need)
                    {
                        var record = buffer.AsSpan(pos, need);
                        if (!RecordFormat.ChecksumOk(record))
                        {
                            return false;
                        }

                        var timestamp = h.Timestamp;
                        ulong aux = 0;
                        if (h.Kind == RecordKind.Floor)
                        {
                            aux = BinaryPrimitives.ReadUInt64LittleEndian(record[RecordFormat.HeaderSize..]);
                            timestamp = BinaryPrimitives.ReadInt64LittleEndian(record[(RecordFormat.HeaderSize + 8)..]);
                        }

                        var subject = h.Kind == RecordKind.Message ? record.Slice(RecordFormat.HeaderSize, h.SubjectLength) : default;
                        writer.Add((uint)recordAt, h.Length, h.Sequence, timestamp, aux, subject, h.Kind);
                        pos += need;
                        recordAt += need;
                        continue;
                    }
                }

                // Not a whole record in the buffer: keep the partial one at the front and read more.
                buffer.AsSpan(pos, available).CopyTo(buffer);
                filled = available;
                pos = 0;
                if (need > buffer.Length)
                {
                    var larger = ArrayPool<byte>.Shared.Rent(need);
                    buffer.AsSpan(0, filled).CopyTo(larger);
                    ArrayPool<byte>.Shared.Return(buffer);
                    buffer = larger;
                }

                var toRead = (int)Math.Min(buffer.Length - filled, end - readAt);
                var n = toRead > 0 ? block.Handle.Read(buffer.AsSpan(filled, toRead), readAt) : 0;
                if (n <= 0)
                {
                    return false;
                }

                filled += n;
                readAt += n;
            }

            writer.Complete(end);
            return true;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private void CloseAllHandles()
    {
        foreach (var block in _blocks)
        {
            block.Dispose();
        }

        foreach (var block in _doomed)
        {
            block.Dispose();
        }

        foreach (var block in _pinned)
        {
            block.Dispose();
        }

        _readHandles.Clear();
        InvalidateWindows(null);
    }

    /// <summary>Counters from recovery, for tests and logs.</summary>
    internal sealed class RecoveryReport
    {
        public int BlocksFromIndex { get; set; }

        public int BlocksScanned { get; set; }

        public long BytesScanned { get; set; }
    }
}
