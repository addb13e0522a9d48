using System.Diagnostics;
using System.Text;
using System.Text.Json;
using Courier.Testing;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Courier.Load;

/// <summary>
/// The replicated rows (issue 34): three nodes of one kind with JetStream in one cluster, a file stream
/// with num_replicas 3. Courier syncs every replica's log before a PubAck; nats-server runs at its
/// defaults (2.9.10 syncs its files every two minutes). Each row's client connects to a node that does not
/// lead the stream, so every write crosses a route to the leader on both servers.
/// </summary>
internal static class ReplicatedScenarios
{
    private static readonly TimeSpan RunLimit = TimeSpan.FromSeconds(90);

    public static IReadOnlyList<Scenario> All { get; } =
    [
        new("r3sync", "R3 file stream on three nodes, publish waiting for each PubAck, 16 B, client on a follower", _ => [], Cold: (kind, root) => WithStream(kind, root, (nodes, client) => Publish(nodes, client, 16, 5_000, window: 1))),
        new("r3async", "R3 file stream on three nodes, up to 256 PubAcks outstanding, 128 B, client on a follower", _ => [], Cold: (kind, root) => WithStream(kind, root, (nodes, client) => Publish(nodes, client, 128, 200_000, window: 256))),
        new("r3kv", "R3 key-value bucket on three nodes: put (waiting for each PubAck) and get (DIRECT.GET), 16 B values on 100 keys, client on a follower", _ => [], Cold: (kind, root) => WithStream(kind, root, KeyValue, keyValue: true)),
        new("r3failover", "R3 file stream: one publisher waiting for each PubAck on a follower; the leader killed with SIGKILL; time until the next PubAck", _ => [], Cold: (kind, root) => WithStream(kind, root, Failover)),
        new("r3catchup", "R3 file stream: a follower killed, 100,000 messages of 128 B written meanwhile, the follower restarted; time from its restart until the leader reports it current with no lag", _ => [], Cold: (kind, root) => WithStream(kind, root, CatchUp)),
    ];

    /// <summary>Three nodes, the stream (or bucket) created, a raw client on a node that does not lead it; the row runs; everything stopped.</summary>
    private static IReadOnlyList<Metric> WithStream(string kind, string root, Func<Cluster3, BenchClient, IReadOnlyList<Metric>> row, bool keyValue = false)
    {
        using var cluster = Cluster3.Start(kind, root);
        var config = keyValue
            ? "{\"name\":\"KV_B\",\"subjects\":[\"$KV.B.>\"],\"max_msgs_per_subject\":1,\"allow_rollup_hdrs\":true,\"deny_delete\":true,\"discard\":\"new\",\"allow_direct\":true,\"storage\":\"file\",\"num_replicas\":3}"
            : "{\"name\":\"BENCH\",\"subjects\":[\"bench.js\"],\"storage\":\"file\",\"num_replicas\":3}";
        var stream = keyValue ? "KV_B" : "BENCH";
        cluster.CreateStream(stream, config);
        var leader = cluster.Leader(stream);
        cluster.Follower = (leader + 1) % 3;
        using var client = new BenchClient(cluster.Nodes[cluster.Follower].Port) { ReceiveTimeout = TimeSpan.FromSeconds(30) }; // a row that stops getting answers fails, never hangs
        client.Send("SUB _INBOX.bench.> 1\r\n");
        client.Flush();
        return row(cluster, client);
    }

    private static IReadOnlyList<Metric> Publish(Cluster3 cluster, BenchClient client, int size, int messages, int window)
    {
        var (sent, elapsed) = Scenarios.PublishInWindows(client, size, messages, window, RunLimit);
        var seconds = elapsed.TotalSeconds;
        return [new("msgs/s", sent / seconds), new("µs per PubAck", seconds / sent * 1e6 * window, HigherIsBetter: false)];
    }

