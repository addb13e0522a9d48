namespace Courier.Benchmarks.Persistence;

/// <summary>
/// Completes a task when <c>n</c> actors have each signalled once: how a benchmark operation that
/// fans out to actors knows it is over, without sleeping or polling.
/// </summary>
internal sealed class Countdown
{
    private TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _pending;

    /// <summary>Starts a round of <paramref name="count"/> signals; call before telling the actors.</summary>
    public Task Start(int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(count);
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Volatile.Write(ref _done, done);
        Volatile.Write(ref _pending, count);
        return done.Task;
    }

    /// <summary>One actor is done; the last one completes the round.</summary>
    public void Signal()
    {
        if (Interlocked.Decrement(ref _pending) == 0)
        {
            Volatile.Read(ref _done).TrySetResult();
        }
    }

    /// <summary>An actor cannot finish: the round fails rather than hangs.</summary>
    public void Fail(Exception cause) => Volatile.Read(ref _done).TrySetException(cause);

    /// <summary>Blocks the benchmark thread (never an actor's) until the round is over.</summary>
    /// <exception cref="TimeoutException">The round took longer than <paramref name="timeout"/>.</exception>
    public static void Wait(Task round, TimeSpan timeout)
    {
        if (!round.Wait(timeout))
        {
            throw new TimeoutException($"the actors did not finish within {timeout}");
        }
    }
}
