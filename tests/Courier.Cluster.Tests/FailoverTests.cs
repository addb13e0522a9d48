using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Cluster.Tests;

/// <summary>A node of three is killed (by pid): its client fails over, and the cluster removes it.</summary>
public sealed class FailoverTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(45);

    [Fact]
    public async Task A_client_whose_node_is_killed_reconnects_to_a_node_it_learned_and_keeps_working()
    {
        await using var mesh = await Mesh.StartAsync(ServerKind.Courier, ServerKind.Courier, ServerKind.Courier);
        await using var service = await mesh.ConnectAsync(0, "service");
        var subscription = await service.SubscribeCoreAsync<string>("failover.svc");
        var responder = Task.Run(async () =>
        {
            await foreach (var message in subscription.Msgs.ReadAllAsync())
            {
                await message.ReplyAsync("from node-0");
            }
        });
        await service.PingAsync();

        // The client is given node 2 only; it learns the others from INFO connect_urls.
        await using var client = new NatsConnection(new NatsOpts
        {
            Url = mesh.Nodes[2].Url,
            Name = "failover-client",
            RequestTimeout = TimeSpan.FromSeconds(5),
            MaxReconnectRetry = 200,
            ReconnectWaitMin = TimeSpan.FromMilliseconds(50),
            ReconnectWaitMax = TimeSpan.FromMilliseconds(200),
        });
        await client.ConnectAsync();
        Assert.True(
            await Poll.UntilAsync(() => client.ServerInfo?.ClientConnectUrls?.Length == 3, Timeout),
            $"connect_urls: {string.Join(", ", client.ServerInfo?.ClientConnectUrls ?? [])}");
        await Mesh.BarrierAsync(service, 2);
        Assert.Equal("from node-0", (await client.RequestAsync<string, string>("failover.svc", "before")).Data);

        // Everyone up in the cluster before the kill, so the removal below is the SBR's and not a failed join.
        Assert.True(await Poll.UntilAsync(() => mesh.Nodes[0].Log.All().Contains("(node-2)", StringComparison.Ordinal), Timeout), mesh.Diagnostics());
        await mesh.Nodes[2].DisposeAsync();

        Assert.True(
            await Poll.UntilAsync(() => client.ConnectionState == NatsConnectionState.Open && client.ServerInfo?.Name != "node-2", Timeout),
            $"client state {client.ConnectionState}, server {client.ServerInfo?.Name}\n{mesh.Diagnostics()}");
        var after = await Poll.UntilAsync(
            async () =>
            {
                try
                {
                    return (await client.RequestAsync<string, string>("failover.svc", "after")).Data == "from node-0";
                }
                catch (Exception e) when (e is NatsNoRespondersException or NatsNoReplyException or NatsException or TimeoutException)
                {
                    return false;
                }
            },
            Timeout);
        Assert.True(after, $"no reply after failover\n{mesh.Diagnostics()}");

        // Failure detection and the split-brain resolver (keep-majority) remove the dead member; its route is gone.
        Assert.True(
            await Poll.UntilAsync(() => mesh.Nodes[0].Log.All().Contains("Cluster member removed:", StringComparison.Ordinal), Timeout),
            $"node-2 never removed\n{mesh.Nodes[0].Diagnostics(80)}");
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    using var routez = JsonDocument.Parse(await http.GetStringAsync(new Uri(mesh.Nodes[0].MonitorUri, "routez")));
                    var routes = routez.RootElement.GetProperty("routes").EnumerateArray().Select(r => r.GetProperty("remote_name").GetString()).ToList();
                    return routes is ["node-1"];
                },
                Timeout),
            "node-0's routes are not just node-1");

        await subscription.DisposeAsync();
        await responder;
    }
}
