using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Net;
using DotNext.IO.Log;
using DotNext.Net.Cluster.Consensus.Raft;
using DotNext.Net.Cluster.Consensus.Raft.StateMachine;

namespace Courier.RaftEngines.DotNext;

/// <summary>
/// Candidate A: DotNext.Net.Cluster's <see cref="RaftCluster{TMember}"/> with the in-process transport of
/// <see cref="InMemoryNode"/> and <see cref="InMemoryMember"/>. Each phase prints its own figures and is bounded in time.
/// </summary>
internal static class DotNextBench
{
    private const int PayloadBytes = 128;
    private const string NodeTag = "courier.node";


    private static readonly EndPoint[] GroupEndPoints =
    [
        new IPEndPoint(IPAddress.Loopback, 4101),
        new IPEndPoint(IPAddress.Loopback, 4102),
        new IPEndPoint(IPAddress.Loopback, 4103),
    ];

    private sealed class Group(InMemoryNetwork network, InMemoryNode[] nodes, IDisposable[] logs)
    {
        public InMemoryNetwork Network { get; } = network;

        public InMemoryNode[] Nodes { get; } = nodes;

        public IDisposable[] Logs { get; } = logs;

        public InMemoryNode? LeaderNode => Array.Find(Nodes, n => n.Leader is { IsRemote: false });

        public bool HasAgreedLeader
        {
            get
            {
                var leader = LeaderNode;
                return leader is not null && Array.TrueForAll(Nodes, n => n.Leader is { } l && l.EndPoint.Equals(leader.LocalEndPoint));
            }
        }
    }

    private static Group CreateGroup(NodeConfig config, Func<int, global::DotNext.Net.Cluster.Consensus.Raft.IPersistentState> logFactory)
    {
        var network = new InMemoryNetwork();
        var nodes = new InMemoryNode[GroupEndPoints.Length];
        var logs = new IDisposable[GroupEndPoints.Length];
        for (var i = 0; i < nodes.Length; i++)
        {
            var log = logFactory(i);
            logs[i] = (IDisposable)log;
            nodes[i] = new InMemoryNode(config, network, GroupEndPoints[i], GroupEndPoints) { AuditTrail = log };
        }

        return new Group(network, nodes, logs);
    }

    private static async Task WaitForLeadersAsync(IReadOnlyList<Group> groups, TimeSpan limit)
    {
        var sw = Stopwatch.StartNew();
        while (sw.Elapsed < limit)
        {
            var ready = groups.Count(g => g.HasAgreedLeader);
            if (ready == groups.Count)
            {
                Measure.Row("all groups have an agreed leader after", $"{sw.Elapsed.TotalSeconds:F2} s");
                return;
            }

            await Task.Delay(100);
        }

        Measure.Row("groups WITHOUT an agreed leader at the limit", $"{groups.Count(g => !g.HasAgreedLeader)} of {groups.Count} ({limit.TotalSeconds} s)");
    }

    private static async Task TearDownAsync(IEnumerable<Group> groups)
    {
        var sw = Stopwatch.StartNew();
        var stops = groups.SelectMany(g => g.Nodes).Select(n => n.StopAsync()).ToArray();
        try
        {
            await Task.WhenAll(stops).WaitAsync(TimeSpan.FromSeconds(30));
        }
        catch (TimeoutException)
        {
            Console.WriteLine("  (teardown: StopAsync did not finish within 30 s)");
        }

        foreach (var g in groups)
        {
            foreach (var n in g.Nodes)
            {
                n.Dispose();
            }

            foreach (var l in g.Logs)
            {
                l.Dispose();
            }
        }

        Measure.Row("teardown took", $"{sw.Elapsed.TotalSeconds:F2} s");
    }

