using Courier.Storage.IO;

namespace Courier.Storage.FileStorage;

/// <summary>
/// Preallocated block files. An fsync of an append that grows a file also writes its inode (size, new
/// extents); an overwrite of allocated, written space writes data only. On this kind of disk that is
/// about 300 us against 170 us per 48 KB group commit, 150 us against 100 us per small one. So a block
/// file is kept ahead of its records, two ways:
/// <list type="bullet">
/// <item>Extended ahead (<see cref="ExtendAhead"/>): a flush that writes past the end of the file also
/// writes zeros after its records, to the first multiple of <see cref="ExtendStep"/> a quarter further, and
/// its fsync syncs them: one slower fsync now and then, cheaper ones until the zeros run out. This covers a
/// store's first block and small stores (a KV bucket), at 64 KiB or a quarter of the data ahead.</item>
/// <item>The spare: once a store's write block is half full, its next block file is prepared in the
/// background (zero-filled to the block size, synced) and renamed into place at the rollover, so a busy
/// store's new block needs no extending on the hot path.</item>
/// </list>
/// </summary>
/// <remarks>
/// <para>On disk a preallocated block is longer than its records: an all-zero tail running to the end of
/// a file whose length is the block size or a multiple of <see cref="ExtendStep"/> is unwritten space, not
/// damage (recovery). A block is cut back to its records when it is sealed (at the flush that writes its
/// last records, before their fsync), on stop, and by truncation; a crash before such a cut is durable
/// leaves the zero tail, which recovery cuts. The spare itself is <c>spare.tmp</c>, which recovery
/// deletes with any other temp file.</para>
/// <para>Threads: the preparer touches only the spare file and <see cref="_spareState"/>; the rollover
/// takes the spare under the store lock once the preparer has published it ready. Stop and delete do not
/// wait for a preparer under way: it stops at its next chunk, and a spare it made ready is deleted after it.</para>
/// </remarks>
internal sealed partial class FileStore
{
    private const int SpareNone = 0;
    private const int SparePreparing = 1;
    private const int SpareReady = 2;
    private const int ZeroChunk = 256 * 1024; // bytes written per call while zero-filling
    private const int ExtendStep = 64 * 1024;  // bytes: a block file extended ahead is a multiple of this long

    private static readonly byte[] Zeros = new byte[ZeroChunk];

    private int _spareState;
    private bool _spareClosing;
    private Task? _spareTask;

    private string SparePath => Path.Combine(_directory, "spare.tmp");

    /// <summary>Spares renamed into place by rollovers so far (tests tell a spare from a block extended ahead with it).</summary>
    internal int SparesTaken { get; private set; }

