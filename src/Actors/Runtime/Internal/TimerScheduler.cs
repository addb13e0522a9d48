namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// One actor instance's timers (Akka's <c>TimerScheduler</c>). Used only on the actor's turn; each timer is
/// a <see cref="Timer"/> whose callback tells a <see cref="TimerMsg"/> to the actor. A new instance (restart)
/// gets a new scheduler, so ticks of the old one are dropped too.
/// </summary>
internal sealed class TimerScheduler : ITimerScheduler
{
    private readonly Dictionary<object, TimerEntry> _timers = [];
    private readonly ActorCell _cell;
    private int _generation;

    public TimerScheduler(ActorCell cell) => _cell = cell;

    public void StartSingleTimer(object key, object msg, TimeSpan timeout) =>
        Start(key, msg, timeout, Timeout.InfiniteTimeSpan, repeat: false);

    public void StartPeriodicTimer(object key, object msg, TimeSpan interval) =>
        StartPeriodicTimer(key, msg, interval, interval);

    public void StartPeriodicTimer(object key, object msg, TimeSpan initialDelay, TimeSpan interval)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(interval, TimeSpan.Zero);
        Start(key, msg, initialDelay, interval, repeat: true);
    }

    public bool IsTimerActive(object key)
    {
        ArgumentNullException.ThrowIfNull(key);
        return _timers.ContainsKey(key);
    }

    public void Cancel(object key)
    {
        ArgumentNullException.ThrowIfNull(key);
        if (_timers.Remove(key, out var entry))
        {
            entry.Timer.Dispose();
        }
    }

    public void CancelAll()
    {
        foreach (var entry in _timers.Values)
        {
            entry.Timer.Dispose();
        }

        _timers.Clear();
    }

    /// <summary>The message to deliver for <paramref name="tick"/>, or false if its timer was cancelled or replaced.</summary>
    public bool TryIntercept(TimerMsg tick, out object message)
    {
        message = tick.Message;
        if (!ReferenceEquals(tick.Owner, this)
            || !_timers.TryGetValue(tick.Key, out var entry)
            || entry.Tick.Generation != tick.Generation)
        {
            return false;
        }

        if (!entry.Repeat)
        {
            _timers.Remove(tick.Key);
            entry.Timer.Dispose();
        }

        return true;
    }

    private void Start(object key, object msg, TimeSpan delay, TimeSpan period, bool repeat)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(msg);
        ArgumentOutOfRangeException.ThrowIfLessThan(delay, TimeSpan.Zero);
        Cancel(key);
        var tick = new TimerMsg(key, ++_generation, this, msg);
        var timer = new Timer(static state => Fire((TimerMsg)state!), tick, delay, period);
        _timers[key] = new TimerEntry(tick, timer, repeat);
    }

    private static void Fire(TimerMsg tick) => tick.Owner._cell.Self.Tell(tick, null);

    private sealed record TimerEntry(TimerMsg Tick, Timer Timer, bool Repeat);
}