    private static IReadOnlyList<Metric> KeyValue(Cluster3 cluster, BenchClient client)
    {
        const int Operations = 5_000;
        var value = new string('v', 16);
        var puts = Stopwatch.StartNew();
        for (var i = 0; i < Operations; i++)
        {
            client.Send($"PUB $KV.B.k{i % 100} _INBOX.bench.put 16\r\n{value}\r\n");
            client.SkipMsg();
        }

        var putSeconds = puts.Elapsed.TotalSeconds;
        var gets = Stopwatch.StartNew();
        for (var i = 0; i < Operations; i++)
        {
            client.Send($"PUB $JS.API.DIRECT.GET.KV_B.$KV.B.k{i % 100} _INBOX.bench.get 0\r\n\r\n");
            client.SkipMsg();
        }

        var getSeconds = gets.Elapsed.TotalSeconds;
        return [new("puts/s", Operations / putSeconds), new("gets/s", Operations / getSeconds)];
    }

    /// <summary>Sync publishes from a follower's client (NATS.Net, 1 s timeout, retried); the leader killed after 500; the gap until the next PubAck.</summary>
    private static IReadOnlyList<Metric> Failover(Cluster3 cluster, BenchClient _)
    {
        var leader = cluster.Leader("BENCH");
        return WithJetStream(cluster.Nodes[cluster.Follower].Port, TimeSpan.FromSeconds(1), js => FailoverWith(cluster, leader, js));
    }

    private static IReadOnlyList<Metric> FailoverWith(Cluster3 cluster, int leader, NatsJSContext js)
    {
        for (var i = 0; i < 500; i++)
        {
            js.PublishAsync("bench.js", i).AsTask().GetAwaiter().GetResult().EnsureSuccess();
        }

        cluster.Nodes[leader].Kill();
        var killed = Stopwatch.StartNew();
        while (killed.Elapsed < RunLimit)
        {
            try
            {
                var ack = js.PublishAsync("bench.js", -1, opts: new NatsJSPubOpts { MsgId = "after-kill" }).AsTask().GetAwaiter().GetResult();
                ack.EnsureSuccess();
                return [new("ms until the next PubAck", killed.Elapsed.TotalMilliseconds, HigherIsBetter: false)];
            }
            catch (Exception e) when (e is NatsException or NatsJSApiException or TimeoutException)
            {
                Thread.Sleep(20); // no leader yet (no responders or no answer): again
            }
        }

        throw new TimeoutException("no PubAck within the run limit after the leader was killed");
    }

    /// <summary>A follower killed, 100,000 messages written without it, restarted on its store: the time until the leader reports it current.</summary>
    private static IReadOnlyList<Metric> CatchUp(Cluster3 cluster, BenchClient client)
    {
        var leader = cluster.Leader("BENCH");
        var down = (leader + 2) % 3; // neither the leader nor the client's node
        cluster.Nodes[down].Kill();
        Publish(cluster, client, 128, 100_000, window: 256);
        var restart = Stopwatch.StartNew();
        cluster.Restart(down);
        return WithJetStream(cluster.Nodes[leader].Port, TimeSpan.FromSeconds(2), js => AwaitCurrent(js, $"node{down}", restart));
    }

    private static IReadOnlyList<Metric> AwaitCurrent(NatsJSContext js, string name, Stopwatch restart)
    {
        while (restart.Elapsed < RunLimit)
        {
            try
            {
                var info = js.GetStreamAsync("BENCH").AsTask().GetAwaiter().GetResult().Info;
                if (info.Cluster?.Replicas?.FirstOrDefault(r => r.Name == name) is { Current: true, Lag: 0, Offline: false })
                {
                    return [new("s until current", restart.Elapsed.TotalSeconds, HigherIsBetter: false)];
                }
            }
            catch (Exception e) when (e is NatsException or NatsJSApiException or TimeoutException)
            {
                // Between leaders, or the restarted node still joining.
            }

            Thread.Sleep(50);
        }

        throw new TimeoutException("the restarted follower never became current");
    }

    private static T WithJetStream<T>(int port, TimeSpan timeout, Func<NatsJSContext, T> body)
    {
        var nats = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{port}", RequestTimeout = timeout, MaxReconnectRetry = 0 });
        try
        {
            return body(new NatsJSContext(nats));
        }
        finally
        {
            nats.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }
    }

    /// <summary>Three nodes of one kind with JetStream, routed to each other, each on a store of its own that a restart keeps.</summary>
    internal sealed class Cluster3 : IDisposable
    {
        private readonly string _kind;
        private readonly string _root;
        private readonly string[] _configs;
        private readonly string[] _stores;

        private Cluster3(string kind, string root, string[] configs, string[] stores, ServerProcess[] nodes)
        {
            _kind = kind;
            _root = root;
            _configs = configs;
            _stores = stores;
            Nodes = nodes;
        }

