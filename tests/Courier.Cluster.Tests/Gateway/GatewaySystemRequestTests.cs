using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using NATS.Client.Core;

namespace Courier.Cluster.Tests.Gateway;

/// <summary>
/// Two gateways, <c>east</c> and <c>west</c>, one server each and both of one kind, with a system account:
/// the system account's GATEWAYZ requests (<c>$SYS.REQ.SERVER.PING.GATEWAYZ</c> with a server filter,
/// <c>$SYS.REQ.SERVER.&lt;id&gt;.GATEWAYZ</c>) with nats-server's GatewayzEventOptions (<c>name</c>,
/// <c>accounts</c>, <c>account_name</c>) and /gatewayz's <c>gw_name</c>, differential (courier, nats-server
/// 2.9.10). On courier, <c>/metrics</c> shows both links as prometheus-nats-exporter's gatewayz collector does.
/// </summary>
public sealed class GatewaySystemRequestTests
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(10) };

    // nats-server's ConnInfo of a gateway link, the fields every link has.
    private static readonly string[] ConnectionFields =
        ["cid", "ip", "port", "start", "last_activity", "uptime", "idle", "pending_bytes", "in_msgs", "out_msgs", "in_bytes", "out_bytes", "subscriptions", "name"];

    private static string Config(string name, int port, string otherName, int otherPort) => $$"""
        system_account: SYS
        accounts {
          SYS { users [ { user: sys, password: sys } ] }
          A { users [ { user: a, password: a } ] }
        }
        {{GatewayTopology.Config(name, port, otherName, otherPort)}}
        """;

    private sealed record Pair(ServerProcess East, ServerProcess West, int EastPort, int WestPort) : IAsyncDisposable
    {
        public async ValueTask DisposeAsync()
        {
            await West.DisposeAsync();
            await East.DisposeAsync();
        }
    }

    // Both servers, and both links of each up (as /gatewayz shows them).
    private static async Task<Pair> StartAsync(ServerKind kind)
    {
        var (eastPort, westPort) = (LoopbackPorts.Next(), LoopbackPorts.Next());
        var east = await ServerProcess.StartAsync(kind, Config("east", eastPort, "west", westPort), "-n", "east1");
        var west = await ServerProcess.StartAsync(kind, Config("west", westPort, "east", eastPort), "-n", "west1");
        var pair = new Pair(east, west, eastPort, westPort);
        var linked = await Poll.UntilAsync(
            async () => await LinkedAsync(east, "west") && await LinkedAsync(west, "east"),
            GatewayTopology.ConvergeTimeout);
        if (!linked)
        {
            var diagnostics = $"{east.Diagnostics(60)}\n\n{west.Diagnostics(60)}";
            await pair.DisposeAsync();
            Assert.Fail($"the gateway links did not come up\n{diagnostics}");
        }

        return pair;
    }

    private static async Task<bool> LinkedAsync(ServerProcess server, string other)
    {
        using var page = JsonDocument.Parse(await Http.GetStringAsync(new Uri(server.MonitorUri, "gatewayz")));
        var root = page.RootElement;
        return root.GetProperty("outbound_gateways").TryGetProperty(other, out _)
            && root.GetProperty("inbound_gateways").TryGetProperty(other, out var inbound) && inbound.GetArrayLength() > 0;
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task Gatewayz_requests_show_the_links_and_filter_by_gateway_and_account(ServerKind kind)
    {
        await using var pair = await StartAsync(kind);
        await using var sys = await ConnectAsync(pair.East.Url, "sys");
        var serverId = JsonDocument.Parse(await Http.GetStringAsync(new Uri(pair.East.MonitorUri, "varz"))).RootElement.GetProperty("server_id").GetString()!;

        // PING with a server filter: east answers, and only east (the first answer is east's).
        var ping = await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.GATEWAYZ", """{"server_name":"east1"}""");
        Assert.Equal(serverId, ping.GetProperty("server").GetProperty("id").GetString());
        var data = ping.GetProperty("data");
        Assert.Equal(serverId, data.GetProperty("server_id").GetString());
        Assert.Equal("east", data.GetProperty("name").GetString());
        Assert.Equal(pair.EastPort, data.GetProperty("port").GetInt32());
        var outbound = data.GetProperty("outbound_gateways").GetProperty("west");
        Assert.True(outbound.GetProperty("configured").GetBoolean());
        Assert.False(outbound.TryGetProperty("accounts", out _));
        var connection = outbound.GetProperty("connection");
        foreach (var field in ConnectionFields)
        {
            Assert.True(connection.TryGetProperty(field, out _), $"no \"{field}\" in {connection}");
        }

        Assert.Equal(pair.WestPort, connection.GetProperty("port").GetInt32());
        var inbound = Assert.Single(data.GetProperty("inbound_gateways").GetProperty("west").EnumerateArray());
        Assert.False(inbound.GetProperty("configured").GetBoolean());

        // name: only that remote gateway's links; a gateway without an outbound link is a null map.
        var west = (await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.GATEWAYZ", """{"name":"west"}""")).GetProperty("data");
        Assert.Equal(["west"], west.GetProperty("outbound_gateways").EnumerateObject().Select(o => o.Name));
        Assert.Equal(["west"], west.GetProperty("inbound_gateways").EnumerateObject().Select(o => o.Name));
        var nowhere = (await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.GATEWAYZ", """{"name":"nowhere"}""")).GetProperty("data");
        Assert.Equal(JsonValueKind.Null, nowhere.GetProperty("outbound_gateways").ValueKind);
        Assert.Equal("{}", nowhere.GetProperty("inbound_gateways").GetRawText());
        using var page = JsonDocument.Parse(await Http.GetStringAsync(new Uri(pair.East.MonitorUri, "gatewayz?gw_name=nowhere")));
        Assert.Equal(JsonValueKind.Null, page.RootElement.GetProperty("outbound_gateways").ValueKind);

        // account_name of an account no link has a mode for: no accounts list on either link.
        var unknown = (await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.GATEWAYZ", """{"account_name":"NOPE"}""")).GetProperty("data");
        Assert.False(unknown.GetProperty("outbound_gateways").GetProperty("west").TryGetProperty("accounts", out _));
        Assert.False(Assert.Single(unknown.GetProperty("inbound_gateways").GetProperty("west").EnumerateArray()).TryGetProperty("accounts", out _));
    }

    [Fact]
    public async Task Courier_gatewayz_accounts_are_in_interest_only_mode_with_the_remotes_interest()
    {
        await using var pair = await StartAsync(ServerKind.Courier);
        await using var sys = await ConnectAsync(pair.East.Url, "sys");
        await using var eastClient = await ConnectAsync(pair.East.Url, "a");
        await using var westClient = await ConnectAsync(pair.West.Url, "a");
        var p = $"gwreq{Guid.NewGuid():N}";
        var diagnostics = $"{pair.East.Diagnostics(40)}\n\n{pair.West.Diagnostics(40)}";
        await using var queue = await Collect.SubscribeAsync(westClient, $"{p}.work", "workers");
        await using var held = await Collect.SubscribeAsync(westClient, $"{p}.held");
        await CrossedAsync(westClient, eastClient, $"{p}.toeast", diagnostics);
        await CrossedAsync(eastClient, westClient, $"{p}.towest", diagnostics);

        // East's outbound link to west holds west's interest in A: each subscription of west's client (the queue
        // member, the held one, NATS.Net's request inbox); the crossing probes' own leave with their RS-, hence the wait.
        JsonElement outbound = default;
        var westSubs = 0;
        var settled = await Poll.UntilAsync(
            async () =>
            {
                using var subsz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(pair.West.MonitorUri, "subsz?subs=1&acc=A&limit=100")));
                westSubs = subsz.RootElement.GetProperty("total").GetInt32();
                var data = (await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.GATEWAYZ", """{"server_name":"east1","account_name":"A"}""")).GetProperty("data");
                outbound = Assert.Single(data.GetProperty("outbound_gateways").GetProperty("west").GetProperty("accounts").EnumerateArray());
                return outbound.GetProperty("num_subs").GetInt32() == westSubs;
            },
            GatewayTopology.ConvergeTimeout);
        Assert.True(settled, $"west has {westSubs} subscriptions in A; east's link: {outbound}");
        Assert.True(westSubs >= 2, $"west has {westSubs} subscriptions in A");
        Assert.Equal("A", outbound.GetProperty("name").GetString());
        Assert.Equal("Interest-Only", outbound.GetProperty("interest_mode").GetString());
        Assert.Equal(1000, outbound.GetProperty("interest_only_threshold").GetInt32());
        Assert.Equal(1, outbound.GetProperty("num_queue_subs").GetInt32());

        // East's inbound link from west: the accounts whose interest east sends there in full, A among them
        // (east's client subscribed to the crossing probe in A).
        var all = (await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.GATEWAYZ", """{"server_name":"east1","accounts":true}""")).GetProperty("data");
        var inbound = Assert.Single(all.GetProperty("inbound_gateways").GetProperty("west").EnumerateArray());
        var switched = inbound.GetProperty("accounts").EnumerateArray().ToList();
        Assert.All(switched, a => Assert.Equal("Interest-Only", a.GetProperty("interest_mode").GetString()));
        Assert.Contains(switched, a => a.GetProperty("name").GetString() == "A");

        using var page = JsonDocument.Parse(await Http.GetStringAsync(new Uri(pair.East.MonitorUri, "gatewayz?acc_name=A")));
        Assert.Equal(westSubs, page.RootElement.GetProperty("outbound_gateways").GetProperty("west").GetProperty("accounts")[0].GetProperty("num_subs").GetInt32());
    }

    [Fact]
    public async Task Metrics_show_both_gateway_links_as_the_exporter_does()
    {
        await using var pair = await StartAsync(ServerKind.Courier);
        using var gatewayz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(pair.East.MonitorUri, "gatewayz")));
        var root = gatewayz.RootElement;
        var serverId = root.GetProperty("server_id").GetString()!;
        var metrics = PrometheusText.Parse(await Http.GetStringAsync(new Uri(pair.East.MonitorUri, "metrics")));

        foreach (var (kind, link, configured) in new[]
        {
            ("outbound_gateway", root.GetProperty("outbound_gateways").GetProperty("west"), 1.0),
            ("inbound_gateway", root.GetProperty("inbound_gateways").GetProperty("west")[0], 0.0),
        })
        {
            var cid = link.GetProperty("connection").GetProperty("cid").GetUInt64().ToString(System.Globalization.CultureInfo.InvariantCulture);
            var sample = Assert.Single(PrometheusText.Family(metrics, $"gnatsd_gatewayz_{kind}_configured").Samples);
            Assert.Equal(new[] { "gateway_name", "cid", "remote_gateway_name", "server_id" }.Order(StringComparer.Ordinal), sample.Labels.Keys.Order(StringComparer.Ordinal));
            Assert.Equal("east", sample.Labels["gateway_name"]);
            Assert.Equal("west", sample.Labels["remote_gateway_name"]);
            Assert.Equal(cid, sample.Labels["cid"]);
            Assert.Equal(serverId, sample.Labels["server_id"]);
            Assert.Equal(configured, sample.Value);
            var start = link.GetProperty("connection").GetProperty("start").GetDateTimeOffset().ToUnixTimeSeconds();
            Assert.Equal(start, Assert.Single(PrometheusText.Family(metrics, $"gnatsd_gatewayz_{kind}_conn_start_time_seconds").Samples).Value);
            foreach (var name in new[] { "conn_last_activity_seconds", "conn_uptime_seconds", "conn_idle_seconds", "conn_rtt", "conn_pending_bytes", "conn_in_msgs", "conn_out_msgs", "conn_in_bytes", "conn_out_bytes", "conn_subscriptions" })
            {
                Assert.Equal(cid, Assert.Single(PrometheusText.Family(metrics, $"gnatsd_gatewayz_{kind}_{name}").Samples).Labels["cid"]);
            }
        }
    }



    private static async Task CrossedAsync(NatsConnection subscriber, NatsConnection publisher, string readySubject, string diagnostics)
    {
        await using var ready = await Collect.SubscribeAsync(subscriber, readySubject);
        var crossed = await Poll.UntilAsync(
            async () =>
            {
                await publisher.PublishAsync(readySubject, "?");
                await publisher.PingAsync();
                return !ready.Messages.IsEmpty;
            },
            GatewayTopology.ConvergeTimeout);
        Assert.True(crossed, $"interest in {readySubject} did not cross the gateway\n{diagnostics}");
    }

    private static async Task<NatsConnection> ConnectAsync(string url, string user)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = url,
            Name = "gateway-requests-it",
            AuthOpts = new NatsAuthOpts { Username = user, Password = user },
            RequestTimeout = TimeSpan.FromSeconds(10),
            CommandTimeout = TimeSpan.FromSeconds(10),
            MaxReconnectRetry = 0,
        });
        await nats.ConnectAsync();
        return nats;
    }
}
