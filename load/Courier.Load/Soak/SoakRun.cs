using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Text;

namespace Courier.Load.Soak;

/// <summary>
/// The soak: holds many subscriber connections against one courier process under steady core and
/// JetStream load, kills the server with kill -9 every few minutes and restarts it on the same
/// store, samples the process, and writes a CSV, a PNG (gnuplot) and a summary.
/// </summary>
/// <remarks>Bounded: the run ends at its time limit; each restart, reconnect and check has its own bound.</remarks>
internal sealed class SoakRun
{
    private static readonly TimeSpan ReconnectBound = TimeSpan.FromMinutes(2); // all subscribers back after a restart
    private static readonly TimeSpan StopBound = TimeSpan.FromSeconds(30); // clients winding down at the end
    private static readonly TimeSpan LastKillMargin = TimeSpan.FromSeconds(60); // no kill this close to the end

    private readonly SoakOptions _o;
    private readonly string _root;
    private readonly SoakLedger _ledger = new();
    private readonly List<Sample> _samples = [];
    private readonly List<KillRecord> _kills = [];

    public SoakRun(SoakOptions options, string root)
    {
        _o = options;
        _root = root;
    }

    public static async Task<int> MainAsync(ReadOnlyMemory<string> args, string root)
    {
        var options = SoakOptions.Parse(args.Span, out var error);
        if (options is null)
        {
            Console.Error.WriteLine(error);
            return 2;
        }

        return await new SoakRun(options, root).RunAsync().ConfigureAwait(false);
    }

