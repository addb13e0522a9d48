using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;

namespace Courier.Integration.Tests.Operations;

/// <summary>
/// The start-up warm-up (first-use work done on a pool thread once clients are accepted) leaves nothing
/// a user can see: no stream, no message, no folder in the store directory. Courier only: nats-server
/// has no such step.
/// </summary>
[Trait("server", "courier")]
public sealed class StartupWarmupTests(CourierFixture server) : IClassFixture<CourierFixture>
{
    [Fact]
    public async Task The_warmup_leaves_no_stream_message_or_folder_behind_and_clears_one_left_by_a_killed_process()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-warmup-").FullName;
        var leftover = Path.Combine(storeDir, "warmup", "leftover");
        Directory.CreateDirectory(leftover); // as a process killed while warming up leaves it
        try
        {
            await using var started = await server.StartServerAsync(null, "-js", "-sd", storeDir, "-D");
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            while (!started.Log.All().Contains("Start-up warm-up done", StringComparison.Ordinal))
            {
                await Task.Delay(50, cts.Token);
            }

            Assert.False(Directory.Exists(Path.Combine(storeDir, "warmup")), started.Log.All());
            await using var nats = await NatsNetClient.ConnectAsync(started.Url);
            var js = new NatsJSContext(nats);
            var account = await js.GetAccountInfoAsync(cts.Token);
            Assert.Equal(0, account.Streams);
            Assert.Equal(0, account.Consumers);
            Assert.Equal(0UL, account.Storage);
            Assert.Equal(0UL, account.Memory);
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }
}
