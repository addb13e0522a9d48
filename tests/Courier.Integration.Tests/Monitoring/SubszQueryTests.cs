using System.Net;
using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Monitoring;

/// <summary>
/// /subsz's query options, differential against nats-server 2.9.10 (its HandleSubsz and Subsz):
/// <c>subs=1</c> lists subscriptions (subject, qgroup, sid, msgs, max, cid, account), <c>test</c>
/// keeps those a message on that literal subject would reach, <c>offset</c>/<c>limit</c> page them
/// (<c>total</c> is the page's length), <c>acc</c> keeps one account's; with nothing to list only the
/// counts are written. A value nats-server cannot decode, or a test subject that is not literal,
/// is a 400 with its text. Each listing is narrowed with <c>test</c> to the test's own subjects: the
/// servers' internal subscriptions differ, so their counts and order are not compared
/// (nats-server's list order is that of Go map iteration).
/// </summary>
public abstract class SubszQueryTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string Accounts = """
        accounts {
          A { users [ { user: a, password: p } ] }
          B { users [ { user: b, password: p } ] }
        }
        """;

    // nats-server's SublistStats, all that /subsz writes when it lists no subscription.
    private static readonly string[] StatsFields =
        ["num_subscriptions", "num_cache", "num_inserts", "num_removes", "num_matches", "cache_hit_rate", "max_fanout", "avg_fanout"];

    // Decoded in nats-server's order (subs, offset, limit), then the test subject.
    private static readonly (string Query, string Body)[] BadQueries =
    [
        ("subs=yes", """Error decoding boolean for 'subs': strconv.ParseBool: parsing "yes": invalid syntax"""),
        ("offset=x", """Error decoding int for 'offset': strconv.Atoi: parsing "x": invalid syntax"""),
        ("limit=1.5&offset=2", """Error decoding int for 'limit': strconv.Atoi: parsing "1.5": invalid syntax"""),
        ("offset=99999999999999999999", """Error decoding int for 'offset': strconv.Atoi: parsing "99999999999999999999": value out of range"""),
        ("limit=x&subs=nope", """Error decoding boolean for 'subs': strconv.ParseBool: parsing "nope": invalid syntax"""),
        ("test=foo.*", "invalid test subject, must be valid publish subject: foo.*"),
        ("test=foo.>&subs=1", "invalid test subject, must be valid publish subject: foo.>"),
        ("test=>", "invalid test subject, must be valid publish subject: >"),
        ("test=foo..bar", "invalid test subject, must be valid publish subject: foo..bar"),
        ("test=.foo", "invalid test subject, must be valid publish subject: .foo"),
        ("test=foo.", "invalid test subject, must be valid publish subject: foo."),
        ("test=a.b&offset=z", """Error decoding int for 'offset': strconv.Atoi: parsing "z": invalid syntax"""),
    ];

    private readonly TServer _server;

    protected SubszQueryTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Subsz_bad_query_values_are_a_400_with_nats_servers_text()
    {
        using var monitor = new MonitorClient(_server.Server);
        foreach (var (query, expected) in BadQueries)
        {
            var (status, body, contentType) = await monitor.GetAsync("/subsz?" + query);
            Assert.True(status == HttpStatusCode.BadRequest && body == expected, $"?{query}: {(int)status} {body}");
            Assert.Equal("text/plain", contentType);
        }

        // A token with a wildcard character inside is literal to nats-server.
        foreach (var query in new[] { "test=foo.*bar", "test=a>b.c", "subs=T&test=x", "offset=-1&limit=-1" })
        {
            var (status, body, _) = await monitor.GetAsync("/subsz?" + query);
            Assert.True(status == HttpStatusCode.OK, $"?{query}: {(int)status} {body}");
        }
    }

    [Fact]
    public async Task Subsz_lists_the_subscriptions_a_test_subject_reaches_with_their_detail()
    {
        var p = Subjects.NewPrefix();
        using var monitor = new MonitorClient(_server.Server);
        await using var client = await _server.ConnectAsync();
        await client.HandshakeAsync();
        await client.SendAsync($"SUB {p}.a.b 1\r\nSUB {p}.*.b workers 2\r\nSUB {p}.> 3\r\nUNSUB 3 10\r\nSUB {p}.a.c 4\r\nSUB {p}.a 5\r\n" +
            $"PUB {p}.a.b 2\r\nhi\r\nPUB {p}.a.b 2\r\nhi\r\n");
        for (var i = 0; i < 6; i++)
        {
            await client.ExpectMsgAsync();
        }

        await client.PingPongAsync();
        var cid = (await monitor.GetConnectionAsync(client.LocalPort, "")).GetProperty("cid").GetUInt64();

        var subsz = await monitor.GetJsonAsync($"/subsz?subs=1&test={p}.a.b");
        AssertPage(subsz, total: 3, offset: 0, limit: 1024);
        Assert.True(subsz.TryGetProperty("server_id", out _) && subsz.TryGetProperty("now", out _), subsz.ToString());
        Assert.All(StatsFields, f => Assert.True(subsz.TryGetProperty(f, out _), $"{f}: {subsz}"));
        var list = BySid(subsz);
        Assert.Equal(["1", "2", "3"], list.Select(s => s.GetProperty("sid").GetString()));
        AssertDetail(list[0], "$G", $"{p}.a.b", queue: null, "1", msgs: 2, max: 0, cid);
        AssertDetail(list[1], "$G", $"{p}.*.b", queue: "workers", "2", msgs: 2, max: 0, cid);
        AssertDetail(list[2], "$G", $"{p}.>", queue: null, "3", msgs: 2, max: 10, cid);

        var other = BySid(await monitor.GetJsonAsync($"/subsz?subs=1&test={p}.a"));
        Assert.Equal(["3", "5"], other.Select(s => s.GetProperty("sid").GetString()));
        AssertDetail(other[1], "$G", $"{p}.a", queue: null, "5", msgs: 0, max: 0, cid);

        // Paging: total is the page's length.
        var page = await monitor.GetJsonAsync($"/subsz?subs=1&test={p}.a.b&offset=1&limit=1");
        AssertPage(page, total: 1, offset: 1, limit: 1);
        page = await monitor.GetJsonAsync($"/subsz?subs=true&test={p}.a.b&offset=1");
        AssertPage(page, total: 2, offset: 1, limit: 1024);
        Assert.Subset(new HashSet<string?>(["1", "2", "3"]), page.GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetProperty("sid").GetString()).ToHashSet());
        page = await monitor.GetJsonAsync($"/subsz?subs=1&test={p}.a.b&offset=-5&limit=2");
        AssertPage(page, total: 2, offset: 0, limit: 2);

        // Nothing in the page, or no subs=1: the counts alone.
        foreach (var query in new[] { $"subs=1&test={p}.a.b&offset=3", $"subs=1&test={p}-other.a", $"test={p}.a.b", "", "subs=0", "subs=false&offset=1&limit=1" })
        {
            AssertStatsOnly(await monitor.GetJsonAsync("/subsz?" + query), query);
        }

        // An unsubscribe takes it off the list.
        await client.SendAsync("UNSUB 1\r\n");
        await client.PingPongAsync();
        Assert.Equal(["2", "3"], BySid(await monitor.GetJsonAsync($"/subsz?subs=1&test={p}.a.b")).Select(s => s.GetProperty("sid").GetString()));
    }

    [Fact]
    public async Task Subsz_acc_keeps_one_accounts_subscriptions_and_counts()
    {
        await using var server = await _server.StartServerAsync(Accounts);
        using var monitor = new MonitorClient(server);
        await using var a = await LoginAsync(server, "a");
        await using var b = await LoginAsync(server, "b");
        await a.SendAsync("SUB x.1 1\r\nSUB x.* 2\r\nPING\r\n");
        await a.ExpectAsync("PONG\r\n");
        await b.SendAsync("SUB x.1 7\r\nPING\r\n");
        await b.ExpectAsync("PONG\r\n");
        var cidA = (await monitor.GetConnectionAsync(a.LocalPort, "")).GetProperty("cid").GetUInt64();
        var cidB = (await monitor.GetConnectionAsync(b.LocalPort, "")).GetProperty("cid").GetUInt64();

        var all = await monitor.GetJsonAsync("/subsz?subs=1&test=x.1");
        AssertPage(all, total: 3, offset: 0, limit: 1024);
        var list = all.GetProperty("subscriptions_list").EnumerateArray()
            .Select(s => $"{s.GetProperty("account").GetString()} {s.GetProperty("subject").GetString()} {s.GetProperty("sid").GetString()} {s.GetProperty("cid").GetUInt64()}")
            .Order(StringComparer.Ordinal).ToList();
        Assert.Equal([$"A x.* 2 {cidA}", $"A x.1 1 {cidA}", $"B x.1 7 {cidB}"], list);

        var onlyA = await monitor.GetJsonAsync("/subsz?subs=1&test=x.1&acc=A");
        AssertPage(onlyA, total: 2, offset: 0, limit: 1024);
        Assert.All(onlyA.GetProperty("subscriptions_list").EnumerateArray(), s => Assert.Equal("A", s.GetProperty("account").GetString()));
        var onlyB = await monitor.GetJsonAsync("/subsz?subs=1&test=x.1&acc=B");
        AssertPage(onlyB, total: 1, offset: 0, limit: 1024);
        AssertDetail(onlyB.GetProperty("subscriptions_list")[0], "B", "x.1", queue: null, "7", msgs: 0, max: 0, cidB);

        // The counts are the account's: B holds fewer than A and B together.
        var countB = (await monitor.GetJsonAsync("/subsz?acc=B")).GetProperty("num_subscriptions").GetInt32();
        var countAll = (await monitor.GetJsonAsync("/subsz")).GetProperty("num_subscriptions").GetInt32();
        Assert.True(countB >= 1 && countB < countAll, $"acc=B counts {countB}, all {countAll}");

        // An account that does not exist: nothing listed, nothing counted.
        var none = await monitor.GetJsonAsync("/subsz?subs=1&acc=NOPE");
        AssertStatsOnly(none, "acc=NOPE");
        Assert.Equal(0, none.GetProperty("num_subscriptions").GetInt32());
    }

    private static async Task<WireClient> LoginAsync(ServerProcess server, string user)
    {
        var client = await WireClient.ConnectAsync(server);
        await client.HandshakeAsync($$"""{"verbose":false,"pedantic":false,"user":"{{user}}","pass":"p"}""");
        return client;
    }

    private static List<JsonElement> BySid(JsonElement subsz) =>
        [.. subsz.GetProperty("subscriptions_list").EnumerateArray().OrderBy(s => s.GetProperty("sid").GetString(), StringComparer.Ordinal)];

    private static void AssertPage(JsonElement subsz, int total, int offset, int limit)
    {
        var actual = (subsz.GetProperty("total").GetInt32(), subsz.GetProperty("offset").GetInt32(), subsz.GetProperty("limit").GetInt32());
        Assert.True(actual == (total, offset, limit), $"expected total/offset/limit {(total, offset, limit)}, got {actual}: {subsz}");
        Assert.Equal(total, subsz.GetProperty("subscriptions_list").GetArrayLength());
    }

    private static void AssertStatsOnly(JsonElement subsz, string query)
    {
        var fields = subsz.EnumerateObject().Select(f => f.Name).ToList();
        Assert.True(fields.SequenceEqual(StatsFields), $"?{query}: expected only the sublist counts: {subsz}");
    }

    private static void AssertDetail(JsonElement sub, string account, string subject, string? queue, string sid, long msgs, long max, ulong cid)
    {
        Assert.Equal(account, sub.GetProperty("account").GetString());
        Assert.Equal(subject, sub.GetProperty("subject").GetString());
        Assert.True(sub.TryGetProperty("qgroup", out var q) ? q.GetString() == queue : queue is null, $"qgroup: {sub}");
        Assert.Equal(sid, sub.GetProperty("sid").GetString());
        Assert.Equal(msgs, sub.GetProperty("msgs").GetInt64());
        Assert.True(sub.TryGetProperty("max", out var m) ? m.GetInt64() == max : max == 0, $"max: {sub}");
        Assert.Equal(cid, sub.GetProperty("cid").GetUInt64());
    }
}

[Trait("server", "nats-server")]
public sealed class SubszQueryTests_NatsServer(NatsServerFixture server) : SubszQueryTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class SubszQueryTests_Courier(CourierFixture server) : SubszQueryTests<CourierFixture>(server);
