using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Integration.Tests.SystemAccount;

/// <summary>
/// The system account (config mode: <c>system_account: SYS</c>), differential against nats-server
/// 2.9.10 with the same config: a system-account user of NATS.Net receives the CONNECT, DISCONNECT and
/// SERVER.CONNS events of another account's clients, and gets answers to <c>$SYS.REQ.SERVER.*</c> and
/// <c>$SYS.REQ.ACCOUNT.*</c> requests. Field names and JSON types are compared, not values.
/// </summary>
public abstract class SystemAccountTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string Config = """
        accounts {
          SYS: { users: [ {user: sys, password: sys} ] }
          A: { users: [ {user: a, password: a} ] }
        }
        system_account: SYS
        """;

    private readonly TServer _server;

    protected SystemAccountTests(TServer server)
    {
        _server = server;
    }

    private static async Task<NatsConnection> ConnectAsync(ServerProcess server, string user, string name = "system-it")
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = server.Url,
            Name = name,
            AuthOpts = new NatsAuthOpts { Username = user, Password = user },
            RequestTimeout = TimeSpan.FromSeconds(10),
            CommandTimeout = TimeSpan.FromSeconds(10),
            MaxReconnectRetry = 0,
        });
        await nats.ConnectAsync();
        return nats;
    }

    private static async Task<JsonElement> NextJsonAsync(INatsSub<string> sub, CancellationToken ct)
    {
        var msg = await sub.Msgs.ReadAsync(ct);
        return JsonDocument.Parse(msg.Data!).RootElement.Clone();
    }


    /// <summary>Asserts that <paramref name="e"/> has each of <paramref name="fields"/> with the JSON kind given.</summary>
    private static void AssertFields(JsonElement e, params (string Name, JsonValueKind Kind)[] fields)
    {
        foreach (var (name, kind) in fields)
        {
            Assert.True(e.TryGetProperty(name, out var value), $"no \"{name}\" in {e}");
            Assert.True(value.ValueKind == kind || (kind == JsonValueKind.True && value.ValueKind == JsonValueKind.False), $"\"{name}\" is {value.ValueKind}, not {kind}, in {e}");
        }
    }

    // nats-server's events.go ServerInfo: name, host, id, ver, seq, jetstream, time.
    private static void AssertServer(JsonElement server) => AssertFields(server,
        ("name", JsonValueKind.String), ("host", JsonValueKind.String), ("id", JsonValueKind.String), ("ver", JsonValueKind.String),
        ("seq", JsonValueKind.Number), ("jetstream", JsonValueKind.True), ("time", JsonValueKind.String));

    [Fact]
    public async Task A_system_account_subscriber_receives_connect_and_disconnect_events_of_another_accounts_client()
    {
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var server = await _server.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server, "sys");
        await using var connects = await sys.SubscribeCoreAsync<string>("$SYS.ACCOUNT.A.CONNECT", cancellationToken: cts.Token);
        await using var disconnects = await sys.SubscribeCoreAsync<string>("$SYS.ACCOUNT.A.DISCONNECT", cancellationToken: cts.Token);
        await sys.PingAsync(cts.Token);

        var client = await ConnectAsync(server, "a", "events-client");
        await client.PublishAsync("some.subject", "hello", cancellationToken: cts.Token);
        await client.PingAsync(cts.Token);

        var connect = await NextJsonAsync(connects, cts.Token);
        Assert.Equal("io.nats.server.advisory.v1.client_connect", connect.GetProperty("type").GetString());
        AssertFields(connect, ("id", JsonValueKind.String), ("timestamp", JsonValueKind.String), ("server", JsonValueKind.Object), ("client", JsonValueKind.Object));
        AssertServer(connect.GetProperty("server"));
        var info = connect.GetProperty("client");
        AssertFields(info, ("start", JsonValueKind.String), ("host", JsonValueKind.String), ("id", JsonValueKind.Number), ("acc", JsonValueKind.String),
            ("user", JsonValueKind.String), ("name", JsonValueKind.String), ("lang", JsonValueKind.String), ("ver", JsonValueKind.String),
            ("kind", JsonValueKind.String), ("client_type", JsonValueKind.String));
        Assert.Equal("A", info.GetProperty("acc").GetString());
        Assert.Equal("a", info.GetProperty("user").GetString());
        Assert.Equal("events-client", info.GetProperty("name").GetString());
        Assert.Equal("Client", info.GetProperty("kind").GetString());
        Assert.Equal("nats", info.GetProperty("client_type").GetString());
        Assert.False(info.TryGetProperty("stop", out _));
        Assert.False(info.TryGetProperty("rtt", out _)); // estimated at CONNECT, after this event

        await client.DisposeAsync();
        var disconnect = await NextJsonAsync(disconnects, cts.Token);
        Assert.Equal("io.nats.server.advisory.v1.client_disconnect", disconnect.GetProperty("type").GetString());
        AssertServer(disconnect.GetProperty("server"));
        AssertFields(disconnect, ("sent", JsonValueKind.Object), ("received", JsonValueKind.Object), ("reason", JsonValueKind.String));
        var closed = disconnect.GetProperty("client");
        AssertFields(closed, ("start", JsonValueKind.String), ("stop", JsonValueKind.String), ("id", JsonValueKind.Number), ("acc", JsonValueKind.String),
            ("rtt", JsonValueKind.Number));
        Assert.Equal(info.GetProperty("id").GetUInt64(), closed.GetProperty("id").GetUInt64());
        Assert.Equal("Client Closed", disconnect.GetProperty("reason").GetString());
        AssertFields(disconnect.GetProperty("sent"), ("msgs", JsonValueKind.Number), ("bytes", JsonValueKind.Number));
        Assert.Equal(1, disconnect.GetProperty("sent").GetProperty("msgs").GetInt64()); // the one PUB it sent
        Assert.Equal(5, disconnect.GetProperty("sent").GetProperty("bytes").GetInt64());
    }

    [Fact]
    public async Task An_accounts_connection_count_is_sent_when_it_changes()
    {
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var server = await _server.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server, "sys");
        await using var conns = await sys.SubscribeCoreAsync<string>("$SYS.ACCOUNT.A.SERVER.CONNS", cancellationToken: cts.Token);
        await sys.PingAsync(cts.Token);

        await using var client = await ConnectAsync(server, "a");
        var up = await NextJsonAsync(conns, cts.Token);
        Assert.Equal("io.nats.server.advisory.v1.account_connections", up.GetProperty("type").GetString());
        AssertServer(up.GetProperty("server"));
        AssertFields(up, ("acc", JsonValueKind.String), ("conns", JsonValueKind.Number), ("leafnodes", JsonValueKind.Number), ("total_conns", JsonValueKind.Number),
            ("sent", JsonValueKind.Object), ("received", JsonValueKind.Object), ("slow_consumers", JsonValueKind.Number));
        Assert.Equal("A", up.GetProperty("acc").GetString());
        Assert.Equal(1, up.GetProperty("conns").GetInt32());
    }

    [Fact]
    public async Task Server_ping_is_answered_with_the_servers_statsz_and_its_id_names_it_in_direct_requests()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server, "sys");
        await using var client = await ConnectAsync(server, "a");

        var statsz = await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING");
        AssertServer(statsz.GetProperty("server"));
        var stats = statsz.GetProperty("statsz");
        AssertFields(stats, ("start", JsonValueKind.String), ("mem", JsonValueKind.Number), ("cores", JsonValueKind.Number), ("cpu", JsonValueKind.Number),
            ("connections", JsonValueKind.Number), ("total_connections", JsonValueKind.Number), ("active_accounts", JsonValueKind.Number),
            ("subscriptions", JsonValueKind.Number), ("sent", JsonValueKind.Object), ("received", JsonValueKind.Object), ("slow_consumers", JsonValueKind.Number));
        Assert.Equal(2, stats.GetProperty("connections").GetInt32());

        var id = statsz.GetProperty("server").GetProperty("id").GetString()!;
        var varz = await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{id}.VARZ");
        AssertServer(varz.GetProperty("server"));
        Assert.Equal(id, varz.GetProperty("data").GetProperty("server_id").GetString());

        var statszPing = await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.STATSZ");
        Assert.Equal(id, statszPing.GetProperty("server").GetProperty("id").GetString());
        Assert.Equal(JsonValueKind.Object, statszPing.GetProperty("statsz").ValueKind);

        var connz = await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.CONNZ");
        Assert.Equal(2, connz.GetProperty("data").GetProperty("num_connections").GetInt32());
        Assert.All(connz.GetProperty("data").GetProperty("connections").EnumerateArray(), c => AssertFields(c, ("rtt", JsonValueKind.String)));

        Assert.Equal("SYS", varz.GetProperty("data").GetProperty("system_account").GetString());

        var healthz = await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{id}.HEALTHZ");
        Assert.Equal("ok", healthz.GetProperty("data").GetProperty("status").GetString());

        var subsz = await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.SUBSZ");
        AssertFields(subsz.GetProperty("data"), ("num_subscriptions", JsonValueKind.Number));

        var accountz = await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.ACCOUNTZ");
        var names = accountz.GetProperty("data").GetProperty("accounts").EnumerateArray().Select(a => a.GetString()).ToList();
        Assert.Contains("A", names);
        Assert.Contains("SYS", names);
        Assert.Equal("SYS", accountz.GetProperty("data").GetProperty("system_account").GetString());
    }

    [Fact]
    public async Task A_request_with_bad_json_options_is_answered_with_a_400_error()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server, "sys");

        var answer = await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.VARZ", "{not json");
        AssertServer(answer.GetProperty("server"));
        Assert.Equal(400, answer.GetProperty("error").GetProperty("code").GetInt32());
        Assert.False(answer.TryGetProperty("data", out _));
    }

    [Fact]
    public async Task Account_connz_and_info_show_that_account_only()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server, "sys");
        await using var client = await ConnectAsync(server, "a", "account-a-client");
        await using var sub = await client.SubscribeCoreAsync<string>("a.things");
        await client.PingAsync();

        var connz = await NatsJson.RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.CONNZ");
        AssertServer(connz.GetProperty("server"));
        var data = connz.GetProperty("data");
        AssertFields(data, ("server_id", JsonValueKind.String), ("now", JsonValueKind.String), ("num_connections", JsonValueKind.Number),
            ("total", JsonValueKind.Number), ("offset", JsonValueKind.Number), ("limit", JsonValueKind.Number), ("connections", JsonValueKind.Array));
        var connections = data.GetProperty("connections").EnumerateArray().ToList();
        var only = Assert.Single(connections);
        Assert.Equal("account-a-client", only.GetProperty("name").GetString());

        var info = await NatsJson.RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.INFO");
        var account = info.GetProperty("data");
        AssertFields(account, ("account_name", JsonValueKind.String), ("expired", JsonValueKind.True), ("complete", JsonValueKind.True),
            ("jetstream_enabled", JsonValueKind.True), ("leafnode_connections", JsonValueKind.Number), ("client_connections", JsonValueKind.Number),
            ("subscriptions", JsonValueKind.Number));
        Assert.Equal("A", account.GetProperty("account_name").GetString());
        Assert.Equal(1, account.GetProperty("client_connections").GetInt32());

        var subsz = await NatsJson.RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.SUBSZ");
        var list = subsz.GetProperty("data").GetProperty("subscriptions_list").EnumerateArray().ToList();
        Assert.Contains(list, s => s.GetProperty("subject").GetString() == "a.things");

        var jsz = await NatsJson.RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.JSZ");
        Assert.Equal(500, jsz.GetProperty("error").GetProperty("code").GetInt32());
        Assert.Equal("jetstream not enabled", jsz.GetProperty("error").GetProperty("description").GetString());

        var statz = await NatsJson.RequestAsync(sys, "$SYS.REQ.ACCOUNT.A.STATZ");
        var stat = Assert.Single(statz.GetProperty("data").GetProperty("account_statz").EnumerateArray());
        Assert.Equal("A", stat.GetProperty("acc").GetString());
        Assert.Equal(1, stat.GetProperty("conns").GetInt32());
    }

    [Fact]
    public async Task Statsz_is_published_periodically_to_system_account_subscribers()
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(45)); // the interval grows to 30 s, as nats-server's
        await using var server = await _server.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server, "sys");
        await using var statsz = await sys.SubscribeCoreAsync<string>("$SYS.SERVER.*.STATSZ", cancellationToken: cts.Token);

        var update = await NextJsonAsync(statsz, cts.Token);
        AssertServer(update.GetProperty("server"));
        AssertFields(update.GetProperty("statsz"), ("connections", JsonValueKind.Number), ("start", JsonValueKind.String));
    }

    [Fact]
    public async Task A_client_outside_the_system_account_gets_no_answer_to_system_requests()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var client = await ConnectAsync(server, "a");

        // Another account's $SYS.REQ subjects are its own: no responders.
        await Assert.ThrowsAsync<NatsNoRespondersException>(async () => await client.RequestAsync<string, string>("$SYS.REQ.SERVER.PING", ""));
    }
}

[Trait("server", "nats-server")]
public sealed class SystemAccountTests_NatsServer(NatsServerFixture server) : SystemAccountTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class SystemAccountTests_Courier(CourierFixture server) : SystemAccountTests<CourierFixture>(server);
