using System.Diagnostics;
using Courier.Testing;

namespace Courier.Load;

/// <summary>One measured value of a scenario run.</summary>
/// <param name="Name">What it is, e.g. "msgs/s".</param>
/// <param name="Value">The figure.</param>
/// <param name="HigherIsBetter">Throughput: true; latency and memory: false (the ratio is inverted so above 1.0 means Courier is better).</param>
internal readonly record struct Metric(string Name, double Value, bool HigherIsBetter = true);

/// <summary>A row of BENCHMARKS.md: a bounded run against one server on a port.</summary>
/// <param name="Id">The row's id in BENCHMARKS.md.</param>
/// <param name="Description">What it measures.</param>
/// <param name="Run">The bounded run against one server.</param>
/// <param name="ConfigText">The server's config file, when the scenario needs one (the same text for both servers).</param>
/// <param name="Mqtt">The servers get an MQTT listener (<see cref="ServerProcess.MqttPort"/>).</param>
/// <param name="Mosquitto">mosquitto runs the row too, as a third peer (pure MQTT rows).</param>
/// <param name="Cold">Instead of <paramref name="Run"/>: the row starts its own servers of the given kind (with the repository root).</param>
/// <param name="Stream">The row creates stream BENCH (deleted before a second run under --warm).</param>
/// <param name="Repeatable">Under --warm the row runs a second time (not the memory row: a second delta measures reused memory).</param>
/// <param name="NatsServer">nats-server runs the row (not the MQTT 5.0 rows: nats-server speaks MQTT 3.1.1 only; those compare with mosquitto).</param>
internal sealed record Scenario(string Id, string Description, Func<ServerProcess, IReadOnlyList<Metric>> Run, Func<string>? ConfigText = null, bool Mqtt = false, bool Mosquitto = false, Func<string, string, IReadOnlyList<Metric>>? Cold = null, bool Stream = false, bool Repeatable = true, bool NatsServer = true);

/// <summary>The core scenarios of ../shared/BENCHMARKS.md, each bounded in count and time.</summary>
internal static class Scenarios
{
    private static readonly TimeSpan RunLimit = TimeSpan.FromSeconds(60);

    /// <summary>--scale: the MQTT rows' message counts are multiplied by it (a tiny one checks that a row runs, measuring nothing).</summary>
    public static double Scale { get; set; } = 1;

    private static int Count(int messages) => Math.Max(64, (int)(messages * Scale));

    // A connect-only client's receive buffer: room for INFO (a few hundred bytes) and a PONG.
    private const int SmallReadBuffer = 4096;

    /// <summary>The acct row's servers: account A exports bench.> as a stream, account B imports it.</summary>
    private const string AccountsConfig = """
        accounts {
          A: { users: [ {user: a, password: a}, {user: a2, password: a2} ], exports: [ {stream: "bench.>"} ] }
          B: { users: [ {user: b, password: b} ], imports: [ {stream: {account: A, subject: "bench.>"}} ] }
        }
        """;

    /// <summary>The ws row's servers: a plain ws:// listener on loopback, no compression.</summary>
    private const string WebSocketConfig = "websocket { host: 127.0.0.1, port: -1, no_tls: true }";
    private const string EncryptedConfig = "jetstream { key: \"load-row-key\", cipher: chachapoly }"; // encryption at rest, the same key for both servers (-sd gives the store)

