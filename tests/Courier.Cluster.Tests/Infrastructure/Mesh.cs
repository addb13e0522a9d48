using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using NATS.Client.Core;

namespace Courier.Cluster.Tests.Infrastructure;

/// <summary>
/// A full mesh of server processes (courier, or Debian's nats-server) on loopback: each node listens
/// for routes on a free port and names every node, itself included, in <c>--routes</c>, as
/// nats-server's own cluster tests start their nodes. Each node also answers <c>_probe.&lt;index&gt;</c>,
/// which the tests use as an ordering barrier across routes.
/// </summary>
public sealed class Mesh : IAsyncDisposable
{
    /// <summary>The cluster name every node is given.</summary>
    public const string ClusterName = "courier-it";

    /// <summary>How long the mesh may take to form, and interest to converge, on a loaded machine.</summary>
    public static readonly TimeSpan ConvergeTimeout = TimeSpan.FromSeconds(20);

    private readonly List<NatsConnection> _probeConnections = [];
    private readonly List<ServerProcess> _nodes;
    private readonly List<string[]> _args;
    private readonly IReadOnlyList<string?> _configTexts;

    private Mesh(List<ServerProcess> nodes, IReadOnlyList<int> routePorts, List<string[]> args, IReadOnlyList<string?> configTexts)
    {
        _nodes = nodes;
        RoutePorts = routePorts;
        _args = args;
        _configTexts = configTexts;
    }

    /// <summary>The node processes, in the order asked for (a restarted node replaces its old process).</summary>
    public IReadOnlyList<ServerProcess> Nodes => _nodes;

    /// <summary>Each node's route port.</summary>
    public IReadOnlyList<int> RoutePorts { get; }

    /// <summary>Starts one node per kind, all routed to each other, and waits until every node reaches every other.</summary>
    public static Task<Mesh> StartAsync(params ServerKind[] kinds) => StartAsync(kinds, null, []);

    /// <summary>
    /// As <see cref="StartAsync(ServerKind[])"/>; with <paramref name="routeCredentials"/> (<c>user:password</c>)
    /// every route listener requires them and every route URL carries them; <paramref name="extraArgs"/> go to every node,
    /// and <paramref name="configText"/> (e.g. a <c>cluster { tls { } }</c> block) is every node's config file (its probes connect without credentials),
    /// unless <paramref name="nodeConfig"/> gives a node its own (e.g. its <c>server_tags</c>);
    /// <paramref name="nodeArgs"/> adds arguments of each node's own (e.g. its JetStream store directory, kept across a restart).
    /// </summary>
    public static async Task<Mesh> StartAsync(IReadOnlyList<ServerKind> kinds, string? routeCredentials, IReadOnlyList<string> extraArgs, string? configText = null, Func<int, IReadOnlyList<string>>? nodeArgs = null, Func<int, string?>? nodeConfig = null)
    {
        var routePorts = kinds.Select(_ => LoopbackPorts.Next()).ToArray();
        var auth = routeCredentials is null ? "" : routeCredentials + "@";
        var routes = string.Join(',', routePorts.Select(p => $"nats-route://{auth}127.0.0.1:{p}"));
        var nodes = new List<ServerProcess>();
        var allArgs = new List<string[]>();
        var configs = new List<string?>();
        try
        {
            for (var i = 0; i < kinds.Count; i++)
            {
                string[] args = ["-n", $"node-{i}", "--cluster", $"nats://{auth}127.0.0.1:{routePorts[i]}", "--routes", routes, "--cluster_name", ClusterName, .. extraArgs, .. nodeArgs?.Invoke(i) ?? []];
                allArgs.Add(args);
                configs.Add(nodeConfig?.Invoke(i) ?? configText);
                nodes.Add(await ServerProcess.StartAsync(kinds[i], configs[i], args));
            }
        }
        catch
        {
            foreach (var node in nodes)
            {
                await node.DisposeAsync();
            }

            throw;
        }

        var mesh = new Mesh(nodes, routePorts, allArgs, configs);
        try
        {
            await mesh.StartProbesAsync();
            await mesh.WaitForFullMeshAsync();
        }
        catch
        {
            await mesh.DisposeAsync();
            throw;
        }

        return mesh;
    }

