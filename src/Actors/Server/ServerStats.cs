namespace Courier.Actors.Server;

/// <summary>
/// Node-wide counters that outlive connections (/varz). Live per-connection counters are summed
/// at read time; a closing connection adds its totals here.
/// </summary>
public sealed class ServerStats
{
    private long _inMsgs;
    private long _inBytes;
    private long _outMsgs;
    private long _outBytes;
    private long _slowConsumers;
    private long _totalConnections;

    public long InMsgs => Volatile.Read(ref _inMsgs);

    public long InBytes => Volatile.Read(ref _inBytes);

    public long OutMsgs => Volatile.Read(ref _outMsgs);

    public long OutBytes => Volatile.Read(ref _outBytes);

    public long SlowConsumers => Volatile.Read(ref _slowConsumers);

    public long TotalConnections => Volatile.Read(ref _totalConnections);

    internal void CountSlowConsumer() => Interlocked.Increment(ref _slowConsumers);

    internal void CountConnection() => Interlocked.Increment(ref _totalConnections);

    internal void AddClosed(long inMsgs, long inBytes, long outMsgs, long outBytes)
    {
        Interlocked.Add(ref _inMsgs, inMsgs);
        Interlocked.Add(ref _inBytes, inBytes);
        Interlocked.Add(ref _outMsgs, outMsgs);
        Interlocked.Add(ref _outBytes, outBytes);
    }
}
