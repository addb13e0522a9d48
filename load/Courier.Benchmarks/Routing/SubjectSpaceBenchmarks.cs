using BenchmarkDotNet.Attributes;
using Courier.Actors.Routing;

namespace Courier.Benchmarks.Routing;

/// <summary>
/// <see cref="SubjectSpace.Match"/> on subjects already in the shard caches: what every PUB pays
/// when its publisher's one-entry cache misses (another subject, or a new snapshot elsewhere).
/// Expected: 0 B allocated per match.
/// </summary>
[MemoryDiagnoser]
public class SubjectSpaceBenchmarks
{
    private readonly byte[] _exact = "payments.eu.settled"u8.ToArray();
    private readonly byte[] _wildcard = "orders.us.created"u8.ToArray();
    private readonly byte[] _queue = "jobs.resize"u8.ToArray();
    private readonly byte[] _tenThousand = "svc0.item5000.created"u8.ToArray();
    private SubscriptionSet _small = null!;
    private SubscriptionSet _large = null!;

    [GlobalSetup]
    public void Setup()
    {
        _small = new SubscriptionSet();
        _small.Add("payments.eu.settled");
        _small.Add("payments.eu.refunded");
        _small.Add("orders.eu.created");
        _small.Add("orders.*.created");
        _small.Add("orders.>");
        _small.Add("*.us.created");
        _small.Add("jobs.resize", queue: "workers");
        _small.Add("jobs.resize", queue: "workers");
        _small.Add("jobs.resize", queue: "workers");
        _small.Add("jobs.*", queue: "auditors");
        _small.Publish();

        _large = new SubscriptionSet();
        _large.AddTenThousand();
        _large.Publish();

        // Fill the caches, and check each case matches what it says it does.
        Expect(_small.Space.Match(_exact), plain: 1, groups: 0);
        Expect(_small.Space.Match(_wildcard), plain: 3, groups: 0);
        Expect(_small.Space.Match(_queue), plain: 0, groups: 2);
        Expect(_large.Space.Match(_tenThousand), plain: 4, groups: 1);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _small.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _large.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }

    [Benchmark(Description = "cached: exact literal (1 sub)")]
    public int Exact() => _small.Space.Match(_exact).Plain.Length;

    [Benchmark(Description = "cached: wildcards * and > (3 subs)")]
    public int Wildcard() => _small.Space.Match(_wildcard).Plain.Length;

    [Benchmark(Description = "cached: 2 queue groups")]
    public int QueueGroup() => _small.Space.Match(_queue).Queues.Length;

    [Benchmark(Description = "cached: 10k subs + wildcards")]
    public int TenThousand() => _large.Space.Match(_tenThousand).Plain.Length;

    internal static void Expect(MatchResult match, int plain, int groups)
    {
        if (match.Plain.Length != plain || match.Queues.Length != groups)
        {
            throw new InvalidOperationException($"expected {plain} plain and {groups} groups, matched {match.Plain.Length} and {match.Queues.Length}");
        }
    }
}
