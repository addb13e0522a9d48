namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// The temporary sender of one ask (Akka's <c>PromiseActorRef</c>): its first message completes the task;
/// later ones go to dead letters. It counts as stopped once completed, so a watch on it then terminates.
/// </summary>
internal sealed class PromiseActorRef<T> : InternalActorRef
{
    private readonly TaskCompletionSource<T> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Lock _lock = new();
    private readonly ActorSystem? _system;
    private readonly IActorRef _target;
    private readonly object _message;
    private Timer? _timer;
    private CancellationTokenRegistration _cancellation;
    private List<InternalActorRef>? _watchers;
    private TimeSpan _timeout;

    public PromiseActorRef(ActorSystem? system, IActorRef target, object message)
    {
        _system = system;
        _target = target;
        _message = message;
        Path = system?.NextTempPath() ?? "akka://all-systems/temp";
    }

    public Task<T> Task => _completion.Task;

    public override string Path { get; }

    public override bool IsTerminated => _completion.Task.IsCompleted;

    public override ActorSystem? System => _system;

    public void Start(TimeSpan timeout, CancellationToken cancellationToken)
    {
        _timeout = timeout;
        if (cancellationToken.CanBeCanceled)
        {
            _cancellation = cancellationToken.UnsafeRegister(
                static (state, token) => ((PromiseActorRef<T>)state!).Complete(_ => _.TrySetCanceled(token)),
                this);
        }

        if (timeout != Timeout.InfiniteTimeSpan)
        {
            // Exchange is a full fence: either Complete sees the timer, or this sees the task completed.
            Interlocked.Exchange(ref _timer, new Timer(static state => ((PromiseActorRef<T>)state!).OnTimeout(), this, timeout, Timeout.InfiniteTimeSpan));
            if (_completion.Task.IsCompleted)
            {
                Volatile.Read(ref _timer)?.Dispose();
            }
        }
    }

    public override void Tell(object message, IActorRef? sender)
    {
        ArgumentNullException.ThrowIfNull(message);
        var completed = message switch
        {
            T reply => Complete(c => c.TrySetResult(reply)),
            Status.Failure failure => Complete(c => c.TrySetException(failure.Cause)),
            Status.Success { Status: T status } => Complete(c => c.TrySetResult(status)),
            Status.Success { Status: null } when default(T) is null => Complete(c => c.TrySetResult(default!)),
            _ => Complete(c => c.TrySetException(new InvalidCastException(
                $"Ask<{typeof(T).Name}> to {_target} received a reply of type {message.GetType().Name}: {message}"))),
        };
        if (!completed)
        {
            _system?.DeadLetterRef.Deliver(message, sender, this);
        }
    }

    public override void SendSystemMessage(SystemMessage message)
    {
        switch (message)
        {
            case Watch watch when ReferenceEquals(watch.Watchee, this):
                lock (_lock)
                {
                    if (!_completion.Task.IsCompleted)
                    {
                        (_watchers ??= []).Add(watch.Watcher);
                        return;
                    }
                }

                watch.Watcher.SendSystemMessage(new DeathWatchNotification(this, existenceConfirmed: true));
                break;
            case Unwatch unwatch when ReferenceEquals(unwatch.Watchee, this):
                lock (_lock)
                {
                    _watchers?.Remove(unwatch.Watcher);
                }

                break;
        }
    }

    private void OnTimeout() => Complete(c => c.TrySetException(new AskTimeoutException(
        $"Timeout after {_timeout.TotalSeconds:0.###} s waiting for a reply from {_target} to {_message.GetType().Name}.")));

    private bool Complete(Func<TaskCompletionSource<T>, bool> complete)
    {
        List<InternalActorRef>? watchers;
        lock (_lock)
        {
            if (!complete(_completion))
            {
                return false;
            }

            watchers = _watchers;
            _watchers = null;
        }

        Volatile.Read(ref _timer)?.Dispose();
        _cancellation.Dispose();
        if (watchers is not null)
        {
            foreach (var watcher in watchers)
            {
                watcher.SendSystemMessage(new DeathWatchNotification(this, existenceConfirmed: true));
            }
        }

        return true;
    }
}
