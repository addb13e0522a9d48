using System.Text.Json;
using Courier.Integration.Tests.Accounts;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Monitoring;

/// <summary>
/// JetStream monitoring per account, differential against nats-server 2.9.10 with the same config:
/// /jsz with <c>accounts</c>, <c>acc</c>, <c>streams</c>, <c>consumers</c>, <c>config</c>, and the
/// system account's <c>$SYS.REQ.ACCOUNT.&lt;account&gt;.JSZ</c> and <c>$SYS.REQ.SERVER.PING.JSZ</c>
/// through NATS.Net. Field sets and the values that do not depend on timing or on the store's
/// record layout are compared (counts, names, limits, config); account B's streams never show in
/// account A's answer.
/// </summary>
public abstract class JszTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    // B's limits in bytes, written out: the two config parsers need not agree on what "1M" is.
    private const string Config = """
        accounts {
          SYS: { users: [ {user: sys, password: sys} ] }
          A: { users: [ {user: a, password: a} ], jetstream: enabled }
          B: { users: [ {user: b, password: b} ], jetstream: { max_mem: 1048576, max_file: 10485760 } }
        }
        system_account: SYS
        """;

    private const ulong Unlimited = ulong.MaxValue; // Go's uint64(-1): an account without a limit

    // nats-server's JSInfo without meta_cluster (a single server): the fields, in a set.
    private static readonly string[] TopFields =
        ["server_id", "now", "config", "memory", "storage", "reserved_memory", "reserved_storage", "accounts", "ha_assets", "api", "streams", "consumers", "messages", "bytes"];

    // nats-server's AccountDetail without stream_detail.
    private static readonly string[] AccountFields =
        ["name", "id", "memory", "storage", "reserved_memory", "reserved_storage", "accounts", "ha_assets", "api"];

    private readonly TServer _server;

    protected JszTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public Task Jsz_lists_each_account_with_accounts_true_and_only_the_asked_account_with_acc() =>
        _server.WithJetStreamAsync(
            async server =>
            {
                using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
                await FillAsync(server, cts.Token);
                using var monitor = new MonitorClient(server);

                // Without options: the totals over both accounts, no details.
                var plain = await monitor.GetJsonAsync("/jsz");
                AssertFieldSet(plain, TopFields);
                AssertTotals(plain);

                var all = await monitor.GetJsonAsync("/jsz?accounts=true");
                AssertFieldSet(all, [.. TopFields, "account_details"]);
                AssertTotals(all);
                var details = all.GetProperty("account_details").EnumerateArray().ToDictionary(d => d.GetProperty("name").GetString()!);
                Assert.Equal(["A", "B"], details.Keys.Order(StringComparer.Ordinal));
                foreach (var (name, detail) in details)
                {
                    AssertFieldSet(detail, AccountFields);
                    Assert.Equal(name, detail.GetProperty("id").GetString());
                    Assert.Equal(0, detail.GetProperty("accounts").GetInt32());
                    Assert.Equal(0, detail.GetProperty("ha_assets").GetInt32());
                    AssertFieldSet(detail.GetProperty("api"), ["total", "errors"]);
                    Assert.True(detail.GetProperty("api").GetProperty("total").GetInt64() > 0, detail.ToString());
                }

                Assert.Equal(Unlimited, details["A"].GetProperty("reserved_memory").GetUInt64());
                Assert.Equal(Unlimited, details["A"].GetProperty("reserved_storage").GetUInt64());
                Assert.Equal(1048576UL, details["B"].GetProperty("reserved_memory").GetUInt64());
                Assert.Equal(10485760UL, details["B"].GetProperty("reserved_storage").GetUInt64());
                Assert.True(details["A"].GetProperty("memory").GetUInt64() > 0, details["A"].ToString());
                Assert.True(details["A"].GetProperty("storage").GetUInt64() > 0, details["A"].ToString());
                Assert.Equal(0UL, details["B"].GetProperty("memory").GetUInt64());

                // Paged: offset 1 of the accounts by name is B alone; limit 1 is one account.
                var paged = await monitor.GetJsonAsync("/jsz?accounts=true&offset=1");
                Assert.Equal("B", Assert.Single(paged.GetProperty("account_details").EnumerateArray()).GetProperty("name").GetString());
                var limited = await monitor.GetJsonAsync("/jsz?accounts=true&limit=1");
                Assert.Single(limited.GetProperty("account_details").EnumerateArray());

                // acc=A alone: A's detail without streams; with streams, consumers and config, A's streams only.
                var onlyA = await monitor.GetJsonAsync("/jsz?acc=A");
                var a = Assert.Single(onlyA.GetProperty("account_details").EnumerateArray());
                AssertFieldSet(a, AccountFields);
                Assert.Equal("A", a.GetProperty("name").GetString());

                var full = await monitor.GetJsonAsync("/jsz?acc=A&streams=true&consumers=true&config=true");
                AssertTotals(full); // the totals stay the server's
                var detailA = Assert.Single(full.GetProperty("account_details").EnumerateArray());
                AssertAccountAStreams(detailA, withConfig: true);
                Assert.DoesNotContain("SECRET", full.GetProperty("account_details").GetRawText(), StringComparison.Ordinal);
                Assert.DoesNotContain("secret.", full.GetProperty("account_details").GetRawText(), StringComparison.Ordinal);

                // Consumers imply streams; without config=true neither streams nor consumers show their config.
                var noConfig = await monitor.GetJsonAsync("/jsz?acc=A&consumers=true");
                AssertAccountAStreams(Assert.Single(noConfig.GetProperty("account_details").EnumerateArray()), withConfig: false);

                // B's streams are B's.
                var onlyB = await monitor.GetJsonAsync("/jsz?acc=B&streams=true");
                var b = Assert.Single(onlyB.GetProperty("account_details").EnumerateArray());
                var secret = Assert.Single(b.GetProperty("stream_detail").EnumerateArray());
                Assert.Equal("SECRET", secret.GetProperty("name").GetString());
                Assert.DoesNotContain("ORDERS", onlyB.GetProperty("account_details").GetRawText(), StringComparison.Ordinal);

                // An option Go cannot parse is a 400 with Go's message.
                var (status, body, _) = await monitor.GetAsync("/jsz?accounts=maybe");
                Assert.Equal(System.Net.HttpStatusCode.BadRequest, status);
                Assert.Equal("Error decoding boolean for 'accounts': strconv.ParseBool: parsing \"maybe\": invalid syntax", body);
            },
            Config);

    [Fact]
    public Task The_account_jsz_request_answers_with_that_accounts_detail_only() =>
        _server.WithJetStreamAsync(
            async server =>
            {
                using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
                await FillAsync(server, cts.Token);
                await using var sys = await AccountConfig.ConnectAsync(server.Url, "sys");

                // No options: the account's usage alone, its name as name and id.
                var (plain, plainText) = await RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.JSZ", "");
                var data = plain.GetProperty("data");
                AssertFieldSet(data, AccountFields);
                Assert.Equal("A", data.GetProperty("name").GetString());
                Assert.Equal("A", data.GetProperty("id").GetString());
                Assert.Equal(Unlimited, data.GetProperty("reserved_memory").GetUInt64());
                Assert.DoesNotContain("SECRET", plainText, StringComparison.Ordinal);

                // nats-server's JSzOptions as JSON ("consumer", singular): A's streams and consumers, never B's.
                var (full, fullText) = await RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.JSZ", """{"streams":true,"consumer":true,"config":true}""");
                AssertAccountAStreams(full.GetProperty("data"), withConfig: true);
                Assert.DoesNotContain("SECRET", fullText, StringComparison.Ordinal);
                Assert.DoesNotContain("secret.", fullText, StringComparison.Ordinal);
                Assert.DoesNotContain("\"BC\"", fullText, StringComparison.Ordinal);

                // The account is the subject's: an "account" in the body does not reach another one.
                var (steered, steeredText) = await RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.JSZ", """{"account":"B","streams":true}""");
                Assert.Equal("A", steered.GetProperty("data").GetProperty("name").GetString());
                Assert.DoesNotContain("SECRET", steeredText, StringComparison.Ordinal);

                var (other, otherText) = await RequestAsync(sys, "$SYS.REQ.ACCOUNT.B.JSZ", """{"streams":true}""");
                Assert.Equal("B", other.GetProperty("data").GetProperty("name").GetString());
                Assert.Equal(1048576UL, other.GetProperty("data").GetProperty("reserved_memory").GetUInt64());
                Assert.Equal("SECRET", Assert.Single(other.GetProperty("data").GetProperty("stream_detail").EnumerateArray()).GetProperty("name").GetString());
                Assert.DoesNotContain("ORDERS", otherText, StringComparison.Ordinal);

                // The system account has no JetStream.
                var (refused, _) = await RequestAsync(sys, "$SYS.REQ.ACCOUNT.SYS.JSZ", "");
                Assert.Equal(500, refused.GetProperty("error").GetProperty("code").GetInt32());
                Assert.Equal("account \"SYS\" not jetstream enabled", refused.GetProperty("error").GetProperty("description").GetString());

                // The server request takes the same options: every account's detail.
                var (ping, _) = await RequestAsync(sys, "$SYS.REQ.SERVER.PING.JSZ", """{"accounts":true}""");
                var jsz = ping.GetProperty("data");
                AssertTotals(jsz);
                Assert.Equal(["A", "B"], jsz.GetProperty("account_details").EnumerateArray().Select(d => d.GetProperty("name").GetString()).Order(StringComparer.Ordinal));
                var id = jsz.GetProperty("server_id").GetString();
                var (direct, _) = await RequestAsync(sys, $"$SYS.REQ.SERVER.{id}.JSZ", """{"account":"B","streams":true}""");
                var onlyB = Assert.Single(direct.GetProperty("data").GetProperty("account_details").EnumerateArray());
                Assert.Equal("SECRET", Assert.Single(onlyB.GetProperty("stream_detail").EnumerateArray()).GetProperty("name").GetString());
            },
            Config);

    [Fact]
    public async Task Jsz_without_jetstream_says_disabled_with_a_zero_config_and_refuses_leader_only()
    {
        await using var server = await _server.StartServerAsync();
        using var monitor = new MonitorClient(server);

        // Go never omits the config struct: zero limits, no store_dir.
        var jsz = await monitor.GetJsonAsync("/jsz?accounts=true");
        AssertFieldSet(jsz, [.. TopFields, "disabled"]);
        Assert.True(jsz.GetProperty("disabled").GetBoolean());
        AssertFieldSet(jsz.GetProperty("config"), ["max_memory", "max_storage"], ["sync_interval", "sync_always"]);
        Assert.Equal(0, jsz.GetProperty("config").GetProperty("max_memory").GetInt64());
        Assert.Equal(0, jsz.GetProperty("streams").GetInt32());
        Assert.Equal(0, jsz.GetProperty("accounts").GetInt32());

        var (status, body, _) = await monitor.GetAsync("/jsz?leader-only=true");
        Assert.Equal(System.Net.HttpStatusCode.BadRequest, status);
        Assert.Equal("filtered response: not leader", body);
    }

    /// <summary>
    /// A: a file stream ORDERS (3 messages, a durable C1) and a memory stream MEMO with max_bytes
    /// (2 messages); B: a file stream SECRET (1 message, a durable BC).
    /// </summary>
    private static async Task FillAsync(ServerProcess server, CancellationToken ct)
    {
        await using (var a = await AccountConfig.ConnectAsync(server.Url, "a"))
        {
            var js = new NatsJSContext(a);
            await js.CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]) { Storage = StreamConfigStorage.File }, ct);
            await js.CreateStreamAsync(new StreamConfig("MEMO", ["memo.>"]) { Storage = StreamConfigStorage.Memory, MaxBytes = 100_000 }, ct);
            for (var i = 1; i <= 3; i++)
            {
                (await js.PublishAsync($"orders.{i}", $"order {i}", cancellationToken: ct)).EnsureSuccess();
            }

            for (var i = 1; i <= 2; i++)
            {
                (await js.PublishAsync($"memo.{i}", $"memo {i}", cancellationToken: ct)).EnsureSuccess();
            }

            await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("C1") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
        }

        await using var b = await AccountConfig.ConnectAsync(server.Url, "b");
        var jsB = new NatsJSContext(b);
        await jsB.CreateStreamAsync(new StreamConfig("SECRET", ["secret.>"]) { Storage = StreamConfigStorage.File }, ct);
        (await jsB.PublishAsync("secret.1", "hidden", cancellationToken: ct)).EnsureSuccess();
        await jsB.CreateOrUpdateConsumerAsync("SECRET", new ConsumerConfig("BC") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
    }

    // The server's totals: both accounts' 3 streams, 2 consumers, 6 messages; MEMO's max_bytes reserved.
    private static void AssertTotals(JsonElement jsz)
    {
        Assert.False(jsz.TryGetProperty("disabled", out _), jsz.ToString());
        Assert.Equal(2, jsz.GetProperty("accounts").GetInt32());
        Assert.Equal(0, jsz.GetProperty("ha_assets").GetInt32());
        Assert.Equal(3, jsz.GetProperty("streams").GetInt32());
        Assert.Equal(2, jsz.GetProperty("consumers").GetInt32());
        Assert.Equal(6UL, jsz.GetProperty("messages").GetUInt64());
        Assert.Equal(100_000UL, jsz.GetProperty("reserved_memory").GetUInt64());
        Assert.Equal(0UL, jsz.GetProperty("reserved_storage").GetUInt64());
        Assert.True(jsz.GetProperty("memory").GetUInt64() > 0, jsz.ToString());
        Assert.True(jsz.GetProperty("storage").GetUInt64() > 0, jsz.ToString());
        AssertFieldSet(jsz.GetProperty("config"), ["max_memory", "max_storage", "store_dir"], ["sync_interval", "sync_always"]);
        Assert.False(string.IsNullOrEmpty(jsz.GetProperty("config").GetProperty("store_dir").GetString()), jsz.ToString());
        AssertFieldSet(jsz.GetProperty("api"), ["total", "errors"]);
    }

    // Account A's stream_detail: MEMO and ORDERS, their state; ORDERS' consumer C1 when consumers were asked for.
    private static void AssertAccountAStreams(JsonElement detail, bool withConfig)
    {
        Assert.Equal("A", detail.GetProperty("name").GetString());
        var streams = detail.GetProperty("stream_detail").EnumerateArray().ToDictionary(s => s.GetProperty("name").GetString()!);
        Assert.Equal(["MEMO", "ORDERS"], streams.Keys.Order(StringComparer.Ordinal));
        AssertFieldSet(streams["MEMO"], withConfig ? ["name", "created", "cluster", "config", "state"] : ["name", "created", "cluster", "state"]);
        AssertFieldSet(streams["ORDERS"], withConfig ? ["name", "created", "cluster", "config", "state", "consumer_detail"] : ["name", "created", "cluster", "state", "consumer_detail"]);
        Assert.Equal(JsonValueKind.String, streams["ORDERS"].GetProperty("cluster").GetProperty("leader").ValueKind);

        var state = streams["ORDERS"].GetProperty("state");
        Assert.Equal(3UL, state.GetProperty("messages").GetUInt64());
        Assert.Equal(3UL * (22 + 8 + 8 + 7), state.GetProperty("bytes").GetUInt64()); // nats-server's record size: 22 + subject + payload + 8 (hash)
        Assert.Equal(1UL, state.GetProperty("first_seq").GetUInt64());
        Assert.Equal(3UL, state.GetProperty("last_seq").GetUInt64());
        Assert.Equal(1, state.GetProperty("consumer_count").GetInt32());
        Assert.False(state.TryGetProperty("lost", out _), state.ToString());
        Assert.Equal(2UL, streams["MEMO"].GetProperty("state").GetProperty("messages").GetUInt64());
        Assert.Equal(0, streams["MEMO"].GetProperty("state").GetProperty("consumer_count").GetInt32());
        Assert.Equal(
            detail.GetProperty("memory").GetUInt64() + detail.GetProperty("storage").GetUInt64(),
            streams["MEMO"].GetProperty("state").GetProperty("bytes").GetUInt64() + state.GetProperty("bytes").GetUInt64());

        var consumer = Assert.Single(streams["ORDERS"].GetProperty("consumer_detail").EnumerateArray());
        AssertFieldSet(consumer, withConfig
            ? ["stream_name", "name", "created", "config", "delivered", "ack_floor", "num_ack_pending", "num_redelivered", "num_waiting", "num_pending"]
            : ["stream_name", "name", "created", "delivered", "ack_floor", "num_ack_pending", "num_redelivered", "num_waiting", "num_pending"]);
        Assert.Equal("ORDERS", consumer.GetProperty("stream_name").GetString());
        Assert.Equal("C1", consumer.GetProperty("name").GetString());
        Assert.Equal(3UL, consumer.GetProperty("num_pending").GetUInt64());
        if (withConfig)
        {
            var config = streams["ORDERS"].GetProperty("config");
            Assert.Equal("ORDERS", config.GetProperty("name").GetString());
            Assert.Equal(["orders.>"], config.GetProperty("subjects").EnumerateArray().Select(s => s.GetString()));
            Assert.Equal("file", config.GetProperty("storage").GetString());
            Assert.Equal(100_000, streams["MEMO"].GetProperty("config").GetProperty("max_bytes").GetInt64());
            Assert.Equal("C1", consumer.GetProperty("config").GetProperty("durable_name").GetString());
            Assert.Equal("explicit", consumer.GetProperty("config").GetProperty("ack_policy").GetString());
        }
    }

    // The fields of e are exactly those expected, apart from any of Courier's own extras (nats-server 2.10 names).
    private static void AssertFieldSet(JsonElement e, string[] expected, string[]? courierExtras = null) =>
        Assert.Equal(
            expected.Order(StringComparer.Ordinal),
            e.EnumerateObject().Select(p => p.Name).Where(n => courierExtras is null || !courierExtras.Contains(n)).Order(StringComparer.Ordinal));

    private static async Task<(JsonElement Root, string Text)> RequestAsync(NatsConnection nats, string subject, string body)
    {
        var reply = await nats.RequestAsync<string, string>(subject, body);
        var text = reply.Data!;
        using var doc = JsonDocument.Parse(text);
        return (doc.RootElement.Clone(), text);
    }
}

[Trait("server", "nats-server")]
public sealed class JszTests_NatsServer(NatsServerFixture server) : JszTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class JszTests_Courier(CourierFixture server) : JszTests<CourierFixture>(server);
