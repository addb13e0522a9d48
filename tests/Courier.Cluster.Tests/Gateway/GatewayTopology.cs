using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using NATS.Client.Core;

namespace Courier.Cluster.Tests.Gateway;

/// <summary>
/// A two-region super-cluster on loopback: gateway <c>east</c> and gateway <c>west</c>, one server each,
/// each courier or Debian's nats-server 2.9.10, each listing the other in <c>gateway.gateways</c>. Clients
/// (global account) use NATS.Net, unmodified.
/// </summary>
public sealed class GatewayTopology : IAsyncDisposable
{
    /// <summary>How long the links may take to form, and interest to cross them, on a loaded machine.</summary>
    public static readonly TimeSpan ConvergeTimeout = TimeSpan.FromSeconds(20);

    private GatewayTopology(ServerProcess east, ServerProcess west, int eastPort, int westPort)
    {
        East = east;
        West = west;
        EastGatewayPort = eastPort;
        WestGatewayPort = westPort;
    }

    /// <summary>East's gateway port.</summary>
    public int EastGatewayPort { get; }

    /// <summary>West's gateway port.</summary>
    public int WestGatewayPort { get; }

    public ServerProcess East { get; }

    public ServerProcess West { get; }

    /// <summary>A server's config: its gateway <paramref name="name"/> on <paramref name="port"/>, the other one's at <paramref name="otherPort"/>.</summary>
    public static string Config(string name, int port, string otherName, int otherPort, string extra = "") => $$"""
        gateway {
          name: "{{name}}"
          listen: "127.0.0.1:{{port}}"
          gateways [ { name: "{{otherName}}", url: "nats://127.0.0.1:{{otherPort}}" } ]
          {{extra}}
        }
        """;

    /// <summary>Starts east then west (<paramref name="extra"/> in both gateway blocks, e.g. tls) and waits until messages cross both ways.</summary>
    public static async Task<GatewayTopology> StartAsync(ServerKind eastKind, ServerKind westKind, string extra = "")
    {
        var (eastPort, westPort) = (LoopbackPorts.Next(), LoopbackPorts.Next());
        var east = await ServerProcess.StartAsync(eastKind, Config("east", eastPort, "west", westPort, extra), "-n", "east1");
        ServerProcess? west = null;
        try
        {
            west = await ServerProcess.StartAsync(westKind, Config("west", westPort, "east", eastPort, extra), "-n", "west1");
            var topology = new GatewayTopology(east, west, eastPort, westPort);
            await topology.WaitForLinksAsync();
            return topology;
        }
        catch
        {
            if (west is not null)
            {
                await west.DisposeAsync();
            }

            await east.DisposeAsync();
            throw;
        }
    }

    public Task<NatsConnection> ConnectEastAsync() => ConnectAsync(East.Url);

    public Task<NatsConnection> ConnectWestAsync() => ConnectAsync(West.Url);

    /// <summary>
    /// Waits (bounded) until interest in <paramref name="readySubject"/>, subscribed by <paramref name="subscriber"/>
    /// after its other subscriptions, has crossed to <paramref name="publisher"/>'s cluster: a message published there
    /// arrives. Interest crosses a link in order, so the earlier subscriptions have crossed too.
    /// </summary>
    public async Task CrossedAsync(NatsConnection subscriber, NatsConnection publisher, string readySubject)
    {
        await using var ready = await Collect.SubscribeAsync(subscriber, readySubject);
        var crossed = await Poll.UntilAsync(
            async () =>
            {
                await publisher.PublishAsync(readySubject, "?");
                await publisher.PingAsync();
                return !ready.Messages.IsEmpty;
            },
            ConvergeTimeout);
        Assert.True(crossed, $"interest in {readySubject} did not cross the gateway\n{Diagnostics()}");
    }

    public string Diagnostics() => $"{Describe(East)}\n\n{Describe(West)}";

    public async ValueTask DisposeAsync()
    {
        await West.DisposeAsync();
        await East.DisposeAsync();
    }

    /// <summary>Waits until an east client and a west client reach each other both ways.</summary>
    private async Task WaitForLinksAsync()
    {
        await using var east = await ConnectEastAsync();
        await using var west = await ConnectWestAsync();
        var p = $"link{Guid.NewGuid():N}";
        await CrossedAsync(west, east, $"{p}.towest");
        await CrossedAsync(east, west, $"{p}.toeast");
    }

    private static async Task<NatsConnection> ConnectAsync(string url)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = url,
            Name = "gateway-it",
            RequestTimeout = TimeSpan.FromSeconds(10),
            CommandTimeout = TimeSpan.FromSeconds(10),
            MaxReconnectRetry = 0,
        });
        await nats.ConnectAsync();
        return nats;
    }

    private static string Describe(ServerProcess node)
    {
        try
        {
            return node.Diagnostics(60);
        }
        catch (InvalidOperationException)
        {
            return $"{node.Kind} pid {node.Pid} (killed)\n{node.Log.Tail(60)}";
        }
    }
}
