using System.Diagnostics;

namespace Courier.RaftEngines;

/// <summary>Small measurement helpers shared by the engine benchmarks.</summary>
internal static class Measure
{
    public static long HeapAfterFullGc()
    {
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        return GC.GetTotalMemory(forceFullCollection: true);
    }

    public static int OsThreads()
    {
        using var process = Process.GetCurrentProcess();
        return process.Threads.Count;
    }

    /// <summary>Process private bytes: managed heap plus native memory (WAL buffers, thread stacks).</summary>
    public static long PrivateBytes()
    {
        using var process = Process.GetCurrentProcess();
        return process.PrivateMemorySize64;
    }

    public static TimeSpan CpuTime()
    {
        using var process = Process.GetCurrentProcess();
        return process.TotalProcessorTime;
    }

    public static double Percentile(List<double> sorted, double p)
    {
        if (sorted.Count == 0)
        {
            return double.NaN;
        }

        var rank = (int)Math.Ceiling(p / 100.0 * sorted.Count) - 1;
        return sorted[Math.Clamp(rank, 0, sorted.Count - 1)];
    }

    public static string Bytes(double bytes) => bytes switch
    {
        >= 1 << 30 => $"{bytes / (1 << 30):F2} GiB",
        >= 1 << 20 => $"{bytes / (1 << 20):F2} MiB",
        >= 1 << 10 => $"{bytes / (1 << 10):F1} KiB",
        _ => $"{bytes:F0} B",
    };

    /// <summary>The machine is shared: each phase prints the 1/5/15-minute load average it started under.</summary>
    public static string LoadAverage()
    {
        try
        {
            return string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3));
        }
        catch (IOException)
        {
            return "n/a";
        }
    }

    public static void Row(string name, string value) => Console.WriteLine($"  {name,-58} {value}");
}
