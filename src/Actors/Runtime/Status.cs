namespace Courier.Actors.Runtime;

/// <summary>
/// Replies that carry an outcome (Akka.NET <c>Status</c>). <see cref="Failure"/> faults an
/// <see cref="Futures.Ask{T}(IActorRef, object, TimeSpan)"/>; <see cref="Success"/> completes it with
/// <see cref="Success.Status"/> when that is of the asked type.
/// </summary>
public abstract class Status
{
    private Status()
    {
    }

    /// <summary>A successful outcome.</summary>
    public sealed class Success : Status
    {
        /// <summary>Creates a success carrying <paramref name="status"/>.</summary>
        public Success(object? status) => Status = status;

        /// <summary>The value, if any.</summary>
        public object? Status { get; }

        /// <inheritdoc/>
        public override string ToString() => $"Success: {Status}";
    }

    /// <summary>A failed outcome.</summary>
    public sealed class Failure : Status
    {
        /// <summary>Creates a failure carrying <paramref name="cause"/>.</summary>
        public Failure(Exception cause, object? state = null)
        {
            ArgumentNullException.ThrowIfNull(cause);
            Cause = cause;
            State = state;
        }

        /// <summary>Why it failed.</summary>
        public Exception Cause { get; }

        /// <summary>Optional correlation state.</summary>
        public object? State { get; }

        /// <inheritdoc/>
        public override string ToString() => $"Failure: {Cause.GetType().Name}: {Cause.Message}";
    }
}
