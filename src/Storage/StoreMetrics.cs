using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace Courier.Storage;

/// <summary>
/// Courier's own storage figures as <see cref="System.Diagnostics.Metrics"/> instruments of the meter
/// <see cref="MeterName"/>: how long each fsync takes, and how many entries each group commit made durable
/// (<c>/metrics</c> exports them through prometheus-net's meter adapter as <c>courier_store_fsync_seconds</c>
/// and <c>courier_store_group_commit_entries</c>).
/// </summary>
/// <remarks>
/// The instruments are the process's, like the runtime's own figures: two servers in one process (tests)
/// share them. Recording costs nothing while nothing listens, and one histogram update per fsync or group
/// commit (never per message) when <c>/metrics</c> is on.
/// </remarks>
public static class StoreMetrics
{
    /// <summary>The meter's name; prometheus-net prefixes the instruments' names with it.</summary>
    public const string MeterName = "courier";

    /// <summary>The <c>log</c> tag of a stream's FileStore group commit.</summary>
    public const string StreamLog = "stream";

    /// <summary>The <c>log</c> tag of a Raft group's log write.</summary>
    public const string RaftLog = "raft";

    /// <summary>The <c>log</c> tag of the journal's (consumers, MQTT sessions) group commit.</summary>
    public const string JournalLog = "journal";

    private static readonly Meter Meter = new(MeterName);

    /// <summary>Seconds each file fsync took (every store: streams, Raft logs, the journal).</summary>
    public static readonly Histogram<double> FsyncSeconds =
        Meter.CreateHistogram<double>("store_fsync_seconds", "s", "Seconds each fsync of a store file took");

    /// <summary>Entries made durable by one write and fsync, by <c>log</c>.</summary>
    public static readonly Histogram<int> GroupCommitEntries =
        Meter.CreateHistogram<int>("store_group_commit_entries", "{entry}", "Entries made durable by one group commit (one write and fsync), by log");

    /// <summary>Records one group commit of <paramref name="entries"/> entries into <paramref name="log"/>.</summary>
    public static void GroupCommit(string log, int entries)
    {
        if (GroupCommitEntries.Enabled && entries > 0)
        {
            GroupCommitEntries.Record(entries, new KeyValuePair<string, object?>("log", log));
        }
    }

    /// <summary>Records an fsync that started at <paramref name="started"/> (a <see cref="Stopwatch.GetTimestamp"/>).</summary>
    internal static void Fsynced(long started)
    {
        if (FsyncSeconds.Enabled)
        {
            FsyncSeconds.Record(Stopwatch.GetElapsedTime(started).TotalSeconds);
        }
    }
}
