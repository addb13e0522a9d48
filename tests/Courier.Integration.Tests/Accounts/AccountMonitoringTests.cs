using System.Net;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Accounts;

/// <summary>/connz and /accountz with accounts: an account's connections and details, nothing of another account.</summary>
public abstract class AccountMonitoringTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected AccountMonitoringTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Connz_filtered_by_account_lists_only_that_accounts_connections_with_their_account()
    {
        await using var a = await AccountConfig.ConnectAsync(_server, "a");
        await using var b = await AccountConfig.ConnectAsync(_server, "b");
        await using var g = await AccountConfig.ConnectAsync(_server, "g");
        using var monitor = new MonitorClient(_server.Server);

        var connz = await monitor.GetJsonAsync("connz?auth=true&acc=B");
        var connections = connz.GetProperty("connections").EnumerateArray().ToList();
        Assert.NotEmpty(connections);
        Assert.All(connections, c =>
        {
            Assert.Equal("B", c.GetProperty("account").GetString());
            Assert.Equal("b", c.GetProperty("authorized_user").GetString());
        });

        // The global account's users carry no account field.
        var all = await monitor.GetJsonAsync("connz?auth=true&limit=1000");
        var global = all.GetProperty("connections").EnumerateArray().Where(c => c.TryGetProperty("authorized_user", out var u) && u.GetString() == "g").ToList();
        Assert.NotEmpty(global);
        Assert.All(global, c => Assert.False(c.TryGetProperty("account", out _)));

        // Without auth=true the account filter still applies (nats-server 2.9.10), and no user or account is shown.
        var plain = (await monitor.GetJsonAsync("connz?acc=A")).GetProperty("connections").EnumerateArray().ToList();
        Assert.NotEmpty(plain);
        Assert.True(plain.Count < all.GetProperty("connections").GetArrayLength());
        Assert.All(plain, c => Assert.False(c.TryGetProperty("account", out _) || c.TryGetProperty("authorized_user", out _)));
    }

    [Fact]
    public async Task Accountz_lists_the_accounts_and_shows_one_accounts_exports_and_imports()
    {
        using var monitor = new MonitorClient(_server.Server);
        var list = await monitor.GetJsonAsync("accountz");
        var names = list.GetProperty("accounts").EnumerateArray().Select(n => n.GetString()).ToList();
        Assert.Contains("A", names);
        Assert.Contains("B", names);
        Assert.Contains("C", names);
        Assert.Contains("$G", names);

        var detail = (await monitor.GetJsonAsync("accountz?acc=A")).GetProperty("account_detail");
        Assert.Equal("A", detail.GetProperty("account_name").GetString());
        var exports = detail.GetProperty("exports").EnumerateArray().ToList();
        Assert.Contains(exports, e => e.GetProperty("subject").GetString() == "feed.>" && e.GetProperty("type").GetString() == "stream");
        Assert.Contains(exports, e => e.GetProperty("subject").GetString() == "svc.many" && e.GetProperty("type").GetString() == "service" && e.GetProperty("response_type").GetString() == "Streamed");
        var privateExport = exports.Single(e => e.GetProperty("subject").GetString() == "private.>");
        Assert.Equal(["B"], privateExport.GetProperty("approved_accounts").EnumerateArray().Select(x => x.GetString()));

        var imports = (await monitor.GetJsonAsync("accountz?acc=B")).GetProperty("account_detail").GetProperty("imports").EnumerateArray().ToList();
        Assert.Contains(imports, i => i.GetProperty("subject").GetString() == "echo" && i.GetProperty("account").GetString() == "A" && i.GetProperty("to").GetString() == "svc.echo");
        Assert.Contains(imports, i => i.GetProperty("subject").GetString() == "feed.>" && i.GetProperty("local_subject").GetString() == "from_a.feed.>");

        var (status, body, _) = await monitor.GetAsync("accountz?acc=NOPE");
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Contains("Account NOPE does not exist", body, StringComparison.Ordinal);
    }
}

[Trait("server", "nats-server")]
public sealed class AccountMonitoringTests_NatsServer(NatsServerAccountsFixture server) : AccountMonitoringTests<NatsServerAccountsFixture>(server);

[Trait("server", "courier")]
public sealed class AccountMonitoringTests_Courier(CourierAccountsFixture server) : AccountMonitoringTests<CourierAccountsFixture>(server);
