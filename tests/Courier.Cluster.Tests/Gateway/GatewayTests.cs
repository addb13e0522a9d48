using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Cluster.Tests.Gateway;

/// <summary>A two-region super-cluster shared by one test class (each test uses its own subjects).</summary>
public abstract class GatewayTopologyFixture(ServerKind east, ServerKind west) : IAsyncLifetime
{
    public GatewayTopology Topology { get; private set; } = null!;

    public async Task InitializeAsync() => Topology = await GatewayTopology.StartAsync(east, west);

    public async Task DisposeAsync() => await Topology.DisposeAsync();
}

public sealed class CourierCourierGatewayFixture() : GatewayTopologyFixture(ServerKind.Courier, ServerKind.Courier);

public sealed class CourierGoGatewayFixture() : GatewayTopologyFixture(ServerKind.Courier, ServerKind.NatsServer);

/// <summary>Courier east, Courier west.</summary>
public sealed class CourierCourierGatewayTests(CourierCourierGatewayFixture fixture) : GatewayTests(fixture), IClassFixture<CourierCourierGatewayFixture>;

/// <summary>Courier east, nats-server 2.9.10 west (both directions are tested through the Side parameter).</summary>
public sealed class CourierGoGatewayTests(CourierGoGatewayFixture fixture) : GatewayTests(fixture), IClassFixture<CourierGoGatewayFixture>;

/// <summary>
/// Gateways as nats-server 2.9 has them, Courier with Courier and Courier with nats-server: messages,
/// wildcards, queue groups (a member in the publisher's cluster first) and request/reply (nats-server's
/// <c>_GR_.</c> reply mapping) cross both ways, in interest-only mode.
/// </summary>
public abstract class GatewayTests(GatewayTopologyFixture fixture)
{
    private readonly GatewayTopology _topology = fixture.Topology;

    public enum Side
    {
        East,
        West,
    }

    [Theory]
    [InlineData(Side.East)]
    [InlineData(Side.West)]
    public async Task A_message_and_its_headers_cross_the_gateway_to_a_subscriber_in_the_other_cluster(Side publisherSide)
    {
        var p = Prefix();
        var (publisher, subscriber) = await PairAsync(publisherSide);
        await using var _ = publisher;
        await using var __ = subscriber;
        await using var inbox = await Collect.SubscribeAsync(subscriber, $"{p}.x");
        await _topology.CrossedAsync(subscriber, publisher, $"{p}.ready");

        await publisher.PublishAsync($"{p}.x", "plain");
        await publisher.PublishAsync($"{p}.x", "with headers", headers: new NatsHeaders { ["Trace"] = "42" });
        Assert.True(await Poll.UntilAsync(() => inbox.Messages.Count >= 2, GatewayTopology.ConvergeTimeout), _topology.Diagnostics());

        var messages = inbox.Messages.ToArray();
        Assert.Equal(["plain", "with headers"], messages.Select(m => m.Data));
        Assert.Equal("42", messages[1].Headers?["Trace"].ToString());
    }

    [Theory]
    [InlineData(Side.East)]
    [InlineData(Side.West)]
    public async Task Once_the_other_clusters_responder_unsubscribes_a_request_gets_no_responders(Side requesterSide)
    {
        var p = Prefix();
        var (requester, responder) = await PairAsync(requesterSide);
        await using var _ = requester;
        await using var __ = responder;
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        var service = await responder.SubscribeCoreAsync<string>($"{p}.svc", cancellationToken: cts.Token);
        var serving = Task.Run(
            async () =>
            {
                await foreach (var msg in service.Msgs.ReadAllAsync(cts.Token))
                {
                    await msg.ReplyAsync("yes", cancellationToken: cts.Token);
                }
            },
            cts.Token);
        await _topology.CrossedAsync(responder, requester, $"{p}.ready");
        Assert.Equal("yes", (await requester.RequestAsync<string, string>($"{p}.svc", "?", cancellationToken: cts.Token)).Data);

        // The RS- goes ahead of this later RS+: once the barrier crossed, the requester's cluster knows of no responder,
        // and its server answers the request with the no-responders status instead of sending it across.
        await service.DisposeAsync();
        await _topology.CrossedAsync(responder, requester, $"{p}.ready2");
        await Assert.ThrowsAsync<NatsNoRespondersException>(async () =>
            await requester.RequestAsync<string, string>($"{p}.svc", "?", cancellationToken: cts.Token));
        await serving.ContinueWith(_ => { }, TaskScheduler.Default);
    }

    [Theory]
    [InlineData(Side.East)]
    [InlineData(Side.West)]
    public async Task Wildcard_interest_crosses_the_gateway_and_matches_only_its_subjects(Side publisherSide)
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
        Assert.True(await Poll.UntilAsync(() => full.Messages.Any(m => m.Data == "end"), GatewayTopology.ConvergeTimeout), _topology.Diagnostics());

