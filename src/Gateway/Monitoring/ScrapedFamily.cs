using Prometheus;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// One metric family of <c>/metrics</c> whose samples are set anew at every scrape from a monitoring
/// page, as prometheus-nats-exporter makes its const metrics per collect: a sample not set in a round
/// (a stream deleted, a connection gone) is removed at its end instead of repeating its last value.
/// </summary>
/// <remarks>
/// Rounds are run one at a time by <see cref="PrometheusMetrics"/>. A counter keeps prometheus-net's
/// rule that it only goes up: a value below the last one (the exporter's connz totals are sums over
/// the connections open now, which fall when one closes) starts the sample again from zero.
/// </remarks>
internal sealed class ScrapedFamily
{
    private readonly Gauge? _gauge;
    private readonly Counter? _counter;
    private Dictionary<string, ChildBase> _live = new(StringComparer.Ordinal);
    private Dictionary<string, ChildBase> _next = new(StringComparer.Ordinal);

    private ScrapedFamily(Gauge? gauge, Counter? counter)
    {
        _gauge = gauge;
        _counter = counter;
    }

    public static ScrapedFamily Gauge(IMetricFactory factory, string name, string help, params string[] labelNames) =>
        new(factory.CreateGauge(name, help, labelNames), null);

    public static ScrapedFamily Counter(IMetricFactory factory, string name, string help, params string[] labelNames) =>
        new(null, factory.CreateCounter(name, help, labelNames));

    /// <summary>Sets the sample with these label values (in the order of the family's label names) for this round.</summary>
    public void Set(double value, params string[] labelValues)
    {
        var key = string.Join('\0', labelValues);
        if (_gauge is not null)
        {
            var child = _gauge.WithLabels(labelValues);
            child.Set(value);
            _next[key] = child;
            return;
        }

        var counter = _counter!.WithLabels(labelValues);
        if (value < counter.Value)
        {
            counter.Remove();
            counter = _counter.WithLabels(labelValues);
        }

        counter.IncTo(value);
        _next[key] = counter;
    }

    /// <summary>Ends a round: the samples not set in it are removed.</summary>
    public void EndRound()
    {
        foreach (var (key, child) in _live)
        {
            if (!_next.ContainsKey(key))
            {
                child.Remove();
            }
        }

        (_live, _next) = (_next, _live);
        _next.Clear();
    }
}