    // Message counts give nats-server 1-5 s per run (BENCHMARKS.md) on the reference machine: a run
    // much shorter than that measures the first second of a process more than the path itself.
    public static IReadOnlyList<Scenario> All { get; } =
    [
        new("pub16", "single publisher, no subscribers, 16 B", s => PubOnly(s, 16, 10_000_000)),
        new("pub128", "single publisher, no subscribers, 128 B", s => PubOnly(s, 128, 6_000_000)),
        new("ps16", "publisher + subscriber 1:1, 16 B", s => PubSub(s, 16, 6_000_000, publishers: 1, subscribers: 1)),
        new("ps16k", "publisher + subscriber 1:1, 16 KB", s => PubSub(s, 16 * 1024, 100_000, publishers: 1, subscribers: 1)),
        new("fan4", "fan-out 1 pub : 4 subs, 128 B", s => PubSub(s, 128, 2_000_000, publishers: 1, subscribers: 4)),
        new("m4x4", "4 pubs x 4 subs, 128 B", s => PubSub(s, 128, 2_000_000, publishers: 4, subscribers: 4)),
        new("rr1", "request/reply, 1 client 1 service, 128 B", s => RequestReply(s, 128, clients: 1, services: 1, requestsPerClient: 10_000)),
        new("rr10", "request/reply, 10 clients, 2 services in a queue group, 16 B", s => RequestReply(s, 16, clients: 10, services: 2, requestsPerClient: 5_000)),
        new("jssync", "JetStream publish, wait for each PubAck, memory storage, 16 B", s => JetStreamPublish(s, "memory", 16, 20_000, window: 1), Stream: true),
        new("jsasync", "JetStream publish, up to 256 PubAcks outstanding, file storage, 128 B", s => JetStreamPublish(s, "file", 128, 400_000, window: 256), Stream: true),
        new("jsenc", "jsasync on an encrypted file stream (jetstream { key, cipher: chachapoly }, the same key for both servers), 128 B", s => JetStreamPublish(s, "file", 128, 400_000, window: 256), () => EncryptedConfig, Stream: true),
        new("jsasync600", "JetStream publish as NATS clients do it: a sliding window of 256 PubAcks, a distinct reply subject per message under one wildcard inbox, 600,000 msgs, file storage, 128 B", s => JetStreamPublishSliding(s, 128, 600_000, window: 256), Stream: true),
        new("jsttl", "JetStream publish into a stream with allow_msg_ttl, each message with Nats-TTL: 1h, up to 256 PubAcks outstanding, file storage, 128 B (Courier only: nats-server 2.9.10 has no per-message TTL; compare the jsasync row of the same run)", s => JetStreamHeaderPublish(s, "\"allow_msg_ttl\":true", "Nats-TTL: 1h", 128, 400_000, window: 256), Stream: true, NatsServer: false),
        new("jshdr", "jsasync with a header on each message (X-Bench: 1), HPUB, file storage, 128 B", s => JetStreamHeaderPublish(s, "", "X-Bench: 1", 128, 400_000, window: 256), Stream: true),
        new("jscounter", "counter increments: Nats-Incr: 1 on 16 subjects of an allow_msg_counter stream, up to 256 PubAcks outstanding, file storage (Courier only: nats-server 2.9.10 has no counters; compare the jsasync row of the same run)", s => JetStreamHeaderPublish(s, "\"allow_msg_counter\":true", "Nats-Incr: 1", 0, 400_000, window: 256, subjects: 16), Stream: true, NatsServer: false),
        new("jsord", "JetStream ordered (ack none) pull consumer reading a pre-filled stream, 128 B", s => JetStreamConsume(s, 500_000, ack: false), Stream: true),
        new("jsfetch", "JetStream durable pull consumer, fetch 256 at a time, ack each, 128 B", s => JetStreamConsume(s, 300_000, ack: true), Stream: true),
        new("tls", "over TLS (tls {} with a test certificate): publisher + subscriber 1:1, and a single publisher, 128 B", s => [.. PubSub(s, 128, 2_000_000, publishers: 1, subscribers: 1, tls: true).Take(1).Select(m => m with { Name = "pub/sub delivered msgs/s" }), .. PubOnly(s, 128, 3_000_000, tls: true).Take(1).Select(m => m with { Name = "pub-only msgs/s" })], () => BenchTls.Config),
        new("ws", "over WebSocket: pub/sub 1:1 and pub-only, 128 B", s => WebSocket(s, 128, 2_000_000), () => WebSocketConfig),
        new("wss", "over WebSocket with TLS (websocket { tls {} }, a test certificate): pub/sub 1:1 and pub-only, 128 B", s => WebSocket(s, 128, 2_000_000, tls: true), () => BenchTls.WebSocketConfig),
        new("mqtt", "MQTT QoS 0 publisher -> MQTT QoS 0 subscriber 1:1, 128 B", s => MqttPubSub(s, 128, Count(1_000_000), qos: 0), Mqtt: true, Mosquitto: true),
        new("mqtt1", "MQTT QoS 1 publisher (windows of 64 awaiting PUBACKs) -> MQTT QoS 1 subscriber 1:1, 128 B", s => MqttPubSub(s, 128, Count(100_000), qos: 1), Mqtt: true, Mosquitto: true),
        new("mqtt5", "MQTT 5.0 QoS 0 publisher -> MQTT 5.0 QoS 0 subscriber 1:1, 128 B (Courier vs mosquitto)", s => MqttPubSub(s, 128, Count(1_000_000), qos: 0, v5: true), Mqtt: true, Mosquitto: true, NatsServer: false),
        new("mqtt5q1", "MQTT 5.0 QoS 1 publisher (windows of 64 awaiting PUBACKs) -> MQTT 5.0 QoS 1 subscriber 1:1, 128 B (Courier vs mosquitto)", s => MqttPubSub(s, 128, Count(100_000), qos: 1, v5: true), Mqtt: true, Mosquitto: true, NatsServer: false),
        new("mqtt5share", "MQTT 5.0 shared subscription fan-in: 4 QoS 0 publishers -> a 2-member $share group, 128 B (Courier vs mosquitto)", s => MqttShareFanIn(s, 128, Count(1_000_000)), Mqtt: true, Mosquitto: true, NatsServer: false),
        new("nats2mqtt", "NATS publisher -> MQTT QoS 0 subscriber 1:1, 128 B", s => NatsToMqtt(s, 128, 1_000_000), Mqtt: true),
        new("conn", "5,000 idle connections with one SUB each", s => IdleConnections(s, 5_000), Repeatable: false),
        new("acct", "accounts: pub/sub 1:1 16 B in a named account, and through a stream import between two accounts", s =>
        [
            .. PubSub(s, 16, 4_000_000, publishers: 1, subscribers: 1, publisher: "a", subscriber: "a2").Take(1).Select(m => m with { Name = "in-account delivered msgs/s" }),
            .. PubSub(s, 16, 4_000_000, publishers: 1, subscribers: 1, publisher: "a", subscriber: "b").Take(1).Select(m => m with { Name = "imported delivered msgs/s" }),
        ], () => AccountsConfig),
        new("route", "a cluster of three nodes (cluster {} routes, full mesh): publisher on one node, subscriber on another, 1:1 16 B", _ => [], Cold: (kind, root) => Route(kind, root, 16, 4_000_000)),
        new("leaf", "a hub and a leaf (leafnodes { listen } / leafnodes { remotes }): publisher on the leaf, subscriber on the hub, 1:1 16 B across the leaf link", _ => [], Cold: (kind, root) => Leaf(kind, root, 16, 4_000_000)),
        new("gateway", "a two-region super-cluster (gateway { name, listen, gateways }), one server per region: publisher in one, subscriber in the other, 1:1 16 B across the gateway", _ => [], Cold: (kind, root) => Gateway(kind, root, 16, Count(4_000_000))),
        new("storm", "connection storm: 8 threads open, handshake and close 4,000 connections (after 400 unmeasured)", s => ConnectionStorm(s, threads: 8, connections: 4_000)),
        new("coldstart", "a fresh server: start to ports file, then the first of each (no-responders reply, stream create, consumer create, push delivery, KV purge); 8 servers started at once", _ => [], Cold: ColdStart),
    ];

