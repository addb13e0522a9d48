using System.Text.Json;
using System.Text.RegularExpressions;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Integration.Tests.SystemAccount;

/// <summary>
/// The system account's request kinds of nats-server 2.10 (server/events.go; Debian's 2.9.10 has none,
/// so Courier only): <c>$SYS.REQ.SERVER.{PING,&lt;id&gt;}.IDZ</c> answers the server's name, host and id;
/// <c>$SYS.REQ.SERVER.&lt;id&gt;.KICK</c> <c>{"cid":N}</c> closes that client (reason <c>Kicked</c>) and
/// <c>.LDM</c> sends it an INFO with <c>"ldm":true</c>; <c>.RELOAD</c> reloads the configuration; each answers
/// <c>{"server":...}</c> or nats-server's error.
/// </summary>
[Trait("server", "courier")]
public sealed class ServerControlRequestTests(CourierFixture fixture) : IClassFixture<CourierFixture>
{
    private const string Config = """
        accounts {
          SYS: { users: [ {user: sys, password: sys} ] }
          A: { users: [ {user: a, password: a} ] }
        }
        system_account: SYS
        """;

    [Fact]
    public async Task Idz_answers_the_servers_name_host_and_id_without_an_envelope()
    {
        await using var server = await fixture.StartServerAsync(Config, "-n", "idz-server");
        await using var sys = await ConnectAsync(server);
        using var monitor = new MonitorClient(server);
        var varz = await monitor.GetJsonAsync("/varz");
        var serverId = varz.GetProperty("server_id").GetString()!;

        foreach (var subject in new[] { "$SYS.REQ.SERVER.PING.IDZ", $"$SYS.REQ.SERVER.{serverId}.IDZ" })
        {
            var idz = await NatsJson.RequestAsync(sys, subject, """{"server_name":"not-this-one"}"""); // no options: a filter is not read
            Assert.Equal(["host", "id", "name"], idz.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal));
            Assert.Equal(serverId, idz.GetProperty("id").GetString());
            Assert.Equal("idz-server", idz.GetProperty("name").GetString());
            Assert.Equal(varz.GetProperty("host").GetString(), idz.GetProperty("host").GetString());
        }
    }

    [Fact]
    public async Task Reload_reloads_the_configuration_as_sighup_does_and_answers_a_refusal_with_its_error()
    {
        await using var server = await fixture.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server);
        using var monitor = new MonitorClient(server);
        var serverId = (await monitor.GetJsonAsync("/varz")).GetProperty("server_id").GetString()!;

        // A new user in account A: usable once reloaded.
        await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), Config.Replace("{user: a, password: a}", "{user: a, password: a}, {user: b, password: b}", StringComparison.Ordinal));
        var reloaded = await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.RELOAD", "");
        Assert.Equal(["server"], reloaded.EnumerateObject().Select(p => p.Name));
        Assert.Contains("Reloaded server configuration", server.Log.All(), StringComparison.Ordinal);
        await using (var b = await WireClient.ConnectAsync(server))
        {
            await b.HandshakeAsync("""{"verbose":false,"pedantic":false,"user":"b","pass":"b"}""");
        }

        // A change nats-server cannot reload: the answer carries its error, and the server runs on as it was.
        await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), "server_name: renamed\n" + Config);
        var refused = await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.RELOAD", "");
        Assert.Equal(500, refused.GetProperty("error").GetProperty("code").GetInt32());
        Assert.StartsWith("config reload not supported for ServerName", refused.GetProperty("error").GetProperty("description").GetString(), StringComparison.Ordinal);
        Assert.Equal(serverId, (await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.IDZ", "")).GetProperty("id").GetString());
    }

    [Fact]
    public async Task Kick_closes_the_client_named_by_its_cid_and_says_when_there_is_none()
    {
        await using var server = await fixture.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server);
        using var monitor = new MonitorClient(server);
        var serverId = (await monitor.GetJsonAsync("/varz")).GetProperty("server_id").GetString()!;
        await using var victim = await WireClient.ConnectAsync(server);
        await victim.HandshakeAsync("""{"verbose":false,"pedantic":false,"user":"a","pass":"a","name":"kick-me"}""");
        var cid = await CidAsync(monitor, "kick-me");

        // Not by PING, not with a body that is not the request, not when the server filter excludes this
        // server: none of them is answered (the IDZ sent after each answers first) and the client stays.
        foreach (var (subject, body) in new[]
        {
            ("$SYS.REQ.SERVER.PING.KICK", $$"""{"cid":{{cid}}}"""),
            ($"$SYS.REQ.SERVER.{serverId}.KICK", "{not json"),
            ($"$SYS.REQ.SERVER.{serverId}.KICK", $$"""{"cid":{{cid}},"server_name":"not-this-one"}"""),
        })
        {
            var first = await FirstAnswerAsync(sys, (subject, body), ($"$SYS.REQ.SERVER.{serverId}.IDZ", ""));
            Assert.True(first.TryGetProperty("id", out _), $"{subject} {body} was answered: {first}");
        }

        await victim.PingPongAsync();

        var kicked = await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.KICK", $$"""{"cid":{{cid}}}""");
        Assert.Equal(["server"], kicked.EnumerateObject().Select(p => p.Name));
        Assert.Equal(serverId, kicked.GetProperty("server").GetProperty("id").GetString());
        await victim.ExpectClosedAsync();

        var closed = (await monitor.GetJsonAsync($"/connz?state=closed&cid={cid}")).GetProperty("connections");
        Assert.Equal("Kicked", Assert.Single(closed.EnumerateArray()).GetProperty("reason").GetString());

        var again = await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.KICK", $$"""{"cid":{{cid}}}""");
        Assert.Equal(500, again.GetProperty("error").GetProperty("code").GetInt32());
        Assert.Equal("no such client or leafnode id", again.GetProperty("error").GetProperty("description").GetString());
        Assert.False(again.TryGetProperty("data", out _));
    }

    [Fact]
    public async Task Ldm_tells_a_client_that_takes_async_info_of_lame_duck_mode()
    {
        await using var server = await fixture.StartServerAsync(Config);
        await using var sys = await ConnectAsync(server);
        using var monitor = new MonitorClient(server);
        var serverId = (await monitor.GetJsonAsync("/varz")).GetProperty("server_id").GetString()!;
        await using var modern = await WireClient.ConnectAsync(server);
        await modern.HandshakeAsync("""{"verbose":false,"pedantic":false,"user":"a","pass":"a","name":"ldm-modern","protocol":1}""");
        await using var old = await WireClient.ConnectAsync(server);
        await old.HandshakeAsync("""{"verbose":false,"pedantic":false,"user":"a","pass":"a","name":"ldm-old","protocol":0}""");

        var told = await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.LDM", $$"""{"cid":{{await CidAsync(monitor, "ldm-modern")}}}""");
        Assert.Equal(["server"], told.EnumerateObject().Select(p => p.Name));
        var info = await modern.ExpectLineAsync(new Regex("^INFO ", RegexOptions.None, TimeSpan.FromSeconds(1)));
        using (var json = JsonDocument.Parse(info["INFO ".Length..]))
        {
            Assert.True(json.RootElement.GetProperty("ldm").GetBoolean(), info);
        }

        await modern.PingPongAsync(); // told, not closed

        var refused = await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.LDM", $$"""{"cid":{{await CidAsync(monitor, "ldm-old")}}}""");
        Assert.Equal(500, refused.GetProperty("error").GetProperty("code").GetInt32());
        Assert.Equal("client does not support Lame Duck Mode or is not ready to receive the notification", refused.GetProperty("error").GetProperty("description").GetString());
        await old.PingPongAsync(); // nothing was sent to it

        var none = await NatsJson.RequestAsync(sys, $"$SYS.REQ.SERVER.{serverId}.LDM", """{"cid":999999}""");
        Assert.Equal("no such client id", none.GetProperty("error").GetProperty("description").GetString());
    }

    private static async Task<ulong> CidAsync(MonitorClient monitor, string name)
    {
        var connections = (await monitor.GetJsonAsync("/connz?acc=A")).GetProperty("connections");
        return connections.EnumerateArray().Single(c => c.TryGetProperty("name", out var n) && n.GetString() == name).GetProperty("cid").GetUInt64();
    }

    private static async Task<NatsConnection> ConnectAsync(ServerProcess server)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = server.Url,
            Name = "control-requests-it",
            AuthOpts = new NatsAuthOpts { Username = "sys", Password = "sys" },
            RequestTimeout = TimeSpan.FromSeconds(10),
            CommandTimeout = TimeSpan.FromSeconds(10),
            MaxReconnectRetry = 0,
        });
        await nats.ConnectAsync();
        return nats;
    }


    // Sends ignored, then answered, with one reply subject; the first answer is answered's unless ignored got one.
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
}
