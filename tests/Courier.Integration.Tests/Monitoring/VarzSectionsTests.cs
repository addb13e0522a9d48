using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Monitoring;

/// <summary>
/// /varz's <c>mqtt</c>, <c>websocket</c> and <c>http_req_stats</c>, the same checks against Courier and nats-server 2.9.10
/// (monitor.go createVarz): the blocks as configured, every zero field left out, and each monitoring page counted as
/// it is asked for.
/// </summary>
public abstract class VarzSectionsTests<TServer>(TServer server) : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string Config = """
        server_name: varz-sections
        mqtt { port: -1, ack_wait: "1m", max_ack_pending: 100 }
        websocket { port: -1, no_tls: true, compression: true, same_origin: true, handshake_timeout: "5s", allowed_origins: ["http://a.example"] }
        """;

    [Fact]
    public Task The_mqtt_and_websocket_blocks_and_the_request_counts_are_in_varz() =>
        server.WithJetStreamAsync(
            async s =>
            {
                using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
                var first = JsonDocument.Parse(await http.GetStringAsync(new Uri(s.MonitorUri, "varz"))).RootElement;
                var context = first.ToString();

                var mqtt = first.GetProperty("mqtt");
                Assert.True(Keys(mqtt) == "ack_wait,host,max_ack_pending,port,tls_timeout", context);
                Assert.Equal(2.0, mqtt.GetProperty("tls_timeout").GetDouble()); // nats-server's default, TLS or not
                Assert.True(mqtt.GetProperty("port").GetInt32() > 0, context);
                Assert.Equal(60_000_000_000L, mqtt.GetProperty("ack_wait").GetInt64());
                Assert.Equal(100, mqtt.GetProperty("max_ack_pending").GetInt32());

                var ws = first.GetProperty("websocket");
                Assert.True(Keys(ws) == "allowed_origins,compression,handshake_timeout,host,no_tls,port,same_origin", context);
                Assert.Equal(5_000_000_000L, ws.GetProperty("handshake_timeout").GetInt64());
                Assert.Equal(["http://a.example"], ws.GetProperty("allowed_origins").EnumerateArray().Select(e => e.GetString()));
                Assert.True(ws.GetProperty("no_tls").GetBoolean() && ws.GetProperty("compression").GetBoolean() && ws.GetProperty("same_origin").GetBoolean(), context);

                // This request counted itself; another page and a second /varz count too.
                Assert.Equal(1UL, first.GetProperty("http_req_stats").GetProperty("/varz").GetUInt64());
                await http.GetStringAsync(new Uri(s.MonitorUri, "connz"));
                var second = JsonDocument.Parse(await http.GetStringAsync(new Uri(s.MonitorUri, "varz"))).RootElement.GetProperty("http_req_stats");
                Assert.Equal((2UL, 1UL), (second.GetProperty("/varz").GetUInt64(), second.GetProperty("/connz").GetUInt64()));
            },
            Config);

    [Fact]
    public async Task Without_the_blocks_both_are_empty_objects()
    {
        await using var s = await server.StartServerAsync();
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var varz = JsonDocument.Parse(await http.GetStringAsync(new Uri(s.MonitorUri, "varz"))).RootElement;
        Assert.Equal(("", ""), (Keys(varz.GetProperty("mqtt")), Keys(varz.GetProperty("websocket"))));
    }

    private static string Keys(JsonElement element) => string.Join(',', element.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal));
}

[Trait("server", "nats-server")]
public sealed class VarzSectionsTests_NatsServer(NatsServerFixture server) : VarzSectionsTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class VarzSectionsTests_Courier(CourierFixture server) : VarzSectionsTests<CourierFixture>(server);