    /// <summary>
    /// The coldstart row: what a client library's test launcher sees of a fresh server. Each first-use
    /// figure is the round trip of that first request (ms), not counting the ones before it.
    /// </summary>
    private static IReadOnlyList<Metric> ColdStart(string kind, string root)
    {
        var metrics = new List<Metric>();
        using (var server = ServerProcess.Start(kind, root))
        {
            metrics.Add(new("ports file ms", server.TimeToPortsFile.TotalMilliseconds, HigherIsBetter: false));
            using var c = new BenchClient(server.Port);
            c.Send("SUB _INBOX.cold.> 1\r\nSUB _INBOX.push 2\r\n"); // nats-server drops a push consumer whose deliver subject only a wildcard covers
            c.Flush();
            metrics.Add(new("no-responders ms", Timed(() =>
            {
                c.Send("HPUB cold.nobody _INBOX.cold.nr 12 12\r\nNATS/1.0\r\n\r\n\r\n");
                c.ReadMsg(); // the 503 status
            }), HigherIsBetter: false));
            metrics.Add(new("stream create ms", Timed(() => Request(c, "$JS.API.STREAM.CREATE.COLD", "{\"name\":\"COLD\",\"subjects\":[\"cold.>\"],\"storage\":\"file\"}")), HigherIsBetter: false));
            metrics.Add(new("consumer create ms", Timed(() => Request(c, "$JS.API.CONSUMER.CREATE.COLD", "{\"stream_name\":\"COLD\",\"config\":{\"deliver_subject\":\"_INBOX.push\",\"ack_policy\":\"none\"}}")), HigherIsBetter: false));
            metrics.Add(new("push delivery ms", Timed(() =>
            {
                c.Send("PUB cold.a 5\r\nhello\r\n");
                c.ReadMsg(); // the stored message, pushed to _INBOX.push
            }), HigherIsBetter: false));
            Request(c, "$JS.API.STREAM.CREATE.KV_COLD", "{\"name\":\"KV_COLD\",\"subjects\":[\"$KV.COLD.>\"],\"max_msgs_per_subject\":1,\"allow_rollup_hdrs\":true,\"deny_delete\":true,\"discard\":\"new\",\"allow_direct\":true,\"storage\":\"file\"}");
            Request(c, "$KV.COLD.k", "v"); // a put (its PubAck)
            metrics.Add(new("KV purge ms", Timed(() => Request(c, "$JS.API.STREAM.PURGE.KV_COLD", "{\"filter\":\"$KV.COLD.k\"}")), HigherIsBetter: false));
        }

        // Client libraries' test launchers start several servers at once and give each a second or so.
        var servers = new ServerProcess[8];
        try
        {
            Parallel.For(0, servers.Length, new ParallelOptions { MaxDegreeOfParallelism = servers.Length }, i => servers[i] = ServerProcess.Start(kind, root));
            metrics.Add(new("8 at once: slowest ports file ms", servers.Max(p => p.TimeToPortsFile.TotalMilliseconds), HigherIsBetter: false));
        }
        finally
        {
            foreach (var server in servers)
            {
                server?.Dispose();
            }
        }

        return metrics;
    }

    private static void Request(BenchClient client, string subject, string json)
    {
        client.Send($"PUB {subject} _INBOX.cold.r {System.Text.Encoding.UTF8.GetByteCount(json)}\r\n{json}\r\n");
        client.ReadMsg();
    }

    private static double Timed(Action action)
    {
        var sw = Stopwatch.StartNew();
        action();
        return sw.Elapsed.TotalMilliseconds;
    }

    private static IReadOnlyList<Metric> PubOnly(ServerProcess server, int size, int messages, bool tls = false)
    {
        var perBatch = Math.Max(1, 64 * 1024 / (size + 20));
        var batch = BenchClient.PubBatch("bench.pub", size, perBatch);
        using var client = new BenchClient(server.Port, tls: tls);
        var sw = Stopwatch.StartNew();
        for (var sent = 0; sent < messages && sw.Elapsed < RunLimit; sent += perBatch)
        {
            client.Send(batch);
        }

        client.Flush();
        var seconds = sw.Elapsed.TotalSeconds;
        return [new("msgs/s", messages / seconds), new("MB/s", messages * (double)size / seconds / 1e6)];
    }

    /// <summary>
    /// The route row: three nodes of <paramref name="kind"/> routed to each other as nats-server's docs
    /// set a cluster up (every node lists every route, its own included), without JetStream; the
    /// subscriber on node 0, the publisher on node 1. Timing starts once node 1 forwards to node 0.
    /// </summary>
    private static IReadOnlyList<Metric> Route(string kind, string root, int size, int messages)
    {
        var routePorts = new[] { LoopbackPorts.Next(), LoopbackPorts.Next(), LoopbackPorts.Next() };
        var routes = string.Join(", ", routePorts.Select(p => $"\"nats-route://127.0.0.1:{p}\""));
        var nodes = new List<ServerProcess>();
        try
        {
            for (var i = 0; i < routePorts.Length; i++)
            {
                var config = $"server_name: node{i}\ncluster {{ name: bench, listen: \"127.0.0.1:{routePorts[i]}\", routes: [{routes}] }}\n";
                nodes.Add(ServerProcess.Start(kind, root, config, jetStream: false));
            }

            return PubSub(nodes[0], size, messages, publishers: 1, subscribers: 1, publisherPort: nodes[1].Port);
        }
        finally
        {
            nodes.ForEach(n => n.Dispose());
        }
    }

