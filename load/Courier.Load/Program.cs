using System.Globalization;
using System.Text;
using Courier.Load;

// Side by side: every core scenario of ../shared/BENCHMARKS.md against Debian's nats-server and
// Courier (Release), alternating servers with a fresh process per round, medians per server and
// the median and spread of the per-round ratios.
// Usage: dotnet run -c Release --project load/Courier.Load -- [--rounds 3] [--scenarios pub16,ps16] [--out load/results]
//        ... -- --scenarios pub128 --attach 4222   (once, against a running server: for profiling)
//        ... -- --warm   (each row also measured a second time on the same server, reported as "(warm)")
//        ... -- soak --connections 10000 --minutes 10 --kill-every 3   (through load/soak.sh, which raises the fd limit)
//        ... -- powerloss --mount DIR ... / corruption ...   (through load/powerloss.sh and load/corruption.sh)
var root = AppContext.BaseDirectory;
while (!File.Exists(Path.Combine(root, "Courier.slnx")))
{
    root = Path.GetDirectoryName(root.TrimEnd('/')) ?? throw new InvalidOperationException("repository root not found");
}

// The soak (load/soak.sh): many connections, core and JetStream load, kill -9 and restart; see Soak/SoakRun.cs.
if (args.Length > 0 && args[0] == "soak")
{
    return await Courier.Load.Soak.SoakRun.MainAsync(args.AsMemory(1), root);
}

// Power loss and corruption side by side with nats-server (load/powerloss.sh, load/corruption.sh); see Faults/.
if (args.Length > 0 && args[0] == "powerloss")
{
    return await Courier.Load.Faults.PowerLossRun.MainAsync(args.AsMemory(1), root);
}

// The nemesis bench (load/nemesis.sh): replicated clusters in network namespaces under faults; see Nemesis/.
if (args.Length > 0 && args[0] == "nemesis")
{
    return await Courier.Load.Nemesis.NemesisRun.MainAsync(args.AsMemory(1), root);
}

if (args.Length > 0 && args[0] == "corruption")
{
    return await Courier.Load.Faults.CorruptionRun.MainAsync(args.AsMemory(1), root);
}

var rounds = 3;
string[]? only = null;
string? outDir = null;
int? attachPort = null;
var warm = false;
var warmPause = TimeSpan.FromSeconds(2); // under --warm: long enough for .NET's background tier-1 compiles of what the first run used
for (var i = 0; i < args.Length; i++)
{
    var value = i + 1 < args.Length ? args[i + 1] : "";
    switch (args[i])
    {
        case "--rounds":
            rounds = Math.Max(1, int.Parse(value, CultureInfo.InvariantCulture));
            i++;
            break;
        case "--scenarios":
            only = value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
            i++;
            break;
        case "--out":
            outDir = value;
            i++;
            break;
        case "--attach":
            // Profiling aid: run the chosen scenarios once against a server already listening on this port.
            attachPort = int.Parse(value, CultureInfo.InvariantCulture);
            i++;
            break;
        case "--scale":
            // The MQTT rows' message counts times this: --scale 0.001 checks that a row runs (its figures mean nothing).
            Scenarios.Scale = double.Parse(value, CultureInfo.InvariantCulture);
            i++;
            break;
        case "--warm":
            // Each row runs twice on its fresh server: the first run is the row as always (a server that has
            // just started, its code still being compiled to tier 1), the second, after a pause, the same
            // server once warm. Both are reported; the second under the metric's name with "(warm)".
            warm = true;
            break;
        case "--list":
            foreach (var s in Scenarios.All.Concat(ReplicatedScenarios.All))
            {
                Console.WriteLine($"{s.Id,-8} {s.Description}");
            }

            return 0;
        default:
            Console.Error.WriteLine($"unknown argument {args[i]}; use --rounds N, --scenarios a,b, --out DIR, --warm, --scale X, --list");
            return 2;
    }
}

