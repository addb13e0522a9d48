namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// <c>ReceiveAsync</c> (Akka's <c>ActorTaskScheduler.RunTask</c>): the handler starts inside the current
/// message, user messages wait until its task completes, and its continuations run as system messages on the
/// actor's turn, with <c>Sender</c> still the sender of the message that started it.
/// </summary>
internal sealed partial class ActorCell
{
    private ActorTaskScheduler? _taskScheduler;
    private bool _awaitingAsync;
    private int _asyncGeneration;
    private Envelope _asyncEnvelope;

    /// <summary>Runs <paramref name="handler"/> for the current message and suspends user messages until it completes.</summary>
    public void RunTask(Func<Task> handler)
    {
        if (!ReferenceEquals(Current, this) || _awaitingAsync)
        {
            throw new InvalidOperationException("ReceiveAsync handlers run only while the actor processes a message.");
        }

        _awaitingAsync = true;
        UpdateUserBlocked();
        var generation = ++_asyncGeneration;
        _asyncEnvelope = _currentEnvelope;
        var scheduler = _taskScheduler ??= new ActorTaskScheduler(this);
        var started = scheduler.StartInline(handler);
        started.Unwrap().ContinueWith(
            static (task, state) => ((AsyncHandlerCompletion)state!).Complete(task),
            new AsyncHandlerCompletion(this, generation),
            CancellationToken.None,
            TaskContinuationOptions.None,
            scheduler);
    }

    /// <summary>Runs one continuation of the async handler (a <see cref="RunTask"/> system message).</summary>
    private void RunTaskContinuation(Task task)
    {
        if (_isTerminating)
        {
            return; // the actor is stopping: the rest of the handler is abandoned
        }

        var saved = _currentEnvelope;
        _currentEnvelope = _asyncEnvelope;
        try
        {
            _taskScheduler!.Execute(task);
        }
        finally
        {
            _currentEnvelope = saved;
        }
    }

    /// <summary>The handler's task has completed (runs on the actor's turn).</summary>
    private void OnAsyncHandlerCompleted(Task task, int generation)
    {
        if (generation != _asyncGeneration || !_awaitingAsync)
        {
            return; // abandoned by a restart or stop
        }

        _awaitingAsync = false;
        UpdateUserBlocked();
        if (task.Status != TaskStatus.RanToCompletion)
        {
            var cause = task.Exception is { InnerExceptions.Count: 1 } aggregate
                ? aggregate.InnerExceptions[0]
                : task.Exception ?? (Exception)new TaskCanceledException(task);
            _currentEnvelope = _asyncEnvelope;
            HandleInvokeFailure(cause, perpetratorChild: null);
            _currentEnvelope = default;
        }

        _asyncEnvelope = default;
    }

    /// <summary>Restart or stop while an async handler runs: stop waiting for it.</summary>
    private void AbandonAsyncHandler()
    {
        if (_awaitingAsync)
        {
            _awaitingAsync = false;
            _asyncGeneration++;
            UpdateUserBlocked();
        }

        _asyncEnvelope = default;
    }

    private sealed class AsyncHandlerCompletion(ActorCell cell, int generation)
    {
        public void Complete(Task task) => cell.OnAsyncHandlerCompleted(task, generation);
    }
}
