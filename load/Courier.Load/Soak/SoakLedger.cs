namespace Courier.Load.Soak;

/// <summary>
/// What the soak's clients saw: connections held, core messages sent and received, and every
/// connection loss with the time it happened, judged against the kill windows the soak made.
/// </summary>
internal sealed class SoakLedger
{
    private const int MaxListedLosses = 200; // losses listed one by one in the summary; the rest only counted

    private readonly Lock _gate = new();
    private readonly List<(DateTime From, DateTime? To)> _killWindows = [];
    private readonly List<string> _unexpected = [];
    private long _held;
    private long _published;
    private long _delivered;
    private long _lossesInKillWindows;
    private long _unexpectedCount;
    private long _reconnects;

    /// <summary>How long after a restarted server is ready a loss or reconnect still counts as the kill's.</summary>
    public static readonly TimeSpan KillGrace = TimeSpan.FromSeconds(30);

    public long Held => Interlocked.Read(ref _held);

    public long Published => Interlocked.Read(ref _published);

    public long Delivered => Interlocked.Read(ref _delivered);

    public long Reconnects => Interlocked.Read(ref _reconnects);

    public long LossesInKillWindows => Interlocked.Read(ref _lossesInKillWindows);

    public long UnexpectedLosses => Interlocked.Read(ref _unexpectedCount);

    /// <summary>True while shutting down: losses are the soak's own.</summary>
    public bool Stopping { get; set; }

    public void Connected(bool again, bool counted)
    {
        if (counted)
        {
            Interlocked.Increment(ref _held);
        }

        if (again)
        {
            Interlocked.Increment(ref _reconnects);
        }
    }

    public void AddPublished(long n) => Interlocked.Add(ref _published, n);

    public void AddDelivered(long n) => Interlocked.Add(ref _delivered, n);

    /// <summary>A held connection ended (EOF, reset, error line); counted against the kill windows.</summary>
    /// <param name="connection">The subscriber's number, -1 for the publisher.</param>
    /// <param name="reason">What ended it.</param>
    /// <param name="counted">A subscriber (counted in <see cref="Held"/>), not the core publisher.</param>
    public void Lost(int connection, string reason, bool counted)
    {
        if (counted)
        {
            Interlocked.Decrement(ref _held);
        }

        var now = DateTime.UtcNow;
        if (Stopping || InKillWindow(now))
        {
            Interlocked.Increment(ref _lossesInKillWindows);
            return;
        }

        Interlocked.Increment(ref _unexpectedCount);
        lock (_gate)
        {
            if (_unexpected.Count < MaxListedLosses)
            {
                _unexpected.Add($"{now:HH:mm:ss.fff} {(counted ? $"subscriber {connection}" : "core publisher")}: {reason}");
            }
        }
    }

    /// <summary>Opens a kill window just before the kill -9.</summary>
    public void KillStarting()
    {
        lock (_gate)
        {
            _killWindows.Add((DateTime.UtcNow.AddSeconds(-1), null));
        }
    }

    /// <summary>Closes the open kill window <see cref="KillGrace"/> after the restarted server is ready.</summary>
    public void KillEnded()
    {
        lock (_gate)
        {
            var last = _killWindows[^1];
            _killWindows[^1] = (last.From, DateTime.UtcNow + KillGrace);
        }
    }

    public bool InKillWindow(DateTime t)
    {
        lock (_gate)
        {
            foreach (var (from, to) in _killWindows)
            {
                if (t >= from && (to is null || t <= to))
                {
                    return true;
                }
            }

            return false;
        }
    }

    public IReadOnlyList<string> UnexpectedList()
    {
        lock (_gate)
        {
            return [.. _unexpected];
        }
    }
}
