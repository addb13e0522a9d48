using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;

namespace Courier.Integration.Tests.Operations;

/// <summary>
/// The first-use warm-up (the consumer journal's first round, done on a pool thread) starts at the first
/// JetStream API request, not at start-up, once, and leaves nothing a user can see: no stream, no
/// consumer, no folder in the store directory. Courier only: nats-server has no such step.
/// </summary>
[Trait("server", "courier")]
public sealed class FirstUseWarmupTests(CourierFixture server) : IClassFixture<CourierFixture>
{
    private const string Done = "First-use warm-up done";

    [Fact]
    public async Task The_warmup_waits_for_the_first_JetStream_request_leaves_nothing_behind_and_clears_what_a_killed_process_left()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-warmup-").FullName;
        var leftover = Path.Combine(storeDir, "warmup", "leftover");
        Directory.CreateDirectory(leftover); // as a process killed while warming up leaves it
        try
        {
            await using var started = await server.StartServerAsync(null, "-js", "-sd", storeDir, "-D");
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            await using var nats = await NatsNetClient.ConnectAsync(started.Url);

            // Core traffic is no reason to warm JetStream up: a second on, nothing has started (a warm-up
            // at start-up was done within about 100 ms of the ports file).
            await nats.PingAsync(cts.Token);
            await Task.Delay(TimeSpan.FromSeconds(1), cts.Token);
            Assert.DoesNotContain("First-use warm-up", started.Log.All(), StringComparison.Ordinal);
            Assert.True(Directory.Exists(leftover));

            var js = new NatsJSContext(nats);
            await js.GetAccountInfoAsync(cts.Token);
            while (!started.Log.All().Contains(Done, StringComparison.Ordinal))
            {
                await Task.Delay(50, cts.Token);
            }

            Assert.False(Directory.Exists(Path.Combine(storeDir, "warmup")), started.Log.All());
            var account = await js.GetAccountInfoAsync(cts.Token);
            Assert.Equal(0, account.Streams);
            Assert.Equal(0, account.Consumers);
            Assert.Equal(0UL, account.Storage);
            Assert.Equal(0UL, account.Memory);

            // Once per server: later requests start no second one.
            await js.GetAccountInfoAsync(cts.Token);
            await Task.Delay(TimeSpan.FromMilliseconds(300), cts.Token);
            Assert.Single(started.Log.All().Split('\n'), line => line.Contains("First-use warm-up", StringComparison.Ordinal));
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }
}
