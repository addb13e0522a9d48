using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Cluster.Tests.Leaf;

/// <summary>A hub and a leaf shared by one test class (each test uses its own subjects).</summary>
public abstract class LeafTopologyFixture(ServerKind hub, ServerKind leaf) : IAsyncLifetime
{
    public ServerKind HubKind { get; } = hub;

    public ServerKind LeafKind { get; } = leaf;

    public LeafTopology Topology { get; private set; } = null!;

    public async Task InitializeAsync() => Topology = await LeafTopology.StartAsync(HubKind, LeafKind);

    public async Task DisposeAsync() => await Topology.DisposeAsync();
}

public sealed class CourierHubCourierLeafFixture() : LeafTopologyFixture(ServerKind.Courier, ServerKind.Courier);

public sealed class GoHubCourierLeafFixture() : LeafTopologyFixture(ServerKind.NatsServer, ServerKind.Courier);

public sealed class CourierHubGoLeafFixture() : LeafTopologyFixture(ServerKind.Courier, ServerKind.NatsServer);

/// <summary>Courier hub, Courier leaf.</summary>
public sealed class CourierHubCourierLeafTests(CourierHubCourierLeafFixture fixture) : LeafNodeTests(fixture), IClassFixture<CourierHubCourierLeafFixture>;

/// <summary>nats-server 2.9.10 hub, Courier leaf.</summary>
public sealed class GoHubCourierLeafTests(GoHubCourierLeafFixture fixture) : LeafNodeTests(fixture), IClassFixture<GoHubCourierLeafFixture>;

/// <summary>Courier hub, nats-server 2.9.10 leaf.</summary>
public sealed class CourierHubGoLeafTests(CourierHubGoLeafFixture fixture) : LeafNodeTests(fixture), IClassFixture<CourierHubGoLeafFixture>;

/// <summary>
/// Leaf node links as nats-server 2.9 has them, in each combination of Courier and nats-server as hub
/// and leaf: messages, wildcards, queue groups and request/reply cross the link both ways; the link
/// is bound to one account of the hub and sees nothing of the others; a leaf that loses its hub keeps
/// serving its clients, dials again and tells the new hub its interest, without duplicates.
/// </summary>
public abstract class LeafNodeTests(LeafTopologyFixture fixture)
{
    private readonly LeafTopology _topology = fixture.Topology;

    public enum Side
    {
        Hub,
        Leaf,
    }

    [Theory]
    [InlineData(Side.Hub)]
    [InlineData(Side.Leaf)]
    public async Task A_message_and_its_headers_cross_the_link_to_a_subscriber_on_the_other_side(Side publisherSide)
    {
        var p = Prefix();
        var (publisher, subscriber) = await PairAsync(publisherSide);
        await using var _ = publisher;
        await using var __ = subscriber;
        await using var inbox = await Collect.SubscribeAsync(subscriber, $"{p}.x");
        await _topology.CrossedAsync(subscriber, publisher, $"{p}.ready");

        await publisher.PublishAsync($"{p}.x", "plain");
        await publisher.PublishAsync($"{p}.x", "with headers", headers: new NatsHeaders { ["Trace"] = "42" });
        Assert.True(await Poll.UntilAsync(() => inbox.Messages.Count >= 2, LeafTopology.ConvergeTimeout), _topology.Diagnostics());

        var messages = inbox.Messages.ToArray();
        Assert.Equal(["plain", "with headers"], messages.Select(m => m.Data));
        Assert.Equal("42", messages[1].Headers?["Trace"].ToString());
    }

    [Theory]
    [InlineData(Side.Hub)]
    [InlineData(Side.Leaf)]
    public async Task Wildcard_interest_crosses_the_link_and_matches_only_its_subjects(Side publisherSide)
    {
        var p = Prefix();
        var (publisher, subscriber) = await PairAsync(publisherSide);
        await using var _ = publisher;
        await using var __ = subscriber;
        await using var star = await Collect.SubscribeAsync(subscriber, $"{p}.*.x");
        await using var full = await Collect.SubscribeAsync(subscriber, $"{p}.>");
        await _topology.CrossedAsync(subscriber, publisher, $"{p}-ready"); // outside p.>

        await publisher.PublishAsync($"{p}.a.x", "1");
        await publisher.PublishAsync($"{p}.b.y", "2");
        await publisher.PublishAsync($"{p}.c.x.z", "3");
        await publisher.PublishAsync($"{p}.end", "end");
        Assert.True(await Poll.UntilAsync(() => full.Messages.Any(m => m.Data == "end"), LeafTopology.ConvergeTimeout), _topology.Diagnostics());

        // The last message has arrived, and the link keeps order: nothing else is on its way.
        Assert.Equal(["1"], star.Messages.Select(m => m.Data));
        Assert.Equal(["1", "2", "3", "end"], full.Messages.Select(m => m.Data));
    }

