using System.Buffers;
using System.Diagnostics;

namespace Courier.Actors.Connections;

/// <summary>
/// A client's outbound buffer and write pump. Many publishers append frames (under a short lock,
/// never held across I/O); the pump drains everything queued with one pass of socket writes per
/// wake-up. Bytes queued past <c>max_pending</c> make the client a slow consumer.
/// </summary>
/// <remarks>
/// Hot path: <see cref="WriteMsg"/> copies one frame into pooled chunks (4 KB to start a quiet
/// client's batch, 64 KB otherwise), no allocation.
/// Publishers call <see cref="Signal"/> once per read batch (deferred flush), not per message.
/// </remarks>
internal sealed class Outbound
{
    private readonly Lock _lock = new();
    private readonly AsyncSignal _signal = new();
    private readonly long _maxPending;
    private List<ArraySegment<byte>> _queued = [];
    private List<ArraySegment<byte>> _draining = [];
    private byte[]? _current;
    private int _currentLength;
    private long _pending;
    private bool _startSmall = true; // the last batch fit a small chunk: start the next in one
    private bool _completed;
    private bool _slowConsumer;
    private long _writeStartedTimestamp;
    private TaskCompletionSource? _drained;
    private List<IDirectSubscriber> _directPending = [];   // direct subscribers with deliveries to complete (see Signal)
    private List<IDirectSubscriber>? _directSpare = [];    // the other list, while no completion is under way
    private int _directPendingCount;

    public Outbound(long maxPending, bool inProcess = false)
    {
        _maxPending = maxPending;
        InProcess = inProcess;
    }

    /// <summary>
    /// The outbound of an in-process connection (one of Courier's own services: its subscriptions are
    /// calls, completed inline) or of one without a socket (tests, benchmarks: its pump writes to
    /// memory): publishers always signal it on their own thread (no pool hop).
    /// </summary>
    public bool InProcess { get; }

    /// <summary>Called once, outside the lock, when the client first exceeds max_pending.</summary>
    public Action? SlowConsumerDetected { get; set; }

    /// <summary>Messages queued for this client.</summary>
    public long OutMsgs { get; private set; }

    /// <summary>Message payload bytes queued for this client.</summary>
    public long OutBytes { get; private set; }

    /// <summary>The read batch that last queued this outbound for a signal (see Publisher.Touch).</summary>
    public long TouchedInBatch { get; set; }

    /// <summary>Bytes queued and not yet written.</summary>
    public long PendingBytes => Volatile.Read(ref _pending);

    public bool IsSlowConsumer => Volatile.Read(ref _slowConsumer);

    /// <summary>How long the write in progress has been blocked; zero when none is.</summary>
    public TimeSpan CurrentWriteDuration
    {
        get
        {
            var started = Volatile.Read(ref _writeStartedTimestamp);
            return started == 0 ? TimeSpan.Zero : Stopwatch.GetElapsedTime(started);
        }
    }

    /// <summary>Queues a control frame (PONG, +OK, -ERR, INFO). Returns false if the client is gone or slow.</summary>
    public bool Write(ReadOnlySpan<byte> frame)
    {
        lock (_lock)
        {
            if (Reserve(frame.Length))
            {
                Append(frame);
                return true;
            }
        }

        if (IsSlowConsumer)
        {
            NotifySlowConsumer();
        }

        return false;
    }

    /// <summary>
    /// Queues one MSG/HMSG: the publish's pre-formatted prefix, this subscription's sid, the
    /// suffix, the payload and CRLF.
    /// </summary>
    public bool WriteMsg(ReadOnlySpan<byte> prefix, ReadOnlySpan<byte> sid, ReadOnlySpan<byte> suffix, in ReadOnlySequence<byte> payload)
    {
        var payloadLength = (int)payload.Length;
        var size = prefix.Length + sid.Length + suffix.Length + payloadLength + 2;
        bool slow;
        lock (_lock)
        {
            if (Reserve(size))
            {
                if (_current is { } chunk && chunk.Length - _currentLength >= size)
                {
                    // The whole frame fits the current chunk (nearly always): one span, copied into in turn.
                    var frame = chunk.AsSpan(_currentLength, size);
                    prefix.CopyTo(frame);
                    sid.CopyTo(frame[prefix.Length..]);
                    var at = prefix.Length + sid.Length;
                    suffix.CopyTo(frame[at..]);
                    payload.CopyTo(frame[(at + suffix.Length)..]);
                    frame[^2] = (byte)'\r';
                    frame[^1] = (byte)'\n';
                    _currentLength += size;
                }
                else
                {
                    Append(prefix);
                    Append(sid);
                    Append(suffix);
                    AppendPayload(payload);
                    Append("\r\n"u8);
                }

                OutMsgs++;
                OutBytes += payloadLength;
                return true;
            }

            slow = _slowConsumer;
        }

        if (slow)
        {
            NotifySlowConsumer();
        }

        return false;
    }

