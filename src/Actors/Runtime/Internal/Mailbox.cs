using System.Collections.Concurrent;

namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// An actor's two queues (user messages, system messages) and its turn on the .NET thread pool.
/// </summary>
/// <remarks>
/// <para>Many threads post; one runs. <see cref="_status"/> holds a <c>Scheduled</c> bit set by a CAS from
/// idle, so at most one <see cref="Execute"/> runs at a time, and cleared with an interlocked AND at the end
/// of the run. The interlocked operations, and the thread pool's own hand-off, order everything one run wrote
/// before everything the next run reads, so the actor's state needs no locks.</para>
/// <para>A post is one lock-free enqueue (the <see cref="Envelope"/> is a struct, so nothing is allocated per
/// message beyond the queue's amortised segments), a full fence, and a read of the status; only a post that
/// finds the mailbox idle pays a CAS and a thread-pool enqueue. The fence pairs with the interlocked clear at
/// the end of a run, which re-checks the queues: a producer either sees <c>Scheduled</c> still set and the
/// run then sees its message, or it sees the bit cleared and schedules the run itself (no lost wake-up).</para>
/// <para>System messages are processed first, and again after every user message if any arrived. User
/// messages are not processed while the actor is suspended (after a failure, while an async handler runs, or
/// while stopping); such posts do not schedule a run.</para>
/// </remarks>
internal sealed class Mailbox : IThreadPoolWorkItem
{
    /// <summary>
    /// User messages one run processes before it yields the thread and re-queues itself: Akka's default
    /// dispatcher throughput (messages per turn). Enough to amortise the thread-pool hop, small enough that one
    /// busy actor cannot hold a pool thread for long.
    /// </summary>
    public const int Throughput = 30;

    private const int StatusIdle = 0;
    private const int StatusScheduled = 1;
    private const int StatusClosed = 2;

    private readonly ConcurrentQueue<Envelope> _userQueue = new();
    // System messages are rare (create, watch, failure, stop): a small locked queue costs far less
    // per actor than a ConcurrentQueue's first segment, which matters with one actor per connection.
    private readonly Queue<SystemMessage> _systemQueue = new(2);
    private readonly Lock _systemLock = new();
    private int _systemCount;
    private readonly ActorCell _cell;
    private int _status;
    private volatile bool _userBlocked;
    // Unstashed messages, served before the queue (Akka's deque-based mailbox): a stack whose top (the last
    // element) is the next message. Touched only on the actor's turn; allocated on the first unstash.
    private List<Envelope>? _front;

    public Mailbox(ActorCell cell) => _cell = cell;

    public bool IsClosed => (Volatile.Read(ref _status) & StatusClosed) != 0;

    /// <summary>True if user messages are queued (unstashed ones count only on the actor's own turn).</summary>
    public bool HasUserMessages => !_userQueue.IsEmpty || _front is { Count: > 0 };

    /// <summary>Puts <paramref name="envelopes"/>, in order, in front of every queued user message (an unstash).
    /// Only on the actor's own turn.</summary>
    public void Prepend(IReadOnlyList<Envelope> envelopes)
    {
        if (envelopes.Count == 0)
        {
            return;
        }

        _front ??= [];
        for (var i = envelopes.Count - 1; i >= 0; i--)
        {
            _front.Add(envelopes[i]);
        }
    }

    public void Post(Envelope envelope)
    {
        _userQueue.Enqueue(envelope);
        Interlocked.MemoryBarrier(); // pairs with the interlocked clear in Execute's finally (see remarks)
        var status = Volatile.Read(ref _status);
        if ((status & StatusClosed) != 0)
        {
            DrainUserQueueToDeadLetters();
        }
        else if (status == StatusIdle && !_userBlocked)
        {
            TrySchedule();
        }
    }

    public void PostSystem(SystemMessage message)
    {
        lock (_systemLock)
        {
            _systemQueue.Enqueue(message);
            Volatile.Write(ref _systemCount, _systemQueue.Count);
        }
        Interlocked.MemoryBarrier(); // as in Post
        var status = Volatile.Read(ref _status);
        if ((status & StatusClosed) != 0)
        {
            DrainSystemQueueAfterStop();
        }
        else if (status == StatusIdle)
        {
            TrySchedule();
        }
    }

    /// <summary>Called on the actor's thread when its suspension state changes.</summary>
    public void SetUserBlocked(bool blocked) => _userBlocked = blocked;

    /// <summary>
    /// Called once, on the actor's thread, when it has stopped: later posts go to dead letters, and what is
    /// still queued is drained now (a post racing with this drains its own message, see <see cref="Post"/>).
    /// </summary>
    public void Close()
    {
        Interlocked.Or(ref _status, StatusClosed);
        while (_front is { Count: > 0 })
        {
            var envelope = _front[^1];
            _front.RemoveAt(_front.Count - 1);
            _cell.System.DeadLetterRef.Deliver(envelope.Message, envelope.Sender, _cell.Self);
        }

        DrainUserQueueToDeadLetters();
        DrainSystemQueueAfterStop();
    }

    public bool TryDequeueSystem(out SystemMessage message)
    {
        if (Volatile.Read(ref _systemCount) == 0)
        {
            message = null!;
            return false;
        }

        lock (_systemLock)
        {
            var dequeued = _systemQueue.TryDequeue(out message!);
            Volatile.Write(ref _systemCount, _systemQueue.Count);
            return dequeued;
        }
    }

    private bool HasSystemMessages => Volatile.Read(ref _systemCount) > 0;

    public void Execute()
    {
        var previous = ActorCell.Current;
        ActorCell.Current = _cell;
        try
        {
            if (!IsClosed)
            {
                _cell.ProcessSystemMessages();
                ProcessUserMessages();
            }
        }
        finally
        {
            var unstashed = _front is { Count: > 0 }; // read before the turn ends: only the turn may touch it
            ActorCell.Current = previous;
            Interlocked.And(ref _status, ~StatusScheduled);
            if (HasSystemMessages || (!_userBlocked && (unstashed || !_userQueue.IsEmpty)))
            {
                TrySchedule();
            }
        }
    }

    private void ProcessUserMessages()
    {
        for (var left = Throughput; left > 0; left--)
        {
            Envelope envelope;
            if (_userBlocked || IsClosed)
            {
                return;
            }

            if (_front is { Count: > 0 })
            {
                envelope = _front[^1];
                _front.RemoveAt(_front.Count - 1);
            }
            else if (!_userQueue.TryDequeue(out envelope))
            {
                return;
            }

            _cell.Invoke(envelope);
            if (HasSystemMessages)
            {
                _cell.ProcessSystemMessages();
            }
        }
    }

    private void TrySchedule()
    {
        if (Interlocked.CompareExchange(ref _status, StatusScheduled, StatusIdle) == StatusIdle)
        {
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }
    }

    private void DrainUserQueueToDeadLetters()
    {
        var deadLetters = _cell.System.DeadLetterRef;
        while (_userQueue.TryDequeue(out var envelope))
        {
            deadLetters.Deliver(envelope.Message, envelope.Sender, _cell.Self);
        }
    }

    private void DrainSystemQueueAfterStop()
    {
        while (TryDequeueSystem(out var message))
        {
            _cell.HandleSystemMessageAfterStop(message);
        }
    }
}
