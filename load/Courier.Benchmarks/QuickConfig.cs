using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using Perfolizer.Horology;

namespace Courier.Benchmarks;

/// <summary>
/// <c>--quick</c>: a smoke run sized for a 2-core machine. In process (no generated project to build),
/// one launch, 2 warm-up and 5 measured iterations of about 150 ms each. Good enough to see 0 B/op and
/// the order of magnitude; use the default config for numbers to compare.
/// </summary>
internal sealed class QuickConfig : ManualConfig
{
    public QuickConfig()
    {
        Add(DefaultConfig.Instance);
        AddJob(Job.Default
            .WithId("Quick")
            .WithToolchain(InProcessEmitToolchain.Instance)
            .WithLaunchCount(1)
            .WithWarmupCount(2)
            .WithIterationCount(5)
            .WithIterationTime(TimeInterval.FromMilliseconds(150)));
    }
}
