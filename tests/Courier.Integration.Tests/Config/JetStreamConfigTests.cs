using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Config;

/// <summary>
/// <c>jetstream { sync_interval }</c>, against courier only: the reference server, nats-server 2.9.10,
/// predates the key (2.10 added it) and refuses to start with it (<c>unknown field "sync_interval"</c>).
/// </summary>
[Trait("server", "courier")]
public sealed class SyncIntervalTests_Courier(CourierFixture server) : IClassFixture<CourierFixture>
{
    [Fact]
    public async Task With_a_sync_interval_publishes_are_acked_and_survive_kill_9_and_a_restart()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-sync-").FullName;
        var config = $$"""
            jetstream {
              store_dir: "{{storeDir}}"
              sync_interval: "1s"
            }
            """;
        try
        {
            var first = await server.StartServerAsync(config);
            await using (first)
            {
                using (var monitor = new MonitorClient(first))
                {
                    var jsz = await monitor.GetJsonAsync("/jsz");
                    Assert.Equal(1_000_000_000, jsz.GetProperty("config").GetProperty("sync_interval").GetInt64());
                    Assert.False(jsz.GetProperty("config").TryGetProperty("sync_always", out _), jsz.ToString());
                }

                Assert.Contains("sync every 1 s", first.Log.All());

                // 10,000 messages with PubAcks and a durable consumer acknowledged to 4,000.
                await NodeScript.RunAsync("jetstream_fill", first);
            } // Disposing kills the process (SIGKILL): written but maybe not fsynced, which a process crash cannot lose.

            await using var restarted = await server.StartServerAsync(config);
            await NodeScript.RunAsync("jetstream_verify", restarted, new Dictionary<string, string> { ["EXPECT_DURABLE_ACK_FLOOR"] = "1" });
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public async Task Without_a_sync_interval_every_flush_fsyncs_and_jsz_says_so()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-sync-").FullName;
        try
        {
            await using var started = await server.StartServerAsync(null, "-js", "-sd", storeDir);
            using var monitor = new MonitorClient(started);
            var config = (await monitor.GetJsonAsync("/jsz")).GetProperty("config");
            Assert.True(config.GetProperty("sync_always").GetBoolean(), config.ToString());
            Assert.False(config.TryGetProperty("sync_interval", out _), config.ToString());
            Assert.Contains("sync always", started.Log.All());
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }
}
