using Xunit;

namespace Courier.Actors.Tests.Server;

/// <summary>The publish path's caches never hide a subscription change.</summary>
public sealed class PublishPathTests
{
    [Fact]
    public async Task A_publisher_repeating_one_subject_sees_every_subscribe_and_unsubscribe_of_other_clients()
    {
        await using var harness = await BrokerHarness.StartAsync();
        using var publisher = await harness.ConnectAsync();
        using var subscriber = await harness.ConnectAsync();
        for (var i = 0; i < 50; i++)
        {
            // Nobody listens: the publisher caches an empty match for the subject.
            await publisher.SendAsync("PUB same.subject 4\r\nnone\r\nPING\r\n");
            await publisher.ExpectLineAsync("PONG");

            await subscriber.SendAsync($"SUB same.subject {i}\r\nPING\r\n");
            await subscriber.ExpectLineAsync("PONG");
            await publisher.SendAsync("PUB same.subject 4\r\nseen\r\n");
            Assert.Equal($"MSG same.subject {i} 4", await subscriber.ReadLineAsync());
            Assert.Equal("seen", await subscriber.ReadLineAsync());

            await subscriber.SendAsync($"UNSUB {i}\r\nPING\r\n");
            await subscriber.ExpectLineAsync("PONG");
        }

        // After the last UNSUB nothing more arrives: a PING round trip comes back with no MSG before it.
        await publisher.SendAsync("PUB same.subject 4\r\ngone\r\nPING\r\n");
        await publisher.ExpectLineAsync("PONG");
        await subscriber.SendAsync("PING\r\n");
        Assert.Equal("PONG", await subscriber.ReadLineAsync());
    }

    [Fact]
    public async Task A_wildcard_subscription_reaches_a_subject_whose_match_was_cached_before_it()
    {
        await using var harness = await BrokerHarness.StartAsync();
        using var publisher = await harness.ConnectAsync();
        using var subscriber = await harness.ConnectAsync();
        await subscriber.SendAsync("SUB cached.literal 1\r\nPING\r\n");
        await subscriber.ExpectLineAsync("PONG");
        await publisher.SendAsync("PUB cached.literal 1\r\na\r\n");
        Assert.Equal("MSG cached.literal 1 1", await subscriber.ReadLineAsync());
        Assert.Equal("a", await subscriber.ReadLineAsync());

        // A subscription in the wildcard shard must invalidate the literal shard's cached match.
        await subscriber.SendAsync("SUB *.literal 2\r\nPING\r\n");
        await subscriber.ExpectLineAsync("PONG");
        await publisher.SendAsync("PUB cached.literal 1\r\nb\r\n");
        var lines = new[] { await subscriber.ReadLineAsync(), await subscriber.ReadLineAsync(), await subscriber.ReadLineAsync(), await subscriber.ReadLineAsync() };
        Assert.Contains("MSG cached.literal 1 1", lines);
        Assert.Contains("MSG cached.literal 2 1", lines);
    }
}
