using System.Globalization;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using NATS.Client.Core;

namespace Courier.Cluster.Tests.Leaf;

/// <summary>
/// A hub and a leaf on loopback, each courier or Debian's nats-server 2.9.10: the hub has accounts
/// <c>A</c> (user <c>a</c>) and <c>B</c> (user <c>b</c>) and takes leaf links as user <c>leaf</c>, bound to
/// <c>A</c>; the leaf (no accounts: its clients are in <c>$G</c>) dials the hub with those credentials and
/// redials every second. Clients use NATS.Net, unmodified.
/// </summary>
public sealed class LeafTopology : IAsyncDisposable
{
    /// <summary>How long a link may take to form, and interest to cross it, on a loaded machine.</summary>
    public static readonly TimeSpan ConvergeTimeout = TimeSpan.FromSeconds(20);

    private readonly string _hubConfig;

    private LeafTopology(ServerProcess hub, ServerProcess leaf, int leafPort, string hubConfig)
    {
        Hub = hub;
        Leaf = leaf;
        LeafPort = leafPort;
        _hubConfig = hubConfig;
    }

    public ServerProcess Hub { get; private set; }

    public ServerProcess Leaf { get; }

    /// <summary>The hub's leaf node port.</summary>
    public int LeafPort { get; }

    /// <summary>The hub's config: accounts A and B, and the leaf node listener whose user is bound to A (with <paramref name="leafExtra"/> in its block, e.g. tls).</summary>
    public static string HubConfig(int leafPort, string leafExtra = "") => $$"""
        accounts {
          A { users [ { user: a, password: a } ] }
          B { users [ { user: b, password: b } ] }
        }
        leafnodes {
          listen: "127.0.0.1:{{leafPort}}"
          authorization { users [ { user: leaf, password: leaf, account: A } ] }
          {{leafExtra}}
        }
        """;

    /// <summary>The leaf's config: one remote, the hub's leaf node port as user <c>leaf</c> (with <paramref name="remoteExtra"/>, e.g. deny lists).</summary>
    public static string LeafConfig(int leafPort, string remoteExtra = "") => $$"""
        leafnodes {
          remotes [ { url: "nats-leaf://leaf:leaf@127.0.0.1:{{leafPort}}", {{remoteExtra}} } ]
          reconnect: 1
        }
        """;

    public static async Task<LeafTopology> StartAsync(ServerKind hubKind, ServerKind leafKind, string remoteExtra = "", string hubLeafExtra = "")
    {
        var leafPort = LoopbackPorts.Next();
        var hubConfig = HubConfig(leafPort, hubLeafExtra);
        var hub = await ServerProcess.StartAsync(hubKind, hubConfig, "-n", "hub");
        ServerProcess? leaf = null;
        try
        {
            leaf = await ServerProcess.StartAsync(leafKind, LeafConfig(leafPort, remoteExtra), "-n", "leaf");
            var topology = new LeafTopology(hub, leaf, leafPort, hubConfig);
            await topology.WaitForLinkAsync();
            return topology;
        }
        catch
        {
            if (leaf is not null)
            {
                await leaf.DisposeAsync();
            }

            await hub.DisposeAsync();
            throw;
        }
    }

    /// <summary>A NATS.Net connection to the hub as user <paramref name="user"/> (account A for <c>a</c>, B for <c>b</c>).</summary>
    public Task<NatsConnection> ConnectHubAsync(string user = "a") => ConnectAsync(Hub.Url, user);

    /// <summary>A NATS.Net connection to the leaf (its global account).</summary>
    public Task<NatsConnection> ConnectLeafAsync() => ConnectAsync(Leaf.Url, null);

    /// <summary>Kills the hub and starts it again on the same client, monitoring and leaf node ports.</summary>
    public async Task RestartHubAsync(Func<Task>? whileDown = null)
    {
        var old = Hub;
        await old.DisposeAsync();
        if (whileDown is not null)
        {
            await whileDown();
        }

        Hub = await ServerProcess.StartAsync(old.Kind, _hubConfig, "-n", "hub", "-p", old.Port.ToString(CultureInfo.InvariantCulture), "-m", old.MonitorPort.ToString(CultureInfo.InvariantCulture));
    }

    /// <summary>
    /// Waits (bounded) until interest in <paramref name="readySubject"/>, subscribed by <paramref name="subscriber"/>
    /// after its other subscriptions, has crossed to <paramref name="publisher"/>'s server: a message published there
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
        Assert.True(crossed, $"interest in {readySubject} did not cross the leaf link\n{Diagnostics()}");
    }

    public string Diagnostics() => $"{Describe(Hub)}\n\n{Describe(Leaf)}";

    public async ValueTask DisposeAsync()
    {
        await Leaf.DisposeAsync();
        await Hub.DisposeAsync();
    }

    /// <summary>Waits until a hub client (account A) and a leaf client reach each other both ways.</summary>
    public async Task WaitForLinkAsync()
    {
        await using var hub = await ConnectHubAsync();
        await using var leaf = await ConnectLeafAsync();
        var p = $"link{Guid.NewGuid():N}";
        await CrossedAsync(leaf, hub, $"{p}.toleaf");
        await CrossedAsync(hub, leaf, $"{p}.tohub");
    }

    private static async Task<NatsConnection> ConnectAsync(string url, string? user)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = url,
            Name = "leaf-it",
            AuthOpts = user is null ? NatsAuthOpts.Default : new NatsAuthOpts { Username = user, Password = user },
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
