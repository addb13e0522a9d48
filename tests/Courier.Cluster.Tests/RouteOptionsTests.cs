using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Cluster.Tests;

/// <summary>Cluster options across courier and nats-server 2.9.10: route authorization and no_advertise.</summary>
public sealed class RouteOptionsTests
{
    [Fact]
    public async Task Routes_with_cluster_authorization_mesh_courier_and_nats_server_and_carry_messages()
    {
        // Every node requires ruser:rpass on its route port and dials with them: the mesh forms both ways.
        await using var mesh = await Mesh.StartAsync([ServerKind.Courier, ServerKind.NatsServer, ServerKind.Courier], "ruser:rpass", []);
        await using var sub = await mesh.ConnectAsync(1);
        await using var pub = await mesh.ConnectAsync(2);
        await using var collect = await Collect.SubscribeAsync(sub, "auth.routes");
        await Mesh.BarrierAsync(sub, 2);
        await pub.PublishAsync("auth.routes", "through an authorized route");
        Assert.True(await Poll.UntilAsync(() => collect.Messages.Count == 1, TimeSpan.FromSeconds(20)), mesh.Diagnostics());
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task A_route_with_wrong_credentials_is_refused_and_never_joins(ServerKind kind)
    {
        await using var mesh = await Mesh.StartAsync([kind], "ruser:rpass", []);
        using var tcp = new System.Net.Sockets.TcpClient();
        await tcp.ConnectAsync("127.0.0.1", mesh.RoutePorts[0]);
        using var reader = new StreamReader(tcp.GetStream());
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        Assert.StartsWith("INFO ", await reader.ReadLineAsync(timeout.Token), StringComparison.Ordinal);
        await tcp.GetStream().WriteAsync(System.Text.Encoding.UTF8.GetBytes(
            $"CONNECT {{\"echo\":true,\"verbose\":false,\"pedantic\":false,\"user\":\"ruser\",\"pass\":\"wrong\",\"tls_required\":false,\"name\":\"NTESTPEER\",\"headers\":true,\"cluster\":\"{Mesh.ClusterName}\",\"lnoc\":true}}\r\n"));
        string? line;
        do
        {
            line = await reader.ReadLineAsync(timeout.Token);
        }
        while (line == "PING");

        Assert.Equal("-ERR 'Authorization Violation'", line);
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task No_advertise_keeps_the_other_nodes_out_of_client_info(ServerKind kind)
    {
        await using var mesh = await Mesh.StartAsync([kind, ServerKind.Courier], null, ["--no_advertise"]);
        await using var client = await mesh.ConnectAsync(0);
        await Mesh.BarrierAsync(client, 1); // the route is up: without no_advertise, INFO would list both nodes by now
        await client.PingAsync();
        Assert.True((client.ServerInfo?.ClientConnectUrls ?? []).Length <= 1, string.Join(", ", client.ServerInfo?.ClientConnectUrls ?? []));
    }
}
