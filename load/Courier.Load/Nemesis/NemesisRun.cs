using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace Courier.Load.Nemesis;

/// <summary>
/// The nemesis bench (issue 35, load/nemesis.sh): per server kind, fault and seed, a fresh cluster of
/// 3 (or 5) nodes in network namespaces of their own, the workload for a bounded time while the nemesis
/// injects that fault, then everything healed, the consumer drained, each replica read and the history
/// checked. A markdown table per run, the history as CSV and a PNG timeline per run.
/// </summary>
internal static class NemesisRun
{
    private static readonly TimeSpan ConvergeLimit = TimeSpan.FromSeconds(90);  // after healing, for leaders and replicas

    public static async Task<int> MainAsync(ReadOnlyMemory<string> argv, string root)
    {
        var args = argv.ToArray();
        var servers = new[] { "courier", "nats-server" };
        var faults = NemesisFaults.Kinds.Where(k => k != "member").ToArray(); // member needs five nodes: asked for by name
        var seeds = 3;
        var firstSeed = 1;
        var seconds = 30;
        var nodes = 3;
        var publishers = 4;
        var kv = 3;
        var hold = 3;
        string? outDir = null;
        for (var i = 0; i < args.Length; i++)
        {
            var value = i + 1 < args.Length ? args[i + 1] : "";
            switch (args[i])
            {
                case "--servers": servers = value.Split(',', StringSplitOptions.RemoveEmptyEntries); break;
                case "--faults": faults = value.Split(',', StringSplitOptions.RemoveEmptyEntries); break;
                case "--seeds": seeds = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--first-seed": firstSeed = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--seconds": seconds = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--nodes": nodes = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--publishers": publishers = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--kv": kv = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--out": outDir = value; break;
                case "--hold": hold = int.Parse(value, CultureInfo.InvariantCulture); break;
                case "--net-id": NemesisNet.UseId(int.Parse(value, CultureInfo.InvariantCulture)); break;
                default:
                    Console.Error.WriteLine($"unknown argument {args[i]}; use --servers courier,nats-server --faults {string.Join(',', NemesisFaults.Kinds)} --seeds N --first-seed N --seconds S --nodes 3|5 --publishers N --kv N --out DIR --net-id N --hold S");
                    return 2;
            }

            i++;
        }

        if (nodes is not (3 or 5) || seconds is < 5 or > 3600 || seeds is < 1 or > 100 || hold is < 1 or > 120)
        {
            Console.Error.WriteLine("--nodes is 3 or 5, --seconds 5..3600, --seeds 1..100, --hold 1..120");
            return 2;
        }

        foreach (var fault in faults)
        {
            if (!NemesisFaults.Kinds.Contains(fault))
            {
                Console.Error.WriteLine($"unknown fault {fault}; one of {string.Join(", ", NemesisFaults.Kinds)}");
                return 2;
            }
        }

        if (faults.Contains("member") && nodes < 5)
        {
            Console.Error.WriteLine("the member fault needs --nodes 5 (a removed replica needs a server to move to)");
            return 2;
        }

        if (faults.Any(NemesisFaults.NeedsLazyfs))
        {
            NemesisNet.Run("make", $"-s -C {Path.Combine(root, "tools/lazyfs")}");
        }

        outDir ??= Path.Combine(root, "load/results", "nemesis-" + DateTime.UtcNow.ToString("yyyy-MM-dd-HHmm", CultureInfo.InvariantCulture));
        Directory.CreateDirectory(outDir);
        var versions = servers.ToDictionary(s => s, s => ServerProcess.Version(s, root));
        var rows = new List<(string Server, string Fault, int Seed, NemesisVerdict Verdict)>();
        foreach (var fault in faults)
        {
            for (var seed = firstSeed; seed < firstSeed + seeds; seed++)
            {
                foreach (var server in servers)
                {
                    var name = string.Create(CultureInfo.InvariantCulture, $"{server}-{fault}-{seed}");
                    Console.WriteLine($"== {name}: {nodes} nodes, {seconds} s");
                    NemesisVerdict verdict;
                    try
                    {
                        verdict = await OneAsync(server, fault, seed, root, outDir, name, nodes, seconds, publishers, kv, hold).ConfigureAwait(false);
                    }
                    catch (Exception e) when (e is not OutOfMemoryException)
                    {
                        // The run could not be set up or read back: no verdict on its data (and not safe: nothing was shown).
                        verdict = NemesisVerdict.Failed($"run failed: {e.GetType().Name}: {e.Message}");
                    }

                    rows.Add((server, fault, seed, verdict));
                    Console.WriteLine(Row(server, fault, seed, verdict));
                    foreach (var problem in verdict.Problems.Take(10))
                    {
                        Console.WriteLine($"   {problem}");
                    }
                }
            }
        }

        var report = Report(rows, versions, nodes, seconds);
        var reportPath = Path.Combine(outDir, "README.md");
        File.WriteAllText(reportPath, report);
        Console.WriteLine(report);
        Console.WriteLine($"written to {reportPath}");
        // Safety decides (an unread replica is availability: see the README); a run with no replica read cannot be safe.
        var courierSafe = rows.Where(r => r.Server == "courier").All(r => r.Verdict.Safe && r.Verdict.Drained);
        Console.WriteLine($"nemesis: courier {(courierSafe ? "safe" : "UNSAFE")} in {rows.Count(r => r.Server == "courier")} runs");
        return courierSafe ? 0 : 1;
    }

