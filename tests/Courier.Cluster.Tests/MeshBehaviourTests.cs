using Courier.Cluster.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Cluster.Tests;

/// <summary>
/// What clients on different nodes of one cluster see, as with nats-server routes: run on a mesh of
/// three courier nodes and on a mixed mesh of nats-server 2.9.10 and two courier nodes, with the
/// publisher on each kind of node.
/// </summary>
public abstract class MeshBehaviourTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);

    private readonly Mesh _mesh;

    protected MeshBehaviourTests(Mesh mesh, int publisher, int first, int second)
    {
        _mesh = mesh;
        Publisher = publisher;
        First = first;
        Second = second;
    }

    /// <summary>The node the publishing client is on.</summary>
    protected int Publisher { get; }

    /// <summary>The other two nodes.</summary>
    protected int First { get; }

    protected int Second { get; }

    private static string Prefix() => "t" + Guid.NewGuid().ToString("N")[..12];

    [Fact]
    public async Task Messages_reach_subscribers_on_other_nodes_through_wildcards_with_headers_in_publish_order()
    {
        var prefix = Prefix();
        await using var pub = await _mesh.ConnectAsync(Publisher);
        await using var a = await _mesh.ConnectAsync(First);
        await using var b = await _mesh.ConnectAsync(Second);
        await using var star = await Collect.SubscribeAsync(a, $"{prefix}.orders.*");
        await using var full = await Collect.SubscribeAsync(b, $"{prefix}.>");
        await using var overlap = await Collect.SubscribeAsync(b, $"{prefix}.orders.new");
        await Mesh.BarrierAsync(a, Publisher);
        await Mesh.BarrierAsync(b, Publisher);

        const int Count = 50;
        for (var i = 0; i < Count; i++)
        {
            var headers = new NatsHeaders { ["Seq"] = i.ToString(System.Globalization.CultureInfo.InvariantCulture) };
            await pub.PublishAsync($"{prefix}.orders.new", $"m{i}", headers);
        }

        await pub.PublishAsync($"{prefix}.other", "only-full");
        Assert.True(
            await Poll.UntilAsync(() => star.Messages.Count >= Count && full.Messages.Count >= Count + 1 && overlap.Messages.Count >= Count, Timeout),
            $"star {star.Messages.Count}, full {full.Messages.Count}, overlap {overlap.Messages.Count}\n{_mesh.Diagnostics()}");

        // Each subscription once per message (a route carries a message once, whatever matches behind it), in order.
        await Mesh.BarrierAsync(pub, First);
        await Mesh.BarrierAsync(pub, Second);
        await a.PingAsync();
        await b.PingAsync();
        Assert.Equal(Enumerable.Range(0, Count).Select(i => $"m{i}"), star.Messages.Select(m => m.Data));
        Assert.Equal(Enumerable.Range(0, Count).Select(i => $"m{i}").Append("only-full"), full.Messages.Select(m => m.Data));
        Assert.Equal(Count, overlap.Messages.Count);
        Assert.Equal(Enumerable.Range(0, Count).Select(i => i.ToString(System.Globalization.CultureInfo.InvariantCulture)), star.Messages.Select(m => m.Headers?["Seq"].ToString()));
    }

    [Fact]
    public async Task A_queue_group_across_nodes_gets_each_message_exactly_once_whichever_node_its_members_are_on()
    {
        var prefix = Prefix();
        var subject = $"{prefix}.work";
        await using var pub = await _mesh.ConnectAsync(Publisher);
        await using var a = await _mesh.ConnectAsync(First);
        await using var b = await _mesh.ConnectAsync(Second);
        await using var memberA1 = await Collect.SubscribeAsync(a, subject, "workers");
        await using var memberA2 = await Collect.SubscribeAsync(a, subject, "workers");
        await using var memberB = await Collect.SubscribeAsync(b, subject, "workers");
        await using var plainB = await Collect.SubscribeAsync(b, subject);
        await Mesh.BarrierAsync(a, Publisher);
        await Mesh.BarrierAsync(b, Publisher);

        const int Remote = 200;
        for (var i = 0; i < Remote; i++)
        {
            await pub.PublishAsync(subject, $"r{i}");
        }

        await Mesh.BarrierAsync(pub, First);
        await Mesh.BarrierAsync(pub, Second);
        await a.PingAsync();
        await b.PingAsync();
        var remote = memberA1.Messages.Concat(memberA2.Messages).Concat(memberB.Messages).Select(m => m.Data).ToList();
        string Shares() => $"a1 {memberA1.Messages.Count}, a2 {memberA2.Messages.Count}, b {memberB.Messages.Count}, plain b {plainB.Messages.Count}, "
            + $"missing [{string.Join(',', Enumerable.Range(0, Remote).Select(i => $"r{i}").Except(remote).Take(20))}]\n{_mesh.Diagnostics()}";
        Assert.True(remote.Count == Remote && remote.Distinct().Count() == Remote, "each message once: " + Shares());
        Assert.True(memberA1.Messages.Count + memberA2.Messages.Count > 0 && !memberB.Messages.IsEmpty, "both nodes' members got a share: " + Shares());
        Assert.True(plainB.Messages.Count == Remote, "a plain subscriber beside the group gets everything: " + Shares());

        // A member on the publisher's node joins the draw (nats-server 2.9 picks among local members and
        // routes alike for a client's message; a route's weight is its member count).
        await using var local = await Collect.SubscribeAsync(pub, subject, "workers");
        const int Local = 50;
        for (var i = 0; i < Local; i++)
        {
            await pub.PublishAsync(subject, $"l{i}");
        }

        await Mesh.BarrierAsync(pub, First);
        await Mesh.BarrierAsync(pub, Second);
        await a.PingAsync();
        await b.PingAsync();
        var all = memberA1.Messages.Concat(memberA2.Messages).Concat(memberB.Messages).Concat(local.Messages).Select(m => m.Data).ToList();
        Assert.Equal(Remote + Local, all.Count);
        Assert.Equal(Remote + Local, all.Distinct().Count());
        Assert.NotEmpty(local.Messages);
        Assert.Equal(Remote + Local, plainB.Messages.Count);
    }

    [Fact]
    public async Task A_request_is_answered_across_nodes_and_no_responders_comes_back_when_nobody_listens()
    {
        var prefix = Prefix();
        await using var requester = await _mesh.ConnectAsync(Publisher);
        await using var service = await _mesh.ConnectAsync(Second);
        var subscription = await service.SubscribeCoreAsync<string>($"{prefix}.svc");
        var responder = Task.Run(async () =>
        {
            await foreach (var message in subscription.Msgs.ReadAllAsync())
            {
                await message.ReplyAsync("re:" + message.Data);
            }
        });
        await Mesh.BarrierAsync(service, Publisher);

        for (var i = 0; i < 20; i++)
        {
            var reply = await requester.RequestAsync<string, string>($"{prefix}.svc", $"q{i}");
            Assert.Equal($"re:q{i}", reply.Data);
        }

        await Assert.ThrowsAsync<NatsNoRespondersException>(async () => await requester.RequestAsync<string, string>($"{prefix}.nobody", "anyone?"));
        await subscription.DisposeAsync();
        await responder;
    }

    [Fact]
    public async Task Interest_converges_after_subscribe_and_unsubscribe()
    {
        var prefix = Prefix();
        await using var requester = await _mesh.ConnectAsync(Publisher);
        await using var service = await _mesh.ConnectAsync(First);

        var subscription = await service.SubscribeCoreAsync<string>($"{prefix}.svc");
        var responder = Task.Run(async () =>
        {
            await foreach (var message in subscription.Msgs.ReadAllAsync())
            {
                await message.ReplyAsync("here");
            }
        });

        // The SUB reaches the publisher's node without any barrier, within the bound.
        Assert.True(await Poll.UntilAsync(() => Answers(requester, $"{prefix}.svc"), Timeout), "the subscription never became visible across the route");

        await subscription.UnsubscribeAsync();
        await responder;
        Assert.True(await Poll.UntilAsync(async () => !await Answers(requester, $"{prefix}.svc"), Timeout), "the unsubscribe never reached the other node");
    }

    // A request answered (true) or refused with no responders (false).
    private static async Task<bool> Answers(NatsConnection requester, string subject)
    {
        try
        {
            await requester.RequestAsync<string, string>(subject, "?");
            return true;
        }
        catch (NatsNoRespondersException)
        {
            return false;
        }
        catch (NatsNoReplyException)
        {
            return false;
        }
    }
}

[CollectionDefinition("courier mesh")]
public sealed class CourierMeshCollection : ICollectionFixture<CourierMeshFixture>;

[CollectionDefinition("mixed mesh")]
public sealed class MixedMeshCollection : ICollectionFixture<MixedMeshFixture>;

/// <summary>Three courier nodes: the publisher on node 0.</summary>
[Collection("courier mesh")]
public sealed class CourierMeshTests(CourierMeshFixture fixture) : MeshBehaviourTests(fixture.Mesh, 0, 1, 2);

/// <summary>nats-server (node 0) and two courier nodes: a courier publisher, subscribers on nats-server and courier.</summary>
[Collection("mixed mesh")]
public sealed class MixedMeshFromCourierTests(MixedMeshFixture fixture) : MeshBehaviourTests(fixture.Mesh, 1, 0, 2);

/// <summary>nats-server (node 0) and two courier nodes: a nats-server publisher, subscribers on both courier nodes.</summary>
[Collection("mixed mesh")]
public sealed class MixedMeshFromNatsServerTests(MixedMeshFixture fixture) : MeshBehaviourTests(fixture.Mesh, 0, 1, 2);
