using System.Text.Json;
using Courier.Actors.Server;
using Prometheus;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// <c>/metrics</c>: the figures of /varz, /connz, /routez, /leafz, /gatewayz, /accstatz and /jsz under the
/// names, types and labels prometheus-nats-exporter gives them (<c>gnatsd_varz_*</c>, <c>gnatsd_connz_*</c>,
/// <c>gnatsd_routez_*</c>, <c>gnatsd_leafz_*</c>, <c>gnatsd_gatewayz_*</c>, <c>gnatsd_accstatz_*</c>,
/// <c>jetstream_*</c>), so dashboards built on the exporter read Courier
/// unchanged, plus the .NET runtime's own (prometheus-net's DotNetStats: GC collections, heap, CPU) and
/// Courier's own (<c>courier_*</c>: fsync latency, group-commit sizes, mailbox depths, Raft groups).
/// </summary>
/// <remarks>
/// One registry per monitoring server (not prometheus-net's static default: two servers in one
/// process must not share samples). The figures are read at scrape time, in a before-collect
/// callback, from the same pages the HTTP monitoring serves. The <c>server_id</c> label
/// is the server's own id, as the exporter's <c>-use_internal_server_id</c> gives it.
/// </remarks>
internal sealed partial class PrometheusMetrics
{
    private const string CoreSystem = "gnatsd";      // the exporter's CoreSystem, kept for dashboards
    private const string JetStreamSystem = "jetstream"; // the exporter's JetStreamSystem

    // The exporter's generic collector (collector.go objectToMetrics): fields it leaves out, and
    // the string fields it turns into a gauge of 1 with a "value" label (or, for a time, its epoch ms).
    private static readonly HashSet<string> SkippedNames = new(StringComparer.Ordinal)
    {
        "leaf", "trusted_operators_claim", "cluster_tls_timeout", "cluster_cluster_port", "cluster_auth_timeout",
        "gateway_port", "gateway_auth_timeout", "gateway_tls_timeout", "gateway_connect_retries",
    };

    private static readonly HashSet<string> LabelKeys = new(StringComparer.Ordinal)
    {
        "server_id", "server_name", "version", "domain", "leader", "name", "start", "config_load_time",
    };

    private readonly Broker _broker;
    private readonly MonitoringPages _pages;
    private readonly MetricFactory _factory;
    private readonly SemaphoreSlim _round = new(1, 1);
    private readonly Dictionary<string, ScrapedFamily> _families = new(StringComparer.Ordinal);

    public PrometheusMetrics(Broker broker, MonitoringPages pages)
    {
        _broker = broker;
        _pages = pages;
        Registry = Metrics.NewCustomRegistry();
        _factory = Metrics.WithCustomRegistry(Registry);
        DotNetStats.Register(Registry);
        ListenToStoreMeter();
        Registry.AddBeforeCollectCallback(UpdateAsync);
    }

    /// <summary>The registry <c>/metrics</c> exports.</summary>
    public CollectorRegistry Registry { get; }

    private async Task UpdateAsync(CancellationToken cancel)
    {
        await _round.WaitAsync(cancel).ConfigureAwait(false);
        try
        {
            var serverId = _broker.ServerId;
            Flatten(JsonSerializer.SerializeToElement(_pages.Varz(), GatewayJsonContext.Default.Varz), $"{CoreSystem}_varz", serverId, "");
            Flatten(JsonSerializer.SerializeToElement(_pages.Routez(), GatewayJsonContext.Default.Routez), $"{CoreSystem}_routez", serverId, "");
            UpdateConnz(serverId);
            UpdateLeafz(serverId);
            UpdateGatewayz(serverId);
            UpdateAccstatz(serverId);
            await UpdateJetStreamAsync(serverId).ConfigureAwait(false);
            UpdateMailboxes(serverId);
            await UpdateRaftAsync(serverId).ConfigureAwait(false);
            foreach (var family in _families.Values)
            {
                family.EndRound();
            }
        }
        finally
        {
            _round.Release();
        }
    }

