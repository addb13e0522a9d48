using System.Text;
using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Features;

/// <summary>
/// Distributed counters (nats-server 2.12, ADR-49: <c>allow_msg_counter</c>, <c>Nats-Incr</c>,
/// <c>Nats-Counter-Sources</c>), which nats-server 2.9.10 lacks, so Courier only: raw <c>$JS.API</c> requests and
/// publishes with headers through NATS.Net, the PubAck's JSON read as it comes. The errors, texts and rules are
/// nats-server v2.12.0's (stream.go checkStreamCfg, update check and processJetStreamMsg).
/// </summary>
[Trait("server", "courier")]
public sealed class MessageCounterTests(CourierFixture fixture) : IClassFixture<CourierFixture>
{
    [Fact]
    public Task A_counter_stream_is_refused_with_discard_new_message_ttls_other_retentions_or_a_mirror_and_the_setting_never_changes() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            foreach (var (extra, status, code, description) in new[]
            {
                (""","discard":"new" """, 500, 10052, "counter stream cannot use discard new"),
                (""","allow_msg_ttl":true""", 500, 10052, "counter stream cannot use message TTLs"),
                (""","retention":"workqueue" """, 500, 10052, "counter stream can only use limits retention"),
                (""","retention":"interest" """, 500, 10052, "counter stream can only use limits retention"),
            })
            {
                using var refused = await ApiAsync(nats, $"STREAM.CREATE.{name}", $$"""{"name":"{{name}}","subjects":["{{p}}.>"],"allow_msg_counter":true{{extra}}}""", ct);
                AssertError(refused, status, code, description);
            }

            using (var mirror = await ApiAsync(nats, $"STREAM.CREATE.{name}_m", $$"""{"name":"{{name}}_m","mirror":{"name":"{{name}}"},"allow_msg_counter":true}""", ct))
            {
                AssertError(mirror, 400, 10173, "stream mirrors can not also calculate counters");
            }

            using (var created = await ApiAsync(nats, $"STREAM.CREATE.{name}", $$"""{"name":"{{name}}","subjects":["{{p}}.>"],"allow_msg_counter":true}""", ct))
            {
                Assert.False(created.RootElement.TryGetProperty("error", out _), created.RootElement.ToString());
                Assert.True(created.RootElement.GetProperty("config").GetProperty("allow_msg_counter").GetBoolean());
            }

            using (var off = await ApiAsync(nats, $"STREAM.UPDATE.{name}", $$"""{"name":"{{name}}","subjects":["{{p}}.>"]}""", ct))
            {
                AssertError(off, 500, 10052, "stream configuration update can not change message counter setting");
            }

            using (await ApiAsync(nats, $"STREAM.CREATE.{name}_plain", $$"""{"name":"{{name}}_plain","subjects":["{{p}}_plain.>"]}""", ct))
            {
            }

            using (var on = await ApiAsync(nats, $"STREAM.UPDATE.{name}_plain", $$"""{"name":"{{name}}_plain","subjects":["{{p}}_plain.>"],"allow_msg_counter":true}""", ct))
            {
                AssertError(on, 500, 10052, "stream configuration update can not change message counter setting");
            }

