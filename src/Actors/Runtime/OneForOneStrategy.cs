using Courier.Actors.Runtime.Internal;

namespace Courier.Actors.Runtime;

/// <summary>
/// Applies the decider's directive to the failing child only (Akka.NET <c>OneForOneStrategy</c>). A child
/// restarted more than <see cref="MaxNumberOfRetries"/> times within <see cref="WithinTimeRangeMilliseconds"/>
/// is stopped instead.
/// </summary>
public sealed class OneForOneStrategy : SupervisorStrategy
{
    private readonly Func<Exception, Directive> _decider;

    /// <summary>Creates the strategy.</summary>
    /// <param name="maxNrOfRetries">Restarts allowed per child within the window; -1 for no limit, 0 for none.</param>
    /// <param name="withinTimeRange">The window; <see cref="Timeout.InfiniteTimeSpan"/> or zero for no window
    /// (then the limit counts over the child's whole life).</param>
    /// <param name="decider">Maps an exception to a directive.</param>
    public OneForOneStrategy(int maxNrOfRetries, TimeSpan withinTimeRange, Func<Exception, Directive> decider)
    {
        ArgumentNullException.ThrowIfNull(decider);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxNrOfRetries, -1);
        MaxNumberOfRetries = maxNrOfRetries;
        WithinTimeRangeMilliseconds = withinTimeRange <= TimeSpan.Zero
            ? -1
            : (int)Math.Min(int.MaxValue, withinTimeRange.TotalMilliseconds);
        _decider = decider;
    }

    /// <summary>Creates the strategy with no retry limit.</summary>
    public OneForOneStrategy(Func<Exception, Directive> decider)
        : this(-1, Timeout.InfiniteTimeSpan, decider)
    {
    }

    /// <summary>Restarts allowed per child within the window; -1 means no limit.</summary>
    public int MaxNumberOfRetries { get; }

    /// <summary>The window in milliseconds; -1 means none.</summary>
    public int WithinTimeRangeMilliseconds { get; }

    /// <inheritdoc/>
    public override Directive Decide(Exception cause) => _decider(cause);

    internal override bool RequestRestartPermission(ChildRestartStats stats) =>
        stats.RequestRestartPermission(MaxNumberOfRetries, WithinTimeRangeMilliseconds);
}