    /// <summary>
    /// Queues one delivered message in another protocol's framing (an MQTT PUBLISH): its header,
    /// then the payload. Counted as a message, as <see cref="WriteMsg"/>.
    /// </summary>
    public bool WriteFrame(ReadOnlySpan<byte> header, in ReadOnlySequence<byte> payload)
    {
        var payloadLength = (int)payload.Length;
        bool slow;
        lock (_lock)
        {
            if (Reserve(header.Length + payloadLength))
            {
                Append(header);
                AppendPayload(payload);

                OutMsgs++;
                OutBytes += payloadLength;
                return true;
            }

            slow = _slowConsumer;
        }

        if (slow)
        {
            NotifySlowConsumer();
        }

        return false;
    }

    // Caller holds _lock and has reserved the room.
    private void AppendPayload(in ReadOnlySequence<byte> payload)
    {
        if (payload.IsSingleSegment)
        {
            Append(payload.FirstSpan);
            return;
        }

        foreach (var segment in payload)
        {
            Append(segment.Span);
        }
    }

    /// <summary>
    /// More than half of max_pending is queued: producers should wait for the write pump before
    /// sending more (nats-server's fast-producer stall), so a consumer that is merely slower than
    /// its producers is throttled instead of cut off.
    /// </summary>
    public bool IsStalling => Volatile.Read(ref _pending) > _maxPending / 2;

    /// <summary>
    /// How long a producer waits at most, as nats-server's stallDuration: 100 ms, plus 100 ms per
    /// tenth of the half of max_pending queued beyond that half, and 1 s once max_pending is reached.
    /// </summary>
    public TimeSpan StallDuration
    {
        get
        {
            var pending = PendingBytes;
            var half = _maxPending / 2;
            if (pending >= _maxPending)
            {
                return TimeSpan.FromSeconds(1);
            }

            var steps = pending > half ? (pending - half) / Math.Max(1, half / 10) : 0;
            return TimeSpan.FromMilliseconds(100 * (1 + steps));
        }
    }

    /// <summary>Completes when the queue is back under half of max_pending (or the client is gone).</summary>
    public Task WaitForDrainAsync()
    {
        lock (_lock)
        {
            if (_completed || _pending <= _maxPending / 2)
            {
                return Task.CompletedTask;
            }

            _drained ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return _drained.Task;
        }
    }

    /// <summary>
    /// Notes one of this in-process client's direct subscribers (<see cref="IDirectSubscriber"/>) for
    /// completion at the next <see cref="Signal"/>: once per batch, at its first delivery. Its deliveries
    /// are counted as messages out when it is completed.
    /// </summary>
    public void AddDirectPending(IDirectSubscriber direct)
    {
        lock (_lock)
        {
            _directPending.Add(direct);
            _directPendingCount = _directPending.Count;
        }
    }

    /// <summary>
    /// Wakes the write pump (deferred flush: once per read batch per touched client). Direct
    /// subscribers delivered to since the last signal are completed first, on this thread.
    /// </summary>
    /// <param name="inline">Write on the calling thread if the pump is idle (small batches: no thread hop).</param>
    public void Signal(bool inline = false)
    {
        // Read without the lock: a delivery noted after this read is completed by its own publisher's signal.
        if (Volatile.Read(ref _directPendingCount) > 0)
        {
            CompleteDirect();
            if (Volatile.Read(ref _pending) == 0)
            {
                return; // nothing framed to write: a direct-only batch does not wake the pump
            }
        }

        _signal.Set(inline);
    }

    private void CompleteDirect()
    {
        List<IDirectSubscriber> batch;
        lock (_lock)
        {
            if (_directPending.Count == 0)
            {
                return;
            }

            // Swapped, not iterated under the lock: a completion may run a service that delivers here again.
            batch = _directPending;
            _directPending = _directSpare ?? [];
            _directSpare = null;
            _directPendingCount = 0;
        }

        long messages = 0, bytes = 0;
        foreach (var direct in batch)
        {
            direct.Complete(out var m, out var b);
            messages += m;
            bytes += b;
        }

        batch.Clear();
        lock (_lock)
        {
            OutMsgs += messages;
            OutBytes += bytes;
            _directSpare ??= batch; // reused: a completion per batch allocates nothing (but for overlapping ones)
        }
    }

