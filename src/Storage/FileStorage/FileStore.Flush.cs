using System.Diagnostics;

namespace Courier.Storage.FileStorage;

/// <summary>Group commit: the one write and one fsync per batch, and deleting dead blocks after it.</summary>
internal sealed partial class FileStore
{
    private static readonly List<MsgBlock> NoBlocks = []; // never added to

    private readonly List<MsgBlock> _flushJobs = []; // blocks with buffered bytes, for the flush under way (I/O gate held)
    private readonly List<MsgBlock> _syncJobs = [];  // blocks to fsync, for the flush under way (I/O gate held)
    private readonly List<MsgBlock> _trimJobs = [];  // sealed preallocated blocks to cut back to their records (I/O gate held)

    /// <inheritdoc/>
    public override void Flush() => FlushCore(forceSync: false, allowClosed: false);

    /// <inheritdoc/>
    public override void Sync() => FlushCore(forceSync: true, allowClosed: false);

    /// <summary>
    /// Writes every buffered record (one write per block with buffered bytes), fsyncs when the policy
    /// says so, then deletes blocks that hold nothing needed any more. The lock is held only to take
    /// the buffers and to publish the result; the write and fsync run outside it, under the I/O gate.
    /// </summary>
    private void FlushCore(bool forceSync, bool allowClosed)
    {
        using (EnterIo())
        {
            // Reused: flushes are serialized by the I/O gate, and one per message must not allocate.
            var jobs = _flushJobs;
            var toSync = _syncJobs;
            var toTrim = _trimJobs;
            jobs.Clear();
            toSync.Clear();
            toTrim.Clear();
            List<MsgBlock>? toDelete;
            List<MsgBlock> toIndex;
            bool sync, syncDirectory;
            lock (StateLock)
            {
                if (IsClosedLocked && !allowClosed)
                {
                    return;
                }

                if (_failure is not null)
                {
                    throw new IOException($"store '{ConfigLocked.Name}' failed an earlier write and accepts no more", _failure);
                }

                toDelete = PrepareDeletions();
                foreach (var block in _blocks)
                {
                    if (block.BeginFlush())
                    {
                        _ = block.Handle;
                        jobs.Add(block);
                    }

                    if (block.Preallocated && block.Sealed)
                    {
                        // Sealed: everything it will hold is written now or by this flush. Cut the zero
                        // tail before the fsync that makes the block final.
                        block.Unsynced = true;
                        toTrim.Add(block);
                    }
                }

                // Deleting a block is safe only once what replaces it (its floor record, carried tombstones)
                // is durable: otherwise a power cut under an interval keeps the deletion and loses the
                // floor, and synced messages vanish with a block (found by the power-loss tests).
                sync = forceSync || _options.Sync.IsAlways || toDelete is not null || Stopwatch.GetElapsedTime(_lastSync) >= _options.Sync.Period;
                if (sync)
                {
                    foreach (var block in _blocks)
                    {
                        if (block.Unsynced || block.Inflight is not null)
                        {
                            toSync.Add(block);
                        }
                    }
                }

                syncDirectory = sync && (_directoryDirty || toDelete is not null);
                _directoryDirty = !syncDirectory && (_directoryDirty || toDelete is not null);
            }

            try
            {
                // A batch that rolled over into a new block: the older block is synced before the newer one
                // is written. The new block's header and floor record may drop messages that the limits
                // pushed out because of this batch; they must not reach the disk while the batch's own
                // messages in the older block do not (found by the power-loss tests). Once per block.
                var last = jobs.Count > 0 ? jobs[^1] : null;
                foreach (var block in toTrim)
                {
                    if (block.Inflight is null)
                    {
                        block.Handle.SetLength(block.Length);
                        block.Allocated = block.Length;
                    }
                }

                foreach (var block in jobs)
                {
                    WriteInflight(block);
                    WriteCount++;
                    if (toTrim.Count > 0 && toTrim.Contains(block))
                    {
                        block.Handle.SetLength(block.InflightStart + block.InflightLength);
                        block.Allocated = block.InflightStart + block.InflightLength;
                    }
                    else
                    {
                        ExtendAhead(block); // before this flush's fsync, which then syncs the zeros too
                    }

                    if (sync && block != last)
                    {
                        block.Handle.Sync();
                        SyncCount++;
                    }
                }

                foreach (var block in toSync)
                {
                    if (block.Inflight is not null && block != last)
                    {
                        continue; // synced right after its write
                    }

                    block.Handle.Sync();
                    SyncCount++;
                }

                if (toDelete is not null)
                {
                    foreach (var block in toDelete)
                    {
                        block.Dispose();
                        _fs.Delete(block.DataPath);
                        _fs.Delete(block.IndexPath);
                    }
                }

                if (syncDirectory)
                {
                    _fs.SyncDirectory(_directory);
                }
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                lock (StateLock)
                {
                    _failure = e;
                }

                throw;
            }

            lock (StateLock)
            {
                foreach (var block in jobs)
                {
                    block.EndFlush();
                }

                if (sync)
                {
                    foreach (var block in toSync)
                    {
                        block.Unsynced = false;
                        if (block.Sealed && block.IndexCurrent)
                        {
                            ReleaseHandle(block);
                        }
                    }

                    _lastSync = Stopwatch.GetTimestamp();
                }

                toIndex = BlocksNeedingIndex(includeWriteBlock: false) ?? NoBlocks; // not `?? []`: that allocates a list per flush
                foreach (var block in toIndex)
                {
                    _readHandles.Remove(block); // not closed by a reader while indexed outside the lock
                    _ = block.Handle;
                }
            }

            // Sealed blocks now wholly in their files get their index (once per block), outside the lock.
            foreach (var block in toIndex)
            {
                try
                {
                    WriteIndex(block);
                }
                catch (IOException)
                {
                    // An index only speeds up the next open; without one the block is scanned.
                }

                lock (StateLock)
                {
                    ReleaseHandle(block);
                }
            }
        }
    }