    /// <summary>The gateway row: two one-server clusters of one kind on loopback, each listing the other; the publisher in east, the subscriber in west.</summary>
    private static IReadOnlyList<Metric> Gateway(string kind, string root, int size, int messages)
    {
        var (eastPort, westPort) = (LoopbackPorts.Next(), LoopbackPorts.Next());
        using var east = ServerProcess.Start(kind, root, GatewayConfig("east", eastPort, "west", westPort), jetStream: false);
        using var west = ServerProcess.Start(kind, root, GatewayConfig("west", westPort, "east", eastPort), jetStream: false);
        return PubSub(west, size, messages, publishers: 1, subscribers: 1, publisherPort: east.Port);
    }

    private static string GatewayConfig(string name, int port, string other, int otherPort) =>
        $"server_name: {name}\ngateway {{ name: \"{name}\", listen: \"127.0.0.1:{port}\", gateways: [ {{ name: \"{other}\", url: \"nats://127.0.0.1:{otherPort}\" }} ] }}\n";

    /// <summary>The leaf row: a hub and a leaf of one kind on loopback; the publisher on the leaf, the subscriber on the hub.</summary>
    private static IReadOnlyList<Metric> Leaf(string kind, string root, int size, int messages)
    {
        var leafPort = LoopbackPorts.Next();
        using var hub = ServerProcess.Start(kind, root, $"server_name: hub\nleafnodes {{ listen: \"127.0.0.1:{leafPort}\" }}\n", jetStream: false);
        using var leaf = ServerProcess.Start(kind, root, $"server_name: leaf\nleafnodes {{ remotes: [ {{ url: \"nats-leaf://127.0.0.1:{leafPort}\" }} ] }}\n", jetStream: false);
        return PubSub(hub, size, messages, publishers: 1, subscribers: 1, publisherPort: leaf.Port);
    }

    /// <summary>
    /// Subscribers on <paramref name="server"/>; publishers there too, or on <paramref name="publisherPort"/>
    /// (another node of a cluster: then probes on another subject go first, until one arrives, so the
    /// timed part starts with the route's interest in place).
    /// </summary>
    private static IReadOnlyList<Metric> PubSub(ServerProcess server, int size, int messages, int publishers, int subscribers, bool tls = false, string? publisher = null, string? subscriber = null, int? publisherPort = null)
    {
        const string Subject = "bench.ps";
        var subs = new List<BenchClient>();
        for (var i = 0; i < subscribers; i++)
        {
            var sub = new BenchClient(server.Port, tls: tls, user: subscriber);
            sub.Send(publisherPort is null ? $"SUB {Subject} 1\r\n" : $"SUB {Subject} 1\r\nSUB bench.probe 2\r\n");
            sub.Flush();
            subs.Add(sub);
        }

        var perPublisher = messages / publishers;
        var total = perPublisher * publishers;
        var frame = BenchClient.MsgFrameSize(Subject, "1", size);
        var perBatch = Math.Max(1, 64 * 1024 / (size + 20));
        var batch = BenchClient.PubBatch(Subject, size, perBatch);
        var pubs = Enumerable.Range(0, publishers).Select(_ => new BenchClient(publisherPort ?? server.Port, tls: tls, user: publisher)).ToList();
        try
        {
            if (publisherPort is not null)
            {
                AwaitRouteInterest(pubs, subs);
            }

            var sw = Stopwatch.StartNew();
            var readers = subs.Select(s => Task.Factory.StartNew(() => s.Drain((long)total * frame), TaskCreationOptions.LongRunning)).ToArray();
            var writers = pubs.Select(p => Task.Factory.StartNew(
                () =>
                {
                    var sent = 0;
                    while (sent < perPublisher)
                    {
                        var n = Math.Min(perBatch, perPublisher - sent);
                        p.Send(batch.AsSpan(0, n * (batch.Length / perBatch)));
                        sent += n;
                    }
                },
                TaskCreationOptions.LongRunning)).ToArray();
            if (!Task.WaitAll([.. readers, .. writers], RunLimit))
            {
                throw new TimeoutException("subscribers did not receive every message in time");
            }

            var seconds = sw.Elapsed.TotalSeconds;
            var delivered = (double)total * subscribers;
            return [new("delivered msgs/s", delivered / seconds), new("MB/s", delivered * size / seconds / 1e6)];
        }
        finally
        {
            subs.ForEach(s => s.Dispose());
            pubs.ForEach(p => p.Dispose());
        }
    }

    // Each publisher probes (bench.probe, empty, one every 5 ms, bounded) until a subscriber gets one;
    // the subjects' RS+ went out together, so the bench subject's interest is in place too. Then each
    // publisher sends a 3-byte fence after its probes (a route keeps a publisher's order), every
    // subscriber reads up to the last fence, and drops the probe subscription.
    private static void AwaitRouteInterest(List<BenchClient> pubs, List<BenchClient> subs)
    {
        var clock = Stopwatch.StartNew();
        var first = Task.Factory.StartNew(() => subs[0].ReadMsgLine(), TaskCreationOptions.LongRunning);
        while (!first.Wait(5))
        {
            if (clock.Elapsed > RunLimit)
            {
                throw new TimeoutException("the route (or leaf link) never carried the subscription's interest");
            }

            pubs.ForEach(p => p.Send("PUB bench.probe 0\r\n\r\n"));
        }

        pubs.ForEach(p => p.Send("PUB bench.probe 3\r\nend\r\n"));
        foreach (var sub in subs)
        {
            var fences = 0;
            var line = ReferenceEquals(sub, subs[0]) ? first.Result : sub.ReadMsgLine();
            while (true)
            {
                if (line.EndsWith(" 3", StringComparison.Ordinal) && ++fences == pubs.Count)
                {
                    break;
                }

                line = sub.ReadMsgLine();
            }

            sub.Send("UNSUB 2\r\n");
            sub.Flush();
        }
    }