    /// <summary>Criterion 1: per-group cost and the idle cost of many groups.</summary>
    public static async Task IdleAsync(BenchOptions o, CancellationToken token)
    {
        Console.WriteLine();
        Console.WriteLine($"== dotnext idle: {o.Groups} groups x 3 members = {o.Groups * 3} RaftCluster instances, log={o.Log}, election {o.ElectionLow}-{o.ElectionHigh} ms, heartbeat threshold {o.HeartbeatThreshold}, idle window {o.IdleSeconds} s; load average {Measure.LoadAverage()}");
        var config = new NodeConfig
        {
            ElectionTimeout = new() { LowerValue = o.ElectionLow, UpperValue = o.ElectionHigh },
            HeartbeatThreshold = o.HeartbeatThreshold,
        };
        var root = o.Log == "wal" ? Directory.CreateTempSubdirectory("courier-dotnext-idle-") : null;
        long leaderChanges = 0;

        var heap0 = Measure.HeapAfterFullGc();
        var private0 = Measure.PrivateBytes();
        var threads0 = Measure.OsThreads();
        var pool0 = ThreadPool.ThreadCount;
        var timers0 = Timer.ActiveCount;
        var alloc0 = GC.GetAllocatedBytesForCurrentThread();

        var groups = new List<Group>(o.Groups);
        for (var g = 0; g < o.Groups; g++)
        {
            var gi = g;
            groups.Add(CreateGroup(config, i => root is null
                ? new ConsensusOnlyState()
                : new WriteAheadLog(new() { Location = Path.Combine(root.FullName, $"g{gi}", $"n{i}") }, IStateMachine.CreateNoOp())));
        }

        var instances = o.Groups * 3;
        var allocCtor = GC.GetAllocatedBytesForCurrentThread() - alloc0;
        var heapCtor = Measure.HeapAfterFullGc() - heap0;
        var timersCtor = Timer.ActiveCount - timers0;
        Measure.Row("constructed (not started): allocated per instance incl. its log (this thread)", Measure.Bytes((double)allocCtor / instances));
        Measure.Row("constructed (not started): live heap per instance", Measure.Bytes((double)heapCtor / instances));
        Measure.Row("constructed (not started): timers per instance", $"{(double)timersCtor / instances:F2}");

        foreach (var n in groups.SelectMany(g => g.Nodes))
        {
            n.LeaderChanged += (_, _) => Interlocked.Increment(ref leaderChanges);
        }

        var startSw = Stopwatch.StartNew();
        await Task.WhenAll(groups.SelectMany(g => g.Nodes).Select(n => n.StartAsync(token))).WaitAsync(TimeSpan.FromSeconds(50), token);
        Measure.Row("StartAsync of all instances took", $"{startSw.Elapsed.TotalSeconds:F2} s");
        await WaitForLeadersAsync(groups, TimeSpan.FromSeconds(40));
        await Task.Delay(2000, token);

        var heapStarted = Measure.HeapAfterFullGc() - heap0;
        Measure.Row("started, leaders elected: live heap per instance", Measure.Bytes((double)heapStarted / instances));
        Measure.Row("started: live heap per group (3 instances)", Measure.Bytes((double)heapStarted / o.Groups));
        Measure.Row("started: process private bytes per instance (managed + native)", Measure.Bytes((double)(Measure.PrivateBytes() - private0) / instances));
        var timersStarted = Timer.ActiveCount - timers0;
        Measure.Row("started: active System.Threading timers (delta)", $"{timersStarted} ({(double)timersStarted / instances:F2} per instance)");
        Measure.Row("started: OS threads (before -> after)", $"{threads0} -> {Measure.OsThreads()}");
        Measure.Row("started: thread-pool threads (before -> after)", $"{pool0} -> {ThreadPool.ThreadCount}");

        var lc0 = Interlocked.Read(ref leaderChanges);
        var rpc0 = groups.Sum(g => Interlocked.Read(ref g.Network.Rpcs));
        var cpu0 = Measure.CpuTime();
        var allocTotal0 = GC.GetTotalAllocatedBytes(precise: true);
        var gc0 = GC.CollectionCount(0);
        var wall = Stopwatch.StartNew();
        await Task.Delay(TimeSpan.FromSeconds(o.IdleSeconds), token);
        var seconds = wall.Elapsed.TotalSeconds;
        var cpu = (Measure.CpuTime() - cpu0).TotalSeconds;
        var alloc = GC.GetTotalAllocatedBytes(precise: true) - allocTotal0;
        var rpcs = groups.Sum(g => Interlocked.Read(ref g.Network.Rpcs)) - rpc0;
        var lc = Interlocked.Read(ref leaderChanges) - lc0;

        Measure.Row($"idle {seconds:F1} s: process CPU time", $"{cpu:F2} s = {100 * cpu / seconds:F1}% of one core ({100 * cpu / seconds / Environment.ProcessorCount:F1}% of the machine)");
        Measure.Row("idle: CPU per group", $"{1000 * cpu / seconds / o.Groups:F3} ms/s");
        Measure.Row("idle: allocations", $"{Measure.Bytes(alloc / seconds)}/s ({Measure.Bytes(alloc / seconds / o.Groups)}/s per group)");
        Measure.Row("idle: gen0 GCs", $"{GC.CollectionCount(0) - gc0}");
        Measure.Row("idle: in-process RPCs delivered (heartbeats etc.)", $"{rpcs / seconds:F0}/s ({rpcs / seconds / o.Groups:F1}/s per group)");
        Measure.Row("idle: leader-changed events (should be 0 when stable)", $"{lc}");
        Measure.Row("idle: groups with an agreed leader at the end", $"{groups.Count(g => g.HasAgreedLeader)} of {o.Groups}");
        Measure.Row("idle: load average at the end of the window", Measure.LoadAverage());

        await TearDownAsync(groups);
        if (root is not null)
        {
            root.Delete(recursive: true);
        }
    }