    /// <summary>A NATS.Net connection to node <paramref name="index"/> (no reconnects).</summary>
    public async Task<NatsConnection> ConnectAsync(int index, string name = "cluster-it", string? user = null)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = Nodes[index].Url,
            Name = name,
            AuthOpts = user is null ? NatsAuthOpts.Default : new NatsAuthOpts { Username = user, Password = user },
            RequestTimeout = TimeSpan.FromSeconds(5),
            CommandTimeout = TimeSpan.FromSeconds(10),
            MaxReconnectRetry = 0,
        });
        await nats.ConnectAsync();
        return nats;
    }

    /// <summary>
    /// Returns once everything <paramref name="from"/>'s node received before this call from the
    /// connection has reached node <paramref name="to"/> and been applied there: a request over the
    /// same route to node <paramref name="to"/>'s probe, answered. A SUB sent on <paramref name="from"/>
    /// before this call is then known to node <paramref name="to"/> (routes keep order).
    /// </summary>
    public static async Task BarrierAsync(NatsConnection from, int to, CancellationToken cancellationToken = default)
    {
        await from.PingAsync(cancellationToken);

        // "No responders" means the probe's interest is not known here right now (a route between the two being
        // replaced, as nats-server does with a duplicate route): asked again until the mesh has converged.
        var deadline = DateTime.UtcNow + ConvergeTimeout;
        while (true)
        {
            try
            {
                await from.RequestAsync<string, string>($"_probe.{to}", "barrier", cancellationToken: cancellationToken);
                return;
            }
            catch (NatsNoRespondersException) when (DateTime.UtcNow < deadline)
            {
                await Task.Delay(50, cancellationToken);
            }
        }
    }

    /// <summary>
    /// Starts node <paramref name="index"/> again (after the test killed it) with the same name, routes
    /// and route port, and the same client and monitoring ports as before, as an operator restarts a node.
    /// </summary>
    public async Task<ServerProcess> RestartAsync(int index)
    {
        var old = _nodes[index];
        await old.DisposeAsync();
        string[] args = [.. _args[index], "-p", old.Port.ToString(System.Globalization.CultureInfo.InvariantCulture), "-m", old.MonitorPort.ToString(System.Globalization.CultureInfo.InvariantCulture)];
        var node = await ServerProcess.StartAsync(old.Kind, _configTexts[index], args);
        _nodes[index] = node;
        return node;
    }

    /// <summary>Diagnostics of every node for an assertion message.</summary>
    public string Diagnostics() => string.Join("\n\n", Nodes.Select(Describe));

    // A node killed by the test has no process left to describe, only its log.
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

    public async ValueTask DisposeAsync()
    {
        foreach (var connection in _probeConnections)
        {
            await connection.DisposeAsync();
        }

        foreach (var node in Nodes)
        {
            await node.DisposeAsync();
        }
    }

    private async Task StartProbesAsync()
    {
        for (var i = 0; i < Nodes.Count; i++)
        {
            var connection = await ConnectAsync(i, $"probe-{i}");
            _probeConnections.Add(connection);
            var subject = $"_probe.{i}";
            var subscription = await connection.SubscribeCoreAsync<string>(subject);
            _ = Task.Run(async () =>
            {
                await foreach (var message in subscription.Msgs.ReadAllAsync())
                {
                    await message.ReplyAsync("ok");
                }
            });
            await connection.PingAsync();
        }
    }

    /// <summary>Polls (bounded) until every node's probe answers a request made on every other node.</summary>
    private async Task WaitForFullMeshAsync()
    {
        var deadline = DateTime.UtcNow + ConvergeTimeout;
        for (var from = 0; from < Nodes.Count; from++)
        {
            for (var to = 0; to < Nodes.Count; to++)
            {
                if (from == to)
                {
                    continue;
                }

                while (true)
                {
                    try
                    {
                        await _probeConnections[from].RequestAsync<string, string>(
                            $"_probe.{to}", "mesh?", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(1) });
                        break;
                    }
                    catch (Exception e) when (e is NatsNoRespondersException or NatsNoReplyException or TimeoutException)
                    {
                        if (DateTime.UtcNow > deadline)
                        {
                            throw new TimeoutException($"node {from} does not reach node {to} after {ConvergeTimeout}\n{Diagnostics()}", e);
                        }

                        await Task.Delay(100);
                    }
                }
            }
        }
    }

}
