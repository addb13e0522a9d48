using System.Diagnostics;
using Courier.Storage.Internal;

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
        _blockSize = Math.Clamp(options.BlockSize, BlockHeader.Size + RecordFormat.Overhead, MaxBlockSize);
    }

    /// <inheritdoc/>
    public override StorageType Type => StorageType.File;

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
        Directory.CreateDirectory(directory);
        var store = new FileStore(Path.GetFullPath(directory), config, options);
        try
        {
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
        using (EnterIo())
        {
            try
            {
                FlushCore(forceSync: true, allowClosed: true);
            }
            finally
            {
                lock (StateLock)
                {
                    if (_failure is null)
                    {
                        WriteIndexes(includeWriteBlock: true);
                    }

                    CloseAllHandles();
                }
            }
        }
    }

    /// <inheritdoc/>
    protected override void DeleteBackend()
    {
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
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

    /// <summary>Writes index files for sealed blocks that lack one (and the write block on stop). Lock held.</summary>
    private void WriteIndexes(bool includeWriteBlock)
    {
        foreach (var block in _blocks)
        {
            var eligible = block.Sealed || includeWriteBlock;
            if (eligible && !block.IndexCurrent && block.Entries is not null && block.BufferLength == 0 && block.Inflight is null)
            {
                BlockIndex.Write(block.IndexPath, block.Id, block.FileLength, block.Entries);
                block.IndexCurrent = true;
                if (block.Sealed)
                {
                    block.Entries = null;
                }
            }
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