    [Theory]
    [InlineData(Side.Hub)]
    [InlineData(Side.Leaf)]
    public async Task A_queue_group_on_the_other_side_gets_each_message_exactly_once(Side publisherSide)
    {
        const int Count = 40;
        var p = Prefix();
        var (publisher, subscriber) = await PairAsync(publisherSide);
        await using var _ = publisher;
        await using var __ = subscriber;
        await using var member1 = await Collect.SubscribeAsync(subscriber, $"{p}.work", "workers");
        await using var member2 = await Collect.SubscribeAsync(subscriber, $"{p}.work", "workers");
        await _topology.CrossedAsync(subscriber, publisher, $"{p}.ready");

        for (var i = 0; i < Count; i++)
        {
            await publisher.PublishAsync($"{p}.work", i.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        await publisher.PingAsync();
        Assert.True(await Poll.UntilAsync(() => member1.Messages.Count + member2.Messages.Count >= Count, LeafTopology.ConvergeTimeout), _topology.Diagnostics());

        // Messages after all of them: once one is in, any duplicate would have arrived too (the link keeps order).
        await _topology.CrossedAsync(subscriber, publisher, $"{p}.ready2");
        var all = member1.Messages.Concat(member2.Messages).Select(m => int.Parse(m.Data!, System.Globalization.CultureInfo.InvariantCulture)).Order().ToArray();
        Assert.Equal(Enumerable.Range(0, Count), all);
    }

    [Theory]
    [InlineData(Side.Hub)]
    [InlineData(Side.Leaf)]
    public async Task A_queue_group_with_members_on_both_sides_prefers_the_publishers_side(Side publisherSide)
    {
        const int Count = 20;
        var p = Prefix();
        var (publisher, far) = await PairAsync(publisherSide);
        await using var _ = publisher;
        await using var __ = far;
        await using var remote = await Collect.SubscribeAsync(far, $"{p}.work", "workers");
        await _topology.CrossedAsync(far, publisher, $"{p}.ready");
        await using var local = await Collect.SubscribeAsync(publisher, $"{p}.work", "workers");

        for (var i = 0; i < Count; i++)
        {
            await publisher.PublishAsync($"{p}.work", "job");
        }

        Assert.True(await Poll.UntilAsync(() => local.Messages.Count + remote.Messages.Count >= Count, LeafTopology.ConvergeTimeout), _topology.Diagnostics());

        // As nats-server: a member on the publisher's server takes every message; the other side's none.
        await _topology.CrossedAsync(far, publisher, $"{p}.ready2");
        Assert.Equal(Count, local.Messages.Count);
        Assert.Empty(remote.Messages);
    }

    [Theory]
    [InlineData(Side.Hub)]
    [InlineData(Side.Leaf)]
    public async Task A_request_is_answered_by_a_responder_on_the_other_side(Side requesterSide)
    {
        var p = Prefix();
        var (requester, responder) = await PairAsync(requesterSide);
        await using var _ = requester;
        await using var __ = responder;
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await using var service = await responder.SubscribeCoreAsync<string>($"{p}.svc", cancellationToken: cts.Token);
        var serving = Task.Run(
            async () =>
            {
                await foreach (var msg in service.Msgs.ReadAllAsync(cts.Token))
                {
                    await msg.ReplyAsync($"re: {msg.Data}", cancellationToken: cts.Token);
                }
            },
            cts.Token);
        await _topology.CrossedAsync(responder, requester, $"{p}.ready");

        for (var i = 0; i < 3; i++)
        {
            var reply = await requester.RequestAsync<string, string>($"{p}.svc", $"q{i}", cancellationToken: cts.Token);
            Assert.Equal($"re: q{i}", reply.Data);
        }

        Assert.False(serving.IsFaulted);
    }

    [Fact]
    public async Task The_link_is_bound_to_its_account_and_sees_nothing_of_another()
    {
        var p = Prefix();
        await using var leaf = await _topology.ConnectLeafAsync();
        await using var hubA = await _topology.ConnectHubAsync("a");
        await using var hubB = await _topology.ConnectHubAsync("b");
        await using var inA = await Collect.SubscribeAsync(hubA, $"{p}.x");
        await using var inB = await Collect.SubscribeAsync(hubB, $"{p}.x");
        await using var onLeaf = await Collect.SubscribeAsync(leaf, $"{p}.y");
        await _topology.CrossedAsync(hubA, leaf, $"{p}.ready");
        await _topology.CrossedAsync(leaf, hubA, $"{p}.ready2");

        // Account B's message is published first: had it crossed, the leaf would see it before A's.
        await hubB.PublishAsync($"{p}.y", "from B");
        await hubA.PublishAsync($"{p}.y", "from A");
        await leaf.PublishAsync($"{p}.x", "from the leaf");
        Assert.True(await Poll.UntilAsync(() => !onLeaf.Messages.IsEmpty && !inA.Messages.IsEmpty, LeafTopology.ConvergeTimeout), _topology.Diagnostics());

        // B's subscriber would have got the leaf's message before the barrier's reply comes back through A.
        await using var probe = await Collect.SubscribeAsync(hubB, $"{p}.probe");
        await hubB.PublishAsync($"{p}.probe", "b");
        Assert.True(await Poll.UntilAsync(() => !probe.Messages.IsEmpty, LeafTopology.ConvergeTimeout));
        Assert.Equal(["from A"], onLeaf.Messages.Select(m => m.Data));
        Assert.Equal(["from the leaf"], inA.Messages.Select(m => m.Data));
        Assert.Empty(inB.Messages);
    }

    private static string Prefix() => $"leaf{Guid.NewGuid():N}";

    // The publisher on the given side (the hub: account A), the other connection on the other side.
    private async Task<(NatsConnection Publisher, NatsConnection Other)> PairAsync(Side publisherSide)
    {
        var hub = await _topology.ConnectHubAsync();
        var leaf = await _topology.ConnectLeafAsync();
        return publisherSide == Side.Hub ? (hub, leaf) : (leaf, hub);
    }
}