    /// <summary>The ws (and wss) row: 1:1 pub/sub with both clients on WebSocket, then a publisher alone.</summary>
    private static IReadOnlyList<Metric> WebSocket(ServerProcess server, int size, int messages, bool tls = false)
    {
        const string Subject = "bench.ws";
        var perBatch = Math.Max(1, 64 * 1024 / (size + 20));
        var frame = WsBenchClient.Frame(BenchClient.PubBatch(Subject, size, perBatch));
        var batches = messages / perBatch;
        var total = (long)batches * perBatch;
        double delivered;
        using (var sub = new WsBenchClient(server.WebSocketPort, tls))
        using (var pub = new WsBenchClient(server.WebSocketPort, tls))
        {
            sub.SendCommands($"SUB {Subject} 1\r\n");
            sub.Flush();
            var sw = Stopwatch.StartNew();
            var reader = Task.Factory.StartNew(() => sub.Drain(total * BenchClient.MsgFrameSize(Subject, "1", size)), TaskCreationOptions.LongRunning);
            var writer = Task.Factory.StartNew(
                () =>
                {
                    for (var i = 0; i < batches; i++)
                    {
                        pub.Send(frame);
                    }
                },
                TaskCreationOptions.LongRunning);
            if (!Task.WaitAll([reader, writer], RunLimit))
            {
                throw new TimeoutException("the WebSocket subscriber did not receive every message in time");
            }

            delivered = total / sw.Elapsed.TotalSeconds;
        }

        double published;
        using (var pub = new WsBenchClient(server.WebSocketPort, tls))
        {
            var sw = Stopwatch.StartNew();
            for (var i = 0; i < batches && sw.Elapsed < RunLimit; i++)
            {
                pub.Send(frame);
            }

            pub.Flush();
            published = total / sw.Elapsed.TotalSeconds;
        }

        return [new("pub/sub delivered msgs/s", delivered), new("pub-only msgs/s", published)];
    }

    // How long a subscriber waits for more after the last message: a broker that dropped some stops the count.
    private static readonly TimeSpan MqttIdle = TimeSpan.FromSeconds(2);

    /// <summary>The mqtt, mqtt1, mqtt5 and mqtt5q1 rows: one MQTT publisher, one MQTT subscriber at the same QoS, on one topic.</summary>
    private static IReadOnlyList<Metric> MqttPubSub(ServerProcess server, int size, int messages, byte qos, bool v5 = false)
    {
        const string Topic = "bench/mqtt";
        const int Window = 64; // QoS 1 publishes in flight (packet ids 1..64, all acknowledged before the next window)
        using var sub = new MqttBenchClient(server.MqttPort, "bench-sub", v5);
        sub.Subscribe(Topic, qos);
        using var pub = new MqttBenchClient(server.MqttPort, "bench-pub", v5);
        var perBatch = qos == 0 ? Math.Max(1, 64 * 1024 / (size + 16)) : Window;
        var batch = Enumerable.Range(1, perBatch).SelectMany(i => MqttBenchClient.Publish(Topic, size, qos, (ushort)i, v5)).ToArray();
        var clock = Stopwatch.StartNew();
        var reader = Task.Factory.StartNew(() => sub.Receive(messages, clock, MqttIdle, RunLimit), TaskCreationOptions.LongRunning);
        var writer = Task.Factory.StartNew(
            () =>
            {
                for (var sent = 0; sent < messages && clock.Elapsed < RunLimit; sent += perBatch)
                {
                    if (qos == 0)
                    {
                        pub.Send(batch);
                    }
                    else
                    {
                        pub.PublishWindow(batch, perBatch);
                    }
                }
            },
            TaskCreationOptions.LongRunning);
        return MqttMetrics(reader, writer, messages);
    }

    /// <summary>
    /// The mqtt5share row: four MQTT 5.0 QoS 0 publishers on one topic, two subscribers sharing it through
    /// <c>$share/bench/bench/share</c> (each message to one of them; in Courier a NATS queue group).
    /// Delivered counts both members.
    /// </summary>
    private static IReadOnlyList<Metric> MqttShareFanIn(ServerProcess server, int size, int messages)
    {
        const string Topic = "bench/share";
        const int Publishers = 4;
        var subs = new[] { new MqttBenchClient(server.MqttPort, "bench-share-1", v5: true), new MqttBenchClient(server.MqttPort, "bench-share-2", v5: true) };
        var pubs = Enumerable.Range(1, Publishers).Select(i => new MqttBenchClient(server.MqttPort, $"bench-pub-{i}", v5: true)).ToArray();
        try
        {
            foreach (var sub in subs)
            {
                sub.Subscribe("$share/bench/" + Topic, 0);
            }

            var perBatch = Math.Max(1, 64 * 1024 / (size + 16));
            var batch = Enumerable.Range(1, perBatch).SelectMany(_ => MqttBenchClient.Publish(Topic, size, 0, v5: true)).ToArray();
            var perPublisher = messages / Publishers;
            var clock = Stopwatch.StartNew();
            var readers = subs.Select(sub => Task.Factory.StartNew(() => sub.Receive(messages, clock, MqttIdle, RunLimit), TaskCreationOptions.LongRunning)).ToArray();
            var writers = pubs.Select(pub => Task.Factory.StartNew(
                () =>
                {
                    for (var sent = 0; sent < perPublisher && clock.Elapsed < RunLimit; sent += perBatch)
                    {
                        pub.Send(batch);
                    }
                },
                TaskCreationOptions.LongRunning)).ToArray();
            if (!Task.WaitAll([.. readers, .. writers], RunLimit + MqttIdle + MqttIdle))
            {
                throw new TimeoutException("the MQTT run did not end in time");
            }

            var received = readers.Sum(r => r.Result.Received);
            var lastAt = readers.Max(r => r.Result.LastAt);
            var sentTotal = Publishers * (long)Math.Ceiling(perPublisher / (double)perBatch) * perBatch;
            return
            [
                new("delivered msgs/s", received / Math.Max(lastAt.TotalSeconds, 1e-3)),
                new("delivered %", 100.0 * received / sentTotal),
            ];
        }
        finally
        {
            foreach (var client in subs.Concat(pubs))
            {
                client.Dispose();
            }
        }
    }

