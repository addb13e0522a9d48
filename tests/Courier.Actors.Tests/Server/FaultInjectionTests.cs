using Akka.Actor;
using Courier.Actors.Routing;
using Courier.Actors.Server;
using Xunit;

namespace Courier.Actors.Tests.Server;

/// <summary>
/// Kills actors of a running broker and checks that the damage stays where it belongs: one
/// connection, or one router shard that comes back whole. The broker runs in the TestKit's system.
/// </summary>
public sealed class FaultInjectionTests : Akka.TestKit.Xunit2.TestKit
{
    public FaultInjectionTests()
        : base(TestConfig.For(new ServerOptions { Host = "127.0.0.1" }))
    {
    }

    [Fact]
    public async Task Killing_one_connection_actor_closes_only_that_client()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys);
        using var victim = await harness.ConnectAsync();
        using var bystander = await harness.ConnectAsync();
        await victim.SendAsync("SUB fault.a 1\r\nPING\r\n");
        await victim.ExpectLineAsync("PONG");
        await bystander.SendAsync("SUB fault.a 7\r\nPING\r\n");
        await bystander.ExpectLineAsync("PONG");

        var victimConnection = harness.Broker.Clients.Single(c => c.SubscriptionsSnapshot().Any(s => s.SidKey == "1"));
        var probe = CreateTestProbe();
        probe.Watch(victimConnection.Owner);

        // The supervisor stops (never restarts) a failed connection actor; Akka logs the failure.
        EventFilter.Exception<ActorKilledException>().ExpectOne(() => victimConnection.Owner.Tell(Kill.Instance));
        probe.ExpectTerminated(victimConnection.Owner);

        Assert.True(await victim.IsClosedByServerAsync());
        await bystander.SendAsync("PUB fault.a 2\r\nhi\r\nPING\r\n");
        await bystander.ExpectLineAsync("MSG fault.a 7 2");
        Assert.Equal("hi", await bystander.ReadLineAsync());
        await WaitUntil(() => harness.Broker.Monitoring.ConnectionCount == 1 && harness.Broker.Monitoring.SubscriptionCount == 1);
    }

    [Fact]
    public async Task A_router_shard_that_crashes_is_rebuilt_from_the_connections_and_delivery_resumes()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys);
        using var subscriber = await harness.ConnectAsync();
        using var publisher = await harness.ConnectAsync();
        await subscriber.SendAsync("SUB crash.one 1\r\nSUB crash.two q 2\r\nSUB *.two 3\r\nPING\r\n");
        await subscriber.ExpectLineAsync("PONG");

        var space = harness.Broker.Space;
        var shard = space.ShardForSubscription("crash.one"u8);
        var before = space.Snapshot(shard);
        Assert.Equal(2, before.Count);

        // Simulate a shard whose state is lost: publishers now see nothing in it.
        space.Publish(shard, SubList.Empty);
        await publisher.SendAsync("PUB crash.one 4\r\nlost\r\nPING\r\n");
        await publisher.ExpectLineAsync("PONG");

        var probe = CreateTestProbe();
        var router = harness.Broker.Routers[shard];
        probe.Watch(router);
        EventFilter.Exception<ActorKilledException>().ExpectOne(() => router.Tell(Kill.Instance));

        // The restarted shard rebuilds from the connections' registrations.
        await WaitUntil(() => space.Snapshot(shard).Count == 2);
        Assert.NotSame(before, space.Snapshot(shard));
        await publisher.SendAsync("PUB crash.one 5\r\nfound\r\nPUB crash.two 3\r\ntwo\r\nPING\r\n");
        await publisher.ExpectLineAsync("PONG");
        Assert.Equal("MSG crash.one 1 5", await subscriber.ReadLineAsync());
        Assert.Equal("found", await subscriber.ReadLineAsync());

        // crash.two reaches the queue subscription (rebuilt shard) and *.two (wildcard shard).
        var deliveries = new List<string?> { await subscriber.ReadLineAsync(), await subscriber.ReadLineAsync(), await subscriber.ReadLineAsync(), await subscriber.ReadLineAsync() };
        Assert.Contains("MSG crash.two 2 3", deliveries);
        Assert.Contains("MSG crash.two 3 3", deliveries);

        // And the shard keeps serving new subscriptions.
        await subscriber.SendAsync("SUB crash.one 9\r\nPING\r\n");
        await subscriber.ExpectLineAsync("PONG");
        Assert.Equal(3, space.Snapshot(shard).Count);
        probe.ExpectNoMsg(TimeSpan.FromMilliseconds(50)); // restarted, never terminated: the same ref serves on
    }

    [Fact]
    public async Task A_sub_is_in_effect_before_the_same_clients_next_publish_in_the_same_write()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys);
        using var client = await harness.ConnectAsync();
        for (var i = 0; i < 200; i++)
        {
            await client.SendAsync($"SUB inv2.{i} {i}\r\nPUB inv2.{i} 1\r\nx\r\n");
            Assert.Equal($"MSG inv2.{i} {i} 1", await client.ReadLineAsync());
            Assert.Equal("x", await client.ReadLineAsync());
        }
    }

    [Fact]
    public async Task A_sub_acknowledged_by_pong_is_in_effect_for_every_other_client()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys);
        using var subscriber = await harness.ConnectAsync();
        using var publisher = await harness.ConnectAsync();
        for (var i = 0; i < 100; i++)
        {
            await subscriber.SendAsync($"SUB other.{i} 1\r\nPING\r\n");
            await subscriber.ExpectLineAsync("PONG");
            await publisher.SendAsync($"PUB other.{i} 1\r\ny\r\n");
            Assert.Equal($"MSG other.{i} 1 1", await subscriber.ReadLineAsync());
            Assert.Equal("y", await subscriber.ReadLineAsync());
            await subscriber.SendAsync("UNSUB 1\r\n");
        }
    }

    private static async Task WaitUntil(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow.AddSeconds(5);
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail("condition not met within 5 s");
            }

            await Task.Delay(10);
        }
    }
}
