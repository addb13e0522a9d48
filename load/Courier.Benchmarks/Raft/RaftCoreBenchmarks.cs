using BenchmarkDotNet.Attributes;
using Courier.Raft;

namespace Courier.Benchmarks.Raft;

/// <summary>
/// The consensus core's own cost (issue 34's engine decision): idle groups, and replicating entries
/// through one group of three, with delivery and storage free so only the core is measured.
/// </summary>
[MemoryDiagnoser]
public class RaftCoreBenchmarks
{
    // As a host would run it: a 100 ms tick, heartbeats every 500 ms, elections after 2-4 s.
    private static readonly RaftOptions Production = new() { ElectionTicks = 20, HeartbeatTicks = 5 };
    private static readonly ReadOnlyMemory<byte> Payload = new byte[128];

    private InMemoryGroups _idle = null!;
    private InMemoryGroups _busy = null!;

    [GlobalSetup]
    public void Setup()
    {
        _idle = new InMemoryGroups(1000, Production);
        _idle.ElectAll();
        _busy = new InMemoryGroups(1, Production);
        _busy.ElectAll();
    }

    /// <summary>One 100 ms tick of 1,000 idle groups of three (3,000 members, all on one "node"): the per-tick cost of keeping them alive.</summary>
    [Benchmark(OperationsPerInvoke = 1000)]
    public void Idle_tick_per_group() => _idle.TickAll();

    /// <summary>64 proposals of 128 B replicated to three members, committed and applied everywhere (per entry).</summary>
    [Benchmark(OperationsPerInvoke = 64)]
    public void Replicate_per_entry()
    {
        var leader = _busy.Leader(0);
        for (var i = 0; i < 64; i++) leader.Propose(Payload, out _, out _);
        _busy.Pump();
        foreach (var member in _busy.Group(0))
            if (member.AppliedIndex > member.FirstIndex + 10_000) member.Compact(member.AppliedIndex, ReadOnlyMemory<byte>.Empty); // a host compacts behind its store
    }
}
