using Courier.Actors.Runtime.Internal;

namespace Courier.Actors.Runtime;

/// <summary>
/// Request-reply from outside an actor (Akka.NET <c>Futures.Ask</c>). Each ask creates a temporary ref that
/// completes the returned task with the first reply. Control plane only: never on a per-message path.
/// </summary>
public static class Futures
{
    /// <summary>
    /// Tells <paramref name="message"/> to <paramref name="self"/> with a temporary sender and returns its first
    /// reply: a <typeparamref name="T"/>, or the <see cref="Status.Success.Status"/> of a
    /// <see cref="Status.Success"/> that is one. Continuations run asynchronously, never on the replying actor.
    /// </summary>
    /// <param name="self">The actor to ask.</param>
    /// <param name="message">The request.</param>
    /// <param name="timeout">How long to wait; <see cref="Timeout.InfiniteTimeSpan"/> for ever.</param>
    /// <exception cref="AskTimeoutException">(In the task) No reply in time, or the actor had already stopped.</exception>
    /// <exception cref="InvalidCastException">(In the task) The reply was of another type.</exception>
    /// <remarks>A <see cref="Status.Failure"/> reply faults the task with its <see cref="Status.Failure.Cause"/>.</remarks>
    public static Task<T> Ask<T>(this IActorRef self, object message, TimeSpan timeout) =>
        Ask<T>(self, message, timeout, CancellationToken.None);

    /// <summary>As <see cref="Ask{T}(IActorRef, object, TimeSpan)"/>; <paramref name="cancellationToken"/> cancels the wait.</summary>
    public static Task<T> Ask<T>(this IActorRef self, object message, TimeSpan timeout, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(self);
        ArgumentNullException.ThrowIfNull(message);
        if (timeout <= TimeSpan.Zero && timeout != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(nameof(timeout), timeout, "The timeout must be positive or infinite.");
        }

        var target = InternalActorRef.From(self, nameof(self));
        if (target.IsTerminated)
        {
            return Task.FromException<T>(new AskTimeoutException($"Recipient {target} had already been terminated."));
        }

        var promise = new PromiseActorRef<T>(target.System, target, message);
        promise.Start(timeout, cancellationToken);
        target.Tell(message, promise);
        return promise.Task;
    }

    /// <summary>As <see cref="Ask{T}(IActorRef, object, TimeSpan)"/> with any reply type.</summary>
    public static Task<object> Ask(this IActorRef self, object message, TimeSpan timeout) =>
        Ask<object>(self, message, timeout, CancellationToken.None);
}
