using Courier.Protocols;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// <c>gnatsd_leafz_*</c>, <c>gnatsd_gatewayz_*</c> and <c>gnatsd_accstatz_*</c>: prometheus-nats-exporter's
/// leafz, gatewayz and accstatz collectors (collector/leafz.go, gatewayz.go, accstatz.go; flags
/// <c>-leafz -gatewayz -accstatz</c>) over /leafz, /gatewayz and /accstatz?unused=1, all gauges, with the
/// exporter's names, help texts and label names in its order.
/// </summary>
internal sealed partial class PrometheusMetrics
{
    private static readonly string[] LeafLabels = ["server_id", "account", "account_id", "ip", "port", "name"];
    private static readonly string[] GatewayLabels = ["gateway_name", "cid", "remote_gateway_name", "server_id"];
    private static readonly string[] AccountStatLabels = ["server_id", "account", "account_id", "account_name"];

    /// <summary>
    /// The exporter's leafz collector over /leafz (it asks without <c>subs</c>, so its per-subscription
    /// <c>conn_subscriptions</c> series never has a sample and is not made): one series set per link.
    /// </summary>
    private void UpdateLeafz(string serverId)
    {
        const string Prefix = $"{CoreSystem}_leafz";
        var leafz = _pages.Leafz(subs: false);
        foreach (var leaf in leafz.Leafs ?? [])
        {
            // account_id repeats the account's name, as the exporter labels it.
            string[] labels = [serverId, leaf.Account, leaf.Account, leaf.Ip, leaf.Port.ToString(System.Globalization.CultureInfo.InvariantCulture), leaf.Name];
            Gauge($"{Prefix}_info", "info", LeafLabels).Set(1, labels);
            Gauge($"{Prefix}_conn_rtt", "rtt", LeafLabels).Set(RttSeconds(leaf.Rtt), labels);
            Gauge($"{Prefix}_conn_in_msgs", "in_msgs", LeafLabels).Set(leaf.InMsgs, labels);
            Gauge($"{Prefix}_conn_out_msgs", "out_msgs", LeafLabels).Set(leaf.OutMsgs, labels);
            Gauge($"{Prefix}_conn_in_bytes", "in_bytes", LeafLabels).Set(leaf.InBytes, labels);
            Gauge($"{Prefix}_conn_out_bytes", "out_bytes", LeafLabels).Set(leaf.OutBytes, labels);
            Gauge($"{Prefix}_conn_subscriptions_total", "subscriptions_total", LeafLabels).Set(leaf.NumSubs, labels);
        }

        Gauge($"{Prefix}_conn_nodes_total", "nodes_total", "server_id").Set(leafz.NumLeafs, serverId);
    }

    /// <summary>The exporter's gatewayz collector over /gatewayz: one series set per outbound and per inbound link.</summary>
    private void UpdateGatewayz(string serverId)
    {
        var gatewayz = _pages.Gatewayz();
        var local = gatewayz.Name ?? "";
        var now = gatewayz.Now;
        foreach (var (remote, link) in gatewayz.OutboundGateways ?? [])
        {
            Gateway("outbound_gateway", serverId, local, remote, link, now);
        }

        foreach (var (remote, links) in gatewayz.InboundGateways)
        {
            foreach (var link in links)
            {
                Gateway("inbound_gateway", serverId, local, remote, link, now);
            }
        }
    }