    /// <summary>Baseline for criterion 2: what one 128-byte write + fsync costs on this disk.</summary>
    public static void RawFsync(BenchOptions o)
    {
        Console.WriteLine();
        Console.WriteLine($"== raw fsync baseline: append 128 B + fsync (RandomAccess.FlushToDisk) on a temp file, 3 s; load average {Measure.LoadAverage()}");
        var dir = Directory.CreateTempSubdirectory("courier-dotnext-fsync-");
        try
        {
            var path = Path.Combine(dir.FullName, "f");
            using var handle = File.OpenHandle(path, FileMode.Create, FileAccess.ReadWrite);
            var buf = new byte[PayloadBytes];
            var lat = new List<double>();
            long offset = 0;
            var sw = Stopwatch.StartNew();
            while (sw.Elapsed < TimeSpan.FromSeconds(3))
            {
                var t = Stopwatch.GetTimestamp();
                RandomAccess.Write(handle, buf, offset);
                offset += buf.Length;
                RandomAccess.FlushToDisk(handle);
                lat.Add(Stopwatch.GetElapsedTime(t).TotalMilliseconds);
            }

            lat.Sort();
            Measure.Row("fsyncs per second (1 writer)", $"{lat.Count / sw.Elapsed.TotalSeconds:F0}");
            Measure.Row("latency p50 / p99", $"{Measure.Percentile(lat, 50):F3} / {Measure.Percentile(lat, 99):F3} ms");
            _ = o;
        }
        finally
        {
            dir.Delete(recursive: true);
        }
    }

    /// <summary>Criterion 2: append throughput of one 3-member group, durable WAL vs. memory.</summary>
    public static async Task AppendAsync(BenchOptions o, CancellationToken token)
    {
        string[] variants = o.Variant is { } v ? [v] : ["wal-disk", "wal-tmpfs", "memory"];
        foreach (var variant in variants)
        {
            await AppendVariantAsync(variant, o, token);
        }
    }

