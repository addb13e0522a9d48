using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Cluster.Tests.Leaf;

/// <summary>
/// A leaf that loses its hub: it keeps serving its own clients, dials the hub again when it is back,
/// and tells it all of its interest again, so the leaf's old subscriptions get the hub's messages, once each.
/// </summary>
public sealed class LeafReconnectTests
{
    [Theory]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    public async Task A_leaf_keeps_serving_while_its_hub_is_down_and_reconnects_without_duplicates(ServerKind hubKind, ServerKind leafKind)
    {
        const int Count = 10;
        var p = $"leafre{Guid.NewGuid():N}";
        await using var topology = await LeafTopology.StartAsync(hubKind, leafKind);
        await using var leaf = await topology.ConnectLeafAsync();
        await using var onLeaf = await Collect.SubscribeAsync(leaf, $"{p}.x");
        await using (var hub = await topology.ConnectHubAsync())
        {
            await topology.CrossedAsync(leaf, hub, $"{p}.ready");
        }

        await topology.RestartHubAsync(whileDown: async () =>
        {
            // The leaf's own clients still reach each other.
            await using var local = await Collect.SubscribeAsync(leaf, $"{p}.local");
            await leaf.PublishAsync($"{p}.local", "still here");
            Assert.True(await Poll.UntilAsync(() => !local.Messages.IsEmpty, LeafTopology.ConvergeTimeout), topology.Diagnostics());
        });

        // The leaf dials the new hub and tells it of p.x again (the subscription made before the outage).
        await using var newHub = await topology.ConnectHubAsync();
        await topology.WaitForLinkAsync();
        await topology.CrossedAsync(leaf, newHub, $"{p}.ready2");
        var before = onLeaf.Messages.Count;
        for (var i = 0; i < Count; i++)
        {
            await newHub.PublishAsync($"{p}.x", $"m{i}");
        }

        await newHub.PublishAsync($"{p}.x", "end");
        Assert.True(await Poll.UntilAsync(() => onLeaf.Messages.Any(m => m.Data == "end"), LeafTopology.ConvergeTimeout), topology.Diagnostics());
        Assert.Equal(0, before);
        Assert.Equal([.. Enumerable.Range(0, Count).Select(i => $"m{i}"), "end"], onLeaf.Messages.Select(m => m.Data));
    }
}