    /// <summary>The nats2mqtt row: a NATS publisher on bench.mqtt, an MQTT QoS 0 subscriber on bench/mqtt.</summary>
    private static IReadOnlyList<Metric> NatsToMqtt(ServerProcess server, int size, int messages)
    {
        using var sub = new MqttBenchClient(server.MqttPort, "bench-sub");
        sub.Subscribe("bench/mqtt", 0);
        using var pub = new BenchClient(server.Port);
        var perBatch = Math.Max(1, 64 * 1024 / (size + 20));
        var batch = BenchClient.PubBatch("bench.mqtt", size, perBatch);
        var clock = Stopwatch.StartNew();
        var reader = Task.Factory.StartNew(() => sub.Receive(messages, clock, MqttIdle, RunLimit), TaskCreationOptions.LongRunning);
        var writer = Task.Factory.StartNew(
            () =>
            {
                for (var sent = 0; sent < messages && clock.Elapsed < RunLimit; sent += perBatch)
                {
                    pub.Send(batch);
                }
            },
            TaskCreationOptions.LongRunning);
        return MqttMetrics(reader, writer, messages);
    }

    private static IReadOnlyList<Metric> MqttMetrics(Task<(long Received, TimeSpan LastAt)> reader, Task writer, int messages)
    {
        if (!Task.WaitAll([reader, writer], RunLimit + MqttIdle + MqttIdle))
        {
            throw new TimeoutException("the MQTT run did not end in time");
        }

        var (received, lastAt) = reader.Result;
        return
        [
            new("delivered msgs/s", received / Math.Max(lastAt.TotalSeconds, 1e-3)),
            new("delivered %", 100.0 * received / messages),
        ];
    }

    private static IReadOnlyList<Metric> RequestReply(ServerProcess server, int size, int clients, int services, int requestsPerClient)
    {
        using var stop = new CancellationTokenSource();
        var serviceClients = new List<BenchClient>();
        for (var i = 0; i < services; i++)
        {
            var service = new BenchClient(server.Port);
            service.Send("SUB bench.rr q 1\r\n");
            service.Flush();
            serviceClients.Add(service);
        }

        var serviceLoops = serviceClients.Select(service => Task.Factory.StartNew(
            () =>
            {
                var replies = new Dictionary<string, byte[]>();
                try
                {
                    while (!stop.IsCancellationRequested)
                    {
                        var inbox = service.ReadMsg();
                        if (!replies.TryGetValue(inbox, out var frame))
                        {
                            replies[inbox] = frame = BenchClient.PubBatch(inbox, size, 1);
                        }

                        service.Send(frame);
                    }
                }
                catch (Exception e) when (e is IOException or ObjectDisposedException or System.Net.Sockets.SocketException)
                {
                    // Closed at the end of the run.
                }
            },
            TaskCreationOptions.LongRunning)).ToArray();

        var latencies = new double[clients * requestsPerClient];
        var sw = Stopwatch.StartNew();
        var requesters = Enumerable.Range(0, clients).Select(c => Task.Factory.StartNew(
            () =>
            {
                using var client = new BenchClient(server.Port);
                var inbox = $"_INBOX.bench.{c}";
                client.Send($"SUB {inbox} 1\r\n");
                client.Flush();
                var request = BenchClient.PubBatch("bench.rr", size, 1, inbox);
                for (var i = 0; i < requestsPerClient && sw.Elapsed < RunLimit; i++)
                {
                    var start = Stopwatch.GetTimestamp();
                    client.Send(request);
                    client.SkipMsg();
                    latencies[(c * requestsPerClient) + i] = Stopwatch.GetElapsedTime(start).TotalMicroseconds;
                }
            },
            TaskCreationOptions.LongRunning)).ToArray();
        Task.WaitAll(requesters);
        var seconds = sw.Elapsed.TotalSeconds;
        stop.Cancel();
        serviceClients.ForEach(s => s.Dispose());
        Task.WaitAll(serviceLoops, TimeSpan.FromSeconds(10));

        var done = latencies.Where(l => l > 0).Order().ToArray();
        return
        [
            new("req/s", done.Length / seconds),
            new("p50 us", done[done.Length / 2], HigherIsBetter: false),
            new("p99 us", done[(int)(done.Length * 0.99)], HigherIsBetter: false),
        ];
    }

    /// <summary>Between a row's two runs under --warm: deletes stream BENCH, so the second run starts from an empty stream as the first did.</summary>
    public static void Reset(ServerProcess server)
    {
        using var client = new BenchClient(server.Port);
        client.Send("SUB _INBOX.bench.reset 1\r\nPUB $JS.API.STREAM.DELETE.BENCH _INBOX.bench.reset 0\r\n\r\n");
        client.ReadMsg();
    }