    private async Task<int> RunAsync()
    {
        var outDir = _o.OutDir ?? Path.Combine(_root, "load", "results");
        Directory.CreateDirectory(outDir);
        var name = $"soak-{DateTime.UtcNow:yyyy-MM-dd-HHmm}";
        var csvPath = Path.Combine(outDir, name + ".csv");
        var pngPath = Path.Combine(outDir, name + ".png");
        var mdPath = Path.Combine(outDir, name + ".md");
        var version = ServerProcess.Version("courier", _root);

        using var server = new SoakServer(_root);
        var firstStart = server.Start();
        Console.WriteLine($"courier pid {server.Pid} on 127.0.0.1:{server.Port} (monitor {server.MonitorPort}), store {server.StoreDir}, up in {firstStart.TotalMilliseconds:N0} ms");

        using var stop = new CancellationTokenSource();
        var endpoint = new IPEndPoint(IPAddress.Loopback, server.Port);
        using var connectGate = new SemaphoreSlim(128); // handshakes in flight at once
        var clients = new List<Task>(_o.Connections + 1);
        var started = Stopwatch.StartNew();
        for (var i = 0; i < _o.Connections; i++)
        {
            var source = new IPAddress(new byte[] { 127, 0, 0, (byte)(1 + (i % _o.SourceAddresses)) });
            clients.Add(new SoakConnection(i, endpoint, source, _ledger, connectGate).RunAsync(stop.Token));
        }

        var fullAt = await WaitHeldAsync(_o.Connections, ReconnectBound).ConfigureAwait(false);
        Console.WriteLine(fullAt is { } t
            ? $"{_o.Connections:N0} connections held after {t.TotalSeconds:N1} s"
            : $"only {_ledger.Held:N0} of {_o.Connections:N0} connections after {ReconnectBound.TotalSeconds:N0} s; going on with what the machine took");
        var maxHeld = _ledger.Held;

        clients.Add(new SoakConnection(-1, endpoint, IPAddress.Loopback, _ledger, connectGate, _o.CoreRate, _o.Connections).RunAsync(stop.Token));
        await using var js = new SoakJetStream(server.Port, _o.Streams, _o.JetStreamRate);
        await js.SetupAsync(stop.Token).ConfigureAwait(false);
        var jsTask = js.RunAsync(stop.Token);

        var loadStart = DateTime.UtcNow;
        var end = loadStart.AddMinutes(_o.Minutes);
        var nextKill = _o.KillEvery > 0 ? loadStart.AddMinutes(_o.KillEvery) : DateTime.MaxValue;
        Task? killing = null;
        await using (var csv = new StreamWriter(csvPath))
        {
            await csv.WriteLineAsync("utc,elapsed_s,incarnation,server_pid,rss_mb,fds,threads,server_connections,client_held,core_published,core_delivered,js_acked,js_consumed,in_kill_window").ConfigureAwait(false);
            using var timer = new PeriodicTimer(TimeSpan.FromSeconds(_o.SampleSeconds));
            while (DateTime.UtcNow < end)
            {
                var now = DateTime.UtcNow;
                if (killing is null && now >= nextKill && end - now > LastKillMargin)
                {
                    killing = KillAndCheckAsync(server, js, stop.Token);
                }

                if (killing is { IsCompleted: true })
                {
                    await killing.ConfigureAwait(false);
                    killing = null;
                    nextKill = DateTime.UtcNow.AddMinutes(_o.KillEvery);
                }

                var sample = await TakeSampleAsync(server, js, loadStart).ConfigureAwait(false);
                maxHeld = Math.Max(maxHeld, sample.Held);
                lock (_samples)
                {
                    _samples.Add(sample);
                }

                await csv.WriteLineAsync(sample.Csv()).ConfigureAwait(false);
                await csv.FlushAsync(stop.Token).ConfigureAwait(false);
                Console.WriteLine($"{sample.Elapsed,6:N0} s  rss {sample.RssMb,7:N1} MB  fds {sample.Fds,6}  threads {sample.Threads,4}  server conns {sample.ServerConnections,6}  held {sample.Held,6}  core {sample.Delivered:N0}/{sample.Published:N0}  js acked {sample.JsAcked:N0} consumed {sample.JsConsumed:N0}{(sample.InKillWindow ? "  (kill window)" : "")}");
                await timer.WaitForNextTickAsync(stop.Token).ConfigureAwait(false);
            }
        }

        if (killing is not null)
        {
            await killing.ConfigureAwait(false);
        }

        var duration = DateTime.UtcNow - loadStart;
        _ledger.Stopping = true;
        await stop.CancelAsync().ConfigureAwait(false);
        await Task.WhenAny(Task.WhenAll([.. clients, jsTask]), Task.Delay(StopBound)).ConfigureAwait(false);
        var plot = Plot(csvPath, pngPath);
        var summary = Summary(version, duration, fullAt, maxHeld, js, Path.GetFileName(csvPath), plot is null ? Path.GetFileName(pngPath) : null, plot);
        await File.WriteAllTextAsync(mdPath, summary).ConfigureAwait(false);
        Console.WriteLine();
        Console.WriteLine(summary);
        Console.WriteLine($"written to {mdPath}, {csvPath}{(plot is null ? $", {pngPath}" : "")}; server logs in {server.Folder}");
        server.Kill();
        Directory.Delete(server.StoreDir, recursive: true); // the store is the soak's own; the logs stay for reading
        return _ledger.UnexpectedLosses == 0 && _kills.All(k => k.Problems == 0) ? 0 : 1;
    }

    private async Task<TimeSpan?> WaitHeldAsync(int count, TimeSpan bound)
    {
        var watch = Stopwatch.StartNew();
        while (watch.Elapsed < bound)
        {
            if (_ledger.Held >= count)
            {
                return watch.Elapsed;
            }

            await Task.Delay(100).ConfigureAwait(false);
        }

        return null;
    }