    /// <summary>Stops accepting frames; the pump writes what is queued and ends.</summary>
    public void Complete()
    {
        lock (_lock)
        {
            _completed = true;
        }

        _signal.Set();
    }

    /// <summary>Writes queued frames to <paramref name="stream"/> until completed or the stream fails.</summary>
    public async Task RunWritePumpAsync(Stream stream)
    {
        try
        {
            while (true)
            {
                await _signal.WaitAsync().ConfigureAwait(false);
                bool completed;
                while (true)
                {
                    List<ArraySegment<byte>> batch;
                    lock (_lock)
                    {
                        completed = _completed;
                        if (_currentLength > 0)
                        {
                            _queued.Add(new ArraySegment<byte>(_current!, 0, _currentLength));
                            _current = null;
                            _currentLength = 0;
                        }

                        if (_queued.Count == 0)
                        {
                            break;
                        }

                        _startSmall = _queued.Count == 1 && _queued[0].Count <= OutboundChunkPool.SmallChunkSize;
                        batch = _queued;
                        _queued = _draining;
                        _draining = batch;
                    }

                    long written = 0;
                    Volatile.Write(ref _writeStartedTimestamp, Stopwatch.GetTimestamp());
                    try
                    {
                        if (stream is IBatchWriteStream framed)
                        {
                            // WebSocket: the whole batch is one frame and one socket send.
                            await framed.WriteBatchAsync(batch).ConfigureAwait(false);
                            foreach (var chunk in batch)
                            {
                                written += chunk.Count;
                            }
                        }
                        else
                        {
                            foreach (var chunk in batch)
                            {
                                await stream.WriteAsync(chunk.AsMemory(), CancellationToken.None).ConfigureAwait(false);
                                written += chunk.Count;
                            }
                        }
                    }
                    finally
                    {
                        Volatile.Write(ref _writeStartedTimestamp, 0);
                        foreach (var chunk in batch)
                        {
                            OutboundChunkPool.Return(chunk.Array!);
                        }

                        batch.Clear();
                    }

                    TaskCompletionSource? drained = null;
                    lock (_lock)
                    {
                        _pending -= written;
                        if (_drained is not null && _pending <= _maxPending / 2)
                        {
                            drained = _drained;
                            _drained = null;
                        }
                    }

                    drained?.TrySetResult();
                }

                if (completed)
                {
                    return;
                }
            }
        }
        finally
        {
            TaskCompletionSource? drained;
            lock (_lock)
            {
                drained = _drained;
                _drained = null;
                _completed = true;
                foreach (var chunk in _queued)
                {
                    OutboundChunkPool.Return(chunk.Array!);
                }

                _queued.Clear();
                if (_current is not null)
                {
                    OutboundChunkPool.Return(_current);
                    _current = null;
                }
            }

            drained?.TrySetResult();
        }
    }

    private void NotifySlowConsumer()
    {
        Action? notify;
        lock (_lock)
        {
            notify = SlowConsumerDetected;
            SlowConsumerDetected = null;
        }

        notify?.Invoke();
    }

    // Caller holds the lock.
    private bool Reserve(int size)
    {
        if (_completed || _slowConsumer)
        {
            return false;
        }

        if (_pending + size > _maxPending)
        {
            _slowConsumer = true;
            return false;
        }

        _pending += size;
        return true;
    }

    // Caller holds the lock.
    private void Append(ReadOnlySpan<byte> bytes)
    {
        while (!bytes.IsEmpty)
        {
            if (_current is null)
            {
                _current = _startSmall && _queued.Count == 0 ? OutboundChunkPool.RentSmall() : OutboundChunkPool.Rent();
                _currentLength = 0;
            }
            else if (_currentLength == _current.Length)
            {
                if (_current.Length == OutboundChunkPool.ChunkSize)
                {
                    _queued.Add(new ArraySegment<byte>(_current, 0, _currentLength));
                    _current = OutboundChunkPool.Rent();
                    _currentLength = 0;
                }
                else
                {
                    // The batch outgrew its small chunk: move it to a large one (one copy, at most 4 KB),
                    // so a busy client's batch stays one 64 KB write.
                    var large = OutboundChunkPool.Rent();
                    _current.AsSpan(0, _currentLength).CopyTo(large);
                    OutboundChunkPool.Return(_current);
                    _current = large;
                }
            }

            var n = Math.Min(bytes.Length, _current.Length - _currentLength);
            bytes[..n].CopyTo(_current.AsSpan(_currentLength));
            _currentLength += n;
            bytes = bytes[n..];
        }
    }
}
