using Courier.RaftEngines.Courier;
using Courier.RaftEngines.DotNext;

namespace Courier.RaftEngines;

/// <summary>
/// Raft engine measurements for the replicated-JetStream engine choice. Usage:
/// <c>dotnext [idle|append|fsync|all] [--groups N] [--idle-seconds S] [--run-seconds S] [--election LO-HI] [--log memory|wal] [--variant wal-disk|wal-tmpfs|memory] [--snapshot-every N]</c>.
/// </summary>
internal static class Program
{
    private static async Task<int> Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "courier")
        {
            var step = args.Length > 1 && !args[1].StartsWith("--", StringComparison.Ordinal) ? args[1] : "all";
            var opts = BenchOptions.Parse(args);
            Console.WriteLine($"machine: {Environment.ProcessorCount} logical CPUs, {Environment.OSVersion}, .NET {Environment.Version}, server GC: {System.Runtime.GCSettings.IsServerGC}");
            using var bound = new CancellationTokenSource(TimeSpan.FromMinutes(10));
            if (step is "idle" or "all")
            {
                CourierBench.Idle(opts, tickMs: 15, electionTicks: 10, heartbeatTicks: 5);   // as DotNext's defaults: election 150-300 ms, heartbeat 75 ms
                CourierBench.Idle(opts, tickMs: 100, electionTicks: 40, heartbeatTicks: 10); // NATS-like: election 4-8 s, heartbeat 1 s
            }

            if (step is "append" or "all")
            {
                await CourierBench.AppendAsync(opts, bound.Token);
            }

            return 0;
        }

        if (args.Length == 0 || args[0] != "dotnext")
        {
            Console.Error.WriteLine("usage: dotnext [idle|append|fsync|all] [--groups N] [--idle-seconds S] [--run-seconds S] [--election LO-HI] [--heartbeat-threshold X] [--log memory|wal] [--variant wal-disk|wal-tmpfs|memory] [--snapshot-every N]");
            return 2;
        }

        var what = args.Length > 1 && !args[1].StartsWith("--", StringComparison.Ordinal) ? args[1] : "all";
        var options = BenchOptions.Parse(args);
        Console.WriteLine($"machine: {Environment.ProcessorCount} logical CPUs, {Environment.OSVersion}, .NET {Environment.Version}, server GC: {System.Runtime.GCSettings.IsServerGC}");

        // Every measurement is bounded; this is the whole-run guard.
        using var guard = new CancellationTokenSource(TimeSpan.FromMinutes(10));
        if (what is "idle" or "all")
        {
            await DotNextBench.IdleAsync(options, guard.Token);
        }

        if (what is "fsync" or "all")
        {
            DotNextBench.RawFsync(options);
        }

        if (what is "append" or "all")
        {
            await DotNextBench.AppendAsync(options, guard.Token);
        }

        return 0;
    }
}

internal sealed record BenchOptions
{
    public int Groups { get; init; } = 1000;

    public int IdleSeconds { get; init; } = 10;

    public int RunSeconds { get; init; } = 10;

    public int ElectionLow { get; init; } = 150;

    public int ElectionHigh { get; init; } = 300;

    public double HeartbeatThreshold { get; init; } = 0.5;

    public string Log { get; init; } = "memory";

    public string? Variant { get; init; }

    /// <summary>
    /// The no-op state machine snapshots every N applied entries and the WAL then drops the log behind the
    /// snapshot; a follower that falls behind the snapshot is sent InstallSnapshot instead of entries.
    /// Without compaction the WAL keeps one open memory-mapped 4 KiB metadata file per 64 entries, and a
    /// 10 s append run on tmpfs (3 WALs, more than 500k entries each) ran out of file descriptors
    /// (ulimit -n 20000).
    /// </summary>
    public long SnapshotEvery { get; init; } = 100_000;

    public static BenchOptions Parse(string[] args)
    {
        var o = new BenchOptions();
        for (var i = 1; i < args.Length - 1; i++)
        {
            var v = args[i + 1];
            o = args[i] switch
            {
                "--groups" => o with { Groups = int.Parse(v, System.Globalization.CultureInfo.InvariantCulture) },
                "--idle-seconds" => o with { IdleSeconds = Math.Min(50, int.Parse(v, System.Globalization.CultureInfo.InvariantCulture)) },
                "--run-seconds" => o with { RunSeconds = Math.Min(25, int.Parse(v, System.Globalization.CultureInfo.InvariantCulture)) },
                "--election" => o with
                {
                    ElectionLow = int.Parse(v.Split('-')[0], System.Globalization.CultureInfo.InvariantCulture),
                    ElectionHigh = int.Parse(v.Split('-')[1], System.Globalization.CultureInfo.InvariantCulture),
                },
                "--heartbeat-threshold" => o with { HeartbeatThreshold = double.Parse(v, System.Globalization.CultureInfo.InvariantCulture) },
                "--log" => o with { Log = v },
                "--variant" => o with { Variant = v },
                "--snapshot-every" => o with { SnapshotEvery = long.Parse(v, System.Globalization.CultureInfo.InvariantCulture) },
                _ => o,
            };
        }

        return o;
    }
}
