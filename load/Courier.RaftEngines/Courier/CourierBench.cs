using System.Diagnostics;
using System.Threading.Channels;
using Courier.Raft;
using Courier.Storage.Raft;

namespace Courier.RaftEngines.Courier;

/// <summary>
/// Candidate B, Courier's own Raft core (src/Raft), measured on the same two criteria as DotNext:
/// idle groups, and appends through one group of three with a durable log.
/// </summary>
internal static class CourierBench
{
    private const int PayloadBytes = 128;

    /// <summary>
    /// Criterion 1: N groups of 3 members spread over 3 "nodes" (member i of every group on node i),
    /// hosted as a multi-raft node hosts them: one loop and one timer for all groups, each tick's
    /// messages between two nodes coalesced into one frame (counted, delivered in process).
    /// </summary>
    public static void Idle(BenchOptions o, int tickMs, int electionTicks, int heartbeatTicks)
    {
        Console.WriteLine();
        Console.WriteLine($"== courier idle: {o.Groups} groups x 3 members, tick {tickMs} ms, election {electionTicks}-{2 * electionTicks} ticks ({electionTicks * tickMs}-{2 * electionTicks * tickMs} ms), heartbeat every {heartbeatTicks} ticks ({heartbeatTicks * tickMs} ms); load average {Measure.LoadAverage()}");
        var options = new RaftOptions { ElectionTicks = electionTicks, HeartbeatTicks = heartbeatTicks };
        var heapBefore = Measure.HeapAfterFullGc();
        var allocatedBefore = GC.GetAllocatedBytesForCurrentThread();
        var groups = new RaftNode[o.Groups][];
        for (var g = 0; g < o.Groups; g++)
        {
            groups[g] = new RaftNode[3];
            for (var m = 0; m < 3; m++)
            {
                groups[g][m] = new RaftNode((ulong)(m + 1), options with { RandomSeed = g * 3 + m });
                groups[g][m].Bootstrap([1, 2, 3]);
            }
        }
        var constructed = GC.GetAllocatedBytesForCurrentThread() - allocatedBefore;
        var host = new MultiRaftHost(groups);
        host.Pump();

        // Elect every group (ticks as fast as the CPU goes: virtual time, the clock is the host's).
        var elect = Stopwatch.StartNew();
        var ticks = 0;
        while (!host.AllLed() && ticks < 100 * electionTicks)
        {
            host.TickAll();
            ticks++;
        }
        Console.WriteLine($"  all groups led after {ticks} ticks ({ticks * tickMs / 1000.0:F1} s of their clock; {elect.ElapsedMilliseconds} ms of CPU here)");
        var heapElected = Measure.HeapAfterFullGc();
        Measure.Row("allocated while constructing one member", Measure.Bytes(constructed / (3.0 * o.Groups)));
        Measure.Row("live heap per member, leaders elected", Measure.Bytes((heapElected - heapBefore) / (3.0 * o.Groups)));
        Measure.Row("timers / dedicated threads / async loops per member", "0 / 0 / 0 (one timer and one loop for the whole node)");

        // The idle window, on the wall clock: one timer drives every group.
        var leadersBefore = host.Leaders();
        host.ResetCounters();
        var cpu0 = Measure.CpuTime();
        var alloc0 = GC.GetTotalAllocatedBytes(precise: true);
        var gen0 = GC.CollectionCount(0);
        var clock = Stopwatch.StartNew();
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(tickMs));
        while (clock.Elapsed.TotalSeconds < o.IdleSeconds && timer.WaitForNextTickAsync().AsTask().GetAwaiter().GetResult())
            host.TickAll();
        var seconds = clock.Elapsed.TotalSeconds;
        var cpu = (Measure.CpuTime() - cpu0).TotalMilliseconds;
        var allocated = GC.GetTotalAllocatedBytes(precise: true) - alloc0;
        Measure.Row($"idle CPU over {seconds:F1} s", $"{cpu / seconds / 10:F2} % of one core = {cpu / seconds / o.Groups:F4} ms per group per second");
        Measure.Row("idle allocations", $"{Measure.Bytes(allocated / seconds)}/s ({Measure.Bytes(allocated / seconds / o.Groups)}/s per group)");
        Measure.Row("gen0 GCs", $"{GC.CollectionCount(0) - gen0}");
        Measure.Row("raft messages per group per second", $"{host.Messages / seconds / o.Groups:F1}");
        Measure.Row("frames between nodes per second (coalesced per peer pair)", $"{host.Frames / seconds:F1} (6 directed pairs)");
        Measure.Row("leader changes during the idle window (should be 0)", $"{CountChanges(leadersBefore, host.Leaders())}");
    }

    private static int CountChanges(ulong[] before, ulong[] after)
    {
        var changes = 0;
        for (var i = 0; i < before.Length; i++)
            if (before[i] != after[i]) changes++;
        return changes;
    }

    /// <summary>Criterion 2: one group of 3 members, each on its own thread with its own log; appenders wait for the commit.</summary>
    public static async Task AppendAsync(BenchOptions o, CancellationToken token)
    {
        string[] variants = o.Variant is { } v ? [v] : ["wal-disk", "wal-tmpfs", "memory"];
        foreach (var variant in variants)
        {
            foreach (var appenders in new[] { 1, 64 })
                await AppendPhaseAsync(variant, appenders, o, token);
        }
    }

    private static async Task AppendPhaseAsync(string variant, int appenders, BenchOptions o, CancellationToken token)
    {
        var root = variant switch
        {
            "wal-disk" => Directory.CreateTempSubdirectory("courier-raft-wal-").FullName,
            "wal-tmpfs" => Directory.CreateDirectory(Path.Combine("/dev/shm", $"courier-raft-wal-{Environment.ProcessId}-{appenders}")).FullName,
            _ => null,
        };
        Console.WriteLine();
        Console.WriteLine($"== courier append: 1 group x 3 members, log={variant}{(root is null ? " (no log: the core only)" : $" (RaftLogStore on FileStore, fsync per Ready on every member) at {root}")}, {appenders} appender(s), {PayloadBytes} B entries, {o.RunSeconds} s; load average {Measure.LoadAverage()}");
        var options = new RaftOptions { ElectionTicks = 20, HeartbeatTicks = 2, MaxInflightMessages = 256 };
        var nodes = new AppendNode[3];
        for (var i = 0; i < 3; i++)
            nodes[i] = new AppendNode((ulong)(i + 1), options, root is null ? null : RaftLogStore.Open(Path.Combine(root, $"n{i + 1}")));
        foreach (var n in nodes) n.Peers = nodes;
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(token);
        var loops = nodes.Select(n => Task.Run(() => n.RunAsync(stop.Token), CancellationToken.None)).ToArray();
        var ticker = Task.Run(async () =>
        {
            using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(50));
            while (await timer.WaitForNextTickAsync(stop.Token).ConfigureAwait(false))
                foreach (var n in nodes) n.Post(AppendNode.TickItem);
        }, CancellationToken.None);
        try
        {
            var leader = await WaitForLeaderAsync(nodes, token);
            var latencies = new List<double>[appenders];
            var payload = new byte[PayloadBytes];
            var clock = Stopwatch.StartNew();
            var workers = Enumerable.Range(0, appenders).Select(w => Task.Run(async () =>
            {
                var mine = latencies[w] = new List<double>(100_000);
                while (clock.Elapsed.TotalSeconds < o.RunSeconds)
                {
                    var start = Stopwatch.GetTimestamp();
                    if (!await leader.ProposeAsync(payload).ConfigureAwait(false)) throw new InvalidOperationException("proposal lost: leadership changed");
                    mine.Add(Stopwatch.GetElapsedTime(start).TotalMilliseconds);
                }
            }, CancellationToken.None)).ToArray();
            await Task.WhenAll(workers).WaitAsync(TimeSpan.FromSeconds(o.RunSeconds + 20), token);
            var seconds = clock.Elapsed.TotalSeconds;
            var all = latencies.SelectMany(l => l).Order().ToList();
            Measure.Row("committed entries/s", $"{all.Count / seconds:N0}");
            Measure.Row("latency p50 / p99", $"{Measure.Percentile(all, 50):F3} ms / {Measure.Percentile(all, 99):F3} ms");
            if (root is not null)
                Measure.Row("entries per log write on the leader (group commit)", $"{(double)leader.SavedEntries / Math.Max(1, leader.Saves):F1} ({leader.Saves:N0} writes, each one fsync)");
        }
        finally
        {
            await stop.CancelAsync();
            try
            {
                await Task.WhenAll(loops.Append(ticker)).WaitAsync(TimeSpan.FromSeconds(30), CancellationToken.None);
            }
            catch (OperationCanceledException)
            {
            }
            foreach (var n in nodes) n.Dispose();
            if (root is not null) Directory.Delete(root, recursive: true);
        }
    }

    private static async Task<AppendNode> WaitForLeaderAsync(AppendNode[] nodes, CancellationToken token)
    {
        var deadline = Stopwatch.StartNew();
        while (deadline.Elapsed < TimeSpan.FromSeconds(40))
        {
            foreach (var n in nodes)
                if (n.IsLeader && n.Ready) return n;
            await Task.Delay(20, token);
        }
        throw new TimeoutException("no leader within 40 s");
    }
}

