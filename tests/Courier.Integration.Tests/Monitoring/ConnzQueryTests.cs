using System.Net;
using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Monitoring;

/// <summary>
/// /connz's query options, differential against nats-server 2.9.10 (its HandleConnz and Connz):
/// <c>sort</c> in each direction nats-server uses, <c>state</c>, <c>cid</c>, <c>offset</c>/<c>limit</c>,
/// <c>subs=1</c>/<c>subs=detail</c>, <c>auth</c>, <c>user</c>, <c>acc</c>, <c>mqtt_client</c>, and the
/// 400 with nats-server's text for a value it cannot decode or a sort it refuses. Each test starts its
/// own server so that <c>total</c> and the closed-connection list hold only its own connections.
/// Not compared: <c>server_id</c>, <c>now</c>, times, ports, <c>rtt</c>.
/// </summary>
public abstract class ConnzQueryTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string Accounts = """
        accounts {
          A { users [ { user: a1, password: p }, { user: a2, password: p } ] }
          B { users [ { user: b1, password: p } ] }
        }
        """;

    // Decoded in nats-server's order (auth, subs, offset, limit, cid, state), then the sort.
    private static readonly (string Query, string Body)[] BadQueries =
    [
        ("sort=rtt", "invalid sorting option: rtt"),
        ("sort=CID", "invalid sorting option: CID"),
        ("sort=nope&state=closed", "invalid sorting option: nope"),
        ("sort=stop", "sort by stop only valid on closed connections"),
        ("sort=stop&state=any", "sort by stop only valid on closed connections"),
        ("sort=reason&state=open", "sort by reason only valid on closed connections"),
        ("state=bogus", "Error decoding state for bogus"),
        ("state=Bogus&sort=nope", "Error decoding state for Bogus"),
        ("auth=yes", """Error decoding boolean for 'auth': strconv.ParseBool: parsing "yes": invalid syntax"""),
        ("subs=2", """Error decoding boolean for 'subs': strconv.ParseBool: parsing "2": invalid syntax"""),
        ("offset=x&auth=nope", """Error decoding boolean for 'auth': strconv.ParseBool: parsing "nope": invalid syntax"""),
        ("offset=1.5", """Error decoding int for 'offset': strconv.Atoi: parsing "1.5": invalid syntax"""),
        ("limit=99999999999999999999", """Error decoding int for 'limit': strconv.Atoi: parsing "99999999999999999999": value out of range"""),
        ("cid=-1", """Error decoding uint64 for 'cid': strconv.ParseUint: parsing "-1": invalid syntax"""),
        ("cid=18446744073709551616", """Error decoding uint64 for 'cid': strconv.ParseUint: parsing "18446744073709551616": value out of range"""),
        ("cid=x&state=bogus", """Error decoding uint64 for 'cid': strconv.ParseUint: parsing "x": invalid syntax"""),
    ];

    private readonly TServer _server;

    protected ConnzQueryTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Connz_bad_query_values_are_a_400_with_nats_servers_text()
    {
        using var monitor = new MonitorClient(_server.Server);
        foreach (var (query, expected) in BadQueries)
        {
            var (status, body, contentType) = await monitor.GetAsync("/connz?" + query);
            Assert.True(status == HttpStatusCode.BadRequest && body == expected, $"?{query}: {(int)status} {body}");
            Assert.Equal("text/plain", contentType);
        }

        // Accepted spellings: sort values of 2.9.10, subs=detail in any case, state in any case.
        foreach (var query in new[] { "sort=start", "sort=subs", "sort=pending", "sort=msgs_to", "sort=msgs_from", "sort=bytes_to", "sort=bytes_from", "sort=last", "sort=idle", "sort=uptime", "sort=stop&state=closed", "sort=reason&state=CLOSED", "subs=DETAIL", "state=ALL", "state=Any", "offset=-3&limit=-1", "cid=" })
        {
            var (status, body, _) = await monitor.GetAsync("/connz?" + query);
            Assert.True(status == HttpStatusCode.OK, $"?{query}: {(int)status} {body}");
        }
    }

    [Fact]
    public async Task Connz_sorts_open_connections_by_each_option_in_nats_servers_direction()
    {
        await using var server = await _server.StartServerAsync();
        using var monitor = new MonitorClient(server);
        var (c1, c2, c3) = await ThreeBusyClientsAsync(server);
        await using var d1 = c1;
        await using var d2 = c2;
        await using var d3 = c3;
        var cids = await CidsByPortAsync(monitor, c1, c2, c3);

        // c1: 1 sub, in 3 msgs / 3 bytes, out 2 msgs / 8 bytes;  c2: 3 subs, in 1 / 10, out 3 / 3;
        // c3: 2 subs, in 2 / 8, out 1 / 10. Started c1, c2, c3 (so the shortest uptime is c3's).
        (string Sort, int[] Order)[] expected =
        [
            ("", [1, 2, 3]),
            ("cid", [1, 2, 3]),
            ("start", [1, 2, 3]),
            ("subs", [2, 3, 1]),
            ("msgs_from", [1, 3, 2]),
            ("bytes_from", [2, 3, 1]),
            ("msgs_to", [2, 1, 3]),
            ("bytes_to", [3, 1, 2]),
            ("last", [2, 1, 3]),
            ("uptime", [3, 2, 1]),
        ];
        foreach (var (sort, order) in expected)
        {
            var connz = await monitor.GetJsonAsync("/connz?sort=" + sort);
            Assert.True(Cids(connz).SequenceEqual(order.Select(i => cids[i - 1])), $"sort={sort}: expected clients {string.Join(",", order)} ({string.Join(",", cids)}): {connz}");
            AssertPage(connz, count: 3, total: 3, offset: 0, limit: 1024);
        }

        // Idle as nats-server computes it, last activity minus start, largest first: checked against
        // the times of the same answer (the machine's pace sets the gaps between the starts).
        var idle = await monitor.GetJsonAsync("/connz?sort=idle");
        Assert.True(Cids(idle).SequenceEqual(Rows(idle).OrderByDescending(r => r.GetProperty("last_activity").GetDateTime() - r.GetProperty("start").GetDateTime()).Select(Cid)), $"sort=idle: {idle}");

        var counted = await monitor.GetJsonAsync("/connz?sort=cid");
        var rows = counted.GetProperty("connections").EnumerateArray().ToList();
        Assert.Equal([1, 3, 2], rows.Select(r => r.GetProperty("subscriptions").GetInt32()));
        Assert.Equal([3L, 1, 2], rows.Select(r => r.GetProperty("in_msgs").GetInt64()));
        Assert.Equal([3L, 10, 8], rows.Select(r => r.GetProperty("in_bytes").GetInt64()));
        Assert.Equal([2L, 3, 1], rows.Select(r => r.GetProperty("out_msgs").GetInt64()));
        Assert.Equal([8L, 3, 10], rows.Select(r => r.GetProperty("out_bytes").GetInt64()));

        // Pending is 0 for all three: any order, all listed.
        var pending = await monitor.GetJsonAsync("/connz?sort=pending");
        Assert.Equal(cids.Order(), Cids(pending).Order());
    }

    [Fact]
    public async Task Connz_pages_with_offset_and_limit_and_cid_selects_one_with_limit_one()
    {
        await using var server = await _server.StartServerAsync();
        using var monitor = new MonitorClient(server);
        var (c1, c2, c3) = await ThreeBusyClientsAsync(server);
        await using var d1 = c1;
        await using var d2 = c2;
        await using var d3 = c3;
        var cids = await CidsByPortAsync(monitor, c1, c2, c3);

        var page = await monitor.GetJsonAsync("/connz?offset=1&limit=1");
        AssertPage(page, count: 1, total: 3, offset: 1, limit: 1);
        Assert.Equal([cids[1]], Cids(page));

        page = await monitor.GetJsonAsync("/connz?offset=1&limit=5&sort=subs");
        AssertPage(page, count: 2, total: 3, offset: 1, limit: 5);
        Assert.Equal([cids[2], cids[0]], Cids(page));

        page = await monitor.GetJsonAsync("/connz?offset=3");
        AssertPage(page, count: 0, total: 3, offset: 3, limit: 1024);
        Assert.Equal(JsonValueKind.Array, page.GetProperty("connections").ValueKind);

        // A negative offset is 0; a limit of 0 or less is the default 1024.
        page = await monitor.GetJsonAsync("/connz?offset=-3&limit=-1");
        AssertPage(page, count: 3, total: 3, offset: 0, limit: 1024);

        // cid: that connection alone, the limit forced to 1; total still counts every open connection.
        page = await monitor.GetJsonAsync($"/connz?cid={cids[1]}&limit=10");
        AssertPage(page, count: 1, total: 3, offset: 0, limit: 1);
        Assert.Equal([cids[1]], Cids(page));
        Assert.Equal(c2.LocalPort, page.GetProperty("connections")[0].GetProperty("port").GetInt32());

        page = await monitor.GetJsonAsync($"/connz?cid={cids[1]}&offset=1");
        AssertPage(page, count: 0, total: 3, offset: 1, limit: 1);

        page = await monitor.GetJsonAsync("/connz?cid=999999");
        AssertPage(page, count: 0, total: 3, offset: 0, limit: 1);
        Assert.Equal(JsonValueKind.Array, page.GetProperty("connections").ValueKind);
    }

    [Fact]
    public async Task Connz_closed_and_any_state_sort_by_stop_reason_and_uptime_and_cid_looks_only_among_closed()
    {
        await using var server = await _server.StartServerAsync();
        using var monitor = new MonitorClient(server);
        var (c1, c2, c3) = await ThreeBusyClientsAsync(server);
        await using var d3 = c3;
        var cids = await CidsByPortAsync(monitor, c1, c2, c3);

        // c1 leaves first ("Client Closed"), then c2 breaks the protocol ("Protocol Violation").
        await c1.DisposeAsync();
        await WaitUntilAsync(monitor, "/connz?state=closed", c => c.GetProperty("total").GetInt32() == 1);
        await Task.Delay(300);
        await c2.SendAsync("FOO\r\n");
        await c2.ExpectErrAndCloseAsync("Unknown Protocol Operation");
        await c2.DisposeAsync();
        await WaitUntilAsync(monitor, "/connz?state=closed", c => c.GetProperty("total").GetInt32() == 2);

        var closed = await monitor.GetJsonAsync("/connz?state=closed");
        AssertPage(closed, count: 2, total: 2, offset: 0, limit: 1024);
        Assert.Equal([cids[0], cids[1]], Cids(closed));
        var rows = closed.GetProperty("connections").EnumerateArray().ToList();
        Assert.Equal(["Client Closed", "Protocol Violation"], rows.Select(r => r.GetProperty("reason").GetString()));
        Assert.All(rows, r => Assert.True(r.TryGetProperty("stop", out _), r.ToString()));
        Assert.Equal([1, 3], rows.Select(r => r.GetProperty("subscriptions").GetInt32()));

        Assert.Equal([cids[1], cids[0]], Cids(await monitor.GetJsonAsync("/connz?state=closed&sort=stop")));
        Assert.Equal([cids[0], cids[1]], Cids(await monitor.GetJsonAsync("/connz?state=closed&sort=reason")));
        // A closed connection's uptime ends at its stop (checked against the times of the same answer).
        var uptime = await monitor.GetJsonAsync("/connz?state=closed&sort=uptime");
        Assert.True(Cids(uptime).SequenceEqual(Rows(uptime).OrderBy(r => r.GetProperty("stop").GetDateTime() - r.GetProperty("start").GetDateTime()).Select(Cid)), $"sort=uptime: {uptime}");
        Assert.Equal([cids[1], cids[0]], Cids(await monitor.GetJsonAsync("/connz?state=closed&sort=subs")));

        // The open connection is not among them; "any" (or "all") has both, by cid.
        var open = await monitor.GetJsonAsync("/connz");
        AssertPage(open, count: 1, total: 1, offset: 0, limit: 1024);
        Assert.Equal([cids[2]], Cids(open));
        foreach (var state in new[] { "any", "all" })
        {
            var any = await monitor.GetJsonAsync("/connz?state=" + state);
            AssertPage(any, count: 3, total: 3, offset: 0, limit: 1024);
            Assert.Equal(cids, Cids(any));
        }

        // cid with state closed or any looks among the closed connections only (nats-server 2.9.10).
        var one = await monitor.GetJsonAsync($"/connz?state=closed&cid={cids[1]}");
        AssertPage(one, count: 1, total: 2, offset: 0, limit: 1);
        Assert.Equal([cids[1]], Cids(one));
        one = await monitor.GetJsonAsync($"/connz?state=any&cid={cids[0]}");
        AssertPage(one, count: 1, total: 3, offset: 0, limit: 1);
        Assert.Equal([cids[0]], Cids(one));
        one = await monitor.GetJsonAsync($"/connz?state=any&cid={cids[2]}");
        AssertPage(one, count: 0, total: 3, offset: 0, limit: 1);
        one = await monitor.GetJsonAsync($"/connz?cid={cids[0]}");
        AssertPage(one, count: 0, total: 1, offset: 0, limit: 1);

        // subs=1 on a closed connection: the subjects it held when it closed.
        var withSubs = await monitor.GetJsonAsync($"/connz?state=closed&subs=1&cid={cids[1]}");
        var subjects = withSubs.GetProperty("connections")[0].GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()!).Order(StringComparer.Ordinal);
        Assert.Equal(["c2.a", "c2.b", "c2.c"], subjects);
    }

    [Fact]
    public async Task Connz_subs_detail_lists_each_subscription_with_queue_sid_msgs_and_max()
    {
        await using var server = await _server.StartServerAsync();
        using var monitor = new MonitorClient(server);
        await using var client = await WireClient.ConnectAsync(server);
        await client.HandshakeAsync();
        await using var quiet = await WireClient.ConnectAsync(server);
        await quiet.HandshakeAsync();
        await client.SendAsync("SUB d.one 1\r\nSUB d.* workers 2\r\nSUB d.two 3\r\nUNSUB 3 10\r\nPUB d.one 2\r\nhi\r\nPUB d.one 2\r\nhi\r\n");
        for (var i = 0; i < 4; i++)
        {
            await client.ExpectMsgAsync();
        }

        await client.PingPongAsync();
        var cid = (await monitor.GetConnectionAsync(client.LocalPort, "")).GetProperty("cid").GetUInt64();

        var plain = await monitor.GetConnectionAsync(client.LocalPort, "subs=1");
        Assert.Equal(["d.*", "d.one", "d.two"], plain.GetProperty("subscriptions_list").EnumerateArray().Select(s => s.GetString()!).Order(StringComparer.Ordinal));
        Assert.False(plain.TryGetProperty("subscriptions_list_detail", out _), plain.ToString());

        foreach (var spelling in new[] { "detail", "Detail", "DETAIL" })
        {
            var detail = await monitor.GetConnectionAsync(client.LocalPort, "subs=" + spelling);
            Assert.False(detail.TryGetProperty("subscriptions_list", out _), detail.ToString());
            var subs = detail.GetProperty("subscriptions_list_detail").EnumerateArray().OrderBy(s => s.GetProperty("sid").GetString(), StringComparer.Ordinal).ToList();
            Assert.Equal(3, subs.Count);
            // An open connection's details carry no account.
            AssertDetail(subs[0], account: null, "d.one", queue: null, sid: "1", msgs: 2, max: 0, cid);
            AssertDetail(subs[1], account: null, "d.*", queue: "workers", sid: "2", msgs: 2, max: 0, cid);
            AssertDetail(subs[2], account: null, "d.two", queue: null, sid: "3", msgs: 0, max: 10, cid);
        }

        // No subscriptions: neither list appears.
        var none = await monitor.GetConnectionAsync(quiet.LocalPort, "subs=detail");
        Assert.False(none.TryGetProperty("subscriptions_list_detail", out _) || none.TryGetProperty("subscriptions_list", out _), none.ToString());
        none = await monitor.GetConnectionAsync(quiet.LocalPort, "subs=1");
        Assert.False(none.TryGetProperty("subscriptions_list", out _), none.ToString());

        // A closed connection's details were taken with their account, the global one's included, and
        // without the auto-unsubscribe limit (nats-server clears it as it tears the connection down).
        await client.DisposeAsync();
        await WaitUntilAsync(monitor, "/connz?state=closed", c => c.GetProperty("total").GetInt32() == 1);
        var closed = (await monitor.GetJsonAsync("/connz?state=closed&subs=detail")).GetProperty("connections")[0];
        var closedSubs = closed.GetProperty("subscriptions_list_detail").EnumerateArray().OrderBy(s => s.GetProperty("sid").GetString(), StringComparer.Ordinal).ToList();
        Assert.Equal(3, closedSubs.Count);
        AssertDetail(closedSubs[0], account: "$G", "d.one", queue: null, sid: "1", msgs: 2, max: 0, cid);
        AssertDetail(closedSubs[1], account: "$G", "d.*", queue: "workers", sid: "2", msgs: 2, max: 0, cid);
        AssertDetail(closedSubs[2], account: "$G", "d.two", queue: null, sid: "3", msgs: 0, max: 0, cid);
    }

    [Fact]
    public async Task Connz_filters_by_acc_user_and_mqtt_client_and_shows_users_and_accounts_with_auth()
    {
        await using var server = await _server.StartServerAsync(Accounts);
        using var monitor = new MonitorClient(server);
        await using var a1 = await LoginAsync(server, "a1");
        await using var a2 = await LoginAsync(server, "a2");
        var b1 = await LoginAsync(server, "b1");
        await using var disposeB1 = b1;

        var ports = new[] { a1.LocalPort, a2.LocalPort, b1.LocalPort };
        var all = await monitor.GetJsonAsync("/connz?auth=1");
        AssertPage(all, count: 3, total: 3, offset: 0, limit: 1024);
        var rows = all.GetProperty("connections").EnumerateArray().ToList();
        Assert.Equal(ports, rows.Select(r => r.GetProperty("port").GetInt32()));
        Assert.Equal(["a1", "a2", "b1"], rows.Select(r => r.GetProperty("authorized_user").GetString()));
        Assert.Equal(["A", "A", "B"], rows.Select(r => r.GetProperty("account").GetString()));

        // Without auth: no user, no account.
        var plain = await monitor.GetJsonAsync("/connz");
        Assert.All(plain.GetProperty("connections").EnumerateArray(), r => Assert.False(r.TryGetProperty("authorized_user", out _) || r.TryGetProperty("account", out _), r.ToString()));

        // acc: that account's connections, total counting only them, with or without auth.
        var accA = await monitor.GetJsonAsync("/connz?acc=A");
        AssertPage(accA, count: 2, total: 2, offset: 0, limit: 1024);
        Assert.Equal([a1.LocalPort, a2.LocalPort], Ports(accA));
        var accB = await monitor.GetJsonAsync("/connz?acc=B&auth=true");
        AssertPage(accB, count: 1, total: 1, offset: 0, limit: 1024);
        Assert.Equal("B", accB.GetProperty("connections")[0].GetProperty("account").GetString());

        // user: the CONNECT user, with or without auth; total still counts every connection.
        foreach (var query in new[] { "user=a2", "user=a2&auth=1" })
        {
            var user = await monitor.GetJsonAsync("/connz?" + query);
            AssertPage(user, count: 1, total: 3, offset: 0, limit: 1024);
            Assert.Equal([a2.LocalPort], Ports(user));
        }

        var both = await monitor.GetJsonAsync("/connz?acc=A&user=a1&auth=1");
        AssertPage(both, count: 1, total: 2, offset: 0, limit: 1024);
        Assert.Equal("a1", both.GetProperty("connections")[0].GetProperty("authorized_user").GetString());
        AssertPage(await monitor.GetJsonAsync("/connz?acc=B&user=a1"), count: 0, total: 1, offset: 0, limit: 1024);

        // mqtt_client: no NATS connection has an MQTT client id.
        var mqtt = await monitor.GetJsonAsync("/connz?mqtt_client=sensor-1");
        AssertPage(mqtt, count: 0, total: 3, offset: 0, limit: 1024);

        // An account that does not exist: no server id, connections null.
        var unknown = await monitor.GetJsonAsync("/connz?acc=NOPE");
        Assert.Equal("", unknown.GetProperty("server_id").GetString());
        Assert.Equal(JsonValueKind.Null, unknown.GetProperty("connections").ValueKind);
        AssertPage(unknown, count: 0, total: 0, offset: 0, limit: 1024, connectionsNull: true);

        // Closed: acc and user filter them too, and auth shows the account.
        await b1.DisposeAsync();
        await WaitUntilAsync(monitor, "/connz?state=closed", c => c.GetProperty("total").GetInt32() == 1);
        var closedB = await monitor.GetJsonAsync("/connz?state=closed&acc=B&auth=1");
        AssertPage(closedB, count: 1, total: 1, offset: 0, limit: 1024);
        Assert.Equal("B", closedB.GetProperty("connections")[0].GetProperty("account").GetString());
        Assert.Equal("b1", closedB.GetProperty("connections")[0].GetProperty("authorized_user").GetString());
        AssertPage(await monitor.GetJsonAsync("/connz?state=closed&acc=A"), count: 0, total: 0, offset: 0, limit: 1024);
        AssertPage(await monitor.GetJsonAsync("/connz?state=closed&user=b1"), count: 1, total: 1, offset: 0, limit: 1024);
        AssertPage(await monitor.GetJsonAsync("/connz?state=closed&user=a1"), count: 0, total: 1, offset: 0, limit: 1024);
        AssertPage(await monitor.GetJsonAsync("/connz?state=any&acc=B"), count: 1, total: 1, offset: 0, limit: 1024);
        AssertPage(await monitor.GetJsonAsync("/connz?state=any&acc=A"), count: 2, total: 2, offset: 0, limit: 1024);
    }

    [Fact]
    public async Task Connz_acc_of_the_global_account_lists_its_open_connections_but_never_its_closed_ones()
    {
        await using var server = await _server.StartServerAsync();
        using var monitor = new MonitorClient(server);
        await using var open = await WireClient.ConnectAsync(server);
        await open.HandshakeAsync();
        var gone = await WireClient.ConnectAsync(server);
        await gone.HandshakeAsync();
        await gone.DisposeAsync();
        await WaitUntilAsync(monitor, "/connz?state=closed", c => c.GetProperty("total").GetInt32() == 1);

        var global = await monitor.GetJsonAsync("/connz?acc=$G&auth=1");
        AssertPage(global, count: 1, total: 1, offset: 0, limit: 1024);
        Assert.False(global.GetProperty("connections")[0].TryGetProperty("account", out _), global.ToString());

        // nats-server keeps no account name for a closed connection of the global account.
        AssertPage(await monitor.GetJsonAsync("/connz?acc=$G&state=closed"), count: 0, total: 0, offset: 0, limit: 1024);
        AssertPage(await monitor.GetJsonAsync("/connz?acc=$G&state=any"), count: 1, total: 1, offset: 0, limit: 1024);
    }

    // Three clients, started in this order about 100 ms apart, then made busy so that every sort
    // has a different, tie-free order: subs 1/3/2, messages in 3/1/2 of 1/10/4 bytes, each
    // client publishing to the next one's subject (c1 -> c2 -> c3 -> c1), and finally active in the order c3, c1, c2.
    private static async Task<(WireClient C1, WireClient C2, WireClient C3)> ThreeBusyClientsAsync(ServerProcess server)
    {
        var clients = new WireClient[3];
        for (var i = 0; i < 3; i++)
        {
            clients[i] = await WireClient.ConnectAsync(server);
            await clients[i].HandshakeAsync();
            await Task.Delay(100);
        }

        var (c1, c2, c3) = (clients[0], clients[1], clients[2]);
        await c1.SendAsync("SUB c1.a 1\r\nPING\r\n");
        await c2.SendAsync("SUB c2.a 1\r\nSUB c2.b 2\r\nSUB c2.c 3\r\nPING\r\n");
        await c3.SendAsync("SUB c3.a 1\r\nSUB c3.b 2\r\nPING\r\n");
        foreach (var c in clients)
        {
            await c.ExpectAsync("PONG\r\n");
        }

        // Each reads what it was sent before it publishes, so its PONG is the next frame.
        await c1.SendAsync("PUB c2.a 1\r\nx\r\nPUB c2.a 1\r\nx\r\nPUB c2.a 1\r\nx\r\nPING\r\n");
        await c1.ExpectAsync("PONG\r\n");
        await ExpectMsgsAsync(c2, 3);
        await c2.SendAsync("PUB c3.a 10\r\n0123456789\r\nPING\r\n");
        await c2.ExpectAsync("PONG\r\n");
        await ExpectMsgsAsync(c3, 1);
        await c3.SendAsync("PUB c1.a 4\r\nabcd\r\nPUB c1.a 4\r\nabcd\r\nPING\r\n");
        await c3.ExpectAsync("PONG\r\n");
        await ExpectMsgsAsync(c1, 2);

        // Last activity: c3, then c1, then c2 (nats-server counts messages and subscription changes
        // as activity, not a PING), so that last and idle do not order them as cid or uptime do.
        foreach (var c in new[] { c3, c1, c2 })
        {
            await Task.Delay(300);
            await c.SendAsync("SUB touch 99\r\nUNSUB 99\r\n");
            await c.PingPongAsync();
        }

        return (c1, c2, c3);
    }

    private static async Task ExpectMsgsAsync(WireClient client, int count)
    {
        for (var i = 0; i < count; i++)
        {
            await client.ExpectMsgAsync();
        }
    }

    private static async Task<WireClient> LoginAsync(ServerProcess server, string user)
    {
        var client = await WireClient.ConnectAsync(server);
        await client.HandshakeAsync($$"""{"verbose":false,"pedantic":false,"user":"{{user}}","pass":"p"}""");
        return client;
    }

    // The cids of the clients, in the order given, read from /connz by their ports.
    private static async Task<ulong[]> CidsByPortAsync(MonitorClient monitor, params WireClient[] clients)
    {
        var cids = new ulong[clients.Length];
        for (var i = 0; i < clients.Length; i++)
        {
            cids[i] = (await monitor.GetConnectionAsync(clients[i].LocalPort, "")).GetProperty("cid").GetUInt64();
        }

        Assert.True(cids.SequenceEqual(cids.Order()), $"cids not in connection order: {string.Join(",", cids)}");
        return cids;
    }

    private static ulong[] Cids(JsonElement connz) =>
        [.. connz.GetProperty("connections").EnumerateArray().Select(c => c.GetProperty("cid").GetUInt64())];

    private static List<JsonElement> Rows(JsonElement connz) => [.. connz.GetProperty("connections").EnumerateArray()];

    private static ulong Cid(JsonElement row) => row.GetProperty("cid").GetUInt64();

    private static int[] Ports(JsonElement connz) =>
        [.. connz.GetProperty("connections").EnumerateArray().Select(c => c.GetProperty("port").GetInt32())];

    private static void AssertPage(JsonElement connz, int count, int total, int offset, int limit, bool connectionsNull = false)
    {
        var actual = (connz.GetProperty("num_connections").GetInt32(), connz.GetProperty("total").GetInt32(), connz.GetProperty("offset").GetInt32(), connz.GetProperty("limit").GetInt32());
        Assert.True(actual == (count, total, offset, limit), $"expected num_connections/total/offset/limit {(count, total, offset, limit)}, got {actual}: {connz}");
        if (!connectionsNull)
        {
            Assert.Equal(count, connz.GetProperty("connections").GetArrayLength());
        }
    }

    private static void AssertDetail(JsonElement sub, string? account, string subject, string? queue, string sid, long msgs, long max, ulong cid)
    {
        Assert.True(sub.TryGetProperty("account", out var a) ? a.GetString() == account : account is null, $"account: {sub}");
        Assert.Equal(subject, sub.GetProperty("subject").GetString());
        Assert.True(sub.TryGetProperty("qgroup", out var q) ? q.GetString() == queue : queue is null, $"qgroup: {sub}");
        Assert.Equal(sid, sub.GetProperty("sid").GetString());
        Assert.Equal(msgs, sub.GetProperty("msgs").GetInt64());
        Assert.True(sub.TryGetProperty("max", out var m) ? m.GetInt64() == max : max == 0, $"max: {sub}");
        Assert.Equal(cid, sub.GetProperty("cid").GetUInt64());
    }

    private static async Task WaitUntilAsync(MonitorClient monitor, string path, Func<JsonElement, bool> condition)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(5);
        while (true)
        {
            var page = await monitor.GetJsonAsync(path);
            if (condition(page))
            {
                return;
            }

            Assert.True(DateTime.UtcNow < deadline, $"{path} did not settle: {page}");
            await Task.Delay(25);
        }
    }
}

[Trait("server", "nats-server")]
public sealed class ConnzQueryTests_NatsServer(NatsServerFixture server) : ConnzQueryTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class ConnzQueryTests_Courier(CourierFixture server) : ConnzQueryTests<CourierFixture>(server);
