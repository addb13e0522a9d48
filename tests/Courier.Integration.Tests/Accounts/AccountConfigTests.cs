using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Accounts;

/// <summary>Account configurations each server refuses, or runs with their own options: no_auth_user.</summary>
public abstract class AccountConfigTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected AccountConfigTests(TServer server)
    {
        _server = server;
    }

    [Theory]
    [InlineData("{stream: {account: A, subject: \"private.>\"}}", "stream import not authorized")]
    [InlineData("{stream: {account: A, subject: \"other.>\"}}", "stream import not authorized")]
    [InlineData("{service: {account: A, subject: \"svc.secret\"}}", "service import not authorized")]
    [InlineData("{service: {account: A, subject: \"private.x\"}}", "service import not authorized")]
    [InlineData("{stream: {account: Z, subject: \"feed.>\"}}", "\"Z\" account not defined for stream import")]
    public async Task An_import_the_exporter_does_not_allow_is_refused_at_startup(string import, string error)
    {
        var config = $$"""
            accounts {
              A: { users: [ {user: a, password: a} ], exports: [ {stream: "private.>", accounts: [B]}, {service: "svc.secret", accounts: [B]} ] }
              B: { users: [ {user: b, password: b} ] }
              C: { users: [ {user: c, password: c} ], imports: [ {{import}} ] }
            }
            """;
        var e = await Assert.ThrowsAsync<InvalidOperationException>(() => _server.StartServerAsync(config));
        Assert.Contains(error, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_global_account_name_is_reserved()
    {
        var e = await Assert.ThrowsAsync<InvalidOperationException>(() => _server.StartServerAsync("accounts { $G: { users: [ {user: a, password: a} ] } }"));
        Assert.Contains("\"$G\" is a Reserved Account", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task No_auth_user_must_name_a_configured_user()
    {
        var e = await Assert.ThrowsAsync<InvalidOperationException>(() => _server.StartServerAsync("""
            accounts { A: { users: [ {user: a, password: a} ] } }
            no_auth_user: nobody
            """));
        Assert.Contains("no_auth_user: \"nobody\" not present as user", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task When_only_the_system_account_has_users_a_client_without_credentials_still_connects_into_the_global_account()
    {
        var p = Subjects.NewPrefix();
        await using var server = await _server.StartServerAsync("""
            accounts { SYS: { users: [ {user: admin, password: admin} ] } }
            system_account: SYS
            """);

        // nats-server adds an implicit no-auth user for the global account; INFO still says auth is required.
        await using var anonymous = await WireClient.ConnectAsync(server);
        Assert.True(anonymous.Info.GetProperty("auth_required").GetBoolean(), anonymous.InfoLine);
        await anonymous.HandshakeAsync();
        await anonymous.SendAsync($"SUB {p}.x 1\r\n");
        await anonymous.PingPongAsync();
        await using var other = await WireClient.ConnectAsync(server);
        await other.HandshakeAsync();
        await other.SendAsync($"PUB {p}.x 2\r\nhi\r\n");
        await other.PingPongAsync();
        Assert.Equal("hi", (await anonymous.ExpectMsgAsync()).PayloadText);

        // The system user still logs in, and a wrong password is still refused.
        await using var admin = await WireClient.ConnectAsync(server);
        await admin.HandshakeAsync("""{"verbose":false,"user":"admin","pass":"admin"}""");
        await using var wrong = await WireClient.ConnectAsync(server);
        await wrong.SendAsync("CONNECT {\"verbose\":false,\"user\":\"admin\",\"pass\":\"nope\"}\r\nPING\r\n");
        await wrong.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task With_another_account_configured_a_client_without_credentials_is_refused()
    {
        await using var server = await _server.StartServerAsync("""
            accounts {
              SYS: { users: [ {user: admin, password: admin} ] }
              A: { users: [ {user: a, password: a} ] }
            }
            system_account: SYS
            """);
        await using var anonymous = await WireClient.ConnectAsync(server);
        await anonymous.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n");
        await anonymous.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task A_user_configured_without_a_password_logs_in_with_its_name_alone()
    {
        await using var server = await _server.StartServerAsync("""
            authorization { users: [ {user: u, permissions: {publish: ">", subscribe: ">"}}, {user: p, password: secret}, {user: e, password: ""} ] }
            """);
        await using var named = await WireClient.ConnectAsync(server);
        await named.HandshakeAsync("""{"verbose":false,"user":"u"}""");
        await using var emptyPass = await WireClient.ConnectAsync(server);
        await emptyPass.HandshakeAsync("""{"verbose":false,"user":"u","pass":""}""");
        await using var configuredEmpty = await WireClient.ConnectAsync(server); // an empty password is no password
        await configuredEmpty.HandshakeAsync("""{"verbose":false,"user":"e"}""");

        // A password it does not have, or another user's name without that user's password, is refused.
        foreach (var connect in new[] { """{"verbose":false,"user":"u","pass":"x"}""", """{"verbose":false,"user":"p"}""", """{"verbose":false}""" })
        {
            await using var refused = await WireClient.ConnectAsync(server);
            await refused.SendAsync($"CONNECT {connect}\r\nPING\r\n");
            await refused.ExpectErrAndCloseAsync("Authorization Violation");
        }
    }

    [Fact]
    public async Task A_client_without_credentials_logs_in_as_the_no_auth_user_into_its_account()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var server = await _server.StartServerAsync("""
            accounts {
              A: { users: [ {user: a, password: a} ] }
              B: { users: [ {user: b, password: b} ] }
            }
            no_auth_user: b
            """);

        await using (var raw = await WireClient.ConnectAsync(server))
        {
            // nats-server: INFO says no authentication is needed when a no_auth_user is set.
            Assert.False(raw.Info.TryGetProperty("auth_required", out var required) && required.ValueKind == JsonValueKind.True, raw.InfoLine);
        }

        await using var anonymous = await AccountConfig.ConnectAsync(server.Url, null);
        await using var a = await AccountConfig.ConnectAsync(server.Url, "a");
        await using var b = await AccountConfig.ConnectAsync(server.Url, "b");
        await using var inB = await b.SubscribeCoreAsync<string>($"{p}.x", cancellationToken: cts.Token);
        await using var inA = await a.SubscribeCoreAsync<string>($"{p}.x", cancellationToken: cts.Token);
        await b.PingAsync(cts.Token);
        await a.PingAsync(cts.Token);

        await anonymous.PublishAsync($"{p}.x", "anonymous", cancellationToken: cts.Token);
        await a.PublishAsync($"{p}.x", "a", cancellationToken: cts.Token);
        Assert.Equal("anonymous", (await inB.Msgs.ReadAsync(cts.Token)).Data);
        Assert.Equal("a", (await inA.Msgs.ReadAsync(cts.Token)).Data);
        Assert.False(inB.Msgs.TryRead(out _));
    }
}

[Trait("server", "nats-server")]
public sealed class AccountConfigTests_NatsServer(NatsServerFixture server) : AccountConfigTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class AccountConfigTests_Courier(CourierFixture server) : AccountConfigTests<CourierFixture>(server);
