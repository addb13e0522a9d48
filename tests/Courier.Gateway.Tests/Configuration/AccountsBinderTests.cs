using Courier.Actors.Server;
using Courier.Gateway.Configuration;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

/// <summary><c>accounts { }</c>, <c>no_auth_user</c> and <c>allow_responses</c> bound as nats-server parses them.</summary>
public sealed class AccountsBinderTests
{
    private static ServerOptions Bind(string text)
    {
        var options = new ServerOptions();
        OptionsBinder.Bind(ConfigParser.Parse(text, "test.conf"), options);
        return options;
    }

    private static string BindFails(string text) => Assert.Throws<ConfigException>(() => Bind(text)).Message;

    [Fact]
    public void An_accounts_users_exports_imports_and_jetstream_limits_are_bound()
    {
        var options = Bind("""
            accounts {
              A: {
                users: [ {user: a, password: pa} ]
                exports: [ {stream: "s.>"}, {service: "q", response_type: chunked, accounts: [B]} ]
                jetstream: { max_mem: 1048576, max_file: 2048, max_streams: 3, max_consumers: 4, max_bytes_required: true }
                default_permissions: { publish: "x.>" }
              }
              B: { users: [ {user: b, password: pb} ], imports: [ {stream: {account: A, subject: "s.>"}, prefix: p}, {service: {account: A, subject: q}, to: r} ] }
            }
            no_auth_user: b
            """);

        Assert.Equal(["A", "B"], options.Accounts.Select(a => a.Name));
        var a = options.Accounts[0];
        Assert.Equal(new ExportOptions("s.>", false, ServiceResponseType.Singleton, null), a.Exports[0]);
        Assert.Equal("q", a.Exports[1].Subject);
        Assert.Equal(ServiceResponseType.Chunked, a.Exports[1].ResponseType);
        Assert.Equal(["B"], a.Exports[1].Accounts!);
        Assert.Equal(new AccountJetStreamLimits(1024 * 1024, 2048, 3, 4, true), a.JetStream);
        Assert.Equal(new ImportOptions(false, "A", "s.>", null, "p"), options.Accounts[1].Imports[0]);
        Assert.Equal(new ImportOptions(true, "A", "q", "r", null), options.Accounts[1].Imports[1]);
        var user = options.Users.Single(u => u.User == "a");
        Assert.Equal("A", user.Account);
        Assert.Equal(["x.>"], user.Permissions!.Publish!.Allow!);
        Assert.Equal("b", options.NoAuthUser);
    }

    [Theory]
    [InlineData("accounts { $G: {} }", "\"$G\" is a Reserved Account")]
    [InlineData("accounts { A: { users: [ {user: x} ] }\n B: { users: [ {user: x} ] } }", "Duplicate user \"x\" detected")]
    [InlineData("authorization { user: u, password: p }\naccounts { A: { users: [ {user: x} ] } }", "Can not have a single user/pass and accounts")]
    [InlineData("accounts { A: { exports: [ {stream: a, response_type: single} ] } }", "Detected response directive on non-service")]
    [InlineData("accounts { A: { exports: [ {service: a, response_type: sometimes} ] } }", "Unknown response type: \"sometimes\"")]
    [InlineData("accounts { A: { imports: [ {stream: {account: B}} ] } }", "Expect an account name and a subject")]
    [InlineData("accounts { A: { exports: [ {stream: a} ] }\n B: { imports: [ {stream: {account: A, subject: a}, prefix: p, to: t} ] } }", "Stream import can not have a 'prefix' and a 'to' property")]
    [InlineData("accounts { A: { exports: [ {stream: \"a.*\"} ] }\n B: { imports: [ {stream: {account: A, subject: \"a.>\"}} ] } }", "Error adding stream import \"a.>\": stream import not authorized")]
    [InlineData("accounts { A: { exports: [ {service: q} ] }\n B: { imports: [ {service: {account: A, subject: q}, to: r}, {service: {account: A, subject: q}, to: r} ] } }", "Duplicate service import subject \"r\"")]
    [InlineData("accounts { A: { jetstream: sometimes } }", "Expected 'enabled' or 'disabled' for string value, got 'sometimes'")]
    [InlineData("accounts { A: { users: [ {user: a} ] } }\nno_auth_user: z", "no_auth_user: \"z\" not present as user in authorization block or account configuration")]
    [InlineData("authorization { users: [ {user: a, permissions: { allow_responses: { max: 1, expires: soon } } } ] }", "error parsing expires")]
    public void Account_configurations_nats_server_refuses_are_refused_with_its_error(string config, string error)
    {
        Assert.Contains(error, BindFails(config), StringComparison.Ordinal);
    }

    [Fact]
    public void Allow_responses_with_max_and_expires_turns_off_the_blanket_publish_allow()
    {
        var options = Bind("authorization { users: [ {user: a, permissions: { subscribe: \"req.>\", allow_responses: { max: 3, expires: \"30s\" } } } ] }");

        var permissions = options.Users[0].Permissions!;
        Assert.Equal(new ResponsePermission(3, TimeSpan.FromSeconds(30)), permissions.Responses);
        Assert.Empty(permissions.Publish!.Allow!);
    }
}