            // Other updates of a counter stream go through, and the setting stays.
            using var updated = await ApiAsync(nats, $"STREAM.UPDATE.{name}", $$"""{"name":"{{name}}","subjects":["{{p}}.>"],"allow_msg_counter":true,"max_msgs_per_subject":5}""", ct);
            Assert.False(updated.RootElement.TryGetProperty("error", out _), updated.RootElement.ToString());
            Assert.True(updated.RootElement.GetProperty("config").GetProperty("allow_msg_counter").GetBoolean());
        });

    [Fact]
    public Task Increments_add_up_per_subject_in_big_integers_and_the_puback_and_reads_carry_the_total() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            using (await ApiAsync(nats, $"STREAM.CREATE.{name}", $$"""{"name":"{{name}}","subjects":["{{p}}.>"],"allow_msg_counter":true,"allow_direct":true}""", ct))
            {
            }

            using (var first = await IncrementAsync(nats, $"{p}.a", "5", ct))
            {
                Assert.Equal((name, 1UL, "5"), (first.RootElement.GetProperty("stream").GetString(), first.RootElement.GetProperty("seq").GetUInt64(), first.RootElement.GetProperty("val").GetString()));
            }

            using (var down = await IncrementAsync(nats, $"{p}.a", "-12", ct))
            {
                Assert.Equal("-7", down.RootElement.GetProperty("val").GetString());
            }

            using (var other = await IncrementAsync(nats, $"{p}.b", "+1", ct))
            {
                Assert.Equal("1", other.RootElement.GetProperty("val").GetString()); // each subject is its own counter
            }

            const string Big = "123456789012345678901234567890";
            using (var big = await IncrementAsync(nats, $"{p}.a", Big, ct))
            {
                Assert.Equal("123456789012345678901234567883", big.RootElement.GetProperty("val").GetString());
            }

            using (var zero = await IncrementAsync(nats, $"{p}.a", "0", ct))
            {
                Assert.Equal((5UL, "123456789012345678901234567883"), (zero.RootElement.GetProperty("seq").GetUInt64(), zero.RootElement.GetProperty("val").GetString()));
            }

            // STREAM.MSG.GET and DIRECT.GET of the subject: the total as the body, the publish's Nats-Incr kept.
            using (var get = await ApiAsync(nats, $"STREAM.MSG.GET.{name}", $$"""{"last_by_subj":"{{p}}.a"}""", ct))
            {
                var message = get.RootElement.GetProperty("message");
                Assert.Equal("""{"val":"123456789012345678901234567883"}""", Encoding.UTF8.GetString(message.GetProperty("data").GetBytesFromBase64()));
                Assert.Contains("Nats-Incr: 0", Encoding.UTF8.GetString(message.GetProperty("hdrs").GetBytesFromBase64()), StringComparison.Ordinal);
            }

            var direct = await nats.RequestAsync<string, string>($"$JS.API.DIRECT.GET.{name}.{p}.b", null, cancellationToken: ct);
            Assert.Equal("""{"val":"1"}""", direct.Data);
            Assert.Equal("+1", direct.Headers?["Nats-Incr"].ToString());

            // Increments in flight together (stored in one batch) each see the one before: totals 1..50, each once.
            var totals = await Task.WhenAll(Enumerable.Range(0, 50).Select(async _ =>
            {
                using var ack = await IncrementAsync(nats, $"{p}.c", "1", ct);
                return int.Parse(ack.RootElement.GetProperty("val").GetString()!, System.Globalization.CultureInfo.InvariantCulture);
            }));
            Assert.Equal(Enumerable.Range(1, 50), totals.Order());
        });

    [Fact]
    public Task Publishes_a_counter_cannot_take_get_nats_servers_errors_and_store_nothing() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            using (await ApiAsync(nats, $"STREAM.CREATE.{name}", $$"""{"name":"{{name}}","subjects":["{{p}}.c.>"],"allow_msg_counter":true,"allow_rollup_hdrs":true}""", ct))
            {
            }

            using (await ApiAsync(nats, $"STREAM.CREATE.{name}_plain", $$"""{"name":"{{name}}_plain","subjects":["{{p}}.plain.>"]}""", ct))
            {
            }

            using (var missing = await PublishAsync(nats, $"{p}.c.a", null, "", ct))
            {
                AssertError(missing, 400, 10169, "message counter increment is missing");
            }

            using (var otherHeader = await PublishAsync(nats, $"{p}.c.a", new NatsHeaders { ["Nats-Msg-Id"] = "m1" }, "", ct))
            {
                AssertError(otherHeader, 400, 10169, "message counter increment is missing");
            }

            using (var payload = await PublishAsync(nats, $"{p}.c.a", new NatsHeaders { ["Nats-Incr"] = "1" }, "x", ct))
            {
                AssertError(payload, 400, 10170, "message counter has payload");
            }

            foreach (var bad in new[] { "one", "1.5", "1e3", "--1", "+", "1_000", "0x10" })
            {
                using var invalid = await IncrementAsync(nats, $"{p}.c.a", bad, ct);
                AssertError(invalid, 400, 10171, "message counter increment is invalid");
            }

            foreach (var (header, value) in new[]
            {
                ("Nats-Rollup", "sub"), ("Nats-Expected-Stream", name), ("Nats-Expected-Last-Sequence", "0"),
                ("Nats-Expected-Last-Subject-Sequence", "0"), ("Nats-Expected-Last-Msg-Id", "m"),
            })
            {
                using var refused = await PublishAsync(nats, $"{p}.c.a", new NatsHeaders { ["Nats-Incr"] = "1", [header] = value }, "", ct);
                AssertError(refused, 400, 10171, "message counter increment is invalid");
            }

            using (var disabled = await IncrementAsync(nats, $"{p}.plain.a", "1", ct))
            {
                AssertError(disabled, 400, 10168, "message counters is disabled");
            }

            using (var invalidFirst = await IncrementAsync(nats, $"{p}.plain.a", "x", ct))
            {
                AssertError(invalidFirst, 400, 10171, "message counter increment is invalid"); // unreadable before disabled
            }

            using (var info = await ApiAsync(nats, $"STREAM.INFO.{name}", "", ct))
            {
                Assert.Equal(0, info.RootElement.GetProperty("state").GetProperty("messages").GetInt32());
            }

            // A Nats-Msg-Id dedupes increments (nats-server checks it after the increment's own checks).
            using (var once = await PublishAsync(nats, $"{p}.c.a", new NatsHeaders { ["Nats-Incr"] = "2", ["Nats-Msg-Id"] = "once" }, "", ct))
            {
                Assert.Equal("2", once.RootElement.GetProperty("val").GetString());
            }

            using var again = await PublishAsync(nats, $"{p}.c.a", new NatsHeaders { ["Nats-Incr"] = "2", ["Nats-Msg-Id"] = "once" }, "", ct);
            Assert.True(again.RootElement.GetProperty("duplicate").GetBoolean());
            using var after = await IncrementAsync(nats, $"{p}.c.a", "1", ct);
            Assert.Equal("3", after.RootElement.GetProperty("val").GetString());
        });

    [Fact]
    public Task A_counter_stream_sourcing_counters_adds_each_origins_total_once_and_records_them_in_nats_counter_sources() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            using (await ApiAsync(nats, $"STREAM.CREATE.{name}_a", $$"""{"name":"{{name}}_a","subjects":["{{p}}.a.>"],"allow_msg_counter":true}""", ct))
            {
            }

            using (await ApiAsync(nats, $"STREAM.CREATE.{name}_b", $$"""{"name":"{{name}}_b","subjects":["{{p}}.b.>"],"allow_msg_counter":true}""", ct))
            {
            }

            using (await ApiAsync(nats, $"STREAM.CREATE.{name}_c", $$"""{"name":"{{name}}_c","subjects":["{{p}}.c.*"],"allow_msg_counter":true}""", ct))
            {
            }

            // Both origins' "hits" land on one subject of the aggregate through the sources' subject transforms.
            using (var created = await ApiAsync(
                nats,
                $"STREAM.CREATE.{name}_all",
                $$"""
                {"name":"{{name}}_all","allow_msg_counter":true,"sources":[
                  {"name":"{{name}}_a","subject_transforms":[{"src":"{{p}}.a.>","dest":"{{p}}.all.>"}]},
                  {"name":"{{name}}_b","subject_transforms":[{"src":"{{p}}.b.>","dest":"{{p}}.all.>"}]},
                  {"name":"{{name}}_c","subject_transforms":[{"src":"{{p}}.c.x","dest":"{{p}}.total"},{"src":"{{p}}.c.y","dest":"{{p}}.total"}]}]}
                """,
                ct))
            {
                Assert.False(created.RootElement.TryGetProperty("error", out _), created.RootElement.ToString());
            }

            foreach (var (subject, increment) in new[] { ("a.hits", "3"), ("a.hits", "4"), ("b.hits", "10"), ("b.hits", "-1"), ("a.hits", "1"), ("c.x", "5"), ("c.y", "3"), ("c.x", "1") })
            {
                using var ack = await IncrementAsync(nats, $"{p}.{subject}", increment, ct);
                Assert.False(ack.RootElement.TryGetProperty("error", out _), ack.RootElement.ToString());
            }

            // a: 3, 7, 8; b: 10, 9. The aggregate ends at 8 + 9 whatever order the copies came in.
            JsonElement last = default;
            for (var i = 0; i < 100; i++)
            {
                using var get = await ApiAsync(nats, $"STREAM.MSG.GET.{name}_all", $$"""{"last_by_subj":"{{p}}.all.hits"}""", ct);
                last = get.RootElement.Clone();
                if (last.TryGetProperty("message", out var m) && Encoding.UTF8.GetString(m.GetProperty("data").GetBytesFromBase64()) == """{"val":"17"}""")
                {
                    break;
                }

                await Task.Delay(100, ct);
            }

            var message = last.GetProperty("message");
            Assert.Equal("""{"val":"17"}""", Encoding.UTF8.GetString(message.GetProperty("data").GetBytesFromBase64()));
            var headers = Encoding.UTF8.GetString(message.GetProperty("hdrs").GetBytesFromBase64()); // by origin and origin subject
            Assert.Contains($$$"""Nats-Counter-Sources: {"{{{name}}}_a":{"{{{p}}}.a.hits":"8"},"{{{name}}}_b":{"{{{p}}}.b.hits":"9"}}""", headers, StringComparison.Ordinal);

            // Two subjects of one origin onto one: each origin subject's total counts once (c.x 6 + c.y 3).
            Assert.Equal("""{"val":"9"}""", await LastValueAsync(nats, $"{name}_all", $"{p}.total", """{"val":"9"}""", ct));
            using var info = await ApiAsync(nats, $"STREAM.INFO.{name}_all", "", ct);
            Assert.Equal(8, info.RootElement.GetProperty("state").GetProperty("messages").GetInt32());
        });

    [Fact]
    public async Task An_acknowledged_total_survives_kill_9_and_counting_goes_on_from_it()
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        var ct = cts.Token;
        var storeDir = Directory.CreateTempSubdirectory("courier-counter-").FullName;
        try
        {
            var p = Subjects.NewPrefix();
            var name = NatsNetClient.NameFor(p);
            await using (var server = await fixture.StartServerAsync(null, "-js", "-sd", storeDir))
            {
                await using var nats = await NatsNetClient.ConnectAsync(server.Url);
                using (await ApiAsync(nats, $"STREAM.CREATE.{name}", $$"""{"name":"{{name}}","subjects":["{{p}}.>"],"allow_msg_counter":true}""", ct))
                {
                }

                for (var i = 1; i <= 20; i++)
                {
                    using var ack = await IncrementAsync(nats, $"{p}.n", i.ToString(System.Globalization.CultureInfo.InvariantCulture), ct);
                    Assert.Equal((i * (i + 1) / 2).ToString(System.Globalization.CultureInfo.InvariantCulture), ack.RootElement.GetProperty("val").GetString());
                }

                await server.SignalAsync("KILL");
                Assert.NotNull(await server.WaitForExitAsync(TimeSpan.FromSeconds(20)));
            }

            await using (var server = await fixture.StartServerAsync(null, "-js", "-sd", storeDir))
            {
                await using var nats = await NatsNetClient.ConnectAsync(server.Url);
                using (var get = await ApiAsync(nats, $"STREAM.MSG.GET.{name}", $$"""{"last_by_subj":"{{p}}.n"}""", ct))
                {
                    Assert.Equal("""{"val":"210"}""", Encoding.UTF8.GetString(get.RootElement.GetProperty("message").GetProperty("data").GetBytesFromBase64()));
                }

                using var next = await IncrementAsync(nats, $"{p}.n", "-10", ct);
                Assert.Equal((21UL, "200"), (next.RootElement.GetProperty("seq").GetUInt64(), next.RootElement.GetProperty("val").GetString()));
            }
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    /// <summary>The subject's last body, polled until it is <paramref name="expected"/> (sources copy after the PubAck).</summary>
    private static async Task<string?> LastValueAsync(NatsConnection nats, string stream, string subject, string expected, CancellationToken ct)
    {
        string? body = null;
        for (var i = 0; i < 100 && body != expected; i++)
        {
            using var get = await ApiAsync(nats, $"STREAM.MSG.GET.{stream}", $$"""{"last_by_subj":"{{subject}}"}""", ct);
            body = get.RootElement.TryGetProperty("message", out var m) ? Encoding.UTF8.GetString(m.GetProperty("data").GetBytesFromBase64()) : null;
            if (body != expected)
            {
                await Task.Delay(100, ct);
            }
        }

        return body;
    }

    private static Task<JsonDocument> IncrementAsync(NatsConnection nats, string subject, string increment, CancellationToken ct) =>
        PublishAsync(nats, subject, new NatsHeaders { ["Nats-Incr"] = increment }, "", ct);

    /// <summary>A publish as a request: the PubAck's JSON (the stream answers on the reply subject).</summary>
    private static async Task<JsonDocument> PublishAsync(NatsConnection nats, string subject, NatsHeaders? headers, string payload, CancellationToken ct)
    {
        var reply = await nats.RequestAsync<byte[], byte[]>(subject, Encoding.UTF8.GetBytes(payload), headers, cancellationToken: ct);
        return JsonDocument.Parse(reply.Data ?? []);
    }

    private static async Task<JsonDocument> ApiAsync(NatsConnection nats, string api, string body, CancellationToken ct)
    {
        var reply = await nats.RequestAsync<byte[], byte[]>("$JS.API." + api, Encoding.UTF8.GetBytes(body), cancellationToken: ct);
        return JsonDocument.Parse(reply.Data ?? []);
    }

    private static void AssertError(JsonDocument response, int status, int code, string description)
    {
        Assert.True(response.RootElement.TryGetProperty("error", out var error), response.RootElement.ToString());
        Assert.Equal((status, code, description), (error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32(), error.GetProperty("description").GetString()));
    }
}
