using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Cluster.Tests;

/// <summary>
/// Accounts across a mesh of nats-server 2.9.10 (node 0) and two courier nodes: route lines carry
/// the account, so each account stays apart on every node, and a service import works whichever
/// node runs the requester and the responder.
/// </summary>
public sealed class AccountMeshTests : IClassFixture<AccountMeshFixture>
{
    private readonly Mesh _mesh;

    public AccountMeshTests(AccountMeshFixture fixture)
    {
        _mesh = fixture.Mesh;
    }

    [Fact]
    public async Task A_message_crosses_the_mesh_only_to_subscribers_of_its_account()
    {
        var p = $"acct{Guid.NewGuid():N}";
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await using var aSub = await _mesh.ConnectAsync(0, user: "a");
        await using var bSub = await _mesh.ConnectAsync(1, user: "b");
        await using var aPub = await _mesh.ConnectAsync(2, user: "a");
        await using var bPub = await _mesh.ConnectAsync(2, user: "b");
        await using var inA = await Collect.SubscribeAsync(aSub, $"{p}.x");
        await using var inB = await Collect.SubscribeAsync(bSub, $"{p}.x");
        await using var bReady = await Collect.SubscribeAsync(bSub, $"{p}.ready");
        await Mesh.BarrierAsync(aSub, 2, cts.Token);

        // B's interest has reached node 2 once a B message from there arrives (RS+ for x came before).
        Assert.True(
            await Poll.UntilAsync(
                async () =>
                {
                    await bPub.PublishAsync($"{p}.ready", "?", cancellationToken: cts.Token);
                    await bPub.PingAsync(cts.Token);
                    return !bReady.Messages.IsEmpty;
                },
                Mesh.ConvergeTimeout),
            _mesh.Diagnostics());

        await aPub.PublishAsync($"{p}.x", "for A", cancellationToken: cts.Token);
        await bPub.PublishAsync($"{p}.x", "for B", cancellationToken: cts.Token);
        Assert.True(await Poll.UntilAsync(() => inA.Messages.Count >= 1 && inB.Messages.Count >= 1, Mesh.ConvergeTimeout), _mesh.Diagnostics());

        // Node 2 sent A's message before B's on the same route: had it leaked, B would have seen it first.
        Assert.Equal(["for A"], inA.Messages.Select(m => m.Data));
        Assert.Equal("for B", inB.Messages.First().Data);
    }

    [Theory]
    [InlineData(0, 1)] // responder on nats-server, requester on courier: courier forwards the import
    [InlineData(1, 0)] // responder on courier, requester on nats-server: nats-server forwards it
    [InlineData(1, 2)] // both on courier nodes
    public async Task A_service_import_answers_across_the_mesh(int responderNode, int requesterNode)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await using var responder = await _mesh.ConnectAsync(responderNode, user: "a");
        await using var requester = await _mesh.ConnectAsync(requesterNode, user: "b");
        var subject = $"svc.{responderNode}{requesterNode}";
        await using var service = await responder.SubscribeCoreAsync<string>(subject, cancellationToken: cts.Token);
        var serving = Task.Run(
            async () =>
            {
                await foreach (var msg in service.Msgs.ReadAllAsync(cts.Token))
                {
                    await msg.ReplyAsync($"served by {responderNode}", cancellationToken: cts.Token);
                }
            },
            cts.Token);
        await Mesh.BarrierAsync(responder, requesterNode, cts.Token);

        var reply = await requester.RequestAsync<string, string>(subject, "hi", cancellationToken: cts.Token);
        Assert.Equal($"served by {responderNode}", reply.Data);
        Assert.False(serving.IsFaulted);
    }
}

/// <summary>The mesh of <see cref="AccountMeshTests"/>: accounts A (exports svc.>) and B (imports it); probes log in as A's no_auth_user.</summary>
public sealed class AccountMeshFixture : IAsyncLifetime
{
    private const string Config = """
        accounts {
          A: { users: [ {user: a, password: a}, {user: probe, password: probe} ], exports: [ {service: "svc.>"} ] }
          B: { users: [ {user: b, password: b} ], imports: [ {service: {account: A, subject: "svc.>"}} ] }
        }
        no_auth_user: probe
        """;

    public Mesh Mesh { get; private set; } = null!;

    public async Task InitializeAsync() =>
        Mesh = await Mesh.StartAsync([ServerKind.NatsServer, ServerKind.Courier, ServerKind.Courier], null, [], Config);

    public async Task DisposeAsync() => await Mesh.DisposeAsync();
}
