using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.NKeys;

namespace Courier.Integration.Tests.Identity;

/// <summary>NKey users: the nonce in INFO, the client's Ed25519 signature of it checked, each against a server of its own.</summary>
public abstract class NkeyTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;
    private readonly KeyPair _alice = KeyPair.CreatePair(PrefixByte.User);
    private readonly KeyPair _bob = KeyPair.CreatePair(PrefixByte.User);

    protected NkeyTests(TServer server)
    {
        _server = server;
    }

    private string Config => $$"""
        authorization {
          users: [
            { nkey: {{_alice.GetPublicKey()}} }
            { nkey: {{_bob.GetPublicKey()}}, permissions: { publish: "bob.>", subscribe: "bob.>" } }
          ]
        }
        """;

    private static string Connect(KeyPair key, string nonce) =>
        $$"""{"verbose":false,"pedantic":false,"nkey":"{{key.GetPublicKey()}}","sig":"{{TestJwt.SignNonce(key, nonce)}}"}""";

    [Fact]
    public async Task Info_carries_a_nonce_to_sign_when_nkey_users_are_configured()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await WireClient.ConnectAsync(server);

        Assert.True(c.Info.GetProperty("auth_required").GetBoolean(), c.InfoLine);
        Assert.Matches("^[A-Za-z0-9_-]{15}$", c.Info.GetProperty("nonce").GetString());
    }

    [Fact]
    public async Task Each_connection_gets_its_own_nonce()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var a = await WireClient.ConnectAsync(server);
        await using var b = await WireClient.ConnectAsync(server);

        Assert.NotEqual(a.Info.GetProperty("nonce").GetString(), b.Info.GetProperty("nonce").GetString());
    }

    [Fact]
    public async Task An_nkey_user_that_signs_the_nonce_is_accepted()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await WireClient.ConnectAsync(server);

        await c.SendAsync($"CONNECT {Connect(_alice, c.Info.GetProperty("nonce").GetString()!)}\r\nPING\r\n");
        await c.ExpectAsync("PONG\r\n");
    }

    [Fact]
    public async Task A_signature_by_another_key_is_refused_and_the_connection_closed()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await WireClient.ConnectAsync(server);
        var nonce = c.Info.GetProperty("nonce").GetString()!;

        var forged = $$"""{"verbose":false,"nkey":"{{_alice.GetPublicKey()}}","sig":"{{TestJwt.SignNonce(_bob, nonce)}}"}""";
        await c.SendAsync($"CONNECT {forged}\r\n");
        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Theory]
    [InlineData("")]
    [InlineData("not base64!")]
    public async Task A_missing_or_malformed_signature_is_refused(string sig)
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await WireClient.ConnectAsync(server);

        await c.SendAsync($$"""CONNECT {"verbose":false,"nkey":"{{_alice.GetPublicKey()}}","sig":"{{sig}}"}""" + "\r\n");
        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task An_nkey_that_is_not_configured_is_refused()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await WireClient.ConnectAsync(server);
        var stranger = KeyPair.CreatePair(PrefixByte.User);

        await c.SendAsync($"CONNECT {Connect(stranger, c.Info.GetProperty("nonce").GetString()!)}\r\n");
        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task An_nkey_users_permissions_apply()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await WireClient.ConnectAsync(server);
        await c.SendAsync($"CONNECT {Connect(_bob, c.Info.GetProperty("nonce").GetString()!)}\r\n");
        await c.PingPongAsync();

        await c.SendAsync("PUB alice.x 2\r\nhi\r\n");
        await c.ExpectAsync("-ERR 'Permissions Violation for Publish to \"alice.x\"'\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Nkey_users_of_two_accounts_do_not_see_each_others_messages()
    {
        var p = Subjects.NewPrefix();
        var carol = KeyPair.CreatePair(PrefixByte.User);
        await using var server = await _server.StartServerAsync($$"""
            accounts {
              A: { users: [ { nkey: {{_alice.GetPublicKey()}} }, { nkey: {{carol.GetPublicKey()}} } ] }
              B: { users: [ { nkey: {{_bob.GetPublicKey()}} } ] }
            }
            """);
        await using var alice = await WireClient.ConnectAsync(server);
        await alice.SendAsync($"CONNECT {Connect(_alice, alice.Info.GetProperty("nonce").GetString()!)}\r\nSUB {p} 1\r\n");
        await alice.PingPongAsync();
        await using var bob = await WireClient.ConnectAsync(server);
        await bob.SendAsync($"CONNECT {Connect(_bob, bob.Info.GetProperty("nonce").GetString()!)}\r\nPUB {p} 3\r\nbob\r\n");
        await bob.PingPongAsync();
        await using var sameAccount = await WireClient.ConnectAsync(server);
        await sameAccount.SendAsync($"CONNECT {Connect(carol, sameAccount.Info.GetProperty("nonce").GetString()!)}\r\nPUB {p} 5\r\ncarol\r\n");

        await alice.ExpectAsync($"MSG {p} 1 5\r\ncarol\r\n");
    }

    [Fact]
    public async Task NATS_Net_logs_in_with_an_nkey_seed_and_exchanges_messages()
    {
        var subject = Subjects.NewPrefix();
        await using var server = await _server.StartServerAsync(Config);
        await using var nats = new NatsConnection(new NatsOpts
        {
            Url = server.Url,
            MaxReconnectRetry = 0,
            AuthOpts = new NatsAuthOpts { NKey = _alice.GetPublicKey(), Seed = _alice.GetSeed() },
        });
        await nats.ConnectAsync();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);

        await using var sub = await nats.SubscribeCoreAsync<string>(subject, cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);
        await nats.PublishAsync(subject, "signed", cancellationToken: cts.Token);
        var msg = await sub.Msgs.ReadAsync(cts.Token);
        Assert.Equal("signed", msg.Data);
    }
}

[Trait("server", "nats-server")]
public sealed class NkeyTests_NatsServer(NatsServerFixture server) : NkeyTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NkeyTests_Courier(CourierFixture server) : NkeyTests<CourierFixture>(server);
