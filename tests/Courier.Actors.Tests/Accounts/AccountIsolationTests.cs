using Akka.Actor;
using Courier.Actors.Server;
using Courier.Actors.Tests.Server;
using Xunit;

namespace Courier.Actors.Tests.Accounts;

/// <summary>Each account is its own subject space: its users' messages never reach another account.</summary>
public sealed class AccountIsolationTests
{
    private static ServerOptions TwoAccounts()
    {
        var options = new ServerOptions { Host = "127.0.0.1" };
        options.Users.Add(new UserEntry("a1", "p", null, "A"));
        options.Users.Add(new UserEntry("a2", "p", null, "A"));
        options.Users.Add(new UserEntry("b1", "p", null, "B"));
        options.Users.Add(new UserEntry("g1", "p", null));
        return options;
    }

    private static string Login(string user) => $"{{\"verbose\":false,\"headers\":true,\"user\":\"{user}\",\"pass\":\"p\"}}";

    [Fact]
    public async Task A_message_reaches_subscribers_of_the_publishers_account_only()
    {
        await using var harness = await BrokerHarness.StartAsync(TwoAccounts());
        using var a1 = await harness.ConnectAsync(Login("a1"));
        using var a2 = await harness.ConnectAsync(Login("a2"));
        using var b1 = await harness.ConnectAsync(Login("b1"));
        using var g1 = await harness.ConnectAsync(Login("g1"));
        foreach (var client in new[] { a1, b1, g1 })
        {
            await client.SendAsync("SUB iso.> 1\r\nSUB iso.x q 2\r\nPING\r\n");
            await client.ExpectLineAsync("PONG");
        }

        await a2.SendAsync("PUB iso.x 2\r\nhi\r\nPING\r\n");
        await a2.ExpectLineAsync("PONG");

        // a1 gets both (plain and its one-member queue group); the others nothing before their PONG.
        var lines = new[] { await a1.ReadLineAsync(), await a1.ReadLineAsync(), await a1.ReadLineAsync(), await a1.ReadLineAsync() };
        Assert.Contains("MSG iso.x 1 2", lines);
        Assert.Contains("MSG iso.x 2 2", lines);
        foreach (var other in new[] { b1, g1 })
        {
            await other.SendAsync("PING\r\n");
            Assert.Equal("PONG", await other.ReadLineAsync());
        }

        Assert.Equal("A", harness.Broker.Accounts.Find("A")!.Name);
        Assert.Equal(2, harness.Broker.Accounts.Find("A")!.Space.Count);
        Assert.Equal(2, harness.Broker.Accounts.Find("B")!.Space.Count);
        Assert.Equal(2, harness.Broker.Accounts.Global.Space.Count);
    }

    [Fact]
    public async Task An_account_made_after_start_gets_its_router_shards_and_routes_subscriptions()
    {
        await using var harness = await BrokerHarness.StartAsync(TwoAccounts());
        var late = harness.Broker.Accounts.GetOrCreate("LATE");
        var routers = await late.RoutersAsync().WaitAsync(TimeSpan.FromSeconds(20));
        Assert.Equal(late.Space.ShardCount, routers.Count);
        Assert.All(routers, r => Assert.False(r.IsNobody()));
        Assert.Same(late, harness.Broker.Accounts.GetOrCreate("LATE"));
    }
}