if (attachPort is { } port)
{
    // After every argument is read, so --scenarios counts wherever it stands.
    foreach (var s in Scenarios.All.Where(s => (only is null || only.Contains(s.Id)) && s.Cold is null))
    {
        using var external = ServerProcess.External(port);
        var metrics = s.Run(external);
        Console.WriteLine($"{s.Id}: {string.Join(", ", metrics.Select(m => $"{Figure(m.Value)} {m.Name}"))}");
    }

    return 0;
}

outDir ??= Path.Combine(root, "load", "results");
// The replicated rows (three nodes per run) run when named: --scenarios r3sync,r3async,r3kv,r3failover,r3catchup.
var scenarios = Scenarios.All.Where(s => only is null || only.Contains(s.Id)).Concat(ReplicatedScenarios.All.Where(s => only is not null && only.Contains(s.Id))).ToList();
string[] allServers = scenarios.Any(s => s.Mosquitto) ? ["nats-server", "courier", "mosquitto"] : ["nats-server", "courier"];
var versions = allServers.ToDictionary(s => s, s => ServerProcess.Version(s, root));
var cpu = File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal))?.Split(':', 2)[1].Trim() ?? "unknown CPU";

var table = new StringBuilder();
table.AppendLine("| scenario | metric | nats-server median | courier median | ratio (median) | ratio min-max |");
table.AppendLine("|---|---|---|---|---|---|");
var perRound = new StringBuilder();
var mosquittoTable = new StringBuilder();
var courierOnlyTable = new StringBuilder();
foreach (var scenario in scenarios)
{
    // The pure MQTT rows run mosquitto as a third peer (A B C A B C ...); the MQTT 5.0 ones only Courier and mosquitto.
    string[] servers = [.. scenario.NatsServer ? ["nats-server"] : Array.Empty<string>(), "courier", .. scenario.Mosquitto ? ["mosquitto"] : Array.Empty<string>()];

    // results[server][round] = metrics
    var results = servers.ToDictionary(s => s, _ => new List<IReadOnlyList<Metric>>());
    for (var round = 0; round < rounds; round++)
    {
        foreach (var server in servers)
        {
            IReadOnlyList<Metric> metrics;
            if (scenario.Cold is { } cold)
            {
                metrics = cold(server, root);
            }
            else
            {
                using var process = ServerProcess.Start(server, root, scenario.ConfigText?.Invoke(), scenario.Mqtt);
                metrics = scenario.Run(process);
                if (warm && scenario.Repeatable)
                {
                    if (scenario.Stream)
                    {
                        Scenarios.Reset(process);
                    }

                    Thread.Sleep(warmPause);
                    metrics = [.. metrics, .. scenario.Run(process).Select(m => m with { Name = m.Name + " (warm)" })];
                }
            }

            results[server].Add(metrics);
            var line = $"{scenario.Id} round {round + 1}/{rounds} {server}: {string.Join(", ", metrics.Select(m => $"{Figure(m.Value)} {m.Name}"))}";
            Console.WriteLine(line);
            perRound.AppendLine(CultureInfo.InvariantCulture, $"- {line}");
        }
    }

    var names = results["courier"][0].Select(m => m.Name).ToList();
    foreach (var name in names)
    {
        var courier = results["courier"].Select(r => r.First(m => m.Name == name)).ToList();
        var higherIsBetter = courier[0].HigherIsBetter;
        if (scenario.NatsServer)
        {
            var nats = results["nats-server"].Select(r => r.First(m => m.Name == name)).ToList();
            var ratios = courier.Zip(nats, (c, n) => higherIsBetter ? c.Value / n.Value : n.Value / c.Value).ToList();
            table.AppendLine(CultureInfo.InvariantCulture,
                $"| {scenario.Id} | {name} | {Figure(Median(nats.Select(m => m.Value)))} | {Figure(Median(courier.Select(m => m.Value)))} | {Median(ratios):F2} | {ratios.Min():F2}-{ratios.Max():F2} |");
        }

        if (!scenario.NatsServer && !scenario.Mosquitto)
        {
            courierOnlyTable.AppendLine(CultureInfo.InvariantCulture,
                $"| {scenario.Id} | {name} | {Figure(Median(courier.Select(m => m.Value)))} | {Figure(courier.Min(m => m.Value))}-{Figure(courier.Max(m => m.Value))} |");
        }

        if (scenario.Mosquitto)
        {
            var mosquitto = results["mosquitto"].Select(r => r.First(m => m.Name == name)).ToList();
            var vsMosquitto = courier.Zip(mosquitto, (c, m) => higherIsBetter ? c.Value / m.Value : m.Value / c.Value).ToList();
            mosquittoTable.AppendLine(CultureInfo.InvariantCulture,
                $"| {scenario.Id} | {name} | {Figure(Median(mosquitto.Select(m => m.Value)))} | {Figure(Median(courier.Select(m => m.Value)))} | {Median(vsMosquitto):F2} | {vsMosquitto.Min():F2}-{vsMosquitto.Max():F2} |");
        }
    }
}

