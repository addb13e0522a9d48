using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using NATS.Client.Core;

namespace Courier.Cluster.Tests.Leaf;

/// <summary>
/// A Courier leaf whose hub is node 0 of a two-node cluster: the hub tells its routes the leaf's
/// interest and sends them the leaf's messages, and tells the leaf the interest of the other node,
/// so clients on the leaf and on node 1 reach each other through node 0; a queue group on node 1
/// gets each of the leaf's messages once.
/// </summary>
public sealed class LeafClusterTests
{
    [Theory]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    public async Task A_leaf_reaches_the_other_node_of_its_hubs_cluster_both_ways(ServerKind hubKind, ServerKind otherKind)
    {
        const int Count = 20;
        var p = $"leafcl{Guid.NewGuid():N}";
        var leafPort = LoopbackPorts.Next();
        await using var mesh = await Mesh.StartAsync([hubKind, otherKind], null, [], nodeConfig: i => i == 0 ? $"leafnodes {{ listen: \"127.0.0.1:{leafPort}\" }}" : null);
        await using var leafServer = await ServerProcess.StartAsync(
            ServerKind.Courier, $"leafnodes {{ remotes [ {{ url: \"nats-leaf://127.0.0.1:{leafPort}\" }} ], reconnect: 1 }}", "-n", "leaf");
        await using var leaf = await ConnectAsync(leafServer.Url);
        await using var other = await mesh.ConnectAsync(1);

        // node 1 -> leaf: interest goes leaf -> node 0 -> node 1.
        await using var onLeaf = await Collect.SubscribeAsync(leaf, $"{p}.down");
        Assert.True(await CrossedAsync(leaf, other, $"{p}.ready1"), $"{mesh.Diagnostics()}\n\n{leafServer.Diagnostics(60)}");
        await other.PublishAsync($"{p}.down", "to the leaf");

        // leaf -> node 1, into a queue group there: interest goes node 1 -> node 0 -> leaf.
        await using var member1 = await Collect.SubscribeAsync(other, $"{p}.up", "workers");
        await using var member2 = await Collect.SubscribeAsync(other, $"{p}.up", "workers");
        Assert.True(await CrossedAsync(other, leaf, $"{p}.ready2"), $"{mesh.Diagnostics()}\n\n{leafServer.Diagnostics(60)}");
        for (var i = 0; i < Count; i++)
        {
            await leaf.PublishAsync($"{p}.up", i.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        Assert.True(await Poll.UntilAsync(() => member1.Messages.Count + member2.Messages.Count >= Count && !onLeaf.Messages.IsEmpty, LeafTopology.ConvergeTimeout), mesh.Diagnostics());
        Assert.True(await CrossedAsync(other, leaf, $"{p}.ready3")); // after all of them on the same path: any duplicate is in by now
        Assert.Equal(["to the leaf"], onLeaf.Messages.Select(m => m.Data));
        var all = member1.Messages.Concat(member2.Messages).Select(m => int.Parse(m.Data!, System.Globalization.CultureInfo.InvariantCulture)).Order();
        Assert.Equal(Enumerable.Range(0, Count), all);
    }

    private static async Task<bool> CrossedAsync(NatsConnection subscriber, NatsConnection publisher, string subject)
    {
        await using var ready = await Collect.SubscribeAsync(subscriber, subject);
        return await Poll.UntilAsync(
            async () =>
            {
                await publisher.PublishAsync(subject, "?");
                await publisher.PingAsync();
                return !ready.Messages.IsEmpty;
            },
            LeafTopology.ConvergeTimeout);
    }

    private static async Task<NatsConnection> ConnectAsync(string url)
    {
        var nats = new NatsConnection(new NatsOpts { Url = url, Name = "leaf-cluster-it", MaxReconnectRetry = 0 });
        await nats.ConnectAsync();
        return nats;
    }
}

/// <summary>
/// A leaf cluster (two Courier nodes in cluster <c>LC</c>) whose nodes are leafs of the two nodes of a
/// hub cluster: the hub nodes tell each other the interest of a leaf of <c>LC</c> with that origin
/// (nats-server's LS+ &lt;origin&gt;) and send its messages with it (LMSG &lt;origin&gt;), and neither
/// tells nor sends them back into <c>LC</c>, so a message published in the leaf cluster reaches a
/// subscriber there once, not a second time through the hubs (also when a client of the hub node the
/// publisher's leaf is linked to wants it too).
/// </summary>
public sealed class LeafClusterOriginTests
{
    private static async Task<string> MonitorAsync(Mesh mesh, int received)
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var text = $"received {received}\n";
        foreach (var node in mesh.Nodes)
        {
            foreach (var page in new[] { "routez", "leafz?subs=1", "subsz?subs=1" })
            {
                text += $"--- {node.Port} {page}\n{await http.GetStringAsync(new Uri(node.MonitorUri, page))}\n";
            }
        }

        return text + mesh.Diagnostics();
    }

    [Theory]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    public async Task A_leaf_clusters_message_is_not_echoed_back_into_it_through_the_hub_cluster(ServerKind hub0, ServerKind hub1)
    {
        const int Count = 10;
        var p = $"leafor{Guid.NewGuid():N}";
        var hubLeafPorts = new[] { LoopbackPorts.Next(), LoopbackPorts.Next() };
        await using var hubs = await Mesh.StartAsync([hub0, hub1], null, [], nodeConfig: i => $"leafnodes {{ listen: \"127.0.0.1:{hubLeafPorts[i]}\" }}");
        await using var leafs = await Mesh.StartAsync(
            [ServerKind.Courier, ServerKind.Courier], null, ["--cluster_name", "LC"],
            nodeConfig: i => $"leafnodes {{ remotes [ {{ url: \"nats-leaf://127.0.0.1:{hubLeafPorts[i]}\" }} ], reconnect: 1 }}");
        await using var subscriber = await leafs.ConnectAsync(0);
        await using var publisher = await leafs.ConnectAsync(1);
        await using var viaHub = await hubs.ConnectAsync(1);
        await using var inbox = await Collect.SubscribeAsync(subscriber, $"{p}.x");

        // Leaf 1 knows leaf 0's interest over the leaf cluster's route once a message of leaf 1's reaches leaf 0:
        // it can come no other way (the hubs keep LC's messages out of LC's links). The meshes' probes share
        // names, so the mesh's own barrier may be answered through the hubs.
        await using var routeReady = await Collect.SubscribeAsync(subscriber, $"{p}.routeready");
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    await publisher.PublishAsync($"{p}.routeready", "?");
                    await publisher.PingAsync();
                    return !routeReady.Messages.IsEmpty;
                },
                LeafTopology.ConvergeTimeout),
            await MonitorAsync(leafs, 0));

        // The publisher's leaf sends to hub 1 too, once hub 1's client's interest has crossed to it.
        await using var onHub = await Collect.SubscribeAsync(viaHub, $"{p}.x");
        await using var hubReady = await Collect.SubscribeAsync(viaHub, $"{p}.hubready");
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    await publisher.PublishAsync($"{p}.hubready", "?");
                    await publisher.PingAsync();
                    return !hubReady.Messages.IsEmpty;
                },
                LeafTopology.ConvergeTimeout),
            $"{hubs.Diagnostics()}\n\n{leafs.Diagnostics()}");

        // Leaf 0's interest has gone leaf 0 -> hub 0 -> hub 1 once a message from hub 1 reaches it.
        await using var ready = await Collect.SubscribeAsync(subscriber, $"{p}.ready");
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    await viaHub.PublishAsync($"{p}.ready", "?");
                    await viaHub.PingAsync();
                    return !ready.Messages.IsEmpty;
                },
                LeafTopology.ConvergeTimeout),
            $"{hubs.Diagnostics()}\n\n{leafs.Diagnostics()}");

        for (var i = 0; i < Count; i++)
        {
            await publisher.PublishAsync($"{p}.x", $"m{i}");
        }

        // A last message from the hub side: it comes after any echo through the hubs would have.
        await publisher.PublishAsync($"{p}.x", "end");
        Assert.True(await Poll.UntilAsync(() => inbox.Messages.Any(m => m.Data == "end"), LeafTopology.ConvergeTimeout), await MonitorAsync(leafs, inbox.Messages.Count));
        await viaHub.PublishAsync($"{p}.x", "from the hub");
        Assert.True(await Poll.UntilAsync(() => inbox.Messages.Any(m => m.Data == "from the hub"), LeafTopology.ConvergeTimeout), leafs.Diagnostics());
        Assert.Equal([.. Enumerable.Range(0, Count).Select(i => $"m{i}"), "end", "from the hub"], inbox.Messages.Select(m => m.Data));
        Assert.True(await Poll.UntilAsync(() => onHub.Messages.Any(m => m.Data == "from the hub"), LeafTopology.ConvergeTimeout), hubs.Diagnostics());
        Assert.Equal([.. Enumerable.Range(0, Count).Select(i => $"m{i}"), "end", "from the hub"], onHub.Messages.Select(m => m.Data));
    }
}
