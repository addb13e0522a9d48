using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Identity;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using NATS.Client.Core;

namespace Courier.Cluster.Tests.Leaf;

/// <summary>
/// A hub in operator mode (a MEMORY resolver) and a leaf whose remote logs in with a <c>.creds</c> file:
/// the leaf sends the user JWT and its signature of the hub's nonce, and the link is bound to the
/// user's account, so the hub's clients of that account and the leaf's clients reach each other.
/// </summary>
public sealed class LeafCredentialsTests
{
    [Theory]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    public async Task A_leaf_logs_in_with_a_creds_file_and_is_bound_to_the_users_account(ServerKind hubKind, ServerKind leafKind)
    {
        var p = $"leafcreds{Guid.NewGuid():N}";
        var op = new TestOperator();
        var account = op.NewAccount("A");
        var leafUser = TestOperator.NewUser(account);
        var clientUser = TestOperator.NewUser(account);
        var dir = Directory.CreateTempSubdirectory("courier-leaf-creds-").FullName;
        try
        {
            var leafCreds = Path.Combine(dir, "leaf.creds");
            var clientCreds = Path.Combine(dir, "client.creds");
            await File.WriteAllTextAsync(leafCreds, TestJwt.Creds(leafUser.Jwt, leafUser.Key));
            await File.WriteAllTextAsync(clientCreds, TestJwt.Creds(clientUser.Jwt, clientUser.Key));
            var leafPort = LoopbackPorts.Next();
            await using var hubServer = await ServerProcess.StartAsync(hubKind, op.Config([account]) + $"\nleafnodes {{ listen: \"127.0.0.1:{leafPort}\" }}\n");
            await using var leafServer = await ServerProcess.StartAsync(leafKind, $"leafnodes {{ remotes [ {{ url: \"nats-leaf://127.0.0.1:{leafPort}\", credentials: \"{leafCreds}\" }} ], reconnect: 1 }}");

            await using var hub = new NatsConnection(new NatsOpts { Url = hubServer.Url, AuthOpts = new NatsAuthOpts { CredsFile = clientCreds }, MaxReconnectRetry = 0 });
            await using var leaf = new NatsConnection(new NatsOpts { Url = leafServer.Url, MaxReconnectRetry = 0 });
            await hub.ConnectAsync();
            await leaf.ConnectAsync();
            await using var onLeaf = await Collect.SubscribeAsync(leaf, $"{p}.x");
            await using var ready = await Collect.SubscribeAsync(leaf, $"{p}.ready");
            var crossed = await Poll.UntilAsync(
                async () =>
                {
                    await hub.PublishAsync($"{p}.ready", "?");
                    await hub.PingAsync();
                    return !ready.Messages.IsEmpty;
                },
                LeafTopology.ConvergeTimeout);
            Assert.True(crossed, $"{hubServer.Diagnostics(60)}\n\n{leafServer.Diagnostics(60)}");

            await hub.PublishAsync($"{p}.x", "to the leaf");
            Assert.True(await Poll.UntilAsync(() => !onLeaf.Messages.IsEmpty, LeafTopology.ConvergeTimeout));
            Assert.Equal("to the leaf", onLeaf.Messages.Single().Data);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }
}