    private async Task KillAndCheckAsync(SoakServer server, SoakJetStream js, CancellationToken stop)
    {
        var heldBefore = _ledger.Held;
        _ledger.KillStarting();
        var snapshot = js.Snapshot();
        var killedAt = DateTime.UtcNow;
        var pid = server.Pid;
        server.Kill();
        Console.WriteLine($"kill -9 {pid} at {killedAt:HH:mm:ss}");
        var startup = await Task.Run(server.Start, stop).ConfigureAwait(false);
        var back = await WaitHeldAsync((int)heldBefore, ReconnectBound).ConfigureAwait(false);
        _ledger.KillEnded();
        var checks = await js.CheckAsync(snapshot, stop).ConfigureAwait(false);
        var record = new KillRecord(killedAt, pid, server.Pid, startup, back, heldBefore, checks, checks.Count(c => c.StartsWith("PROBLEM", StringComparison.Ordinal)));
        _kills.Add(record);
        Console.WriteLine($"restarted as {server.Pid} in {startup.TotalSeconds:N1} s; {(back is { } b ? $"{heldBefore:N0} connections back after {b.TotalSeconds:N1} s" : $"only {_ledger.Held:N0} of {heldBefore:N0} back")}");
        foreach (var line in checks)
        {
            Console.WriteLine($"  {line}");
        }
    }

    private async Task<Sample> TakeSampleAsync(SoakServer server, SoakJetStream js, DateTime loadStart)
    {
        var (rss, fds, threads) = server.ProcessStats();
        var connections = server.Pid == 0 ? -1 : await server.ConnectionsAsync().ConfigureAwait(false);
        var now = DateTime.UtcNow;
        return new Sample(now, (now - loadStart).TotalSeconds, server.Incarnation, server.Pid, rss / (1024.0 * 1024.0), fds, threads, connections,
            _ledger.Held, _ledger.Published, _ledger.Delivered, js.Acked, js.Consumed, _ledger.InKillWindow(now));
    }

    /// <summary>Runs gnuplot on the CSV; null when the PNG was written, else why not.</summary>
    private string? Plot(string csvPath, string pngPath)
    {
        var kills = new StringBuilder();
        foreach (var k in _kills)
        {
            var at = _samples.Count == 0 ? 0 : (k.KilledAt - _samples[0].Utc).TotalSeconds + _samples[0].Elapsed;
            kills.Append(CultureInfo.InvariantCulture, $"set arrow from {at:F0}, graph 0 to {at:F0}, graph 1 nohead dt 2 lc rgb 'red'\n");
        }

        var script = $"""
            set terminal png size 1200,1000
            set output '{pngPath}'
            set datafile separator ','
            set multiplot layout 3,1 title 'Courier soak: {_o.Connections:N0} connections, kill -9 every {_o.KillEvery} min (red lines)'
            set xlabel 'seconds'
            set grid
            {kills}
            set ylabel 'MB'
            plot '{csvPath}' skip 1 using 2:5 with lines lw 2 title 'server RSS'
            set ylabel 'count'
            plot '{csvPath}' skip 1 using 2:6 with lines title 'server fds', '' skip 1 using 2:8 with lines title 'server connections (/varz)', '' skip 1 using 2:9 with lines title 'subscribers held (client)'
            set ylabel 'threads'
            set yrange [0:*]
            plot '{csvPath}' skip 1 using 2:7 with lines title 'server threads'
            unset multiplot
            """;
        var scriptPath = Path.ChangeExtension(pngPath, ".gnuplot");
        File.WriteAllText(scriptPath, script);
        try
        {
            using var gnuplot = Process.Start(new ProcessStartInfo("gnuplot", scriptPath) { RedirectStandardError = true })!;
            var err = gnuplot.StandardError.ReadToEnd();
            if (!gnuplot.WaitForExit(60_000))
            {
                gnuplot.Kill();
                return "gnuplot did not finish in 60 s";
            }

            File.Delete(scriptPath);
            return gnuplot.ExitCode == 0 && File.Exists(pngPath) ? null : $"gnuplot failed: {err.Trim()}";
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return "gnuplot is not installed (apt-get install -y gnuplot-nox): no PNG, the CSV has the figures";
        }
    }

