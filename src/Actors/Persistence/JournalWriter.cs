using Courier.Storage.Persistence;

namespace Courier.Actors.Persistence;

/// <summary>
/// The journal's single writer: one thread of its own that drains everything queued and makes it
/// durable together. Writes queued while an fsync runs become the next batch, so N persistent actors
/// persisting at once cost one engine call (one write, one fsync), not N (group commit).
/// </summary>
/// <remarks>
/// Work runs in the order it was queued: consecutive writes merge into one engine call; a delete or a
/// sync runs between them in its place. The thread blocks on disk, never a dispatcher's or the thread
/// pool's. Completions run asynchronously, never on this thread.
/// </remarks>
internal sealed class JournalWriter : IDisposable
{
    private readonly IJournalStore _store;
    private readonly object _gate = new(); // Monitor.Wait/Pulse: the writer thread sleeps on it
    private readonly Thread _thread;
    private List<Work> _queue = [];
    private List<Work> _draining = [];
    private bool _stopping;
    private long _batches;

    public JournalWriter(IJournalStore store, string name)
    {
        _store = store;
        _thread = new Thread(Run) { IsBackground = true, Name = name };
        _thread.Start();
    }

    /// <summary>Engine calls made so far: one per drained run of writes (benchmarks and tests read it, from any thread).</summary>
    public long Batches => Interlocked.Read(ref _batches);

    /// <summary>Queues atomic writes; completes with one rejection (or null) per write once they are durable.</summary>
    /// <exception cref="IOException">(through the task) The batch could not be made durable.</exception>
    public Task<Exception?[]> WriteAsync(JournalWrite[] writes)
    {
        var work = new Work(writes, null, 0, sync: false);
        Enqueue(work);
        return work.Written.Task;
    }

    /// <summary>Queues a delete of <paramref name="persistenceId"/>'s events up to <paramref name="toSequenceNr"/>, after every write queued before it.</summary>
    public Task DeleteAsync(string persistenceId, long toSequenceNr)
    {
        var work = new Work(null, persistenceId, toSequenceNr, sync: false);
        Enqueue(work);
        return work.Written.Task;
    }

    /// <summary>Queues an fsync of what is written (the sync_interval timer).</summary>
    public Task SyncAsync()
    {
        var work = new Work(null, null, 0, sync: true);
        Enqueue(work);
        return work.Written.Task;
    }

    /// <summary>Finishes what is queued, then stops the thread.</summary>
    public void Dispose()
    {
        lock (_gate)
        {
            _stopping = true;
            Monitor.PulseAll(_gate);
        }

        _thread.Join();
    }

    private void Enqueue(Work work)
    {
        lock (_gate)
        {
            if (_stopping)
            {
                work.Written.TrySetException(new ObjectDisposedException(nameof(JournalWriter)));
                return;
            }

            _queue.Add(work);
            if (_queue.Count == 1)
            {
                Monitor.Pulse(_gate);
            }
        }
    }

    private void Run()
    {
        while (true)
        {
            lock (_gate)
            {
                while (_queue.Count == 0 && !_stopping)
                {
                    Monitor.Wait(_gate);
                }

                if (_queue.Count == 0)
                {
                    return;
                }

                (_queue, _draining) = (_draining, _queue);
            }

            Drain(_draining);
            _draining.Clear();
        }
    }

    private void Drain(List<Work> batch)
    {
        var i = 0;
        while (i < batch.Count)
        {
            if (batch[i].Writes is null)
            {
                RunOne(batch[i++]);
                continue;
            }

            // A run of consecutive writes: one engine call.
            var end = i;
            var count = 0;
            while (end < batch.Count && batch[end].Writes is { } w)
            {
                count += w.Length;
                end++;
            }

            WriteRun(batch, i, end, count);
            i = end;
        }
    }

    private void WriteRun(List<Work> batch, int start, int end, int count)
    {
        var writes = new JournalWrite[count];
        var at = 0;
        for (var i = start; i < end; i++)
        {
            batch[i].Writes!.CopyTo(writes, at);
            at += batch[i].Writes!.Length;
        }

        var rejections = new Exception?[count];
        try
        {
            _store.WriteMessages(writes, rejections);
            Interlocked.Increment(ref _batches);
        }
        catch (Exception e)
        {
            for (var i = start; i < end; i++)
            {
                batch[i].Written.TrySetException(e);
            }

            return;
        }

        at = 0;
        for (var i = start; i < end; i++)
        {
            var own = batch[i].Writes!.Length;
            batch[i].Written.TrySetResult(rejections[at..(at + own)]);
            at += own;
        }
    }

    private void RunOne(Work work)
    {
        try
        {
            if (work.Sync)
            {
                (_store as FileJournalStore)?.Sync();
            }
            else
            {
                _store.DeleteMessagesTo(work.PersistenceId!, work.ToSequenceNr);
            }

            work.Written.TrySetResult([]);
        }
        catch (Exception e)
        {
            work.Written.TrySetException(e);
        }
    }

    /// <summary>One queued item: writes, a delete (persistence id and bound) or a sync.</summary>
    private sealed class Work(JournalWrite[]? writes, string? persistenceId, long toSequenceNr, bool sync)
    {
        public JournalWrite[]? Writes { get; } = writes;

        public string? PersistenceId { get; } = persistenceId;

        public long ToSequenceNr { get; } = toSequenceNr;

        public bool Sync { get; } = sync;

        public TaskCompletionSource<Exception?[]> Written { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}