    private void Gateway(string kind, string serverId, string local, string remote, RemoteGatewayz link, DateTime now)
    {
        if (link.Connection is not { } c)
        {
            return;
        }

        var prefix = $"{CoreSystem}_gatewayz_{kind}";
        string[] labels = [local, c.Cid.ToString(System.Globalization.CultureInfo.InvariantCulture), remote, serverId];
        Gauge($"{prefix}_configured", "configured", GatewayLabels).Set(link.Configured ? 1 : 0, labels);
        Gauge($"{prefix}_conn_start_time_seconds", "conn_start_time_seconds", GatewayLabels).Set(new DateTimeOffset(c.Start).ToUnixTimeSeconds(), labels);
        Gauge($"{prefix}_conn_last_activity_seconds", "conn_last_activity_seconds", GatewayLabels).Set(new DateTimeOffset(c.LastActivity).ToUnixTimeSeconds(), labels);

        // The exporter parses the page's uptime and idle strings, whole seconds.
        Gauge($"{prefix}_conn_uptime_seconds", "conn_uptime_seconds", GatewayLabels).Set(Math.Floor((now - c.Start).TotalSeconds), labels);
        Gauge($"{prefix}_conn_idle_seconds", "conn_idle_seconds", GatewayLabels).Set(Math.Floor(Math.Max(0, (now - c.LastActivity).TotalSeconds)), labels);
        Gauge($"{prefix}_conn_rtt", "rtt", GatewayLabels).Set(RttSeconds(c.Rtt), labels);
        Gauge($"{prefix}_conn_pending_bytes", "pending_bytes", GatewayLabels).Set(c.PendingBytes, labels);
        Gauge($"{prefix}_conn_in_msgs", "in_msgs", GatewayLabels).Set(c.InMsgs, labels);
        Gauge($"{prefix}_conn_out_msgs", "out_msgs", GatewayLabels).Set(c.OutMsgs, labels);
        Gauge($"{prefix}_conn_in_bytes", "in_bytes", GatewayLabels).Set(c.InBytes, labels);
        Gauge($"{prefix}_conn_out_bytes", "out_bytes", GatewayLabels).Set(c.OutBytes, labels);
        Gauge($"{prefix}_conn_subscriptions", "subscriptions", GatewayLabels).Set(c.Subscriptions, labels);
    }

    /// <summary>
    /// The exporter's accstatz collector over /accstatz?unused=1: every account. nats-server 2.9.10's page
    /// has no <c>name</c>, so <c>account_name</c> is empty as the exporter leaves it; <c>subscriptions</c> is
    /// the account's subscription count (2.10's <c>num_subscriptions</c>, which the exporter reads).
    /// </summary>
    private void UpdateAccstatz(string serverId)
    {
        const string Prefix = $"{CoreSystem}_accstatz";
        foreach (var stat in _pages.AccountStatz(null, includeUnused: true).Accounts)
        {
            string[] labels = [serverId, stat.Account, stat.Account, ""];
            var subscriptions = _broker.Accounts.Find(stat.Account)?.Space.Count ?? 0;
            Gauge($"{Prefix}_current_connections", "current_connections", AccountStatLabels).Set(stat.Connections, labels);
            Gauge($"{Prefix}_total_connections", "total_connections", AccountStatLabels).Set(stat.TotalConnections, labels);
            Gauge($"{Prefix}_subscriptions", "subscriptions", AccountStatLabels).Set(subscriptions, labels);
            Gauge($"{Prefix}_leaf_nodes", "leaf_nodes", AccountStatLabels).Set(stat.LeafNodes, labels);
            Gauge($"{Prefix}_sent_messages", "sent_messages", AccountStatLabels).Set(stat.Sent.Msgs, labels);
            Gauge($"{Prefix}_sent_bytes", "sent_bytes", AccountStatLabels).Set(stat.Sent.Bytes, labels);
            Gauge($"{Prefix}_received_messages", "received_messages", AccountStatLabels).Set(stat.Received.Msgs, labels);
            Gauge($"{Prefix}_received_bytes", "received_bytes", AccountStatLabels).Set(stat.Received.Bytes, labels);
            Gauge($"{Prefix}_slow_consumers", "slow_consumers", AccountStatLabels).Set(stat.SlowConsumers, labels);
        }
    }

    // The exporter's time.ParseDuration of the page's rtt, in seconds; none (or unparsable) is 0.
    private static double RttSeconds(string? rtt) =>
        rtt is not null && GoDuration.TryParse(rtt, out var value, out _) ? value.TotalSeconds : 0;
}
