using System.Diagnostics;
using System.Globalization;
using System.Net;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Cluster.Tests;

/// <summary>
/// A node of three is killed with SIGKILL while a publisher on another node sends a numbered sequence,
/// then started again on the same ports: the survivors keep every message in order, a queue group
/// never gets a message twice, the killed node's client fails over, and the restarted node rejoins
/// the Akka.Cluster and carries route traffic again.
/// </summary>
public sealed class KillRestartTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(45); // failure detection, SBR's stable-after, a restart's JIT, gossip
    private const string Subject = "kr.seq";
    private const string Queue = "workers";
    private const int SettledCount = 300; // published and delivered while every node is up
    private const int MaxMessages = 60_000; // the publisher's bound, whatever happens
    private static readonly TimeSpan MaxPublishing = TimeSpan.FromSeconds(90);

    [Fact]
    public async Task A_node_killed_and_restarted_under_traffic_loses_nothing_for_the_others_and_rejoins()
    {
        await using var mesh = await Mesh.StartAsync(ServerKind.Courier, ServerKind.Courier, ServerKind.Courier);
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        foreach (var node in mesh.Nodes)
        {
            Assert.True(await NodeMonitor.HealthAsync(http, node, HttpStatusCode.OK, Timeout), $"{node.Url} never became a healthy member\n{mesh.Diagnostics()}");
        }

        await using var publisher = await mesh.ConnectAsync(0, "publisher");
        await using var onB = await mesh.ConnectAsync(1, "sub-b");
        await using var sequenceB = await Collect.SubscribeAsync(onB, Subject);
        await using var workerA = await mesh.ConnectAsync(0, "worker-a");
        await using var workerB = await mesh.ConnectAsync(1, "worker-b");
        await using var workerC = await mesh.ConnectAsync(2, "worker-c"); // dies with its node (no reconnect)
        await using var queueA = await Collect.SubscribeAsync(workerA, Subject, Queue);
        await using var queueB = await Collect.SubscribeAsync(workerB, Subject, Queue);
        await using var queueC = await Collect.SubscribeAsync(workerC, Subject, Queue);

        // Given node 2 only; learns the others from INFO connect_urls and reconnects to one of them.
        await using var onC = new NatsConnection(new NatsOpts
        {
            Url = mesh.Nodes[2].Url,
            Name = "sub-c",
            MaxReconnectRetry = 400,
            ReconnectWaitMin = TimeSpan.FromMilliseconds(50),
            ReconnectWaitMax = TimeSpan.FromMilliseconds(200),
        });
        await onC.ConnectAsync();
        Assert.True(
            await Poll.UntilAsync(() => onC.ServerInfo?.ClientConnectUrls?.Length == 3, Timeout),
            $"sub-c never learned the three nodes: {string.Join(", ", onC.ServerInfo?.ClientConnectUrls ?? [])}\n{mesh.Diagnostics()}");
        await using var sequenceC = await Collect.SubscribeAsync(onC, Subject);
        foreach (var connection in (NatsConnection[])[onB, workerB, workerC, onC])
        {
            await Mesh.BarrierAsync(connection, 0); // node 0 knows the interest before the first publish
        }

        // Phase 1: every node up; each message reaches B, C, and exactly one worker.
        for (var i = 1; i <= SettledCount; i++)
        {
            await publisher.PublishAsync(Subject, i.ToString(CultureInfo.InvariantCulture));
        }

        await publisher.PingAsync();
        Assert.True(
            await Poll.UntilAsync(() => sequenceB.Messages.Count == SettledCount && sequenceC.Messages.Count == SettledCount && QueueCount(queueA, queueB, queueC) >= SettledCount, Timeout),
            $"phase 1: B {sequenceB.Messages.Count}, C {sequenceC.Messages.Count}, workers {QueueCount(queueA, queueB, queueC)} of {SettledCount}\n{mesh.Diagnostics()}");

        // Phase 2: a paced publisher runs on; node 2 is killed and restarted under it.
        var published = SettledCount;
        using var stop = new CancellationTokenSource();
        var publishing = Task.Run(async () =>
        {
            var clock = Stopwatch.StartNew();
            while (!stop.IsCancellationRequested && published < MaxMessages && clock.Elapsed < MaxPublishing)
            {
                for (var k = 0; k < 10; k++)
                {
                    await publisher.PublishAsync(Subject, (published + 1).ToString(CultureInfo.InvariantCulture));
                    Volatile.Write(ref published, published + 1);
                }

                await publisher.PingAsync();
                await Task.Delay(10);
            }
        });

        Assert.True(await Poll.UntilAsync(() => Volatile.Read(ref published) >= SettledCount + 200, Timeout), "the publisher does not run");
        await mesh.Nodes[2].DisposeAsync(); // SIGKILL, by pid

        Assert.True(
            await Poll.UntilAsync(() => onC.ConnectionState == NatsConnectionState.Open && onC.ServerInfo?.Name is "node-0" or "node-1", Timeout),
            $"sub-c did not fail over: {onC.ConnectionState}, {onC.ServerInfo?.Name}\n{mesh.Diagnostics()}");
        var failedOverAt = Volatile.Read(ref published);

        var restarted = await mesh.RestartAsync(2);
        Assert.True(await NodeMonitor.HealthAsync(http, restarted, HttpStatusCode.OK, Timeout), $"the restarted node never became a healthy member again\n{mesh.Diagnostics()}");
        foreach (var (node, peers) in ((int, string[])[])[(0, ["node-1", "node-2"]), (1, ["node-0", "node-2"]), (2, ["node-0", "node-1"])])
        {
            Assert.True(
                await Poll.UntilAsync(async () => (await NodeMonitor.RouteNamesAsync(http, mesh.Nodes[node])).SequenceEqual(peers), Timeout),
                $"node-{node}'s /routez never listed {string.Join(", ", peers)}\n{mesh.Diagnostics()}");
        }

        Assert.True(
            await Poll.UntilAsync(() => mesh.Nodes[0].Log.All().Split('\n').Count(line => line.Contains("Cluster member up:", StringComparison.Ordinal) && line.Contains("(node-2)", StringComparison.Ordinal)) >= 2, Timeout),
            $"node-0 never saw the restarted node-2 up as a new member\n{mesh.Nodes[0].Diagnostics(80)}");

        // Routes carry traffic to the restarted node (a subscriber and a queue worker there) and from it (a request answered on node 0).
        await using var onRestarted = await mesh.ConnectAsync(2, "sub-c2");
        await using var sequenceC2 = await Collect.SubscribeAsync(onRestarted, Subject);
        await using var workerC2 = await mesh.ConnectAsync(2, "worker-c2");
        await using var queueC2 = await Collect.SubscribeAsync(workerC2, Subject, Queue);
        await using var service = await mesh.ConnectAsync(0, "service");
        await using var responder = await service.SubscribeCoreAsync<string>("kr.svc");
        var answering = Task.Run(async () =>
        {
            await foreach (var request in responder.Msgs.ReadAllAsync())
            {
                await request.ReplyAsync("node-0 answers " + request.Data);
            }
        });
        await service.PingAsync(); // node 0 applied the SUB; node 2 learns it over the route (polled below)
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    try
                    {
                        return (await onRestarted.RequestAsync<string, string>("kr.svc", "from node-2", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(2) })).Data == "node-0 answers from node-2";
                    }
                    catch (Exception e) when (e is NatsNoRespondersException or NatsNoReplyException or TimeoutException)
                    {
                        return false;
                    }
                },
                Timeout),
            $"a request from the restarted node is not answered on node 0\n{mesh.Diagnostics()}");
        Assert.True(
            await Poll.UntilAsync(() => sequenceC2.Messages.Count >= 200 && !queueC2.Messages.IsEmpty && sequenceC.Messages.Any(m => Number(m) > failedOverAt), Timeout),
            $"after the restart: sub-c2 {sequenceC2.Messages.Count}, worker-c2 {queueC2.Messages.Count}, sub-c's last {sequenceC.Messages.LastOrDefault().Data}, failed over at {failedOverAt}\n{mesh.Diagnostics()}");

        await stop.CancelAsync();
        await publishing;
        await publisher.PingAsync();
        var total = Volatile.Read(ref published);
        Assert.True(await Poll.UntilAsync(() => sequenceB.Messages.Count >= total, Timeout), $"B got {sequenceB.Messages.Count} of {total}\n{mesh.Diagnostics()}");

        // B, on a node that stayed up: every message, once, in publish order.
        Assert.Equal(Enumerable.Range(1, total), sequenceB.Messages.Select(Number));

        // The queue group: never twice; exactly once while every member's node was up.
        var deliveries = new[] { queueA, queueB, queueC, queueC2 }.SelectMany(q => q.Messages).Select(Number).ToList();
        var twice = deliveries.GroupBy(n => n).Where(g => g.Count() > 1).Select(g => g.Key).Take(10).ToList();
        Assert.True(twice.Count == 0, $"queue group got these more than once: {string.Join(", ", twice)}");
        Assert.Equal(Enumerable.Range(1, SettledCount), deliveries.Where(n => n <= SettledCount).Order());

        // The subscribers whose node died or restarted: increasing, so never a duplicate nor a reordering.
        AssertIncreasing(sequenceC, "sub-c");
        AssertIncreasing(sequenceC2, "sub-c2");
        Assert.Equal(Enumerable.Range(1, SettledCount), sequenceC.Messages.Select(Number).Take(SettledCount));

        await responder.UnsubscribeAsync();
        await answering;
    }

    private static int Number(NatsMsg<string> message) => int.Parse(message.Data!, CultureInfo.InvariantCulture);

    private static int QueueCount(params Collect[] members) => members.Sum(m => m.Messages.Count);

    private static void AssertIncreasing(Collect collect, string who)
    {
        var numbers = collect.Messages.Select(Number).ToList();
        for (var i = 1; i < numbers.Count; i++)
        {
            Assert.True(numbers[i] > numbers[i - 1], $"{who} got {numbers[i]} after {numbers[i - 1]}");
        }
    }
}