    private static async Task<NemesisVerdict> OneAsync(string server, string fault, int seed, string root, string outDir, string name, int nodeCount, int seconds, int publishers, int kvProcesses, int hold)
    {
        var work = Directory.CreateTempSubdirectory("nemesis-").FullName;
        using var net = NemesisNet.Create(nodeCount);
        var nodes = Enumerable.Range(0, nodeCount).Select(i => new NemesisNode(server, root, work, i, nodeCount, NemesisFaults.NeedsLazyfs(fault))).ToArray();
        try
        {
            foreach (var node in nodes)
            {
                node.Start();
            }

            foreach (var node in nodes)
            {
                if (!node.AwaitListening(TimeSpan.FromSeconds(60)))
                {
                    throw new InvalidOperationException($"{name}: {node.Name} did not start; see {node.LogFile}");
                }
            }

            var history = new NemesisHistory();
            var workload = new NemesisWorkload(history, nodes, publishers, kvProcesses);
            await workload.SetUpAsync().ConfigureAwait(false);
            foreach (var node in nodes)
            {
                node.SyncDisk(); // the set-up is durable: power cuts test what the workload writes
            }

            await using var control = NemesisWorkload.Connect(nodes, 0, "nemesis-control");
            await control.ConnectAsync().ConfigureAwait(false);
            using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(seconds));
            var nemesis = new NemesisFaults(fault, seed, net, nodes, history, control, hold);
            var faultsTask = Task.Run(() => nemesis.RunAsync(stop.Token));
            await workload.RunAsync(stop.Token).ConfigureAwait(false);
            await faultsTask.ConfigureAwait(false); // healed on return

            foreach (var node in nodes)
            {
                if (!node.AwaitListening(TimeSpan.FromSeconds(60)))
                {
                    Console.WriteLine($"   {node.Name} is not listening after healing; see {node.LogFile}");
                }
            }

            using var drainLimit = new CancellationTokenSource(ConvergeLimit);
            var drained = await workload.ConsumeAsync(300, drainLimit.Token, drain: true).ConfigureAwait(false);
            var streamReads = new List<IReadOnlyList<StoredMessage>?>();
            var bucketReads = new List<IReadOnlyList<StoredMessage>?>();
            for (var i = 0; i < nodes.Length; i++)
            {
                streamReads.Add(await NemesisReader.ReadAtAsync(control, NemesisWorkload.Stream, i, TimeSpan.FromSeconds(30)).ConfigureAwait(false));
                bucketReads.Add(await NemesisReader.ReadAtAsync(control, "KV_" + NemesisWorkload.Bucket, i, TimeSpan.FromSeconds(30)).ConfigureAwait(false));
            }

            var verdict = NemesisCheck.Check(history.Ops, streamReads, bucketReads, drained);
            var csv = Path.Combine(outDir, name + ".csv");
            var faultsCsv = Path.Combine(outDir, name + ".faults.csv");
            history.Write(csv, faultsCsv);
            Plot(history, Path.Combine(outDir, name + ".png"), name);
            return verdict;
        }
        finally
        {
            foreach (var node in nodes)
            {
                node.Dispose();
            }

            // The stores are kept when something was found (the logs name them); removed otherwise by the caller's rerun.
            KeepLogs(work, outDir, name);
        }
    }

    private static void KeepLogs(string work, string outDir, string name)
    {
        foreach (var log in Directory.EnumerateFiles(work, "server.log", SearchOption.AllDirectories))
        {
            var node = Path.GetFileName(Path.GetDirectoryName(log)!);
            File.Copy(log, Path.Combine(outDir, $"{name}.{node}.log"), overwrite: true);
        }

        try
        {
            Directory.Delete(work, recursive: true);
        }
        catch (IOException)
        {
            // A mount still busy: left for the next run's temp cleanup.
        }
    }

    private static string Row(string server, string fault, int seed, NemesisVerdict v) => string.Create(CultureInfo.InvariantCulture,
        $"| {server} | {fault} | {seed} | {v.Ops} | {v.Acked} | {v.Unknown} | {v.Lost} | {v.Duplicated} | {v.Misplaced} | {v.Divergent} | {v.Unverified} | {v.KvAcked} | {v.KvLost} | {v.KvLostUpdates} | {v.KvStaleReads} | {v.ConsumerSkipped} | {(v.Drained ? "yes" : "no")} | {(v.Error ? "**error**" : v.Safe ? "safe" : "**UNSAFE**")} |");

    private const string Header = """
        | server | fault | seed | ops | acked | unknown | lost | dup | moved | divergent | unread | kv acked | kv lost | kv lost upd | kv stale | skipped | drained | verdict |
        |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
        """;

    private static string Report(List<(string Server, string Fault, int Seed, NemesisVerdict Verdict)> rows, Dictionary<string, string> versions, int nodes, int seconds)
    {
        var text = new StringBuilder();
        text.AppendLine(CultureInfo.InvariantCulture, $"# Nemesis {DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC");
        text.AppendLine();
        foreach (var (server, version) in versions)
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"- {server}: {version}");
        }

        text.AppendLine(CultureInfo.InvariantCulture, $"- {nodes} nodes in network namespaces, {seconds} s of workload per run; R3 file stream, R3 bucket, one durable consumer.");
        text.AppendLine("- acked: publishes with a PubAck; unknown: timeouts; lost: acked, not in the stream; dup: ids stored twice; moved: stored at another sequence than acked;");
        text.AppendLine("  divergent: replicas (each read while it leads) that differ; unread: replicas that never led after healing; kv lost upd / stale: CAS or register-order violations; skipped: acked messages the consumer never got.");
        text.AppendLine();
        text.AppendLine(Header);
        foreach (var (server, fault, seed, verdict) in rows)
        {
            text.AppendLine(Row(server, fault, seed, verdict));
        }

        text.AppendLine();
        text.AppendLine("What each run found (at most 5 lines a run; the full history is in its CSV):");
        text.AppendLine();
        foreach (var (server, fault, seed, verdict) in rows.Where(r => r.Verdict.Problems.Count > 0))
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"- {server} {fault} seed {seed}:");
            foreach (var problem in verdict.Problems.Take(5))
            {
                text.AppendLine(CultureInfo.InvariantCulture, $"  - {problem}");
            }
        }

        return text.ToString();
    }

    /// <summary>Jepsen's timeline: each operation's latency over time by outcome, faults shaded. Needs gnuplot; skipped without it.</summary>
    private static void Plot(NemesisHistory history, string pngPath, string title)
    {
        var data = Path.ChangeExtension(pngPath, ".plot.tsv");
        var text = new StringBuilder();
        foreach (var op in history.Ops.Where(o => o.Kind is "pub" or "cas" or "read"))
        {
            var column = op.Outcome switch { Outcome.Ok => 0, Outcome.Fail => 1, _ => 2 };
            text.Append(CultureInfo.InvariantCulture, $"{op.Start / 1e6:F3}\t{Math.Max(op.End - op.Start, 1) / 1e3:F3}\t{column}\t{(op.Kind == "pub" ? 0 : 1)}\n");
        }

        File.WriteAllText(data, text.ToString());
        var script = new StringBuilder();
        script.AppendLine("set terminal png size 1400,600");
        script.AppendLine(CultureInfo.InvariantCulture, $"set output '{pngPath}'");
        script.AppendLine(CultureInfo.InvariantCulture, $"set title '{title}: operation latency (ms, log) over time (s); shaded: faults'");
        script.AppendLine("set logscale y; set xlabel 's'; set ylabel 'ms'; set key outside right");
        var n = 1;
        foreach (var f in history.Faults)
        {
            script.AppendLine(CultureInfo.InvariantCulture, $"set object {n++} rect from {f.Start / 1e6:F3},graph 0 to {f.End / 1e6:F3},graph 1 behind fc rgb '#ffdddd' fs solid 0.5 noborder");
        }

        script.AppendLine(CultureInfo.InvariantCulture,
            $"plot '{data}' using 1:($3==0 && $4==0 ? $2 : 1/0) with points pt 7 ps 0.3 lc rgb '#2a9d3a' title 'pub ok', " +
            $"'' using 1:($3==0 && $4==1 ? $2 : 1/0) with points pt 7 ps 0.3 lc rgb '#1f5fbf' title 'kv ok', " +
            $"'' using 1:($3==1 ? $2 : 1/0) with points pt 7 ps 0.4 lc rgb '#d62728' title 'fail', " +
            $"'' using 1:($3==2 ? $2 : 1/0) with points pt 7 ps 0.4 lc rgb '#e6a100' title 'unknown'");
        var scriptPath = Path.ChangeExtension(pngPath, ".gnuplot");
        File.WriteAllText(scriptPath, script.ToString());
        try
        {
            using var gnuplot = Process.Start(new ProcessStartInfo("gnuplot", scriptPath) { RedirectStandardError = true });
            gnuplot?.WaitForExit(60_000);
        }
        catch (System.ComponentModel.Win32Exception)
        {
            Console.WriteLine("   gnuplot not installed: no PNG (apt-get install gnuplot-nox)");
        }
        finally
        {
            File.Delete(scriptPath);
            File.Delete(data);
        }
    }
}
