using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Cluster.Tests.Leaf;

/// <summary>
/// A remote's <c>deny_exports</c> keeps the leaf's messages on those subjects at the leaf, and its
/// <c>deny_imports</c> keeps the hub's messages on those subjects from the leaf, as nats-server's
/// remote permissions do.
/// </summary>
public sealed class LeafDenyTests
{
    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task Deny_lists_of_a_courier_leafs_remote_stop_those_subjects_at_the_link(ServerKind hubKind)
    {
        var p = $"leafdeny{Guid.NewGuid():N}";
        await using var topology = await LeafTopology.StartAsync(hubKind, ServerKind.Courier, "deny_exports: [\"out.denied.>\"], deny_imports: [\"in.denied.>\"]");
        await using var leaf = await topology.ConnectLeafAsync();
        await using var hub = await topology.ConnectHubAsync();
        await using var hubDenied = await Collect.SubscribeAsync(hub, $"out.denied.{p}");
        await using var hubAllowed = await Collect.SubscribeAsync(hub, $"out.allowed.{p}");
        await using var leafDenied = await Collect.SubscribeAsync(leaf, $"in.denied.{p}");
        await using var leafAllowed = await Collect.SubscribeAsync(leaf, $"in.allowed.{p}");
        await topology.CrossedAsync(hub, leaf, $"{p}.ready");
        await topology.CrossedAsync(leaf, hub, $"{p}.ready2");

        // The denied message goes first on each link: had it crossed, it would arrive before the allowed one.
        await leaf.PublishAsync($"out.denied.{p}", "x");
        await leaf.PublishAsync($"out.allowed.{p}", "ok");
        await hub.PublishAsync($"in.denied.{p}", "x");
        await hub.PublishAsync($"in.allowed.{p}", "ok");
        Assert.True(await Poll.UntilAsync(() => !hubAllowed.Messages.IsEmpty && !leafAllowed.Messages.IsEmpty, LeafTopology.ConvergeTimeout), topology.Diagnostics());

        Assert.Empty(hubDenied.Messages);
        Assert.Empty(leafDenied.Messages);
    }
}