/// <summary>All groups of three "nodes" in one loop: each tick's messages between two nodes go as one frame.</summary>
internal sealed class MultiRaftHost(RaftNode[][] groups)
{
    private readonly List<(int Group, RaftMessage Message)> _frames = [];
    private readonly bool[,] _pairUsed = new bool[4, 4];

    public long Messages { get; private set; }
    public long Frames { get; private set; }

    public void ResetCounters()
    {
        Messages = 0;
        Frames = 0;
    }

    public bool AllLed() => Array.TrueForAll(groups, g => Array.Exists(g, m => m.Role == RaftRole.Leader));

    public ulong[] Leaders() => groups.Select(g => Array.Find(g, m => m.Role == RaftRole.Leader)?.Id ?? 0).ToArray();

    public void TickAll()
    {
        foreach (var group in groups)
            foreach (var member in group)
                member.Tick();
        Pump();
    }

    public void Pump()
    {
        while (true)
        {
            for (var g = 0; g < groups.Length; g++)
            {
                foreach (var member in groups[g])
                {
                    while (member.HasReady)
                    {
                        var ready = member.GetReady();
                        foreach (var m in ready.EarlyMessages) _frames.Add((g, m));
                        foreach (var m in ready.Messages) _frames.Add((g, m));
                        member.Advance(ready);
                    }
                }
            }
            if (_frames.Count == 0) return;
            Array.Clear(_pairUsed);
            foreach (var (_, m) in _frames) _pairUsed[m.From, m.To] = true;
            foreach (var used in _pairUsed)
                if (used) Frames++;
            Messages += _frames.Count;
            var batch = _frames.ToArray();
            _frames.Clear();
            foreach (var (g, m) in batch) groups[g][m.To - 1].Step(m);
        }
    }
}