    /// <summary>
    /// The exporter's generic collector over one page: every number (nested objects flattened with
    /// <c>_</c>) a gauge named <c>{prefix}_{path}</c> with a <c>server_id</c> label; the label keys'
    /// strings a gauge of 1 with the string as <c>value</c>, or a time's epoch milliseconds; arrays,
    /// booleans and other strings left out.
    /// </summary>
    private void Flatten(JsonElement page, string prefix, string serverId, string path)
    {
        foreach (var property in page.EnumerateObject())
        {
            var name = path.Length == 0 ? property.Name : $"{path}_{property.Name}";
            if (SkippedNames.Contains(name) || !IsMetricName(name))
            {
                continue;
            }

            var value = property.Value;
            switch (value.ValueKind)
            {
                case JsonValueKind.Number:
                    Gauge($"{prefix}_{name}", name, "server_id").Set(value.GetDouble(), serverId);
                    break;
                case JsonValueKind.String when LabelKeys.Contains(property.Name):
                    if (value.TryGetDateTimeOffset(out var time))
                    {
                        Gauge($"{prefix}_{name}", name, "server_id").Set(time.ToUnixTimeMilliseconds(), serverId);
                    }
                    else
                    {
                        Gauge($"{prefix}_{name}", name, "server_id", "value").Set(1, serverId, value.GetString()!);
                    }

                    break;
                case JsonValueKind.Object:
                    Flatten(value, prefix, serverId, name);
                    break;
            }
        }
    }

    /// <summary>
    /// The exporter's connz collector: /connz's paging figures, and sums over the connections it lists
    /// (its default page, the first 1024, as the exporter reads it); the message and byte sums are counters.
    /// </summary>
    private void UpdateConnz(string serverId)
    {
        var connz = _pages.Connz(new ConnzQuery());
        double pending = 0, subscriptions = 0, inBytes = 0, outBytes = 0, inMsgs = 0, outMsgs = 0;
        foreach (var c in connz.Connections ?? [])
        {
            pending += c.PendingBytes;
            subscriptions += c.Subscriptions;
            inBytes += c.InBytes;
            outBytes += c.OutBytes;
            inMsgs += c.InMsgs;
            outMsgs += c.OutMsgs;
        }

        const string Prefix = $"{CoreSystem}_connz";
        Gauge($"{Prefix}_num_connections", "num_connections", "server_id").Set(connz.NumConnections, serverId);
        Gauge($"{Prefix}_total", "total", "server_id").Set(connz.Total, serverId);
        Gauge($"{Prefix}_offset", "offset", "server_id").Set(connz.Offset, serverId);
        Gauge($"{Prefix}_limit", "limit", "server_id").Set(connz.Limit, serverId);
        Gauge($"{Prefix}_pending_bytes", "pending_bytes", "server_id").Set(pending, serverId);
        Gauge($"{Prefix}_subscriptions", "subscriptions", "server_id").Set(subscriptions, serverId);
        Counter($"{Prefix}_in_bytes", "in_bytes", "server_id").Set(inBytes, serverId);
        Counter($"{Prefix}_out_bytes", "out_bytes", "server_id").Set(outBytes, serverId);
        Counter($"{Prefix}_in_msgs", "in_msgs", "server_id").Set(inMsgs, serverId);
        Counter($"{Prefix}_out_msgs", "out_msgs", "server_id").Set(outMsgs, serverId);
    }

    private ScrapedFamily Gauge(string name, string help, params string[] labelNames) =>
        Family(name, () => ScrapedFamily.Gauge(_factory, name, help, labelNames));

    private ScrapedFamily Counter(string name, string help, params string[] labelNames) =>
        Family(name, () => ScrapedFamily.Counter(_factory, name, help, labelNames));

    private ScrapedFamily Family(string name, Func<ScrapedFamily> create)
    {
        if (!_families.TryGetValue(name, out var family))
        {
            family = create();
            _families.Add(name, family);
        }

        return family;
    }

    // Prometheus' metric name grammar, [a-zA-Z_:][a-zA-Z0-9_:]*: a JSON key outside it is left out.
    private static bool IsMetricName(string name)
    {
        for (var i = 0; i < name.Length; i++)
        {
            var c = name[i];
            var ok = c is (>= 'a' and <= 'z') or (>= 'A' and <= 'Z') or '_' or ':' || (i > 0 && c is >= '0' and <= '9');
            if (!ok)
            {
                return false;
            }
        }

        return name.Length > 0;
    }
}
