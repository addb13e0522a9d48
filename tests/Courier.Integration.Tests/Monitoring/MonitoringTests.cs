using System.Net;
using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Monitoring;

/// <summary>
/// The HTTP monitoring endpoints: /healthz, /varz, /connz, /subsz. The tests of this class share
/// one server and run one at a time, so counter deltas are theirs alone.
/// </summary>
public abstract class MonitoringTests<TServer> : IClassFixture<TServer>, IDisposable
    where TServer : ServerFixture
{
    private static readonly TimeSpan SettleLimit = TimeSpan.FromSeconds(5);

    private readonly TServer _server;
    private readonly MonitorClient _monitor;

    protected MonitoringTests(TServer server)
    {
        _server = server;
        _monitor = new MonitorClient(server.Server);
    }

    public void Dispose()
    {
        _monitor.Dispose();
        GC.SuppressFinalize(this);
    }

    private async Task<WireClient> ConnectedAsync(string connect = WireClient.QuietConnect)
    {
        var c = await _server.ConnectAsync();
        await c.HandshakeAsync(connect);
        return c;
    }

    [Fact]
    public async Task Healthz_answers_200_with_status_ok()
    {
        var (status, body, contentType) = await _monitor.GetAsync("/healthz");

        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal("application/json", contentType);
        using var doc = JsonDocument.Parse(body);
        Assert.Equal("ok", doc.RootElement.GetProperty("status").GetString());
        Assert.Single(doc.RootElement.EnumerateObject());
    }

    [Fact]
    public async Task Varz_describes_the_server()
    {
        await using var c = await _server.ConnectAsync();
        var varz = await _monitor.GetJsonAsync("/varz");
        var context = varz.ToString();

        Assert.True(varz.GetProperty("server_id").GetString() == c.Info.GetProperty("server_id").GetString(), context);
        Assert.True(varz.GetProperty("version").GetString() == c.Info.GetProperty("version").GetString(), context);
        Assert.True(varz.GetProperty("port").GetInt32() == _server.Port, context);
        Assert.True(varz.GetProperty("max_payload").GetInt64() == 1024 * 1024, context);
        // nats-server reports the configured value here (-1 for "-m -1"), not the bound port.
        Assert.True(varz.GetProperty("http_port").ValueKind == JsonValueKind.Number, context);
        foreach (var counter in new[]
        {
            "connections", "total_connections", "in_msgs", "out_msgs", "in_bytes", "out_bytes",
            "subscriptions", "slow_consumers",
        })
        {
            Assert.True(varz.GetProperty(counter).GetInt64() >= 0, $"{counter}: {context}");
        }

        Assert.True(varz.GetProperty("connections").GetInt64() >= 1, context);
    }

    [Fact]
    public async Task Varz_counts_connections_messages_and_bytes()
    {
        var p = Subjects.NewPrefix();
        var before = await _monitor.GetJsonAsync("/varz");
        await using var sub = await ConnectedAsync();
        await using var pub = await ConnectedAsync();
        await sub.SendAsync($"SUB {p} 1\r\n");
        await sub.PingPongAsync();

        for (var i = 0; i < 10; i++)
        {
            await pub.SendAsync($"PUB {p} 5\r\nhello\r\n");
        }

        await pub.PingPongAsync();
        for (var i = 0; i < 10; i++)
        {
            await sub.ExpectAsync($"MSG {p} 1 5\r\nhello\r\n");
        }

        var after = await _monitor.GetJsonAsync("/varz");
        var context = $"before: {before}\nafter: {after}";
        Assert.True(Delta(before, after, "in_msgs") >= 10, context);
        Assert.True(Delta(before, after, "out_msgs") >= 10, context);
        Assert.True(Delta(before, after, "in_bytes") >= 50, context);
        Assert.True(Delta(before, after, "out_bytes") >= 50, context);
        Assert.True(Delta(before, after, "total_connections") >= 2, context);
        Assert.True(after.GetProperty("connections").GetInt64() >= 2, context);
        Assert.True(Delta(before, after, "subscriptions") >= 1, context);
    }

    [Fact]
    public async Task Connz_lists_a_connection_with_its_identity_and_subscriptions()
    {
        var p = Subjects.NewPrefix();
        await using var c = await ConnectedAsync(
            """{"verbose":false,"pedantic":false,"name":"monitor-probe","lang":"wire","version":"1.2.3"}""");
        await c.SendAsync($"SUB {p}.a 1\r\nSUB {p}.> q 2\r\n");
        await c.PingPongAsync();

        var conn = await _monitor.GetConnectionAsync(c.LocalPort, "subs=1");
        var context = conn.ToString();

        Assert.True(conn.GetProperty("cid").GetUInt64() == c.Info.GetProperty("client_id").GetUInt64(), context);
        Assert.True(conn.GetProperty("ip").GetString() == "127.0.0.1", context);
        Assert.True(conn.GetProperty("port").GetInt32() == c.LocalPort, context);
        Assert.True(conn.GetProperty("name").GetString() == "monitor-probe", context);
        Assert.True(conn.GetProperty("lang").GetString() == "wire", context);
        Assert.True(conn.GetProperty("version").GetString() == "1.2.3", context);
        Assert.True(conn.GetProperty("subscriptions").GetInt32() == 2, context);
        var subjects = conn.GetProperty("subscriptions_list").EnumerateArray().Select(e => e.GetString()).Order().ToList();
        Assert.Equal([$"{p}.>", $"{p}.a"], subjects);
    }

    [Fact]
    public async Task Connz_has_no_subscription_list_unless_asked()
    {
        await using var c = await ConnectedAsync();
        await c.SendAsync($"SUB {Subjects.NewPrefix()} 1\r\n");
        await c.PingPongAsync();

        var conn = await _monitor.GetConnectionAsync(c.LocalPort, "subs=0");

        Assert.False(conn.TryGetProperty("subscriptions_list", out _), conn.ToString());
        Assert.Equal(1, conn.GetProperty("subscriptions").GetInt32());
    }

    [Fact]
    public async Task Connz_counts_messages_per_connection()
    {
        var p = Subjects.NewPrefix();
        await using var sub = await ConnectedAsync();
        await using var pub = await ConnectedAsync();
        await sub.SendAsync($"SUB {p} 1\r\n");
        await sub.PingPongAsync();
        await pub.SendAsync($"PUB {p} 3\r\nabc\r\nPUB {p} 3\r\ndef\r\nPUB {p} 3\r\nghi\r\n");
        await pub.PingPongAsync();
        await sub.ExpectAsync($"MSG {p} 1 3\r\nabc\r\nMSG {p} 1 3\r\ndef\r\nMSG {p} 1 3\r\nghi\r\n");

        var pubConn = await _monitor.GetConnectionAsync(pub.LocalPort);
        var subConn = await _monitor.GetConnectionAsync(sub.LocalPort);

        Assert.True(pubConn.GetProperty("in_msgs").GetInt64() == 3, pubConn.ToString());
        Assert.True(pubConn.GetProperty("in_bytes").GetInt64() == 9, pubConn.ToString());
        Assert.True(subConn.GetProperty("out_msgs").GetInt64() == 3, subConn.ToString());
        Assert.True(subConn.GetProperty("out_bytes").GetInt64() == 9, subConn.ToString());
    }

    [Fact]
    public async Task Connz_drops_a_connection_once_it_is_closed()
    {
        var c = await ConnectedAsync();
        var port = c.LocalPort;
        await _monitor.GetConnectionAsync(port);
        var total = (await _monitor.GetJsonAsync("/connz")).GetProperty("num_connections").GetInt32();

        await c.DisposeAsync();

        // The server notices the close asynchronously: poll, bounded.
        var deadline = DateTime.UtcNow + SettleLimit;
        while (true)
        {
            var connz = await _monitor.GetJsonAsync("/connz");
            var ports = connz.GetProperty("connections").EnumerateArray().Select(e => e.GetProperty("port").GetInt32());
            if (!ports.Contains(port))
            {
                Assert.True(connz.GetProperty("num_connections").GetInt32() == total - 1, connz.ToString());
                return;
            }

            Assert.True(DateTime.UtcNow < deadline, $"port {port} still listed {SettleLimit.TotalSeconds} s after close: {connz}");
            await Task.Delay(50);
        }
    }

    [Fact]
    public async Task Subsz_counts_subscriptions_up_and_down()
    {
        var p = Subjects.NewPrefix();
        var before = (await _monitor.GetJsonAsync("/subsz")).GetProperty("num_subscriptions").GetInt64();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p}.a 1\r\nSUB {p}.b 2\r\nSUB {p}.* q 3\r\n");
        await c.PingPongAsync();
        var during = (await _monitor.GetJsonAsync("/subsz")).GetProperty("num_subscriptions").GetInt64();
        await c.SendAsync("UNSUB 1\r\nUNSUB 2\r\nUNSUB 3\r\n");
        await c.PingPongAsync();
        var after = (await _monitor.GetJsonAsync("/subsz")).GetProperty("num_subscriptions").GetInt64();

        Assert.Equal(before + 3, during);
        Assert.Equal(before, after);
    }

    [Fact]
    public async Task Varz_subscriptions_follows_sub_and_unsub()
    {
        var p = Subjects.NewPrefix();
        var before = (await _monitor.GetJsonAsync("/varz")).GetProperty("subscriptions").GetInt64();
        await using var c = await ConnectedAsync();

        await c.SendAsync($"SUB {p}.a 1\r\nSUB {p}.b 2\r\n");
        await c.PingPongAsync();
        var during = (await _monitor.GetJsonAsync("/varz")).GetProperty("subscriptions").GetInt64();
        await c.SendAsync("UNSUB 1\r\n");
        await c.PingPongAsync();
        var after = (await _monitor.GetJsonAsync("/varz")).GetProperty("subscriptions").GetInt64();

        Assert.Equal(before + 2, during);
        Assert.Equal(before + 1, after);
    }

    [Fact]
    public async Task Unknown_monitoring_path_is_not_found()
    {
        var (status, _, _) = await _monitor.GetAsync("/no-such-endpoint");

        Assert.Equal(HttpStatusCode.NotFound, status);
    }

    private static long Delta(JsonElement before, JsonElement after, string counter) =>
        after.GetProperty(counter).GetInt64() - before.GetProperty(counter).GetInt64();
}

[Trait("server", "nats-server")]
public sealed class MonitoringTests_NatsServer(NatsServerFixture server) : MonitoringTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class MonitoringTests_Courier(CourierFixture server) : MonitoringTests<CourierFixture>(server);
