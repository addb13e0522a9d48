using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;

namespace Courier.Cluster.Tests.Leaf;

/// <summary>
/// Leaf node links in monitoring, as nats-server 2.9 shows them: <c>/leafz</c> (with <c>?subs=1</c> the
/// other side's interest), the <c>leafnodes</c> count and the <c>leaf</c> section of <c>/varz</c>; and
/// loop detection: a link that closes a loop is dropped with nats-server's "Loop detected" error.
/// </summary>
public sealed class LeafMonitoringTests
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(10) };

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task Leafz_and_varz_show_the_link_on_a_courier_hub_with_the_leafs_interest(ServerKind leafKind)
    {
        var p = $"leafmon{Guid.NewGuid():N}";
        await using var topology = await LeafTopology.StartAsync(ServerKind.Courier, leafKind);
        await using var leaf = await topology.ConnectLeafAsync();
        await using var hub = await topology.ConnectHubAsync();
        await using var interest = await Collect.SubscribeAsync(leaf, $"{p}.watched", "q");
        await topology.CrossedAsync(leaf, hub, $"{p}.ready");

        using var leafz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(topology.Hub.MonitorUri, "leafz?subs=1")));
        var root = leafz.RootElement;
        Assert.Equal(1, root.GetProperty("leafnodes").GetInt32());
        var link = Assert.Single(root.GetProperty("leafs").EnumerateArray());
        Assert.Equal("A", link.GetProperty("account").GetString());
        Assert.Equal("127.0.0.1", link.GetProperty("ip").GetString());
        Assert.False(link.GetProperty("is_spoke").GetBoolean());
        Assert.True(link.GetProperty("in_msgs").GetInt64() > 0); // the ready probes the leaf's client sent
        Assert.True(link.GetProperty("subscriptions").GetInt32() >= 2);
        var subs = link.GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()).ToArray();
        Assert.Contains($"{p}.watched q", subs);
        Assert.Contains(subs, s => s!.StartsWith("$LDS.", StringComparison.Ordinal));

        using var varz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(topology.Hub.MonitorUri, "varz")));
        Assert.Equal(1, varz.RootElement.GetProperty("leafnodes").GetInt32());
        Assert.Equal(topology.LeafPort, varz.RootElement.GetProperty("leaf").GetProperty("port").GetInt32());
    }

    [Fact]
    public async Task A_courier_leaf_shows_its_link_to_the_hub_as_a_spoke_and_its_remote_in_varz()
    {
        await using var topology = await LeafTopology.StartAsync(ServerKind.NatsServer, ServerKind.Courier);

        using var leafz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(topology.Leaf.MonitorUri, "leafz")));
        var link = Assert.Single(leafz.RootElement.GetProperty("leafs").EnumerateArray());
        Assert.True(link.GetProperty("is_spoke").GetBoolean());
        Assert.Equal("$G", link.GetProperty("account").GetString());
        Assert.Equal("hub", link.GetProperty("name").GetString());
        Assert.False(link.TryGetProperty("subscriptions_list", out _));

        using var varz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(topology.Leaf.MonitorUri, "varz")));
        var remote = Assert.Single(varz.RootElement.GetProperty("leaf").GetProperty("remotes").EnumerateArray());
        Assert.Equal([$"127.0.0.1:{topology.LeafPort}"], remote.GetProperty("urls").EnumerateArray().Select(u => u.GetString()));
    }

    [Theory]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    public async Task Two_servers_that_are_each_others_leaf_detect_the_loop(ServerKind first, ServerKind second)
    {
        var firstPort = LoopbackPorts.Next();
        var secondPort = LoopbackPorts.Next();
        static string Config(int listen, int dial) => $$"""
            leafnodes {
              listen: "127.0.0.1:{{listen}}"
              remotes [ { url: "nats-leaf://127.0.0.1:{{dial}}" } ]
              reconnect: 1
            }
            """;
        await using var a = await ServerProcess.StartAsync(first, Config(firstPort, secondPort), "-n", "first");
        await using var b = await ServerProcess.StartAsync(second, Config(secondPort, firstPort), "-n", "second");

        // Each tells the other its $LDS subject; passed back over the other link, it comes home: one side reports it.
        var detected = await Poll.UntilAsync(
            () => a.Log.All().Contains("Loop detected for leafnode account=\"$G\"", StringComparison.Ordinal)
                || b.Log.All().Contains("Loop detected for leafnode account=\"$G\"", StringComparison.Ordinal),
            LeafTopology.ConvergeTimeout);
        Assert.True(detected, $"{a.Diagnostics(60)}\n\n{b.Diagnostics(60)}");
    }
}

/// <summary>The system account's per-account statistics count a hub's leaf links in their account, as nats-server's AccountStatz.</summary>
public sealed class LeafAccountStatzTests
{
    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task Account_statz_counts_the_leaf_link_in_its_account(ServerKind hubKind)
    {
        var leafPort = LoopbackPorts.Next();
        var config = $$"""
            system_account: SYS
            accounts {
              SYS { users [ { user: sys, password: sys } ] }
              A { users [ { user: a, password: a } ] }
            }
            leafnodes {
              listen: "127.0.0.1:{{leafPort}}"
              authorization { users [ { user: leaf, password: leaf, account: A } ] }
            }
            """;
        await using var hub = await ServerProcess.StartAsync(hubKind, config);
        await using var leaf = await ServerProcess.StartAsync(ServerKind.Courier, LeafTopology.LeafConfig(leafPort));
        await using var sys = new NATS.Client.Core.NatsConnection(new NATS.Client.Core.NatsOpts { Url = hub.Url, AuthOpts = new NATS.Client.Core.NatsAuthOpts { Username = "sys", Password = "sys" }, MaxReconnectRetry = 0 });
        await sys.ConnectAsync();

        var leafnodes = -1;
        var counted = await Poll.UntilAsync(
            async () =>
            {
                var reply = await sys.RequestAsync<string, string>("$SYS.REQ.ACCOUNT.A.STATZ", "{\"include_unused\":true}");
                using var json = JsonDocument.Parse(reply.Data!);
                var stat = json.RootElement.GetProperty("data").GetProperty("account_statz").EnumerateArray().Single();
                leafnodes = stat.GetProperty("leafnodes").GetInt32();
                return leafnodes == 1;
            },
            LeafTopology.ConvergeTimeout);
        Assert.True(counted, $"leafnodes {leafnodes}\n{hub.Diagnostics(40)}");
    }
}
