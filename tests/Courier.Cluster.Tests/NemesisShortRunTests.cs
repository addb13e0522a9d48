using System.Diagnostics;

namespace Courier.Cluster.Tests;

/// <summary>
/// The nemesis bench's short run (issue 35; the long runs are <c>load/nemesis.sh</c>): three Courier nodes in
/// network namespaces of their own, the workload (acknowledged publishes, compare-and-set increments, an acking
/// consumer) under one seed of several faults, and the checker: nothing acknowledged lost, doubled or moved, no
/// replica different from another, the bucket linearizable, no message skipped by the consumer. Needs root
/// (network namespaces, FUSE for the power cut), as the README test command has.
/// </summary>
public sealed class NemesisShortRunTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromMinutes(10); // four runs of 15 s, each with start, healing and reading

    [Fact]
    public async Task Courier_loses_and_diverges_nothing_under_partitions_kills_power_cuts_and_bit_flips()
    {
        var root = AppContext.BaseDirectory;
        while (!File.Exists(Path.Combine(root, "Courier.slnx")))
        {
            root = Path.GetDirectoryName(root.TrimEnd('/')) ?? throw new InvalidOperationException("repository root not found");
        }

        var output = Directory.CreateTempSubdirectory("courier-nemesis-").FullName;
        var psi = new ProcessStartInfo(Path.Combine(root, "load/nemesis.sh"),
            $"--servers courier --faults partition-half,kill-leader,power-all,corrupt-bit --seeds 1 --seconds 15 --net-id 9 --out {output}")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var limit = new CancellationTokenSource(Limit);
        try
        {
            await process.WaitForExitAsync(limit.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw;
        }

        var report = File.Exists(Path.Combine(output, "README.md")) ? await File.ReadAllTextAsync(Path.Combine(output, "README.md")) : "(no report)";
        var text = $"{await stdout}\n{await stderr}\n{report}";
        Assert.True(process.ExitCode == 0, text);
        var rows = report.Split('\n').Where(l => l.StartsWith("| courier |", StringComparison.Ordinal)).ToList();
        Assert.Equal(4, rows.Count);
        Assert.All(rows, row => Assert.EndsWith("| yes | safe |", row.TrimEnd()));
        Directory.Delete(output, recursive: true);
    }
}
