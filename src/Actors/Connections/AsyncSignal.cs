using System.Threading.Tasks.Sources;

namespace Courier.Actors.Connections;

/// <summary>
/// An auto-reset signal for one waiter (a write pump) and many setters (publishers), without an
/// allocation per wait or per set. Sets while nobody waits coalesce into one wake-up.
/// </summary>
/// <remarks>
/// <see cref="Set"/> with <c>inline: true</c> runs the waiter's continuation on the setting thread:
/// a publisher that wakes an idle write pump performs that pump's socket write itself (as
/// nats-server's producer flushes its consumers), so a small delivery costs no thread-pool hop.
/// Otherwise the continuation is queued to the thread pool, so large batches are written on
/// another core while the publisher parses on.
/// </remarks>
internal sealed class AsyncSignal : IValueTaskSource
{
    private const int Idle = 0;
    private const int Signaled = 1;
    private const int Waiting = 2;

    private ManualResetValueTaskSourceCore<bool> _core = new() { RunContinuationsAsynchronously = true };
    private int _state;

    /// <summary>Completes when <see cref="Set"/> has been called since the last wait. One waiter at a time.</summary>
    public ValueTask WaitAsync()
    {
        if (Interlocked.CompareExchange(ref _state, Idle, Signaled) == Signaled)
        {
            return default;
        }

        _core.Reset();
        if (Interlocked.CompareExchange(ref _state, Waiting, Idle) == Signaled)
        {
            // Set between the two exchanges: consume it.
            Volatile.Write(ref _state, Idle);
            return default;
        }

        return new ValueTask(this, _core.Version);
    }

    /// <summary>Wakes the waiter, or lets its next wait complete at once.</summary>
    /// <param name="inline">Run the waiter's continuation on this thread.</param>
    public void Set(bool inline = false)
    {
        while (true)
        {
            switch (Volatile.Read(ref _state))
            {
                case Signaled:
                    return;
                case Idle:
                    if (Interlocked.CompareExchange(ref _state, Signaled, Idle) == Idle)
                    {
                        return;
                    }

                    break;
                default:
                    if (Interlocked.CompareExchange(ref _state, Idle, Waiting) == Waiting)
                    {
                        // Only the thread that won the exchange completes this wait.
                        _core.RunContinuationsAsynchronously = !inline;
                        _core.SetResult(true);
                        return;
                    }

                    break;
            }
        }
    }

    void IValueTaskSource.GetResult(short token) => _core.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _core.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);
}