    /// <summary>A client subscribed to _INBOX.bench.* that has created stream BENCH on bench.js.</summary>
    private static BenchClient CreateBenchStream(ServerProcess server, string storage)
    {
        var client = new BenchClient(server.Port);
        client.Send("SUB _INBOX.bench.* 1\r\n");
        var config = $"{{\"name\":\"BENCH\",\"subjects\":[\"bench.js\"],\"storage\":\"{storage}\"}}";
        client.Send($"PUB $JS.API.STREAM.CREATE.BENCH _INBOX.bench.create {config.Length}\r\n{config}\r\n");
        client.ReadMsg();
        return client;
    }

    private static IReadOnlyList<Metric> JetStreamPublish(ServerProcess server, string storage, int size, int messages, int window)
    {
        using var client = CreateBenchStream(server, storage);
        var cpu = server.CpuTime();
        var (sent, elapsed) = PublishInWindows(client, size, messages, window, RunLimit);
        return [new("msgs/s", sent / elapsed.TotalSeconds), ServerCpuPerMessage(server, cpu, sent)];
    }

    /// <summary>
    /// The jsttl and jscounter rows: as jsasync, into a file stream with <paramref name="streamOption"/>, each message
    /// an HPUB carrying <paramref name="header"/>, spread over <paramref name="subjects"/> subjects (bench.js.0 ...).
    /// </summary>
    private static IReadOnlyList<Metric> JetStreamHeaderPublish(ServerProcess server, string streamOption, string header, int size, int messages, int window, int subjects = 1)
    {
        using var client = new BenchClient(server.Port);
        client.Send("SUB _INBOX.bench.* 1\r\n");
        var config = $"{{\"name\":\"BENCH\",\"subjects\":[\"bench.js.>\"],\"storage\":\"file\"{(streamOption.Length > 0 ? "," : "")}{streamOption}}}";
        client.Send($"PUB $JS.API.STREAM.CREATE.BENCH _INBOX.bench.create {config.Length}\r\n{config}\r\n");
        var created = client.ReadMsgPayload();
        if (!created.Contains("\"created\"", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"the stream was not created: {created}");
        }

        var headers = $"NATS/1.0\r\n{header}\r\n\r\n";
        string Frame(int i) => $"HPUB bench.js.{i % subjects} _INBOX.bench.ack {headers.Length} {headers.Length + size}\r\n{headers}{new string('x', size)}\r\n";

        // One first, its PubAck read: an error would otherwise be counted as a publish.
        client.Send(System.Text.Encoding.ASCII.GetBytes(Frame(0)));
        var first = client.ReadMsgPayload();
        if (!first.Contains("\"seq\"", StringComparison.Ordinal) || first.Contains("\"error\"", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"the first publish was refused: {first}");
        }

        var batch = System.Text.Encoding.ASCII.GetBytes(string.Concat(Enumerable.Range(0, window).Select(Frame)));
        var cpu = server.CpuTime();
        var sw = Stopwatch.StartNew();
        var sent = 0;
        while (sent < messages && sw.Elapsed < RunLimit)
        {
            client.Send(batch);
            for (var i = 0; i < window; i++)
            {
                client.SkipMsg(); // the PubAck
            }

            sent += window;
        }

        return [new("msgs/s", sent / sw.Elapsed.TotalSeconds), ServerCpuPerMessage(server, cpu, sent)];
    }

    /// <summary>Publishes to <c>bench.js</c> a window at a time, reading the window's PubAcks before the next; how many went, in how long.</summary>
    internal static (int Sent, TimeSpan Elapsed) PublishInWindows(BenchClient client, int size, int messages, int window, TimeSpan limit)
    {
        var batch = BenchClient.PubBatch("bench.js", size, window, "_INBOX.bench.ack");
        var sw = Stopwatch.StartNew();
        var sent = 0;
        while (sent < messages && sw.Elapsed < limit)
        {
            client.Send(batch);
            for (var i = 0; i < window; i++)
            {
                client.SkipMsg(); // the PubAck
            }

            sent += window;
        }

        return (sent, sw.Elapsed);
    }

    /// <summary>
    /// The jsasync600 row: one thread publishes whenever the window has room (as many as it has room
    /// for, in one write), each message with its own reply subject (<c>_INBOX.bench.acks.&lt;n&gt;</c>, as
    /// client libraries' async publish makes them), while another reads the PubAcks and frees room.
    /// </summary>
    private static IReadOnlyList<Metric> JetStreamPublishSliding(ServerProcess server, int size, int messages, int window)
    {
        using var client = CreateBenchStream(server, "file");
        client.Send("SUB _INBOX.bench.acks.> 2\r\n");
        client.Flush();
        using var room = new SemaphoreSlim(window);
        var payload = new byte[size];
        payload.AsSpan().Fill((byte)'x');
        var buffer = new byte[window * (size + 64)];
        var sw = Stopwatch.StartNew();
        var reader = Task.Factory.StartNew(
            () =>
            {
                for (var i = 0; i < messages; i++)
                {
                    client.SkipMsg();
                    room.Release();
                }
            },
            TaskCreationOptions.LongRunning);
        var sent = 0;
        while (sent < messages)
        {
            if (!room.Wait(RunLimit - sw.Elapsed > TimeSpan.Zero ? RunLimit - sw.Elapsed : TimeSpan.Zero))
            {
                throw new TimeoutException("PubAcks stopped coming");
            }

            var n = 1;
            while (sent + n < messages && room.Wait(0))
            {
                n++;
            }

            var length = 0;
            for (var i = 0; i < n; i++, sent++)
            {
                length += System.Text.Encoding.ASCII.GetBytes($"PUB bench.js _INBOX.bench.acks.{sent} {size}\r\n", buffer.AsSpan(length));
                payload.CopyTo(buffer.AsSpan(length));
                length += size;
                buffer[length++] = (byte)'\r';
                buffer[length++] = (byte)'\n';
            }

            client.Send(buffer.AsSpan(0, length));
        }

        if (!reader.Wait(RunLimit))
        {
            throw new TimeoutException("not every PubAck arrived");
        }

        return [new("msgs/s", messages / sw.Elapsed.TotalSeconds)];
    }