    private string Summary(string version, TimeSpan duration, TimeSpan? fullAt, long maxHeld, SoakJetStream js, string csv, string? png, string? plotProblem)
    {
        List<Sample> samples;
        lock (_samples)
        {
            samples = [.. _samples];
        }

        var cpu = File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal))?.Split(':', 2)[1].Trim() ?? "unknown CPU";
        var sb = new StringBuilder();
        sb.AppendLine(CultureInfo.InvariantCulture, $"# Courier soak, {samples.FirstOrDefault()?.Utc:yyyy-MM-dd HH:mm} UTC");
        sb.AppendLine();
        sb.AppendLine(CultureInfo.InvariantCulture, $"- machine: {Environment.ProcessorCount} cores, {cpu}; courier: `{version}`");
        sb.AppendLine(CultureInfo.InvariantCulture, $"- asked: {_o.Connections:N0} subscriber connections (one SUB each, from {_o.SourceAddresses} source addresses 127.0.0.x), {_o.Minutes} min, kill -9 every {_o.KillEvery} min, core {_o.CoreRate:N0} msgs/s of 64 B to random subscribers, JetStream {_o.JetStreamRate:N0} publishes/s (PubAck awaited) into {_o.Streams} file streams, one durable pull consumer each (fetch 100, double ack)");
        sb.AppendLine(CultureInfo.InvariantCulture, $"- files: {csv}{(png is null ? "" : $", {png}")}{(plotProblem is null ? "" : $" (no PNG: {plotProblem})")}");
        sb.AppendLine();
        sb.AppendLine("## Result");
        sb.AppendLine();
        var outside = samples.Where(s => !s.InKillWindow).ToList();
        sb.AppendLine(CultureInfo.InvariantCulture, $"- duration under load: {duration.TotalMinutes:N1} min; all {_o.Connections:N0} connections held {(fullAt is { } f ? $"after {f.TotalSeconds:N1} s" : "never (see held)")}; most held {maxHeld:N0}; fewest held outside kill windows {(outside.Count == 0 ? 0 : outside.Min(s => s.Held)):N0}; held at the end {samples.LastOrDefault()?.Held ?? 0:N0}");
        sb.AppendLine(CultureInfo.InvariantCulture, $"- connection losses the soak did not cause (outside the kill windows: from 1 s before a kill to {SoakLedger.KillGrace.TotalSeconds:N0} s after the reconnect): **{_ledger.UnexpectedLosses}**; losses in kill windows: {_ledger.LossesInKillWindows:N0}; reconnects: {_ledger.Reconnects:N0}");
        sb.AppendLine(CultureInfo.InvariantCulture, $"- core: {_ledger.Published:N0} published, {_ledger.Delivered:N0} delivered (at most once: what was in flight at a kill is gone)");
        sb.AppendLine(CultureInfo.InvariantCulture, $"- JetStream: {js.Acked:N0} publishes acknowledged, {js.PublishFailures:N0} without a PubAck (in flight at a kill or while the server was down), {js.Consumed:N0} acks confirmed by the consumers");
        sb.AppendLine(CultureInfo.InvariantCulture, $"- restarts: {_kills.Count}; problems found by the post-restart JetStream checks: **{_kills.Sum(k => k.Problems)}**");
        sb.AppendLine();

        // Memory per server incarnation: after warm-up (the first sample WarmupSeconds after all
        // connections were back) to its last sample.
        sb.AppendLine("## Memory and handles per server process");
        sb.AppendLine();
        sb.AppendLine("| process | warm at (s) | RSS warm (MB) | RSS last (MB) | growth (MB) | growth per minute (MB) | fds warm / last | threads warm / last |");
        sb.AppendLine("|---|---|---|---|---|---|---|---|");
        Sample? firstWarm = null;
        Sample? last = null;
        foreach (var life in samples.Where(s => s.Pid != 0 && s.Rss > 0).GroupBy(s => s.Incarnation))
        {
            var list = life.ToList();
            var fullSince = list.FirstOrDefault(s => s.Held >= _o.Connections && !s.InKillWindow) ?? list[0];
            var warm = list.FirstOrDefault(s => s.Elapsed >= fullSince.Elapsed + _o.WarmupSeconds);
            var end = list[^1];
            last = end;
            if (warm is null || end.Elapsed - warm.Elapsed < _o.SampleSeconds)
            {
                sb.AppendLine(CultureInfo.InvariantCulture, $"| {life.Key} (pid {end.Pid}) | — | — | {end.RssMb:N1} | too short to warm up | — | — / {end.Fds} | — / {end.Threads} |");
                continue;
            }

            firstWarm ??= warm;
            var minutes = (end.Elapsed - warm.Elapsed) / 60;
            sb.AppendLine(CultureInfo.InvariantCulture, $"| {life.Key} (pid {end.Pid}) | {warm.Elapsed:N0} | {warm.RssMb:N1} | {end.RssMb:N1} | {end.RssMb - warm.RssMb:+0.0;-0.0} | {(end.RssMb - warm.RssMb) / minutes:+0.0;-0.0} | {warm.Fds} / {end.Fds} | {warm.Threads} / {end.Threads} |");
        }

        sb.AppendLine();
        if (firstWarm is not null && last is not null)
        {
            sb.AppendLine(CultureInfo.InvariantCulture, $"Memory at start (after warm-up, {firstWarm.Elapsed:N0} s): {firstWarm.RssMb:N1} MB; at the end: {last.RssMb:N1} MB ({last.RssMb - firstWarm.RssMb:+0.0;-0.0} MB; the processes differ when a kill came between).");
            sb.AppendLine();
        }

        sb.AppendLine("## Restarts (kill -9, same store directory)");
        sb.AppendLine();
        foreach (var k in _kills)
        {
            sb.AppendLine(CultureInfo.InvariantCulture, $"- {k.KilledAt:HH:mm:ss}: killed pid {k.OldPid} holding {k.HeldBefore:N0} subscribers; pid {k.NewPid} wrote its ports file {k.Startup.TotalSeconds:N1} s later; {(k.Back is { } b ? $"all back {b.TotalSeconds:N1} s after that" : "not all back within the bound")}");
            foreach (var line in k.Checks)
            {
                sb.AppendLine(CultureInfo.InvariantCulture, $"  - {line}");
            }
        }

        sb.AppendLine();
        sb.AppendLine("## Connection losses outside kill windows");
        sb.AppendLine();
        var unexpected = _ledger.UnexpectedList();
        sb.AppendLine(unexpected.Count == 0 ? "None." : string.Join('\n', unexpected.Select(u => $"- {u}")));
        if (_ledger.UnexpectedLosses > unexpected.Count)
        {
            sb.AppendLine(CultureInfo.InvariantCulture, $"- ... and {_ledger.UnexpectedLosses - unexpected.Count} more");
        }

        return sb.ToString();
    }

    private sealed record Sample(DateTime Utc, double Elapsed, int Incarnation, int Pid, double RssMb, int Fds, int Threads, int ServerConnections,
        long Held, long Published, long Delivered, long JsAcked, long JsConsumed, bool InKillWindow)
    {
        public long Rss => (long)(RssMb * 1024 * 1024);

        // The server's columns are empty while it is down (between the kill and the restart): gaps in the plot, not zeros.
        public string Csv() => Pid == 0 || RssMb == 0
            ? string.Create(CultureInfo.InvariantCulture, $"{Utc:O},{Elapsed:F1},{Incarnation},,,,,,{Held},{Published},{Delivered},{JsAcked},{JsConsumed},{(InKillWindow ? 1 : 0)}")
            : string.Create(CultureInfo.InvariantCulture,
                $"{Utc:O},{Elapsed:F1},{Incarnation},{Pid},{RssMb:F1},{Fds},{Threads},{(ServerConnections < 0 ? "" : ServerConnections)},{Held},{Published},{Delivered},{JsAcked},{JsConsumed},{(InKillWindow ? 1 : 0)}");
    }

    private sealed record KillRecord(DateTime KilledAt, int OldPid, int NewPid, TimeSpan Startup, TimeSpan? Back, long HeldBefore, IReadOnlyList<string> Checks, int Problems);
}