        // The last message has arrived, and the link keeps order: nothing else is on its way.
        Assert.Equal(["1"], star.Messages.Select(m => m.Data));
        Assert.Equal(["1", "2", "3", "end"], full.Messages.Select(m => m.Data));
    }

    [Theory]
    [InlineData(Side.East)]
    [InlineData(Side.West)]
    public async Task A_queue_group_in_the_other_cluster_gets_each_message_exactly_once(Side publisherSide)
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
        Assert.True(await Poll.UntilAsync(() => member1.Messages.Count + member2.Messages.Count >= Count, GatewayTopology.ConvergeTimeout), _topology.Diagnostics());

        // Messages after all of them: once one is in, any duplicate would have arrived too (the link keeps order).
        await _topology.CrossedAsync(subscriber, publisher, $"{p}.ready2");
        var all = member1.Messages.Concat(member2.Messages).Select(m => int.Parse(m.Data!, System.Globalization.CultureInfo.InvariantCulture)).Order().ToArray();
        Assert.Equal(Enumerable.Range(0, Count), all);
    }

    [Theory]
    [InlineData(Side.East)]
    [InlineData(Side.West)]
    public async Task A_queue_group_with_members_in_both_clusters_prefers_the_publishers_cluster(Side publisherSide)
    {
        const int Count = 20;
        var p = Prefix();
        var (publisher, far) = await PairAsync(publisherSide);
        await using var _ = publisher;
        await using var __ = far;
        await using var remote = await Collect.SubscribeAsync(far, $"{p}.work", "workers");
        await _topology.CrossedAsync(far, publisher, $"{p}.ready");
        var local = await Collect.SubscribeAsync(publisher, $"{p}.work", "workers");

        for (var i = 0; i < Count; i++)
        {
            await publisher.PublishAsync($"{p}.work", "local");
        }

        Assert.True(await Poll.UntilAsync(() => local.Messages.Count >= Count, GatewayTopology.ConvergeTimeout), _topology.Diagnostics());

        // As nats-server: a member in the publisher's cluster takes every message; the other cluster's none.
        await _topology.CrossedAsync(far, publisher, $"{p}.ready2");
        Assert.Equal(Count, local.Messages.Count);
        Assert.Empty(remote.Messages);

        // Without a local member, the other cluster's member takes them.
        await local.DisposeAsync();
        await publisher.PingAsync();
        await publisher.PublishAsync($"{p}.work", "remote");
        Assert.True(await Poll.UntilAsync(() => !remote.Messages.IsEmpty, GatewayTopology.ConvergeTimeout), _topology.Diagnostics());
        Assert.Equal(["remote"], remote.Messages.Select(m => m.Data));
    }

    [Theory]
    [InlineData(Side.East)]
    [InlineData(Side.West)]
    public async Task A_request_is_answered_by_a_responder_in_the_other_cluster(Side requesterSide)
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

    [Theory]
    [InlineData(Side.East)]
    [InlineData(Side.West)]
    public async Task Gatewayz_and_varz_show_both_links_and_the_gateway_config(Side side)
    {
        var (server, name, port, other) = side == Side.East
            ? (_topology.East, "east", _topology.EastGatewayPort, "west")
            : (_topology.West, "west", _topology.WestGatewayPort, "east");

        using var gatewayz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(server.MonitorUri, "gatewayz")));
        var root = gatewayz.RootElement;
        Assert.Equal(name, root.GetProperty("name").GetString());
        Assert.Equal(port, root.GetProperty("port").GetInt32());
        var outbound = root.GetProperty("outbound_gateways").GetProperty(other);
        Assert.True(outbound.GetProperty("configured").GetBoolean());
        Assert.Equal("127.0.0.1", outbound.GetProperty("connection").GetProperty("ip").GetString());
        Assert.Equal(port == _topology.EastGatewayPort ? _topology.WestGatewayPort : _topology.EastGatewayPort, outbound.GetProperty("connection").GetProperty("port").GetInt32());
        var inbound = Assert.Single(root.GetProperty("inbound_gateways").GetProperty(other).EnumerateArray());
        Assert.False(inbound.GetProperty("configured").GetBoolean()); // as nats-server: only outbound links are
        Assert.True(inbound.TryGetProperty("connection", out _));

        // Gateway links are not clients: /connz does not list them (as nats-server).
        var linkIds = new[] { outbound, inbound }.Select(l => l.GetProperty("connection").GetProperty("cid").GetUInt64()).ToArray();
        using var connz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(server.MonitorUri, "connz")));
        var clientIds = connz.RootElement.GetProperty("connections").EnumerateArray().Select(c => c.GetProperty("cid").GetUInt64());
        Assert.Empty(clientIds.Intersect(linkIds));

        using var varz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(server.MonitorUri, "varz")));
        var gateway = varz.RootElement.GetProperty("gateway");
        Assert.Equal(name, gateway.GetProperty("name").GetString());
        Assert.Equal(port, gateway.GetProperty("port").GetInt32());
        var remote = Assert.Single(gateway.GetProperty("gateways").EnumerateArray());
        Assert.Equal(other, remote.GetProperty("name").GetString());
        Assert.Equal([$"127.0.0.1:{(side == Side.East ? _topology.WestGatewayPort : _topology.EastGatewayPort)}"], remote.GetProperty("urls").EnumerateArray().Select(u => u.GetString()));
    }

    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(10) };

    private static string Prefix() => $"gw{Guid.NewGuid():N}";

    // The publisher on the given side, the other connection in the other cluster.
    private async Task<(NatsConnection Publisher, NatsConnection Other)> PairAsync(Side publisherSide)
    {
        var east = await _topology.ConnectEastAsync();
        var west = await _topology.ConnectWestAsync();
        return publisherSide == Side.East ? (east, west) : (west, east);
    }
}
