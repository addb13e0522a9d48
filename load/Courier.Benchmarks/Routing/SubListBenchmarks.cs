using BenchmarkDotNet.Attributes;
using Courier.Actors.Routing;

namespace Courier.Benchmarks.Routing;

/// <summary>
/// <see cref="SubList.Match(ReadOnlySpan{char}, List{Subscription}, List{Subscription})"/> directly:
/// the trie walk behind a subject-space cache miss (the first publish of a subject after a snapshot
/// change, or any one-off subject such as an ack). Tokens are walked as slices, so it should not allocate.
/// </summary>
[MemoryDiagnoser]
public class SubListBenchmarks
{
    private const string Exact = "payments.eu.settled";
    private const string Wildcard = "orders.us.created";
    private const string TenThousand = "svc0.item5000.created";

    private readonly List<Subscription> _plain = new(16);
    private readonly List<Subscription> _queued = new(16);
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

        _large = new SubscriptionSet();
        _large.AddTenThousand();

        if (Match(_small.All, Exact) != 1 || Match(_small.All, Wildcard) != 3 || Match(_large.All, TenThousand) != 5)
        {
            throw new InvalidOperationException("the tries do not match what the benchmarks say");
        }
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _small.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _large.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }

    [Benchmark(Description = "miss: exact literal (1 sub)")]
    public int MatchExact() => Match(_small.All, Exact);

    [Benchmark(Description = "miss: wildcards * and > (3 subs)")]
    public int MatchWildcard() => Match(_small.All, Wildcard);

    [Benchmark(Description = "miss: 10k subs + wildcards (5 subs)")]
    public int MatchTenThousand() => Match(_large.All, TenThousand);

    private int Match(SubList list, string subject)
    {
        _plain.Clear();
        _queued.Clear();
        list.Match(subject, _plain, _queued);
        return _plain.Count + _queued.Count;
    }
}
