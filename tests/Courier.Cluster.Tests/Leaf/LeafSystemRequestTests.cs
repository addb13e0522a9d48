using System.Globalization;
using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using NATS.Client.Core;

namespace Courier.Cluster.Tests.Leaf;

/// <summary>
/// A hub with a system account and a courier leaf bound to the hub's account A: the system account's
/// LEAFZ requests (<c>$SYS.REQ.SERVER.PING.LEAFZ</c>, <c>$SYS.REQ.SERVER.&lt;id&gt;.LEAFZ</c>,
/// <c>$SYS.REQ.ACCOUNT.&lt;account&gt;.LEAFZ</c>) with nats-server's LeafzEventOptions, and <c>/leafz?acc=</c>,
/// differential on the hub's kind (courier, nats-server 2.9.10): the link's fields, account and interest.
/// On a courier hub, <c>/metrics</c> shows the link and the accounts as prometheus-nats-exporter's leafz
/// and accstatz collectors do.
/// </summary>
public sealed class LeafSystemRequestTests
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(10) };

    private static string HubConfig(int leafPort) => $$"""
        system_account: SYS
        accounts {
          SYS { users [ { user: sys, password: sys } ] }
          A { users [ { user: a, password: a } ] }
          B { users [ { user: b, password: b } ] }
        }
        leafnodes {
          listen: "127.0.0.1:{{leafPort}}"
          authorization { users [ { user: leaf, password: leaf, account: A } ] }
        }
        """;

    // nats-server 2.9.10's LeafInfo (Courier adds 2.10's name and is_spoke).
    private static readonly string[] LeafInfoFields = ["account", "ip", "port", "in_msgs", "out_msgs", "in_bytes", "out_bytes", "subscriptions"];

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task Leafz_requests_show_the_hubs_leaf_link_with_its_account_and_interest(ServerKind hubKind)
    {
        var p = $"leafreq{Guid.NewGuid():N}";
        var leafPort = LoopbackPorts.Next();
        await using var hub = await ServerProcess.StartAsync(hubKind, HubConfig(leafPort), "-n", "hub");
        await using var leaf = await ServerProcess.StartAsync(ServerKind.Courier, LeafTopology.LeafConfig(leafPort), "-n", "leaf");
        await using var sys = await ConnectAsync(hub.Url, "sys");
        await using var hubClient = await ConnectAsync(hub.Url, "a");
        await using var leafClient = await ConnectAsync(leaf.Url, null);
        await using var watched = await Collect.SubscribeAsync(leafClient, $"{p}.watched");
        await CrossedAsync(leafClient, hubClient, $"{p}.ready", $"{hub.Diagnostics(40)}\n\n{leaf.Diagnostics(40)}");
        var serverId = JsonDocument.Parse(await Http.GetStringAsync(new Uri(hub.MonitorUri, "varz"))).RootElement.GetProperty("server_id").GetString()!;

        var all = await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.LEAFZ", """{"subscriptions":true}""");
        Assert.Equal(serverId, all.GetProperty("server").GetProperty("id").GetString());
        var data = all.GetProperty("data");
        Assert.Equal(serverId, data.GetProperty("server_id").GetString());
        Assert.Equal(1, data.GetProperty("leafnodes").GetInt32());
        var link = Assert.Single(data.GetProperty("leafs").EnumerateArray());
        foreach (var field in LeafInfoFields)
        {
            Assert.True(link.TryGetProperty(field, out _), $"no \"{field}\" in {link}");
        }

        Assert.Equal("A", link.GetProperty("account").GetString());
        Assert.Equal("127.0.0.1", link.GetProperty("ip").GetString());
        Assert.True(link.GetProperty("out_msgs").GetInt64() > 0, link.ToString()); // the ready probes sent to the leaf
        var subs = link.GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()).ToArray();
        Assert.Contains($"{p}.watched", subs);
        Assert.Equal(link.GetProperty("subscriptions").GetInt32(), subs.Length);

        var direct = (await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.LEAFZ")).GetProperty("data");
        Assert.False(Assert.Single(direct.GetProperty("leafs").EnumerateArray()).TryGetProperty("subscriptions_list", out _));

        // The account filter: the option, the account request's subject, the page's acc.
        var ofA = (await NatsJson.RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.LEAFZ")).GetProperty("data");
        Assert.Equal("A", Assert.Single(ofA.GetProperty("leafs").EnumerateArray()).GetProperty("account").GetString());
        foreach (var (subject, body) in new[] { ("$SYS.REQ.ACCOUNT.B.LEAFZ", ""), ($"$SYS.REQ.SERVER.{serverId}.LEAFZ", """{"account":"B"}""") })
        {
            var none = (await NatsJson.RequestAsync(sys, subject, body)).GetProperty("data");
            Assert.Equal(0, none.GetProperty("leafnodes").GetInt32());
            Assert.Equal(JsonValueKind.Null, none.GetProperty("leafs").ValueKind);
        }

        using var pageA = JsonDocument.Parse(await Http.GetStringAsync(new Uri(hub.MonitorUri, "leafz?acc=A")));
        Assert.Equal(1, pageA.RootElement.GetProperty("leafnodes").GetInt32());
        using var pageB = JsonDocument.Parse(await Http.GetStringAsync(new Uri(hub.MonitorUri, "leafz?acc=B")));
        Assert.Equal(0, pageB.RootElement.GetProperty("leafnodes").GetInt32());

        // /accstatz counts the link in its account.
        using var accstatz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(hub.MonitorUri, "accstatz")));
        var statA = accstatz.RootElement.GetProperty("account_statz").EnumerateArray().Single(a => a.GetProperty("acc").GetString() == "A");
        Assert.Equal(1, statA.GetProperty("conns").GetInt32());
        Assert.Equal(1, statA.GetProperty("leafnodes").GetInt32());
        Assert.Equal(2, statA.GetProperty("total_conns").GetInt32());
    }

    [Fact]
    public async Task Metrics_of_a_courier_hub_show_the_leaf_link_and_the_accounts_as_the_exporter_does()
    {
        var p = $"leafmet{Guid.NewGuid():N}";
        var leafPort = LoopbackPorts.Next();
        await using var hub = await ServerProcess.StartAsync(ServerKind.Courier, HubConfig(leafPort), "-n", "hub");
        await using var leaf = await ServerProcess.StartAsync(ServerKind.Courier, LeafTopology.LeafConfig(leafPort), "-n", "leaf");
        await using var hubClient = await ConnectAsync(hub.Url, "a");
        await using var leafClient = await ConnectAsync(leaf.Url, null);
        await CrossedAsync(leafClient, hubClient, $"{p}.ready", $"{hub.Diagnostics(40)}\n\n{leaf.Diagnostics(40)}");

        using var leafz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(hub.MonitorUri, "leafz")));
        var link = Assert.Single(leafz.RootElement.GetProperty("leafs").EnumerateArray());
        var serverId = leafz.RootElement.GetProperty("server_id").GetString()!;
        var metrics = PrometheusText.Parse(await Http.GetStringAsync(new Uri(hub.MonitorUri, "metrics")));

        var nodes = Assert.Single(PrometheusText.Family(metrics, "gnatsd_leafz_conn_nodes_total").Samples);
        Assert.Equal(["server_id"], nodes.Labels.Keys);
        Assert.Equal(1, nodes.Value);

        var info = Assert.Single(PrometheusText.Family(metrics, "gnatsd_leafz_info").Samples);
        Assert.Equal(new[] { "server_id", "account", "account_id", "ip", "port", "name" }.Order(StringComparer.Ordinal), info.Labels.Keys.Order(StringComparer.Ordinal));
        Assert.Equal(serverId, info.Labels["server_id"]);
        Assert.Equal("A", info.Labels["account"]);
        Assert.Equal("A", info.Labels["account_id"]);
        Assert.Equal("127.0.0.1", info.Labels["ip"]);
        Assert.Equal(link.GetProperty("port").GetInt32().ToString(CultureInfo.InvariantCulture), info.Labels["port"]);
        Assert.Equal(link.GetProperty("name").GetString(), info.Labels["name"]);
        Assert.Equal(1, info.Value);
        Assert.Equal(link.GetProperty("subscriptions").GetInt32(), Assert.Single(PrometheusText.Family(metrics, "gnatsd_leafz_conn_subscriptions_total").Samples).Value);
        Assert.True(Assert.Single(PrometheusText.Family(metrics, "gnatsd_leafz_conn_out_msgs").Samples).Value >= 1); // the ready probes
        foreach (var name in new[] { "conn_rtt", "conn_in_msgs", "conn_in_bytes", "conn_out_bytes" })
        {
            Assert.Single(PrometheusText.Family(metrics, $"gnatsd_leafz_{name}").Samples);
        }

        // accstatz (?unused=1): every account; A has the client and the leaf link.
        var connections = PrometheusText.Family(metrics, "gnatsd_accstatz_current_connections");
        Assert.Equal(["A", "B", "SYS"], connections.Samples.Select(s => s.Labels["account"]).Where(a => a is "A" or "B" or "SYS").Order(StringComparer.Ordinal));
        var a = Assert.Single(connections.Samples, s => s.Labels["account"] == "A");
        Assert.Equal(1, a.Value);
        Assert.Equal("A", a.Labels["account_id"]);
        Assert.Equal("", a.Labels.GetValueOrDefault("account_name", ""));
        Assert.Equal(1, Assert.Single(PrometheusText.Family(metrics, "gnatsd_accstatz_leaf_nodes").Samples, s => s.Labels["account"] == "A").Value);
        Assert.Equal(2, Assert.Single(PrometheusText.Family(metrics, "gnatsd_accstatz_total_connections").Samples, s => s.Labels["account"] == "A").Value);
        Assert.Equal(0, Assert.Single(PrometheusText.Family(metrics, "gnatsd_accstatz_current_connections").Samples, s => s.Labels["account"] == "B").Value);
        Assert.True(Assert.Single(PrometheusText.Family(metrics, "gnatsd_accstatz_subscriptions").Samples, s => s.Labels["account"] == "A").Value >= 1); // the ready subscription's interest
        foreach (var name in new[] { "sent_messages", "sent_bytes", "received_messages", "received_bytes", "slow_consumers" })
        {
            Assert.Single(PrometheusText.Family(metrics, $"gnatsd_accstatz_{name}").Samples, s => s.Labels["account"] == "A");
        }
    }



    // Interest in readySubject, subscribed by subscriber after its other subscriptions, reaches publisher's server.
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
            LeafTopology.ConvergeTimeout);
        Assert.True(crossed, $"interest in {readySubject} did not cross the leaf link\n{diagnostics}");
    }

    private static async Task<NatsConnection> ConnectAsync(string url, string? user)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = url,
            Name = "leaf-requests-it",
            AuthOpts = user is null ? NatsAuthOpts.Default : new NatsAuthOpts { Username = user, Password = user },
            RequestTimeout = TimeSpan.FromSeconds(10),
            CommandTimeout = TimeSpan.FromSeconds(10),
            MaxReconnectRetry = 0,
        });
        await nats.ConnectAsync();
        return nats;
    }
}
