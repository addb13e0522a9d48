using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Cluster.Tests;

/// <summary>
/// Lame duck mode (SIGUSR2) on one node of three, against three courier nodes and against three
/// nats-server 2.9.10 nodes: the node's clients are told (INFO <c>"ldm":true</c>), its peers stop
/// advertising it to their clients while its routes still run, and once it closes its clients they
/// reconnect to the other nodes and keep working.
/// </summary>
public sealed class LameDuckClusterTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(45);

    // nats-server refuses a lame_duck_duration under 30 s; the grace period is the window in which the
    // node is in lame duck mode with its routes up, before it closes its clients and exits.
    private const string LameDuckConfig = """
        lame_duck_duration: "30s"
        lame_duck_grace_period: "5s"
        """;

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task A_node_in_lame_duck_mode_moves_its_clients_to_the_other_nodes(ServerKind kind)
    {
        await using var mesh = await Mesh.StartAsync([kind, kind, kind], null, [], LameDuckConfig);
        var leaving = $"127.0.0.1:{mesh.Nodes[2].Port}";

        await using var service = await mesh.ConnectAsync(0, "service");
        await using var responder = await service.SubscribeCoreAsync<string>("ldm.svc");
        var answering = Task.Run(async () =>
        {
            await foreach (var request in responder.Msgs.ReadAllAsync())
            {
                await request.ReplyAsync("node-0 answers");
            }
        });
        await service.PingAsync();

        await using var watcher = await mesh.ConnectAsync(1, "watcher");
        await using var moving = new NatsConnection(new NatsOpts
        {
            Url = mesh.Nodes[2].Url,
            Name = "moving",
            RequestTimeout = TimeSpan.FromSeconds(5),
            MaxReconnectRetry = 400,
            ReconnectWaitMin = TimeSpan.FromMilliseconds(50),
            ReconnectWaitMax = TimeSpan.FromMilliseconds(200),
        });
        var told = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        moving.LameDuckModeActivated += (_, _) =>
        {
            told.TrySetResult();
            return ValueTask.CompletedTask;
        };
        await moving.ConnectAsync();
        Assert.True(
            await Poll.UntilAsync(() => watcher.ServerInfo?.ClientConnectUrls?.Length == 3 && moving.ServerInfo?.ClientConnectUrls?.Length == 3, Timeout),
            $"connect_urls: watcher {string.Join(", ", watcher.ServerInfo?.ClientConnectUrls ?? [])}, moving {string.Join(", ", moving.ServerInfo?.ClientConnectUrls ?? [])}");
        await Mesh.BarrierAsync(service, 2);
        Assert.Equal("node-0 answers", (await moving.RequestAsync<string, string>("ldm.svc", "before")).Data);

        await mesh.Nodes[2].SignalAsync("USR2");

        await told.Task.WaitAsync(Timeout);
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        Assert.True(
            await Poll.UntilAsync(
                async () => watcher.ServerInfo?.ClientConnectUrls is { Length: 2 } urls && !urls.Contains(leaving)
                    && await RouteCountAsync(http, mesh.Nodes[1]) == 2,
                Timeout),
            $"node-1 still advertises {leaving} while node-2's route is up: {string.Join(", ", watcher.ServerInfo?.ClientConnectUrls ?? [])}\n{mesh.Diagnostics()}");

        Assert.True(
            await Poll.UntilAsync(() => moving.ConnectionState == NatsConnectionState.Open && moving.ServerInfo?.Name is "node-0" or "node-1", Timeout),
            $"the client did not move: {moving.ConnectionState}, {moving.ServerInfo?.Name}\n{mesh.Diagnostics()}");
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        return (await moving.RequestAsync<string, string>("ldm.svc", "after")).Data == "node-0 answers";
                    }
                    catch (Exception e) when (e is NatsNoRespondersException or NatsNoReplyException or NatsException or TimeoutException)
                    {
                        return false;
                    }
                },
                Timeout),
            $"no answer after the move\n{mesh.Diagnostics()}");
        Assert.Equal(0, await mesh.Nodes[2].WaitForExitAsync(Timeout));

        await responder.UnsubscribeAsync();
        await answering;
    }

    // num_routes: nats-server 2.9.10's /routez has no remote_name, so the count tells node-2's route is still up.
    private static async Task<int> RouteCountAsync(HttpClient http, ServerProcess node)
    {
        try
        {
            using var routez = JsonDocument.Parse(await http.GetStringAsync(new Uri(node.MonitorUri, "routez")));
            return routez.RootElement.GetProperty("num_routes").GetInt32();
        }
        catch (HttpRequestException)
        {
            return -1;
        }
    }
}
