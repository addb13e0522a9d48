using System.Text;
using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Config;

/// <summary>
/// The <c>jetstream { }</c> block of the config file: <c>max_memory_store</c> and <c>max_file_store</c>
/// as nats-server applies them when streams are created or updated, and where it reports them.
/// </summary>
public abstract class JetStreamConfigTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected JetStreamConfigTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Streams_whose_max_bytes_do_not_fit_under_max_file_store_or_max_memory_store_are_refused()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-jslimits-").FullName;
        try
        {
            // 1MB and 10MB are binary here: 1,048,576 and 10,485,760 bytes.
            await using var server = await _server.StartServerAsync($$"""
                jetstream {
                  store_dir: "{{storeDir}}"
                  max_memory_store: 1MB
                  max_file_store: 10MB
                }
                """);
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _R 1\r\n");

            // Each stream's max_bytes is reserved; one without max_bytes needs 1 byte and reserves nothing.
            AssertOk(await StreamAsync(c, "CREATE", "D", "file", 5_000_000));
            AssertOk(await StreamAsync(c, "CREATE", "E", "file", 5_000_000));
            AssertOk(await StreamAsync(c, "CREATE", "A", "file", maxBytes: null));
            AssertError(await StreamAsync(c, "CREATE", "F", "file", 500_000), 500, 10047, "insufficient storage resources available");
            AssertError(await StreamAsync(c, "CREATE", "B", "file", 20_000_000), 500, 10047, "insufficient storage resources available");
            AssertError(await StreamAsync(c, "CREATE", "C", "memory", 2_000_000), 500, 10028, "insufficient memory resources available");
            AssertOk(await StreamAsync(c, "CREATE", "M", "memory", 1_000_000));

            // An update needs room only for what it adds.
            AssertError(await StreamAsync(c, "UPDATE", "E", "file", 5_600_000), 500, 10047, "insufficient storage resources available");
            AssertOk(await StreamAsync(c, "UPDATE", "E", "file", 5_400_000));

            // The global account has nats-server's dynamic limits (-1); the server's limits are in /jsz.
            var info = await RequestAsync(c, "$JS.API.INFO", "");
            Assert.Equal(4, info.GetProperty("streams").GetInt32());
            Assert.Equal(-1, info.GetProperty("limits").GetProperty("max_memory").GetInt64());
            Assert.Equal(-1, info.GetProperty("limits").GetProperty("max_storage").GetInt64());

            using var monitor = new MonitorClient(server);
            var jsz = await monitor.GetJsonAsync("/jsz");
            Assert.Equal(1L << 20, jsz.GetProperty("config").GetProperty("max_memory").GetInt64());
            Assert.Equal(10L << 20, jsz.GetProperty("config").GetProperty("max_storage").GetInt64());
            Assert.Equal(1_000_000, jsz.GetProperty("reserved_memory").GetInt64());
            Assert.Equal(10_400_000, jsz.GetProperty("reserved_storage").GetInt64());
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    /// <summary>STREAM.CREATE or STREAM.UPDATE of a stream on the subject of its name in lower case.</summary>
    private static Task<JsonElement> StreamAsync(WireClient c, string operation, string name, string storage, long? maxBytes)
    {
        var limit = maxBytes is { } b ? $",\"max_bytes\":{b}" : "";
        return RequestAsync(c, $"$JS.API.STREAM.{operation}.{name}", $"{{\"name\":\"{name}\",\"subjects\":[\"{name.ToLowerInvariant()}\"],\"storage\":\"{storage}\"{limit}}}");
    }

    // PUB <subject> <reply-to> <#bytes>\r\n[payload]\r\n, answered on _R (subscribed as sid 1).
    private static async Task<JsonElement> RequestAsync(WireClient c, string subject, string json)
    {
        await c.SendAsync($"PUB {subject} _R {Encoding.UTF8.GetByteCount(json)}\r\n{json}\r\n");
        var reply = await c.ExpectMsgAsync();
        using var doc = JsonDocument.Parse(reply.Payload);
        return doc.RootElement.Clone();
    }

    private static void AssertOk(JsonElement response) =>
        Assert.False(response.TryGetProperty("error", out _), $"unexpected error: {response}");

    private static void AssertError(JsonElement response, int code, int errCode, string description)
    {
        Assert.True(response.TryGetProperty("error", out var error), $"expected an error, got {response}");
        Assert.Equal(code, error.GetProperty("code").GetInt32());
        Assert.Equal(errCode, error.GetProperty("err_code").GetInt32());
        Assert.Equal(description, error.GetProperty("description").GetString());
    }
}

[Trait("server", "nats-server")]
public sealed class JetStreamConfigTests_NatsServer(NatsServerFixture server) : JetStreamConfigTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class JetStreamConfigTests_Courier(CourierFixture server) : JetStreamConfigTests<CourierFixture>(server);

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
