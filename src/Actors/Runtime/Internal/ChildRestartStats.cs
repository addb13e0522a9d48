using System.Diagnostics;

namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// A child's restart record, kept by its parent and touched only on the parent's thread of processing.
/// The counting is Akka's <c>ChildRestartStats.RequestRestartPermission</c>.
/// </summary>
internal sealed class ChildRestartStats
{
    private int _maxNrOfRetriesCount;
    private long _restartTimeWindowStartTicks;

    public ChildRestartStats(LocalActorRef child) => Child = child;

    public LocalActorRef Child { get; }

    public bool RequestRestartPermission(int maxNrOfRetries, int withinTimeMilliseconds)
    {
        if (maxNrOfRetries == 0)
        {
            return false;
        }

        var retriesIsDefined = maxNrOfRetries > 0;
        var windowIsDefined = withinTimeMilliseconds > 0;
        if (retriesIsDefined && !windowIsDefined)
        {
            _maxNrOfRetriesCount++;
            return _maxNrOfRetriesCount <= maxNrOfRetries;
        }

        return !windowIsDefined || RetriesInWindowOkay(retriesIsDefined ? maxNrOfRetries : 1, withinTimeMilliseconds);
    }

    private bool RetriesInWindowOkay(int retries, int windowMilliseconds)
    {
        // A window starts at the first failure; a failure after the window has passed starts a new one.
        var retriesDone = _maxNrOfRetriesCount + 1;
        var now = Stopwatch.GetTimestamp();
        if (_restartTimeWindowStartTicks == 0)
        {
            _restartTimeWindowStartTicks = now;
        }

        var insideWindow = Stopwatch.GetElapsedTime(_restartTimeWindowStartTicks, now).TotalMilliseconds <= windowMilliseconds;
        if (insideWindow)
        {
            _maxNrOfRetriesCount = retriesDone;
            return retriesDone <= retries;
        }

        _maxNrOfRetriesCount = 1;
        _restartTimeWindowStartTicks = now;
        return true;
    }
}
