namespace Courier.Storage;

/// <summary>
/// When a FileStore fsyncs (nats-server's <c>sync_interval</c>). Courier's default is
/// <see cref="Always"/>: <see cref="IStreamStore.Flush"/> fsyncs before it returns, so a PubAck sent
/// after it survives power loss. With <see cref="Interval"/>, Flush only writes (a kill -9 loses
/// nothing, power loss may lose up to one period) and the owner calls <see cref="IStreamStore.Sync"/>
/// every <see cref="Period"/>.
/// </summary>
public readonly record struct SyncPolicy
{
    private SyncPolicy(TimeSpan period) => Period = period;

    /// <summary>Zero for <see cref="Always"/>; otherwise the longest time written data may stay unsynced.</summary>
    public TimeSpan Period { get; }

    /// <summary>True when every Flush fsyncs.</summary>
    public bool IsAlways => Period <= TimeSpan.Zero;

    /// <summary>fsync in every Flush (the default).</summary>
    public static SyncPolicy Always => default;

    /// <summary>fsync at most once per <paramref name="period"/>: by the owner's timer calling Sync, or by a Flush that finds the period elapsed.</summary>
    public static SyncPolicy Interval(TimeSpan period)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(period, TimeSpan.Zero);
        return new SyncPolicy(period);
    }

    /// <inheritdoc/>
    public override string ToString() =>
        IsAlways ? "always" : $"every {Period.TotalSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture)} s";
}
