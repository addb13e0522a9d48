namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// The task scheduler of one actor's async handlers (Akka's <c>ActorTaskScheduler</c>). A task queued from
/// outside the actor's turn becomes a <see cref="RunTask"/> system message, so handler code after an
/// <c>await</c> runs on the actor's turn, never concurrently with its other processing. Only the first step
/// of a handler runs inline (inside the message that started it).
/// </summary>
internal sealed class ActorTaskScheduler : TaskScheduler
{
    private readonly ActorCell _cell;
    private bool _inlineNext;

    public ActorTaskScheduler(ActorCell cell) => _cell = cell;

    /// <summary>Starts <paramref name="handler"/> under this scheduler, running its synchronous part now.</summary>
    public Task<Task> StartInline(Func<Task> handler)
    {
        _inlineNext = true;
        try
        {
            return Task.Factory.StartNew(handler, CancellationToken.None, TaskCreationOptions.None, this);
        }
        finally
        {
            _inlineNext = false;
        }
    }

    /// <summary>Runs a queued task (called by the cell while processing its <see cref="RunTask"/>).</summary>
    public void Execute(Task task) => TryExecuteTask(task);

    protected override void QueueTask(Task task)
    {
        if (_inlineNext && ReferenceEquals(ActorCell.Current, _cell))
        {
            _inlineNext = false;
            TryExecuteTask(task);
            return;
        }

        _cell.Self.SendSystemMessage(new RunTask(task));
    }

    // Never inline: a continuation completed from inside the actor's own code would otherwise re-enter it.
    protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued) => false;

    protected override IEnumerable<Task>? GetScheduledTasks() => null;
}