        public ServerProcess[] Nodes { get; }

        /// <summary>The node the row's client uses (one that did not lead the stream when it was created).</summary>
        public int Follower { get; set; }

        public static Cluster3 Start(string kind, string root)
        {
            var routePorts = new[] { LoopbackPorts.Next(), LoopbackPorts.Next(), LoopbackPorts.Next() };
            var routes = string.Join(", ", routePorts.Select(p => $"\"nats-route://127.0.0.1:{p}\""));
            var configs = routePorts.Select((p, i) => $"server_name: node{i}\ncluster {{ name: bench, listen: \"127.0.0.1:{p}\", routes: [{routes}] }}\n").ToArray();
            var stores = configs.Select(_ => Directory.CreateTempSubdirectory("courier-r3-").FullName).ToArray();
            var nodes = new ServerProcess[3];
            try
            {
                for (var i = 0; i < 3; i++)
                {
                    nodes[i] = ServerProcess.Start(kind, root, configs[i], storeDir: stores[i]);
                }
            }
            catch
            {
                foreach (var node in nodes)
                {
                    node?.Dispose();
                }

                throw;
            }

            return new Cluster3(kind, root, configs, stores, nodes);
        }

        /// <summary>Starts node <paramref name="index"/> again on its store and client port.</summary>
        public void Restart(int index)
        {
            var port = Nodes[index].Port;
            Nodes[index] = ServerProcess.Start(_kind, _root, _configs[index], storeDir: _stores[index], port: port);
        }

        /// <summary>Creates the stream through node 0, retrying while the cluster forms (a meta leader, every member up).</summary>
        public void CreateStream(string name, string config)
        {
            var deadline = Stopwatch.StartNew();
            var answer = "";
            do
            {
                try
                {
                    // A fresh client each time: nats-server drops requests while its meta group elects (no answer at all).
                    using var client = new BenchClient(Nodes[0].Port) { ReceiveTimeout = TimeSpan.FromSeconds(2) };
                    answer = Request(client, $"$JS.API.STREAM.CREATE.{name}", config);
                    if (!answer.Contains("\"error\"", StringComparison.Ordinal))
                    {
                        return;
                    }
                }
                catch (System.Net.Sockets.SocketException)
                {
                    answer = "(no answer)";
                }

                Thread.Sleep(250);
            }
            while (deadline.Elapsed < RunLimit);
            throw new InvalidOperationException($"stream {name} was not created: {answer}");
        }

        /// <summary>The index of the node that leads <paramref name="stream"/> now (asked until it has one).</summary>
        public int Leader(string stream)
        {
            var deadline = Stopwatch.StartNew();
            while (deadline.Elapsed < RunLimit)
            {
                foreach (var node in Nodes)
                {
                    try
                    {
                        using var client = new BenchClient(node.Port) { ReceiveTimeout = TimeSpan.FromSeconds(2) };
                        using var info = JsonDocument.Parse(Request(client, $"$JS.API.STREAM.INFO.{stream}", ""));
                        if (info.RootElement.TryGetProperty("cluster", out var c) && c.TryGetProperty("leader", out var l) && l.GetString() is { Length: > 4 } name)
                        {
                            return int.Parse(name[4..], System.Globalization.CultureInfo.InvariantCulture);
                        }
                    }
                    catch (Exception e) when (e is System.Net.Sockets.SocketException or IOException or JsonException)
                    {
                        // A killed node, or an answer in between.
                    }
                }

                Thread.Sleep(100);
            }

            throw new TimeoutException($"stream {stream} has no leader");
        }

        private static string Request(BenchClient client, string subject, string json)
        {
            client.Send($"SUB _INBOX.ctl 9\r\nUNSUB 9 1\r\nPUB {subject} _INBOX.ctl {Encoding.UTF8.GetByteCount(json)}\r\n{json}\r\n");
            return client.ReadMsgPayload();
        }

        public void Dispose()
        {
            foreach (var node in Nodes)
            {
                node.Dispose();
            }

            foreach (var store in _stores)
            {
                try
                {
                    Directory.Delete(store, recursive: true);
                }
                catch (IOException)
                {
                    // The OS cleans the temp folder.
                }
            }
        }
    }
}