/// <summary>One member on its own loop: the etcd-style host cycle (early sends, durable save, sends, apply, advance).</summary>
internal sealed class AppendNode(ulong id, RaftOptions options, RaftLogStore? store) : IDisposable
{
    public static readonly object TickItem = new();

    private readonly Channel<object> _inbox = Channel.CreateUnbounded<object>(new UnboundedChannelOptions { SingleReader = true });
    private readonly Dictionary<ulong, (ulong Term, TaskCompletionSource<bool> Done)> _pending = [];
    private readonly RaftNode _raft = CreateRaft(id, options, store);
    private volatile bool _isLeader;
    private volatile bool _ready;
    private ulong _noop;

    public AppendNode[] Peers { get; set; } = [];
    public bool IsLeader => _isLeader;
    /// <summary>Leads and has committed its own no-op (so a proposal is not refused or slowed by the election).</summary>
    public bool Ready => _ready;
    public long Saves { get; private set; }
    public long SavedEntries { get; private set; }

    private static RaftNode CreateRaft(ulong id, RaftOptions options, RaftLogStore? store)
    {
        var raft = new RaftNode(id, options with { RandomSeed = (int)id }, store?.Load());
        raft.Bootstrap([1, 2, 3]);
        var ready = raft.GetReady(); // the group's creation is durable before the member takes part
        store?.Save(ready);
        raft.Advance(ready);
        return raft;
    }

    public void Post(object item) => _inbox.Writer.TryWrite(item);

    public Task<bool> ProposeAsync(byte[] payload)
    {
        var proposal = new Proposal(payload);
        Post(proposal);
        return proposal.Done.Task;
    }

    public async Task RunAsync(CancellationToken token)
    {
        var reader = _inbox.Reader;
        try
        {
            while (await reader.WaitToReadAsync(token).ConfigureAwait(false))
            {
                while (reader.TryRead(out var item))
                {
                    switch (item)
                    {
                        case RaftMessage m: _raft.Step(m); break;
                        case Proposal p:
                            if (_raft.Propose(p.Payload, out var index, out var term)) _pending[index] = (term, p.Done);
                            else p.Done.TrySetResult(false);
                            break;
                        default: _raft.Tick(); break;
                    }
                }
                while (_raft.HasReady)
                {
                    var ready = _raft.GetReady();
                    foreach (var m in ready.EarlyMessages) Peers[m.To - 1].Post(m);
                    if (store is not null && !ready.NothingToPersist)
                    {
                        store.Save(ready);
                        if (ready.Entries.Length > 0)
                        {
                            Saves++; // a log write with its fsync (a Ready with only a new commit index writes nothing)
                            SavedEntries += ready.Entries.Length;
                        }
                    }
                    foreach (var m in ready.Messages) Peers[m.To - 1].Post(m);
                    foreach (var entry in ready.CommittedEntries)
                    {
                        if (_pending.Remove(entry.Index, out var p)) p.Done.TrySetResult(p.Term == entry.Term);
                        if (entry.Index == _noop) _ready = true;
                    }
                    _raft.Advance(ready);
                    var leading = _raft.Role == RaftRole.Leader;
                    if (leading && !_isLeader) _noop = _raft.LastIndex;
                    if (!leading) _ready = false;
                    _isLeader = leading;
                    if (_raft.AppliedIndex > _raft.FirstIndex + 100_000)
                        store?.SaveSnapshot(_raft.Compact(_raft.AppliedIndex, ReadOnlyMemory<byte>.Empty)); // behind the state machine, as a host would
                }
            }
        }
        catch (OperationCanceledException)
        {
        }
        foreach (var p in _pending.Values) p.Done.TrySetResult(false);
    }

    public void Dispose() => store?.Dispose();

    private sealed class Proposal(byte[] payload)
    {
        public byte[] Payload { get; } = payload;
        public TaskCompletionSource<bool> Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}