    private static IReadOnlyList<Metric> JetStreamConsume(ServerProcess server, int messages, bool ack)
    {
        const int Window = 256; // messages per fetch (and publishes in flight while filling)
        using var client = CreateBenchStream(server, "file");
        var batch = BenchClient.PubBatch("bench.js", 128, Window, "_INBOX.bench.ack");
        for (var sent = 0; sent < messages; sent += Window)
        {
            client.Send(batch);
            for (var i = 0; i < Window; i++)
            {
                client.SkipMsg();
            }
        }

        var consumer = ack
            ? "{\"stream_name\":\"BENCH\",\"config\":{\"durable_name\":\"D\",\"ack_policy\":\"explicit\",\"max_ack_pending\":100000}}"
            : "{\"stream_name\":\"BENCH\",\"config\":{\"name\":\"O\",\"ack_policy\":\"none\",\"mem_storage\":true}}";
        var name = ack ? "D" : "O";
        client.Send($"PUB $JS.API.CONSUMER.CREATE.BENCH.{name} _INBOX.bench.consumer {consumer.Length}\r\n{consumer}\r\n");
        client.ReadMsg();

        using var reader = new BenchClient(server.Port);
        reader.Send("SUB _INBOX.fetch 1\r\n");
        reader.Flush();
        var next = $"{{\"batch\":{Window},\"expires\":5000000000}}";
        var request = System.Text.Encoding.ASCII.GetBytes($"PUB $JS.API.CONSUMER.MSG.NEXT.BENCH.{name} _INBOX.fetch {next.Length}\r\n{next}\r\n");
        var acks = new System.Text.StringBuilder();
        var cpu = server.CpuTime();
        var sw = Stopwatch.StartNew();
        var received = 0;
        while (received < messages && sw.Elapsed < RunLimit)
        {
            reader.Send(request);
            for (var i = 0; i < Window; i++)
            {
                if (ack)
                {
                    acks.Append("PUB ").Append(reader.ReadMsg()).Append(" 0\r\n\r\n");
                }
                else
                {
                    reader.SkipMsg();
                }
            }

            if (ack)
            {
                reader.Send(acks.ToString());
                acks.Clear();
            }

            received += Window;
        }

        return [new("msgs/s", received / sw.Elapsed.TotalSeconds), ServerCpuPerMessage(server, cpu, received)];
    }

    /// <summary>The server's CPU time (user and system) since <paramref name="before"/> per message, in microseconds.</summary>
    private static Metric ServerCpuPerMessage(ServerProcess server, TimeSpan before, int messages) =>
        new("server CPU us/msg", (server.CpuTime() - before).TotalMicroseconds / Math.Max(messages, 1), HigherIsBetter: false);

    private static IReadOnlyList<Metric> ConnectionStorm(ServerProcess server, int threads, int connections)
    {
        // A first, unmeasured tenth of the storm (for both servers): the row measures how fast a running
        // server takes connections, not the first-use cost of its connection code, which the coldstart
        // row measures on its own.
        Storm(server, threads, connections / 10);
        return Storm(server, threads, connections);
    }

    private static IReadOnlyList<Metric> Storm(ServerProcess server, int threads, int connections)
    {
        var perThread = connections / threads;
        var latencies = new double[perThread * threads];
        var sw = Stopwatch.StartNew();
        var workers = Enumerable.Range(0, threads).Select(t => Task.Factory.StartNew(
            () =>
            {
                for (var i = 0; i < perThread && sw.Elapsed < RunLimit; i++)
                {
                    var start = Stopwatch.GetTimestamp();
                    using var client = new BenchClient(server.Port, readBufferSize: SmallReadBuffer); // INFO, CONNECT, PING/PONG
                    latencies[(t * perThread) + i] = Stopwatch.GetElapsedTime(start).TotalMicroseconds;
                }
            },
            TaskCreationOptions.LongRunning)).ToArray();
        Task.WaitAll(workers);
        var seconds = sw.Elapsed.TotalSeconds;
        var done = latencies.Where(l => l > 0).Order().ToArray();
        return
        [
            new("conn/s", done.Length / seconds),
            new("p99 us", done[(int)(done.Length * 0.99)], HigherIsBetter: false),
        ];
    }

    private static IReadOnlyList<Metric> IdleConnections(ServerProcess server, int count)
    {
        // Warm up with a few connections first (for both servers), so the baseline already holds
        // one-time costs (code paths compiled, pools created) and the delta is per connection.
        const int WarmUp = 50;
        var warm = Enumerable.Range(0, WarmUp).Select(i =>
        {
            var c = new BenchClient(server.Port, readBufferSize: SmallReadBuffer);
            c.Send($"SUB warm.{i} 1\r\n");
            c.Flush();
            return c;
        }).ToList();
        warm.ForEach(c => c.Dispose());
        Thread.Sleep(1_000); // let the server settle before the baseline
        var before = server.ResidentBytes();
        var clients = new List<BenchClient>(count);
        try
        {
            for (var i = 0; i < count; i++)
            {
                var client = new BenchClient(server.Port, readBufferSize: SmallReadBuffer);
                client.Send($"SUB idle.{i} 1\r\n");
                clients.Add(client);
            }

            foreach (var client in clients)
            {
                client.Flush();
            }

            Thread.Sleep(1_000); // let the servers' buffers settle
            var after = server.ResidentBytes();
            return [new("RSS bytes/conn", (after - before) / (double)count, HigherIsBetter: false)];
        }
        finally
        {
            clients.ForEach(c => c.Dispose());
        }
    }
}
