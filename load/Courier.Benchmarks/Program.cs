using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Running;

namespace Courier.Benchmarks;

/// <summary>
/// <c>dotnet run -c Release --project load/Courier.Benchmarks -- --filter '*'</c> runs every
/// benchmark; add <c>--quick</c> for a short in-process smoke run. Other arguments are
/// BenchmarkDotNet's own (<c>--list flat</c>, <c>--job short</c>, <c>--join</c>, ...).
/// </summary>
internal static class Program
{
    private static void Main(string[] args)
    {
        var quick = args.Contains("--quick", StringComparer.Ordinal);
        IConfig config = quick ? new QuickConfig() : DefaultConfig.Instance;
        var rest = Array.FindAll(args, a => a != "--quick");
        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(rest, config);
    }
}
