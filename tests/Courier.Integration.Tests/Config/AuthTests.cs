using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Config;

/// <summary>User/password and token authorization, each against a server started with its own config file.</summary>
public abstract class AuthTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string UserPasswordConfig = """
        authorization {
          user: alice
          password: "s3cret pass"
        }
        """;

    private const string UsersConfig = """
        authorization {
          users = [
            { user: alice, password: apw }
            { user: bob, password: bpw }
          ]
        }
        """;

    private const string TokenConfig = """
        authorization {
          token: "t0k3n-value"
        }
        """;

    private const string ShortTimeoutConfig = """
        authorization {
          user: alice
          password: apw
          timeout: 0.5
        }
        """;

    private readonly TServer _server;

    protected AuthTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Info_says_auth_required_when_authorization_is_configured()
    {
        await using var server = await _server.StartServerAsync(UserPasswordConfig);
        await using var c = await WireClient.ConnectAsync(server);

        Assert.True(
            c.Info.TryGetProperty("auth_required", out var auth) && auth.ValueKind == JsonValueKind.True,
            $"INFO was {c.InfoLine}");
    }

    [Fact]
    public async Task Correct_user_and_password_are_accepted()
    {
        await using var server = await _server.StartServerAsync(UserPasswordConfig);
        await using var c = await WireClient.ConnectAsync(server);

        await c.SendAsync("CONNECT {\"verbose\":true,\"pedantic\":false,\"user\":\"alice\",\"pass\":\"s3cret pass\"}\r\nPING\r\n");
        await c.ExpectAsync("+OK\r\nPONG\r\n");
    }

    [Theory]
    [InlineData("{\"verbose\":false,\"user\":\"alice\",\"pass\":\"wrong\"}")]
    [InlineData("{\"verbose\":false,\"user\":\"mallory\",\"pass\":\"s3cret pass\"}")]
    [InlineData("{\"verbose\":false,\"user\":\"alice\"}")]
    [InlineData("{\"verbose\":false}")]
    [InlineData("{\"verbose\":false,\"auth_token\":\"s3cret pass\"}")]
    public async Task Wrong_or_missing_credentials_are_rejected_and_the_connection_closed(string connect)
    {
        await using var server = await _server.StartServerAsync(UserPasswordConfig);
        await using var c = await WireClient.ConnectAsync(server);

        await c.SendAsync($"CONNECT {connect}\r\n");
        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task Each_user_of_a_users_list_logs_in_with_its_own_password_only()
    {
        await using var server = await _server.StartServerAsync(UsersConfig);
        await using var alice = await WireClient.ConnectAsync(server);
        await using var bob = await WireClient.ConnectAsync(server);
        await using var mixed = await WireClient.ConnectAsync(server);

        await alice.HandshakeAsync("{\"verbose\":false,\"user\":\"alice\",\"pass\":\"apw\"}");
        await bob.HandshakeAsync("{\"verbose\":false,\"user\":\"bob\",\"pass\":\"bpw\"}");
        await mixed.SendAsync("CONNECT {\"verbose\":false,\"user\":\"bob\",\"pass\":\"apw\"}\r\n");
        await mixed.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task Authenticated_users_exchange_messages()
    {
        var p = Subjects.NewPrefix();
        await using var server = await _server.StartServerAsync(UsersConfig);
        await using var alice = await WireClient.ConnectAsync(server);
        await using var bob = await WireClient.ConnectAsync(server);
        await alice.HandshakeAsync("{\"verbose\":false,\"user\":\"alice\",\"pass\":\"apw\"}");
        await bob.HandshakeAsync("{\"verbose\":false,\"user\":\"bob\",\"pass\":\"bpw\"}");

        await alice.SendAsync($"SUB {p} 1\r\n");
        await alice.PingPongAsync();
        await bob.SendAsync($"PUB {p} 2\r\nhi\r\n");
        await alice.ExpectAsync($"MSG {p} 1 2\r\nhi\r\n");
    }

    [Fact]
    public async Task Correct_token_is_accepted()
    {
        await using var server = await _server.StartServerAsync(TokenConfig);
        await using var c = await WireClient.ConnectAsync(server);

        Assert.True(c.Info.GetProperty("auth_required").GetBoolean(), $"INFO was {c.InfoLine}");
        await c.HandshakeAsync("{\"verbose\":false,\"auth_token\":\"t0k3n-value\"}");
    }

    [Theory]
    [InlineData("{\"verbose\":false,\"auth_token\":\"t0k3n-wrong\"}")]
    [InlineData("{\"verbose\":false,\"user\":\"t0k3n-value\"}")]
    [InlineData("{\"verbose\":false}")]
    public async Task Wrong_or_missing_token_is_rejected_and_the_connection_closed(string connect)
    {
        await using var server = await _server.StartServerAsync(TokenConfig);
        await using var c = await WireClient.ConnectAsync(server);

        await c.SendAsync($"CONNECT {connect}\r\n");
        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Theory]
    [InlineData("PING\r\n")]
    [InlineData("SUB foo 1\r\n")]
    [InlineData("PUB foo 2\r\nhi\r\n")]
    public async Task Commands_before_connect_are_rejected_when_auth_is_required(string command)
    {
        await using var server = await _server.StartServerAsync(UserPasswordConfig);
        await using var c = await WireClient.ConnectAsync(server);

        await c.SendAsync(command);
        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task Client_that_never_sends_connect_gets_an_authentication_timeout()
    {
        await using var server = await _server.StartServerAsync(ShortTimeoutConfig);
        await using var c = await WireClient.ConnectAsync(server);

        // authorization.timeout is 0.5 s; the wait is bounded by the client's 5 s.
        await c.ExpectErrAndCloseAsync("Authentication Timeout");
    }

    [Fact]
    public async Task Client_that_connects_in_time_is_not_timed_out()
    {
        await using var server = await _server.StartServerAsync(ShortTimeoutConfig);
        await using var c = await WireClient.ConnectAsync(server);
        await c.HandshakeAsync("{\"verbose\":false,\"user\":\"alice\",\"pass\":\"apw\"}");

        // Well past the 0.5 s auth timeout: a PING round trip still works. (Waiting is the point here.)
        await Task.Delay(TimeSpan.FromSeconds(1.5));
        await c.PingPongAsync();
    }
}

[Trait("server", "nats-server")]
public sealed class AuthTests_NatsServer(NatsServerFixture server) : AuthTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class AuthTests_Courier(CourierFixture server) : AuthTests<CourierFixture>(server);