    private static async Task AppendVariantAsync(string variant, BenchOptions o, CancellationToken token)
    {
        Console.WriteLine();
        var root = variant switch
        {
            "wal-disk" => Directory.CreateTempSubdirectory("courier-dotnext-wal-"),
            "wal-tmpfs" => Directory.CreateDirectory(Path.Combine("/dev/shm", $"courier-dotnext-wal-{Environment.ProcessId}")),
            _ => null,
        };
        Console.WriteLine($"== dotnext append: 1 group x 3 members, log={variant}{(root is null ? " (ConsensusOnlyState: terms only, payload not kept)" : $" at {root.FullName}")}, {PayloadBytes} B entries, {o.RunSeconds} s per phase; load average {Measure.LoadAverage()}");

        var flushCycles = new long[3];
        var flushedEntries = new long[3];
        using var listener = new MeterListener();
        // One "entries-flush-count" measurement per WAL flush of a range of entries (tagged with the node);
        // its value is the number of entries that flush made durable.
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Name == "entries-flush-count")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            if (NodeOf(tags) is { } n)
            {
                Interlocked.Increment(ref flushCycles[n]);
                Interlocked.Add(ref flushedEntries[n], value);
            }
        });
        listener.Start();

        long leaderChanges = 0;
        var group = CreateGroup(new NodeConfig(), i => root is null
            ? new ConsensusOnlyState()
            : new WriteAheadLog(
                new()
                {
                    Location = Path.Combine(root.FullName, $"n{i}"),
                    ChunkSize = 1 << 20,
                    MeasurementTags = new() { { NodeTag, i } },
                },
                IStateMachine.CreateNoOp(o.SnapshotEvery)));
        try
        {
            foreach (var n in group.Nodes)
            {
                n.LeaderChanged += (_, _) => Interlocked.Increment(ref leaderChanges);
            }

            await Task.WhenAll(group.Nodes.Select(n => n.StartAsync(token))).WaitAsync(TimeSpan.FromSeconds(20), token);
            await WaitForLeadersAsync([group], TimeSpan.FromSeconds(20));
            if (group.LeaderNode is not { } leader)
            {
                Console.WriteLine("  no leader: append phase skipped");
                return;
            }

            var leaderIndex = Array.IndexOf(group.Nodes, leader);
            var payload = new byte[PayloadBytes];
            Random.Shared.NextBytes(payload);

            // warm-up (JIT, first chunk files)
            await RunAppendersAsync(leader, payload, 1, TimeSpan.FromSeconds(1), token);

            foreach (var clients in new[] { 1, 64 })
            {
                Array.Clear(flushCycles);
                Array.Clear(flushedEntries);
                var lc0 = Interlocked.Read(ref leaderChanges);
                var snap0 = Interlocked.Read(ref group.Network.Snapshots);
                var cpu0 = Measure.CpuTime();
                var r = await RunAppendersAsync(leader, payload, clients, TimeSpan.FromSeconds(o.RunSeconds), token);
                var cpu = (Measure.CpuTime() - cpu0).TotalSeconds;
                Measure.Row($"{clients} appender(s): committed entries/s", $"{r.Committed / r.Seconds:F0} ({r.Committed} in {r.Seconds:F1} s, {r.Failures} failed)");
                Measure.Row($"{clients} appender(s): ReplicateAsync latency p50 / p99 / max", $"{r.P50:F3} / {r.P99:F3} / {r.Max:F3} ms");
                Measure.Row($"{clients} appender(s): process CPU", $"{100 * cpu / r.Seconds:F0}% of one core");
                if (root is not null)
                {
                    var fc = Interlocked.Read(ref flushCycles[leaderIndex]);
                    var fe = Interlocked.Read(ref flushedEntries[leaderIndex]);
                    Measure.Row($"{clients} appender(s): leader WAL flushes/s, entries per flush", $"{fc / r.Seconds:F0}/s, {(fc == 0 ? 0 : (double)fe / fc):F1}");
                    Measure.Row($"{clients} appender(s): follower WAL flushes/s (each)", string.Join(", ", Enumerable.Range(0, 3).Where(i => i != leaderIndex).Select(i => $"node {i}: {Interlocked.Read(ref flushCycles[i]) / r.Seconds:F0}/s, {Interlocked.Read(ref flushedEntries[i]) / r.Seconds:F0} entries/s")));
                }

                Measure.Row($"{clients} appender(s): leader changes during the phase", $"{Interlocked.Read(ref leaderChanges) - lc0}");
                Measure.Row($"{clients} appender(s): InstallSnapshot RPCs during the phase", $"{Interlocked.Read(ref group.Network.Snapshots) - snap0}");
                Measure.Row($"{clients} appender(s): last/committed index per node (leader first)", Indexes(group, leader));
            }

            // Does every follower catch up once the appenders stop? (A follower that fell behind a
            // snapshot is brought up to date with InstallSnapshot.)
            var snapIdle = Interlocked.Read(ref group.Network.Snapshots);
            await Task.Delay(3000, token);
            Measure.Row("after 3 s without appends: last/committed index per node", Indexes(group, leader));
            Measure.Row("after 3 s without appends: InstallSnapshot RPCs in those 3 s", $"{Interlocked.Read(ref group.Network.Snapshots) - snapIdle}");
            Measure.Row("last InstallSnapshot RPC", group.Network.LastSnapshot);
        }
        finally
        {
            listener.Dispose();
            await TearDownAsync([group]);
            root?.Delete(recursive: true);
        }
    }

    private static string Indexes(Group group, InMemoryNode leader)
        => string.Join("; ", group.Nodes.OrderBy(n => n != leader).Select(n => $"{((IAuditTrail)n.AuditTrail).LastEntryIndex}/{((IAuditTrail)n.AuditTrail).LastCommittedEntryIndex}"));

    private static int? NodeOf(ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        foreach (var tag in tags)
        {
            if (tag.Key == NodeTag && tag.Value is int n)
            {
                return n;
            }
        }

        return null;
    }

    private sealed record AppendResult(long Committed, long Failures, double Seconds, double P50, double P99, double Max);

    private static async Task<AppendResult> RunAppendersAsync(InMemoryNode leader, byte[] payload, int clients, TimeSpan duration, CancellationToken token)
    {
        var latencies = new ConcurrentBag<List<double>>();
        long failures = 0;
        Exception? error = null;
        var sw = Stopwatch.StartNew();
        var deadline = sw.Elapsed + duration;
        using var hard = CancellationTokenSource.CreateLinkedTokenSource(token);
        hard.CancelAfter(duration + TimeSpan.FromSeconds(10));

        var workers = Enumerable.Range(0, clients).Select(_ => Task.Run(async () =>
        {
            var mine = new List<double>(1 << 14);
            latencies.Add(mine);
            while (sw.Elapsed < deadline && !hard.IsCancellationRequested)
            {
                var t = Stopwatch.GetTimestamp();
                try
                {
                    var entry = new BinaryLogEntry { Term = leader.AuditTrail.Term, Content = payload };
                    await leader.ReplicateAsync(entry, hard.Token);
                    mine.Add(Stopwatch.GetElapsedTime(t).TotalMilliseconds);
                }
                catch (Exception e) when (e is NotLeaderException or OperationCanceledException)
                {
                    Interlocked.Increment(ref failures);
                    if (e is NotLeaderException)
                    {
                        await Task.Delay(50, CancellationToken.None);
                    }
                }
                catch (Exception e)
                {
                    // Anything else (e.g. an I/O error from the WAL) ends the phase; it is reported.
                    Interlocked.Increment(ref failures);
                    Interlocked.CompareExchange(ref error, e, null);
                    await hard.CancelAsync();
                }
            }
        }, token)).ToArray();
        await Task.WhenAll(workers);
        var seconds = sw.Elapsed.TotalSeconds;
        var all = latencies.SelectMany(l => l).ToList();
        all.Sort();
        if (error is not null)
        {
            Console.WriteLine($"  PHASE ABORTED after {seconds:F1} s by {error.GetType().Name}: {error.Message}");
        }

        return new(all.Count, failures, seconds, Measure.Percentile(all, 50), Measure.Percentile(all, 99), all.Count == 0 ? double.NaN : all[^1]);
    }
}