var header = new StringBuilder();
header.AppendLine(CultureInfo.InvariantCulture, $"# Courier vs nats-server, {DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC");
header.AppendLine();
header.AppendLine(CultureInfo.InvariantCulture, $"- machine: {Environment.ProcessorCount} cores, {cpu}");
header.AppendLine(CultureInfo.InvariantCulture, $"- nats-server: `{versions["nats-server"]}`; courier: `{versions["courier"]}`{(versions.TryGetValue("mosquitto", out var mv) ? $"; mosquitto: `{mv}`" : "")}");
header.AppendLine(CultureInfo.InvariantCulture, $"- {rounds} rounds, servers alternating, a fresh server per round; ratio = courier/nats-server per round (inverted for latency and memory, so above 1.0 means Courier is better)");
if (warm)
{
    header.AppendLine(CultureInfo.InvariantCulture, $"- --warm: each row ran twice on its fresh server; the \"(warm)\" rows are the second run, {warmPause.TotalSeconds:F0} s after the first (the JetStream rows' stream deleted in between; not the conn row), when .NET has finished compiling the server's hot code to tier 1");
}

header.AppendLine("- client: the same raw-socket client for both servers (load/Courier.Load/BenchClient.cs)");
header.AppendLine();
var vsMosquittoSection = mosquittoTable.Length == 0
    ? ""
    : $"\n## Courier vs mosquitto (pure MQTT rows)\n\n| scenario | metric | mosquitto median | courier median | ratio (median) | ratio min-max |\n|---|---|---|---|---|---|\n{mosquittoTable}";
var courierOnlySection = courierOnlyTable.Length == 0
    ? ""
    : $"\n## Courier only (features nats-server 2.9.10 lacks: absolute figures, beside the plain rows of the same run)\n\n| scenario | metric | courier median | min-max |\n|---|---|---|---|\n{courierOnlyTable}";
var report = $"{header}{table}{vsMosquittoSection}{courierOnlySection}\n## Rounds\n\n{perRound}";
Console.WriteLine();
Console.WriteLine(report);
Directory.CreateDirectory(outDir);
var file = Path.Combine(outDir, $"{DateTime.UtcNow:yyyy-MM-dd-HHmm}.md");
File.WriteAllText(file, report);
Console.WriteLine($"written to {file}");
return 0;

static double Median(IEnumerable<double> values)
{
    var sorted = values.Order().ToList();
    return sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[(sorted.Count / 2) - 1] + sorted[sorted.Count / 2]) / 2;
}

// Small figures (CPU microseconds per message) keep two decimals; the rest are whole numbers.
static string Figure(double value) => value.ToString(Math.Abs(value) < 100 ? "N2" : "N0", CultureInfo.InvariantCulture);
