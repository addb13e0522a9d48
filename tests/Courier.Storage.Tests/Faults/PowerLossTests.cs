using Xunit;
using Xunit.Abstractions;

namespace Courier.Storage.Tests.Faults;

/// <summary>
/// Power loss (issue 14): the FileStore, the journal and the snapshot store on <see cref="PowerLossFileSystem"/>,
/// the power cut at random points, new stores recovered on the surviving bytes. The default run is short; the
/// long run is <c>COURIER_POWERLOSS_CYCLES=2000 dotnet test tests/Courier.Storage.Tests -c Release --filter PowerLoss</c>
/// (see the README's reliability section).
/// </summary>
public sealed class PowerLossTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(60); // per seed: bounded even on a loaded machine

    private static int Cycles(int normal) =>
        int.TryParse(Environment.GetEnvironmentVariable("COURIER_POWERLOSS_CYCLES"), out var n) && n > 0 ? n : normal;

    [Theory]
    [InlineData(1, false)]
    [InlineData(2, true)]
    public void Sync_always_loses_no_acknowledged_message_or_ack_floor_across_power_cuts(int seed, bool directoryEntriesNeedFsync)
    {
        var metadata = directoryEntriesNeedFsync ? MetadataDurability.OnDirectorySync : MetadataDurability.Immediate;
        var workload = new PowerLossWorkload(seed, SyncPolicy.Always, metadata);
        var cycles = Cycles(100);
        var report = workload.Run(cycles, Deadline * Math.Max(1, cycles / 100));
        output.WriteLine(report.ToString());
        output.WriteLine(workload.FileSystem.Stats.ToString());

        Assert.True(report.Cycles >= Math.Min(cycles, 100), $"only {report.Cycles} cycles ran before the deadline");
        Assert.Equal(0, report.MessagesLost);
        Assert.Equal(0, report.ConsumerAcksLost);
        Assert.True(report.MessagesAcked > 0 && report.ConsumerAcks > 0);
        var stats = workload.FileSystem.Stats;
        Assert.True(stats.FilesDropped > 0 && stats.FilesTorn > 0 && stats.FilesReordered > 0 && stats.FilesKept > 0, stats.ToString());
    }

    [Fact]
    public void Sync_interval_loses_only_what_was_acknowledged_since_the_last_sync()
    {
        var workload = new PowerLossWorkload(seed: 3, SyncPolicy.Interval(TimeSpan.FromHours(1)), MetadataDurability.Immediate);
        var cycles = Cycles(100);
        var report = workload.Run(cycles, Deadline * Math.Max(1, cycles / 100));
        output.WriteLine(report.ToString());
        output.WriteLine(workload.FileSystem.Stats.ToString());

        // The workload throws if a message acknowledged before the last completed Sync is missing; what
        // is lost is at most what one sync interval acknowledged, and with lazy writes some of it is.
        Assert.True(report.Cycles >= Math.Min(cycles, 100), $"only {report.Cycles} cycles ran before the deadline");
        Assert.True(report.MessagesLost > 0, "an interval policy that never loses anything was not exercised");
    }
}