    /// <summary>
    /// Decides which doomed blocks (no live messages) can go. A block's tombstones for messages in
    /// blocks that stay are still needed: up to a quarter block of them are carried into the write
    /// block, more pin the block until their targets' blocks go. A floor record with the last
    /// sequence is appended whenever the front moved or a block goes, so neither is lost with it.
    /// Lock held.
    /// </summary>
    private List<MsgBlock>? PrepareDeletions()
    {
        List<MsgBlock>? deletions = null;
        if (_recheckPinned && _pinned.Count > 0)
        {
            _doomed.AddRange(_pinned);
            _pinned.Clear();
        }

        _recheckPinned = false;
        if (_doomed.Count > 0)
        {
            var carryLimit = Math.Max(1, (int)(_blockSize / (RecordFormat.Overhead * 4)));
            var floor = FloorLocked;
            var candidates = _doomed.ToArray();
            Array.Sort(candidates, static (a, b) => a.Id.CompareTo(b.Id));
            _doomed.Clear();
            var needed = new List<(ulong Seq, uint Block)>();
            foreach (var block in candidates)
            {
                if (block == _write || block.LiveMsgs != 0)
                {
                    block.Doomed = false;
                    continue;
                }

                needed.Clear();
                foreach (var seq in block.HeldTombstones)
                {
                    if (seq >= floor && TryGetLocation(seq, out var location, out var live) && !live)
                    {
                        // Needed while the message's block stays on disk (live, pinned, or doomed later):
                        // candidates go in ascending id order and a message's block is older than its tombstone's.
                        var target = FindBlock(BlockOf(location));
                        if (target is not null && target != block)
                        {
                            needed.Add((seq, target.Id));
                        }
                    }
                }

                if (needed.Count > carryLimit)
                {
                    _pinned.Add(block); // looked at again after some other block goes
                    continue;
                }

                foreach (var (seq, target) in needed)
                {
                    AppendTombstone(seq, target);
                }

                _blocks.Remove(block);
                _readHandles.Remove(block);
                InvalidateWindows(block);
                (deletions ??= []).Add(block);
            }
        }

        _recheckPinned = deletions is not null;
        if (deletions is not null || FloorLocked > _persistedFloor)
        {
            AppendFloor();
        }

        return deletions;
    }
}
