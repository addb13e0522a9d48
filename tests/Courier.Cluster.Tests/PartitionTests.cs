using System.Globalization;
using System.Net;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using NATS.Client.Core;

namespace Courier.Cluster.Tests;

/// <summary>
/// One node of three is cut off from the other two (every route link and Akka.Remote connection to
/// or from it, through <see cref="PartitionProxy"/>) and the cut is healed: the split-brain resolver
/// downs the minority node, the majority keeps routing, and after the heal the routes come back
/// with no message delivered twice.
/// </summary>
public sealed class PartitionTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(45); // failure detection (6 s pause) + SBR's stable-after (7 s) + gossip, on a loaded machine
    private const string Subject = "pt.seq";
    private const string Queue = "workers";
    private const int Cut = 2; // the node cut off

    [Fact]
    public async Task A_node_cut_off_is_downed_the_majority_keeps_routing_and_after_the_heal_nothing_arrives_twice()
    {
        await using var cluster = await ProxiedCluster.StartAsync(3);
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        foreach (var node in cluster.Nodes)
        {
            Assert.True(await NodeMonitor.HealthAsync(http, node, HttpStatusCode.OK, Timeout), $"{node.Url} never became a healthy member\n{cluster.Diagnostics()}");
        }

        await using var publisher = await cluster.ConnectAsync(0, "publisher");
        await using var onB = await cluster.ConnectAsync(1, "sub-b");
        await using var onC = await cluster.ConnectAsync(Cut, "sub-c");
        await using var sequenceB = await Collect.SubscribeAsync(onB, Subject);
        await using var sequenceC = await Collect.SubscribeAsync(onC, Subject);
        await using var workerA = await cluster.ConnectAsync(0, "worker-a");
        await using var workerB = await cluster.ConnectAsync(1, "worker-b");
        await using var workerC = await cluster.ConnectAsync(Cut, "worker-c");
        await using var queueA = await Collect.SubscribeAsync(workerA, Subject, Queue);
        await using var queueB = await Collect.SubscribeAsync(workerB, Subject, Queue);
        await using var queueC = await Collect.SubscribeAsync(workerC, Subject, Queue);
        foreach (var connection in (NatsConnection[])[onB, onC, workerB, workerC])
        {
            await cluster.BarrierAsync(connection, 0, Timeout);
        }

        // Before: every node gets everything.
        await PublishAsync(publisher, 1, 100);
        Assert.True(
            await Poll.UntilAsync(() => sequenceB.Messages.Count == 100 && sequenceC.Messages.Count == 100 && Count(queueA, queueB, queueC) == 100, Timeout),
            $"before the cut: B {sequenceB.Messages.Count}, C {sequenceC.Messages.Count}, workers {Count(queueA, queueB, queueC)} of 100\n{cluster.Diagnostics()}");

        // The cut: node 2 alone is the minority, and downs itself; the two others down it.
        cluster.CutOff(Cut);
        Assert.True(
            await NodeMonitor.HealthAsync(http, cluster.Nodes[Cut], HttpStatusCode.ServiceUnavailable, Timeout),
            $"the cut-off node still says it is healthy\n{cluster.Diagnostics()}");
        using var downed = await http.GetAsync(new Uri(cluster.Nodes[Cut].MonitorUri, "healthz"));
        var health = await downed.Content.ReadAsStringAsync();
        Assert.Contains("not a member of the cluster", health, StringComparison.Ordinal);
        Assert.True(
            await Poll.UntilAsync(() => cluster.Nodes[Cut].Log.All().Contains("(node-2, was ", StringComparison.Ordinal), Timeout),
            $"node-2 never logged its own removal\n{cluster.Nodes[Cut].Diagnostics(80)}");
        for (var i = 0; i < 2; i++)
        {
            var node = cluster.Nodes[i];
            Assert.True(
                await Poll.UntilAsync(() => node.Log.All().Contains("Cluster member removed:", StringComparison.Ordinal) && node.Log.All().Contains("(node-2, was ", StringComparison.Ordinal), Timeout),
                $"node-{i} never removed node-2\n{node.Diagnostics(80)}");
            Assert.True(await NodeMonitor.HealthAsync(http, node, HttpStatusCode.OK, Timeout), $"node-{i} of the majority is not healthy\n{cluster.Diagnostics()}");
            Assert.True(
                await Poll.UntilAsync(async () => (await NodeMonitor.RouteNamesAsync(http, node)).SequenceEqual([i == 0 ? "node-1" : "node-0"]), Timeout),
                $"node-{i} still routes to the cut-off node\n{cluster.Diagnostics()}");
        }

        // The majority keeps routing: B gets everything, the queue group once per message among A and B.
        await PublishAsync(publisher, 101, 200);
        Assert.True(
            await Poll.UntilAsync(() => sequenceB.Messages.Count == 200 && Count(queueA, queueB, queueC) == 200, Timeout),
            $"during the partition: B {sequenceB.Messages.Count}, workers {Count(queueA, queueB, queueC)} of 200\n{cluster.Diagnostics()}");
        Assert.Equal(100, sequenceC.Messages.Count);
        Assert.All(queueC.Messages, m => Assert.True(Number(m) <= 100, $"worker-c got {m.Data} while cut off"));

        // The heal: configured routes are dialled again, so the downed node routes as before (as nats-server's
        // nodes do), while it stays out of the Akka cluster and says so on /healthz until it is restarted.
        cluster.Heal();
        for (var i = 0; i < 3; i++)
        {
            var node = cluster.Nodes[i];
            string[] peers = [.. Enumerable.Range(0, 3).Where(j => j != i).Select(j => $"node-{j}")];
            Assert.True(
                await Poll.UntilAsync(async () => (await NodeMonitor.RouteNamesAsync(http, node)).SequenceEqual(peers), Timeout),
                $"node-{i}'s routes did not come back\n{cluster.Diagnostics()}");
        }

        foreach (var connection in (NatsConnection[])[onB, onC, workerB, workerC])
        {
            await cluster.BarrierAsync(connection, 0, Timeout);
        }

        await PublishAsync(publisher, 201, 400);
        Assert.True(
            await Poll.UntilAsync(() => sequenceB.Messages.Count >= 400 && sequenceC.Messages.Count >= 300 && Count(queueA, queueB, queueC) >= 400, Timeout),
            $"after the heal: B {sequenceB.Messages.Count} of 400, C {sequenceC.Messages.Count} of 300, workers {Count(queueA, queueB, queueC)} of 400\n{cluster.Diagnostics()}");

        // Let anything that would arrive twice arrive: a last message through every route, then count.
        await PublishAsync(publisher, 401, 401);
        Assert.True(await Poll.UntilAsync(() => sequenceB.Messages.Count >= 401 && sequenceC.Messages.Count >= 301, Timeout), "the last message did not arrive");

        Assert.Equal(Enumerable.Range(1, 401), sequenceB.Messages.Select(Number));
        Assert.Equal(Enumerable.Range(1, 100).Concat(Enumerable.Range(201, 201)), sequenceC.Messages.Select(Number));
        var deliveries = new[] { queueA, queueB, queueC }.SelectMany(q => q.Messages).Select(Number).Order();
        Assert.Equal(Enumerable.Range(1, 401), deliveries);
        Assert.Equal(HttpStatusCode.ServiceUnavailable, (await http.GetAsync(new Uri(cluster.Nodes[Cut].MonitorUri, "healthz"))).StatusCode);
        Assert.True(cluster.RefusedWhileCut > 0, "the proxies never refused a connection while the node was cut off");
    }

    private static async Task PublishAsync(NatsConnection publisher, int from, int to)
    {
        for (var i = from; i <= to; i++)
        {
            await publisher.PublishAsync(Subject, i.ToString(CultureInfo.InvariantCulture));
        }

        await publisher.PingAsync();
    }

    private static int Number(NatsMsg<string> message) => int.Parse(message.Data!, CultureInfo.InvariantCulture);

    private static int Count(params Collect[] members) => members.Sum(m => m.Messages.Count);

    /// <summary>
    /// Courier nodes whose route and Akka.Remote listeners are each behind a <see cref="PartitionProxy"/>:
    /// every node advertises its proxies (<c>cluster.advertise</c>, <c>cluster.akka_advertise</c>) and
    /// names its peers' route proxies in <c>routes</c>. Each node answers <c>_probe.&lt;index&gt;</c>.
    /// </summary>
    private sealed class ProxiedCluster : IAsyncDisposable
    {
        private readonly List<PartitionProxy> _proxies = [];
        private readonly List<NatsConnection> _probes = [];

        public List<ServerProcess> Nodes { get; } = [];

        public int RefusedWhileCut => _proxies.Sum(p => p.Refused);

        public static async Task<ProxiedCluster> StartAsync(int count)
        {
            var cluster = new ProxiedCluster();
            try
            {
                var routeProxies = Enumerable.Range(0, count).Select(PartitionProxy.Start).ToList();
                var akkaProxies = Enumerable.Range(0, count).Select(PartitionProxy.Start).ToList();
                cluster._proxies.AddRange(routeProxies);
                cluster._proxies.AddRange(akkaProxies);
                var routes = string.Join(", ", routeProxies.Select(p => $"nats-route://127.0.0.1:{p.Port}"));
                for (var i = 0; i < count; i++)
                {
                    routeProxies[i].TargetPort = LoopbackPorts.Next();
                    akkaProxies[i].TargetPort = LoopbackPorts.Next();
                    var config = $$"""
                        cluster {
                          name: {{Mesh.ClusterName}}
                          listen: "127.0.0.1:{{routeProxies[i].TargetPort}}"
                          advertise: "127.0.0.1:{{routeProxies[i].Port}}"
                          routes: [ {{routes}} ]
                          akka_port: {{akkaProxies[i].TargetPort}}
                          akka_advertise: "127.0.0.1:{{akkaProxies[i].Port}}"
                        }
                        """;
                    cluster.Nodes.Add(await ServerProcess.StartAsync(ServerKind.Courier, config, "-n", $"node-{i}"));
                }

                var pids = cluster.Nodes.Select(n => n.Pid).ToList();
                foreach (var proxy in cluster._proxies)
                {
                    proxy.NodePids = pids;
                }

                for (var i = 0; i < count; i++)
                {
                    var probe = await cluster.ConnectAsync(i, $"probe-{i}");
                    cluster._probes.Add(probe);
                    var subscription = await probe.SubscribeCoreAsync<string>($"_probe.{i}");
                    _ = Task.Run(async () =>
                    {
                        await foreach (var message in subscription.Msgs.ReadAllAsync())
                        {
                            await message.ReplyAsync("ok");
                        }
                    });
                    await probe.PingAsync();
                }

                return cluster;
            }
            catch
            {
                await cluster.DisposeAsync();
                throw;
            }
        }

        public async Task<NatsConnection> ConnectAsync(int index, string name)
        {
            var nats = new NatsConnection(new NatsOpts
            {
                Url = Nodes[index].Url,
                Name = name,
                RequestTimeout = TimeSpan.FromSeconds(5),
                CommandTimeout = TimeSpan.FromSeconds(10),
                MaxReconnectRetry = 0,
            });
            await nats.ConnectAsync();
            return nats;
        }

        /// <summary>
        /// Polls (bounded) a request from <paramref name="from"/> to node <paramref name="to"/>'s probe until
        /// answered: everything the connection sent before (its SUBs) has then reached that node (routes keep order).
        /// </summary>
        public async Task BarrierAsync(NatsConnection from, int to, TimeSpan timeout)
        {
            await from.PingAsync();
            var answered = await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        await from.RequestAsync<string, string>($"_probe.{to}", "barrier", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(1) });
                        return true;
                    }
                    catch (Exception e) when (e is NatsNoRespondersException or NatsNoReplyException or TimeoutException)
                    {
                        return false;
                    }
                },
                timeout);
            Assert.True(answered, $"node {to}'s probe never answered\n{Diagnostics()}");
        }

        public void CutOff(int index)
        {
            foreach (var proxy in _proxies)
            {
                proxy.Cut(index);
            }
        }

        public void Heal()
        {
            foreach (var proxy in _proxies)
            {
                proxy.Heal();
            }
        }

        public string Diagnostics() => string.Join("\n\n", Nodes.Select(n => n.Diagnostics(60)));

        public async ValueTask DisposeAsync()
        {
            foreach (var probe in _probes)
            {
                await probe.DisposeAsync();
            }

            foreach (var node in Nodes)
            {
                await node.DisposeAsync();
            }

            foreach (var proxy in _proxies)
            {
                await proxy.DisposeAsync();
            }
        }

    }
}
