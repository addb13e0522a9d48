using System.Net;
using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Integration.Tests.SystemAccount;

/// <summary>
/// The system account's LEAFZ, GATEWAYZ and account STATZ requests and the <c>/accstatz</c> page on one
/// server without links, differential against nats-server 2.9.10 with the same config and client script:
/// the answer's envelope, the page's fields and the values that do not depend on timing (empty link lists
/// as nats-server writes them, the account figures of a known client's traffic), the options that filter
/// (the server filters <c>server_name</c>, <c>cluster</c>, <c>tags</c> among them).
/// The pages with links are tested in Courier.Cluster.Tests (LeafSystemRequestTests, GatewaySystemRequestTests).
/// </summary>
public abstract class LinkRequestTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string Config = """
        accounts {
          SYS: { users: [ {user: sys, password: sys} ] }
          A: { users: [ {user: a, password: a} ] }
          B: { users: [ {user: b, password: b} ] }
        }
        system_account: SYS
        server_tags: ["Blue"]
        """;

    private readonly TServer _server;

    protected LinkRequestTests(TServer server)
    {
        _server = server;
    }

    private static async Task<NatsConnection> ConnectAsync(ServerProcess server, string user)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = server.Url,
            Name = "link-requests-it",
            AuthOpts = new NatsAuthOpts { Username = user, Password = user },
            RequestTimeout = TimeSpan.FromSeconds(10),
            CommandTimeout = TimeSpan.FromSeconds(10),
            MaxReconnectRetry = 0,
        });
        await nats.ConnectAsync();
        return nats;
    }


    /// <summary>
    /// Sends <paramref name="ignored"/> and then <paramref name="answered"/> with one reply subject and
    /// returns the first answer: the server takes its requests in order, so were the first one answered,
    /// its answer would come first.
    /// </summary>
    private static async Task<JsonElement> FirstAnswerAsync(NatsConnection nats, (string Subject, string Body) ignored, (string Subject, string Body) answered)
    {
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        var inbox = nats.NewInbox();
        await using var sub = await nats.SubscribeCoreAsync<string>(inbox, cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);
        await nats.PublishAsync(ignored.Subject, ignored.Body, replyTo: inbox, cancellationToken: cts.Token);
        await nats.PublishAsync(answered.Subject, answered.Body, replyTo: inbox, cancellationToken: cts.Token);
        var msg = await sub.Msgs.ReadAsync(cts.Token);
        return JsonDocument.Parse(msg.Data!).RootElement.Clone();
    }

    private static void AssertFieldNames(JsonElement e, params string[] names) =>
        Assert.Equal(names.Order(StringComparer.Ordinal), e.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal));

    [Fact]
    public async Task Leafz_requests_answer_with_the_servers_leafz_page_and_its_options_filter()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server, "sys");
        using var monitor = new MonitorClient(server);
        var serverId = (await monitor.GetJsonAsync("/varz")).GetProperty("server_id").GetString()!;

        foreach (var (subject, body) in new[]
        {
            ("$SYS.REQ.SERVER.PING.LEAFZ", ""),
            ($"$SYS.REQ.SERVER.{serverId}.LEAFZ", """{"subscriptions":true,"account":"A"}"""),
            ("$SYS.REQ.ACCOUNT.A.LEAFZ", """{"subscriptions":true}"""),
        })
        {
            var answer = await NatsJson.RequestAsync(sys, subject, body);
            AssertFieldNames(answer, "server", "data");
            Assert.Equal(serverId, answer.GetProperty("server").GetProperty("id").GetString());
            var data = answer.GetProperty("data");
            AssertFieldNames(data, "server_id", "now", "leafnodes", "leafs");
            Assert.Equal(serverId, data.GetProperty("server_id").GetString());
            Assert.Equal(0, data.GetProperty("leafnodes").GetInt32());
            Assert.Equal(JsonValueKind.Null, data.GetProperty("leafs").ValueKind); // nats-server's nil slice
        }

        // A server filter that does not match this server: no answer (the GATEWAYZ after it answers first).
        var first = await FirstAnswerAsync(sys, ("$SYS.REQ.SERVER.PING.LEAFZ", """{"server_name":"no-such-server"}"""), ("$SYS.REQ.SERVER.PING.GATEWAYZ", ""));
        Assert.True(first.GetProperty("data").TryGetProperty("outbound_gateways", out _), first.ToString());

        // tags: all of them must be the server's (in any case).
        var tagged = await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.LEAFZ", """{"tags":[" BLUE "]}""");
        Assert.Equal(0, tagged.GetProperty("data").GetProperty("leafnodes").GetInt32());
        var untagged = await FirstAnswerAsync(sys, ("$SYS.REQ.SERVER.PING.LEAFZ", """{"tags":["blue","red"]}"""), ("$SYS.REQ.SERVER.PING.GATEWAYZ", ""));
        Assert.True(untagged.GetProperty("data").TryGetProperty("outbound_gateways", out _), untagged.ToString());

        var bad = await NatsJson.RequestAsync(sys, "$SYS.REQ.SERVER.PING.LEAFZ", "{not json");
        Assert.Equal(400, bad.GetProperty("error").GetProperty("code").GetInt32());
        Assert.False(bad.TryGetProperty("data", out _));
    }

    [Fact]
    public async Task Gatewayz_requests_answer_with_the_servers_gatewayz_page_without_gateways()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server, "sys");
        using var monitor = new MonitorClient(server);
        var serverId = (await monitor.GetJsonAsync("/varz")).GetProperty("server_id").GetString()!;

        foreach (var (subject, body) in new[]
        {
            ("$SYS.REQ.SERVER.PING.GATEWAYZ", ""),
            ($"$SYS.REQ.SERVER.{serverId}.GATEWAYZ", """{"name":"west","accounts":true,"account_name":"A"}"""),
        })
        {
            var answer = await NatsJson.RequestAsync(sys, subject, body);
            AssertFieldNames(answer, "server", "data");
            var data = answer.GetProperty("data");
            AssertFieldNames(data, "server_id", "now", "outbound_gateways", "inbound_gateways");
            Assert.Equal(serverId, data.GetProperty("server_id").GetString());
            Assert.Equal("{}", data.GetProperty("outbound_gateways").GetRawText());
            Assert.Equal("{}", data.GetProperty("inbound_gateways").GetRawText());
        }

        // The HTTP page takes the same options, and 2.9.10's Go boolean for accs.
        var page = await monitor.GetJsonAsync("/gatewayz?gw_name=west&acc_name=A");
        Assert.Equal("{}", page.GetProperty("outbound_gateways").GetRawText());
        var (status, text, _) = await monitor.GetAsync("/gatewayz?accs=maybe");
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Equal("Error decoding boolean for 'accs': strconv.ParseBool: parsing \"maybe\": invalid syntax", text.Trim());

        var first = await FirstAnswerAsync(sys, ("$SYS.REQ.SERVER.PING.GATEWAYZ", """{"cluster":"no-such-cluster"}"""), ("$SYS.REQ.SERVER.PING.LEAFZ", ""));
        Assert.True(first.GetProperty("data").TryGetProperty("leafnodes", out _), first.ToString());
    }

    [Fact]
    public async Task Accstatz_counts_the_local_clients_of_each_account_and_unused_adds_the_others()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var client = await ConnectAsync(server, "a");
        await using var sub = await client.SubscribeCoreAsync<string>("accstatz.echo");
        await client.PingAsync();
        await client.PublishAsync("accstatz.echo", "hello");
        await client.PublishAsync("accstatz.other", "hi");
        await sub.Msgs.ReadAsync();
        await client.PingAsync();
        using var monitor = new MonitorClient(server);

        var page = await monitor.GetJsonAsync("/accstatz");
        AssertFieldNames(page, "server_id", "now", "account_statz");
        var stat = Assert.Single(page.GetProperty("account_statz").EnumerateArray());
        AssertFieldNames(stat, "acc", "conns", "leafnodes", "total_conns", "sent", "received", "slow_consumers");
        Assert.Equal("A", stat.GetProperty("acc").GetString());
        Assert.Equal(1, stat.GetProperty("conns").GetInt32());
        Assert.Equal(0, stat.GetProperty("leafnodes").GetInt32());
        Assert.Equal(1, stat.GetProperty("total_conns").GetInt32());
        Assert.Equal(2, stat.GetProperty("received").GetProperty("msgs").GetInt64()); // the two PUBs
        Assert.Equal(7, stat.GetProperty("received").GetProperty("bytes").GetInt64());
        Assert.Equal(1, stat.GetProperty("sent").GetProperty("msgs").GetInt64()); // the one MSG back
        Assert.Equal(5, stat.GetProperty("sent").GetProperty("bytes").GetInt64());

        // An accounts list is not an option of the page (nats-server's HandleAccountStatz reads only unused).
        var listed = await monitor.GetJsonAsync("/accstatz?accounts=B");
        Assert.Equal(["A"], listed.GetProperty("account_statz").EnumerateArray().Select(a => a.GetProperty("acc").GetString()));

        var unused = await monitor.GetJsonAsync("/accstatz?unused=1");
        var names = unused.GetProperty("account_statz").EnumerateArray().Select(a => a.GetProperty("acc").GetString()).ToList();
        Assert.Contains("A", names);
        Assert.Contains("B", names);
        Assert.Contains("SYS", names);
        var b = unused.GetProperty("account_statz").EnumerateArray().Single(a => a.GetProperty("acc").GetString() == "B");
        Assert.Equal(0, b.GetProperty("conns").GetInt32());

        var (status, text, _) = await monitor.GetAsync("/accstatz?unused=maybe");
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Equal("Error decoding boolean for 'unused': strconv.ParseBool: parsing \"maybe\": invalid syntax", text.Trim());
    }

    [Fact]
    public async Task Account_statz_requests_take_the_accounts_list_and_include_unused()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server, "sys");
        await using var client = await ConnectAsync(server, "a");

        var ping = await NatsJson.RequestAsync(sys, "$SYS.REQ.ACCOUNT.PING.STATZ", """{"accounts":["B","A"],"include_unused":true}""");
        Assert.Equal(["B", "A"], ping.GetProperty("data").GetProperty("account_statz").EnumerateArray().Select(a => a.GetProperty("acc").GetString()));

        var used = await NatsJson.RequestAsync(sys, "$SYS.REQ.ACCOUNT.PING.STATZ", """{"accounts":["B","A"]}""");
        Assert.Equal(["A"], used.GetProperty("data").GetProperty("account_statz").EnumerateArray().Select(a => a.GetProperty("acc").GetString()));

        // A named account without a local client, unused asked for: answered (nats-server's AccountStatz).
        var b = await NatsJson.RequestAsync(sys, "$SYS.REQ.ACCOUNT.B.STATZ", """{"include_unused":true}""");
        var stat = Assert.Single(b.GetProperty("data").GetProperty("account_statz").EnumerateArray());
        Assert.Equal("B", stat.GetProperty("acc").GetString());
        Assert.Equal(0, stat.GetProperty("conns").GetInt32());

        // Without unused, no answer at all (the A request after it answers first).
        var first = await FirstAnswerAsync(sys, ("$SYS.REQ.ACCOUNT.B.STATZ", ""), ("$SYS.REQ.ACCOUNT.A.STATZ", ""));
        Assert.Equal("A", first.GetProperty("data").GetProperty("account_statz")[0].GetProperty("acc").GetString());
    }
}

[Trait("server", "nats-server")]
public sealed class LinkRequestTests_NatsServer(NatsServerFixture server) : LinkRequestTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class LinkRequestTests_Courier(CourierFixture server) : LinkRequestTests<CourierFixture>(server);