    /// <summary>Starts preparing the next block file if the options want one and none is ready or under way. Lock held.</summary>
    private void PrepareSpare()
    {
        if (!_options.Preallocate || _spareState != SpareNone || _spareClosing)
        {
            return;
        }

        _spareState = SparePreparing;
        if (_options.PreallocateInline)
        {
            PrepareSpareFile();
        }
        else
        {
            _spareTask = Task.Factory.StartNew(PrepareSpareFile, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        }
    }

    /// <summary>Zero-fills and syncs <c>spare.tmp</c>; on any failure leaves no spare (the next rollover creates its file as before).</summary>
    private void PrepareSpareFile()
    {
        var ready = false;
        try
        {
            // A preparer that starts after the store began closing makes no file (the store does not wait for it).
            if (!Volatile.Read(ref _spareClosing))
            {
                using var file = _fs.Open(SparePath, FileMode.Create);
                if (WriteZeros(file, 0, _blockSize, () => Volatile.Read(ref _spareClosing)) && !Volatile.Read(ref _spareClosing))
                {
                    file.Sync();
                    ready = true;
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // No spare this time (disk full, store closing, power cut in the fault tests).
        }

        if (!ready)
        {
            try
            {
                _fs.Delete(SparePath);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // Left for recovery, which deletes temp files.
            }
        }

        Volatile.Write(ref _spareState, ready ? SpareReady : SpareNone);
    }

    /// <summary>Renames a ready spare to <paramref name="block"/>'s file; false when there is none. Lock held.</summary>
    private bool TryTakeSpare(MsgBlock block)
    {
        if (Volatile.Read(ref _spareState) != SpareReady)
        {
            return false;
        }

        _spareState = SpareNone;
        try
        {
            _fs.Move(SparePath, block.DataPath);
        }
        catch (IOException)
        {
            return false;
        }

        SparesTaken++;
        return true;
    }

    /// <summary>
    /// Stops preparing and removes the spare: on stop and delete. Never waits: a preparer under way sees the
    /// store closing before its next chunk and deletes its file itself; one that finished just before is
    /// followed by a continuation that deletes the spare it left (the stream actor stops its store on its
    /// own thread, which must not block on the preparer's writes and fsync).
    /// </summary>
    private void DiscardSpare()
    {
        Task? task;
        lock (StateLock)
        {
            _spareClosing = true;
            task = _spareTask;
        }

        if (task is null || task.IsCompleted)
        {
            DeleteReadySpare();
            return;
        }

        task.ContinueWith(
            static (_, store) => ((FileStore)store!).DeleteReadySpare(),
            this,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
    }

    /// <summary>Deletes a spare that was made ready and not taken; the preparer is done.</summary>
    private void DeleteReadySpare()
    {
        if (Interlocked.Exchange(ref _spareState, SpareNone) != SpareNone)
        {
            try
            {
                _fs.Delete(SparePath);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // Recovery deletes it.
            }
        }
    }

    /// <summary>Whether a block file holds nothing but zeros: a spare taken by a rollover that crashed before its first flush. Recovery only.</summary>
    private static bool IsAllZero(MsgBlock block)
    {
        var buffer = new byte[ZeroChunk];
        long at = 0;
        while (true)
        {
            var n = block.Handle.Read(buffer, at);
            if (n <= 0)
            {
                block.CloseHandle();
                return true;
            }

            if (buffer.AsSpan(0, n).ContainsAnyExcept((byte)0))
            {
                block.CloseHandle();
                return false;
            }

            at += n;
        }
    }

    /// <summary>Whether [from, from + tail.Length) is the unwritten end of a preallocated block: zeros to the end of a file of a preallocated length.</summary>
    private bool IsUnwrittenTail(long from, ReadOnlySpan<byte> tail) =>
        IsPreallocatedLength(from + tail.Length) && !tail.ContainsAnyExcept((byte)0);

    /// <summary>A length a preallocated block file has: the block size (a spare), or a multiple of <see cref="ExtendStep"/> (extended ahead).</summary>
    private bool IsPreallocatedLength(long length) => length == _blockSize || (length > 0 && length % ExtendStep == 0);

    /// <summary>
    /// After a flush wrote <paramref name="block"/>'s records past the end of its file, extends the file with
    /// zeros ahead of them (to the first multiple of <see cref="ExtendStep"/> past a quarter of the records
    /// further, at most the block size), so the next fsyncs overwrite allocated space. The zeros are synced by
    /// the same flush's fsync. A store's first block, and a store too small for a spare, get this instead.
    /// I/O gate held, store lock not held.
    /// </summary>
    private void ExtendAhead(MsgBlock block)
    {
        var end = block.InflightStart + block.InflightLength;
        if (end <= block.Allocated)
        {
            return;
        }

        block.Allocated = end;
        if (!_options.Preallocate || block.Sealed || end >= _blockSize)
        {
            return;
        }

        var target = Math.Min(_blockSize, (end + (end / 4) + ExtendStep) / ExtendStep * ExtendStep); // a multiple past end + end/4
        WriteZeros(block.Handle, end, target);
        block.Allocated = target;
    }

    /// <summary>Writes zeros over [from, to) of <paramref name="file"/>; false if <paramref name="abandon"/> said stop first.</summary>
    private static bool WriteZeros(StoreFile file, long from, long to, Func<bool>? abandon = null)
    {
        for (var at = from; at < to; at += ZeroChunk)
        {
            if (abandon?.Invoke() == true)
            {
                return false;
            }

            file.Write(Zeros.AsSpan(0, (int)Math.Min(ZeroChunk, to - at)), at);
        }

        return true;
    }
}
