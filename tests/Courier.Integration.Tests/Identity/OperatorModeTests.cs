using System.Text.Json.Nodes;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.NKeys;

namespace Courier.Integration.Tests.Identity;

/// <summary>
/// JWT operator mode with a preloaded MEMORY resolver: operator, accounts and users made by the test,
/// the same config text for both servers; clients log in with a user JWT and a signature of the nonce.
/// </summary>
public abstract class OperatorModeTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;
    private readonly TestOperator _operator = new();

    protected OperatorModeTests(TServer server)
    {
        _server = server;
    }

    private async Task<WireClient> ConnectAsync(ServerProcess server, TestUser user)
    {
        var c = await WireClient.ConnectAsync(server);
        await c.SendAsync($"CONNECT {user.Connect(c.Info.GetProperty("nonce").GetString()!)}\r\n");
        return c;
    }

    [Fact]
    public async Task Info_asks_for_authentication_with_a_nonce()
    {
        await using var server = await _server.StartServerAsync(_operator.Config([]));
        await using var c = await WireClient.ConnectAsync(server);

        Assert.True(c.Info.GetProperty("auth_required").GetBoolean(), c.InfoLine);
        Assert.Matches("^[A-Za-z0-9_-]{15}$", c.Info.GetProperty("nonce").GetString());
    }

    [Fact]
    public async Task A_user_JWT_signed_over_the_nonce_is_accepted_and_exchanges_messages()
    {
        var p = Subjects.NewPrefix();
        var account = _operator.NewAccount("A");
        await using var server = await _server.StartServerAsync(_operator.Config([account]));
        await using var sub = await ConnectAsync(server, TestOperator.NewUser(account));
        await using var pub = await ConnectAsync(server, TestOperator.NewUser(account));

        await sub.SendAsync($"SUB {p} 1\r\n");
        await sub.PingPongAsync();
        await pub.SendAsync($"PUB {p} 2\r\nhi\r\n");
        await sub.ExpectAsync($"MSG {p} 1 2\r\nhi\r\n");
    }

    [Fact]
    public async Task Users_of_two_accounts_do_not_see_each_others_messages()
    {
        var p = Subjects.NewPrefix();
        var a = _operator.NewAccount("A");
        var b = _operator.NewAccount("B");
        await using var server = await _server.StartServerAsync(_operator.Config([a, b]));
        await using var subscriber = await ConnectAsync(server, TestOperator.NewUser(a));
        await using var sameAccount = await ConnectAsync(server, TestOperator.NewUser(a));
        await using var otherAccount = await ConnectAsync(server, TestOperator.NewUser(b));
        await subscriber.SendAsync($"SUB {p} 1\r\n");
        await subscriber.PingPongAsync();

        // B's message is processed first (its PONG comes after it), then A's: only A's arrives.
        await otherAccount.SendAsync($"PUB {p} 4\r\nfrom\r\n");
        await otherAccount.PingPongAsync();
        await sameAccount.SendAsync($"PUB {p} 1\r\na\r\n");
        await subscriber.ExpectAsync($"MSG {p} 1 1\r\na\r\n");
    }

    [Fact]
    public async Task A_service_exported_by_one_account_JWT_answers_requests_of_an_importing_account()
    {
        var p = Subjects.NewPrefix();
        var exporter = _operator.NewAccount("A", nats => nats["exports"] = new JsonArray(
            new JsonObject { ["name"] = "echo", ["subject"] = $"{p}.echo", ["type"] = "service" }));
        var importer = _operator.NewAccount("B", nats => nats["imports"] = new JsonArray(
            new JsonObject { ["name"] = "echo", ["subject"] = $"{p}.echo", ["account"] = exporter.PublicKey, ["local_subject"] = $"{p}.local", ["type"] = "service" }));
        await using var server = await _server.StartServerAsync(_operator.Config([exporter, importer]));
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var service = await ConnectNatsNetAsync(server, TestOperator.NewUser(exporter));
        await using var client = await ConnectNatsNetAsync(server, TestOperator.NewUser(importer));

        await using var requests = await service.SubscribeCoreAsync<string>($"{p}.echo", cancellationToken: cts.Token);
        await service.PingAsync(cts.Token);
        var answering = Task.Run(async () =>
        {
            var request = await requests.Msgs.ReadAsync(cts.Token);
            await request.ReplyAsync("echo: " + request.Data, cancellationToken: cts.Token);
        });
        var reply = await client.RequestAsync<string, string>($"{p}.local", "hi", cancellationToken: cts.Token);
        await answering;

        Assert.Equal("echo: hi", reply.Data);
    }

    [Fact]
    public async Task A_stream_exported_by_one_account_JWT_reaches_an_importing_account_only()
    {
        var p = Subjects.NewPrefix();
        var exporter = _operator.NewAccount("A", nats => nats["exports"] = new JsonArray(
            new JsonObject { ["name"] = "events", ["subject"] = $"{p}.events.>", ["type"] = "stream" }));
        var importer = _operator.NewAccount("B", nats => nats["imports"] = new JsonArray(
            new JsonObject { ["name"] = "events", ["subject"] = $"{p}.events.>", ["account"] = exporter.PublicKey, ["type"] = "stream" }));
        var outsider = _operator.NewAccount("C");
        await using var server = await _server.StartServerAsync(_operator.Config([exporter, importer, outsider]));
        await using var subscriber = await ConnectAsync(server, TestOperator.NewUser(importer));
        await using var bystander = await ConnectAsync(server, TestOperator.NewUser(outsider));
        await using var publisher = await ConnectAsync(server, TestOperator.NewUser(exporter));
        await subscriber.SendAsync($"SUB {p}.events.> 1\r\n");
        await subscriber.PingPongAsync();
        await bystander.SendAsync($"SUB {p}.events.> 1\r\n");
        await bystander.PingPongAsync();

        await publisher.SendAsync($"PUB {p}.events.x 2\r\nev\r\n");
        await publisher.PingPongAsync();
        await subscriber.ExpectAsync($"MSG {p}.events.x 1 2\r\nev\r\n");
        await bystander.PingPongAsync(); // nothing but the PONG: the outsider imports nothing
    }

    private static async Task<NatsConnection> ConnectNatsNetAsync(ServerProcess server, TestUser user)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = server.Url,
            MaxReconnectRetry = 0,
            RequestTimeout = TimeSpan.FromSeconds(10),
            AuthOpts = new NatsAuthOpts { Jwt = user.Jwt, Seed = user.Key.GetSeed() },
        });
        await nats.ConnectAsync();
        return nats;
    }

    [Theory]
    [InlineData("full")]
    [InlineData("cache")]
    public async Task A_directory_resolver_finds_accounts_in_their_jwt_files(string type)
    {
        var dir = Directory.CreateTempSubdirectory("courier-resolver-").FullName;
        try
        {
            var account = _operator.NewAccount("A");
            var missing = _operator.NewAccount("B");
            await using var server = await _server.StartServerAsync(_operator.DirectoryConfig([account], dir, type));

            await using var c = await ConnectAsync(server, TestOperator.NewUser(account));
            await c.PingPongAsync();
            await using var refused = await ConnectAsync(server, TestOperator.NewUser(missing));
            await refused.ExpectErrAndCloseAsync("Authorization Violation");
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Theory]
    [InlineData("garbage")]
    [InlineData("a.b.c")]
    [InlineData("eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJpc3MiOm51bGwsIm5hdHMiOm51bGx9.AAAA")]
    [InlineData("eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJpc3MiOiJBQkMiLCJzdWIiOiJVIn0.AAAA")]
    public async Task A_malformed_user_JWT_is_refused_and_the_server_keeps_serving(string jwt)
    {
        var account = _operator.NewAccount("A");
        await using var server = await _server.StartServerAsync(_operator.Config([account]));
        await using var c = await WireClient.ConnectAsync(server);

        await c.SendAsync($$"""CONNECT {"verbose":false,"jwt":"{{jwt}}","sig":"AAAA"}""" + "\r\n");
        await c.ExpectErrAndCloseAsync("Authorization Violation");
        await using var next = await ConnectAsync(server, TestOperator.NewUser(account));
        await next.PingPongAsync();
    }

    [Fact]
    public async Task A_connect_without_a_JWT_is_refused()
    {
        await using var server = await _server.StartServerAsync(_operator.Config([]));
        await using var c = await WireClient.ConnectAsync(server);

        await c.SendAsync("CONNECT {\"verbose\":false,\"user\":\"a\",\"pass\":\"b\"}\r\n");
        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task A_user_JWT_with_a_signature_of_another_key_is_refused()
    {
        var account = _operator.NewAccount("A");
        var user = TestOperator.NewUser(account);
        var impostor = KeyPair.CreatePair(PrefixByte.User);
        await using var server = await _server.StartServerAsync(_operator.Config([account]));
        await using var c = await WireClient.ConnectAsync(server);
        var nonce = c.Info.GetProperty("nonce").GetString()!;

        await c.SendAsync($$"""CONNECT {"verbose":false,"jwt":"{{user.Jwt}}","sig":"{{TestJwt.SignNonce(impostor, nonce)}}"}""" + "\r\n");
        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task A_user_JWT_not_signed_by_its_account_is_refused()
    {
        var account = _operator.NewAccount("A");
        var user = TestOperator.NewUser(account);
        var rogue = KeyPair.CreatePair(PrefixByte.Account);
        var signed = user.Jwt[..user.Jwt.LastIndexOf('.')];
        var signature = new byte[64];
        rogue.Sign(System.Text.Encoding.ASCII.GetBytes(signed), signature);
        var forged = user with { Jwt = signed + "." + System.Buffers.Text.Base64Url.EncodeToString(signature) };
        await using var server = await _server.StartServerAsync(_operator.Config([account]));
        await using var c = await ConnectAsync(server, forged);

        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task A_user_of_an_account_the_resolver_does_not_know_is_refused()
    {
        var known = _operator.NewAccount("A");
        var unknown = _operator.NewAccount("B");
        await using var server = await _server.StartServerAsync(_operator.Config([known]));
        await using var c = await ConnectAsync(server, TestOperator.NewUser(unknown));

        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task An_account_issued_by_another_operator_is_not_trusted()
    {
        var stranger = new TestOperator();
        var account = stranger.NewAccount("A");
        await using var server = await _server.StartServerAsync(_operator.Config([account]));
        await using var c = await ConnectAsync(server, TestOperator.NewUser(account));

        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task An_expired_user_JWT_is_refused_at_connect()
    {
        var account = _operator.NewAccount("A");
        var expired = TestOperator.NewUser(account, expires: TestJwt.Now - 60, issuedAt: TestJwt.Now - 120);
        await using var server = await _server.StartServerAsync(_operator.Config([account]));
        await using var c = await ConnectAsync(server, expired);

        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task A_user_JWT_that_expires_closes_the_connection_with_User_Authentication_Expired()
    {
        var account = _operator.NewAccount("A");
        var user = TestOperator.NewUser(account, expires: TestJwt.Now + 3);
        await using var server = await _server.StartServerAsync(_operator.Config([account]));
        await using var c = await ConnectAsync(server, user);
        await c.PingPongAsync();

        // Expires within 3 s (whole seconds); the wait is bounded at 20 s for a loaded machine.
        c.Timeout = TimeSpan.FromSeconds(20);
        await c.ExpectErrAndCloseAsync("User Authentication Expired");
    }

    [Fact]
    public async Task A_revoked_user_is_refused_and_other_users_of_the_account_are_not()
    {
        var revokedUser = KeyPair.CreatePair(PrefixByte.User);
        var revokedAt = TestJwt.Now;
        var account = _operator.NewAccount("A", nats => nats["revocations"] = new JsonObject { [revokedUser.GetPublicKey()] = revokedAt });
        var revoked = new TestUser(revokedUser, TestJwt.Encode(account.Key, new JsonObject
        {
            ["sub"] = revokedUser.GetPublicKey(),
            ["iat"] = revokedAt - 10,
            ["nats"] = TestOperator.UserNats(),
        }));
        await using var server = await _server.StartServerAsync(_operator.Config([account]));

        await using var refused = await ConnectAsync(server, revoked);
        await refused.ExpectErrAndCloseAsync("Authorization Violation");
        await using var other = await ConnectAsync(server, TestOperator.NewUser(account));
        await other.PingPongAsync();
    }

    [Fact]
    public async Task A_bearer_token_user_connects_without_a_signature()
    {
        var account = _operator.NewAccount("A");
        var bearer = TestOperator.NewUser(account, nats => nats["bearer_token"] = true);
        var signing = TestOperator.NewUser(account);
        await using var server = await _server.StartServerAsync(_operator.Config([account]));

        await using var c = await WireClient.ConnectAsync(server);
        await c.SendAsync($$"""CONNECT {"verbose":false,"jwt":"{{bearer.Jwt}}"}""" + "\r\nPING\r\n");
        await c.ExpectAsync("PONG\r\n");

        // Without bearer_token the signature stays required.
        await using var unsigned = await WireClient.ConnectAsync(server);
        await unsigned.SendAsync($$"""CONNECT {"verbose":false,"jwt":"{{signing.Jwt}}"}""" + "\r\n");
        await unsigned.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task The_user_JWTs_publish_and_subscribe_permissions_apply()
    {
        var p = Subjects.NewPrefix();
        var account = _operator.NewAccount("A");
        var user = TestOperator.NewUser(account, nats =>
        {
            nats["pub"] = new JsonObject { ["allow"] = new JsonArray($"{p}.allowed.>") };
            nats["sub"] = new JsonObject { ["deny"] = new JsonArray($"{p}.secret") };
        });
        await using var server = await _server.StartServerAsync(_operator.Config([account]));
        await using var c = await ConnectAsync(server, user);
        await c.PingPongAsync();

        await c.SendAsync($"PUB {p}.other 2\r\nhi\r\n");
        await c.ExpectAsync($"-ERR 'Permissions Violation for Publish to \"{p}.other\"'\r\n");
        await c.SendAsync($"SUB {p}.secret 1\r\n");
        await c.ExpectAsync($"-ERR 'Permissions Violation for Subscription to \"{p}.secret\"'\r\n");
        await c.SendAsync($"SUB {p}.allowed.x 2\r\nPUB {p}.allowed.x 2\r\nok\r\n");
        await c.ExpectAsync($"MSG {p}.allowed.x 2 2\r\nok\r\n");
    }

    [Fact]
    public async Task A_user_issued_by_an_account_signing_key_is_accepted()
    {
        var signingKey = KeyPair.CreatePair(PrefixByte.Account);
        var account = _operator.NewAccount("A", nats => nats["signing_keys"] = new JsonArray(signingKey.GetPublicKey()));
        var user = TestOperator.NewUser(account, signingKey: signingKey);
        var stranger = KeyPair.CreatePair(PrefixByte.Account);
        var unknownSigner = TestOperator.NewUser(account, signingKey: stranger);
        await using var server = await _server.StartServerAsync(_operator.Config([account]));

        await using var c = await ConnectAsync(server, user);
        await c.PingPongAsync();
        await using var refused = await ConnectAsync(server, unknownSigner);
        await refused.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task A_user_outside_its_source_networks_is_refused()
    {
        var account = _operator.NewAccount("A");
        var elsewhere = TestOperator.NewUser(account, nats => nats["src"] = new JsonArray("10.0.0.0/8"));
        var loopback = TestOperator.NewUser(account, nats => nats["src"] = new JsonArray("10.0.0.0/8", "127.0.0.0/8"));
        await using var server = await _server.StartServerAsync(_operator.Config([account]));

        await using var refused = await ConnectAsync(server, elsewhere);
        await refused.ExpectErrAndCloseAsync("Authorization Violation");
        await using var accepted = await ConnectAsync(server, loopback);
        await accepted.PingPongAsync();
    }

    [Fact]
    public async Task A_user_allowed_only_over_websocket_is_refused_on_the_client_port()
    {
        var account = _operator.NewAccount("A");
        var user = TestOperator.NewUser(account, nats => nats["allowed_connection_types"] = new JsonArray("WEBSOCKET"));
        await using var server = await _server.StartServerAsync(_operator.Config([account]));
        await using var c = await ConnectAsync(server, user);

        await c.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task The_accounts_connection_limit_refuses_one_connection_too_many()
    {
        var account = _operator.NewAccount("A", nats => nats["limits"]!["conn"] = 1);
        await using var server = await _server.StartServerAsync(_operator.Config([account]));
        await using var first = await ConnectAsync(server, TestOperator.NewUser(account));
        await first.PingPongAsync();

        await using var second = await ConnectAsync(server, TestOperator.NewUser(account));
        await second.ExpectErrAndCloseAsync("maximum account active connections exceeded");
        await first.PingPongAsync();
    }

    [Fact]
    public async Task NATS_Net_connects_with_a_creds_file_to_an_operator_read_from_a_file()
    {
        var dir = Directory.CreateTempSubdirectory("courier-creds-").FullName;
        try
        {
            var subject = Subjects.NewPrefix();
            var account = _operator.NewAccount("A");
            var user = TestOperator.NewUser(account);
            var operatorFile = Path.Combine(dir, "operator.jwt");
            await File.WriteAllTextAsync(operatorFile, _operator.Jwt);
            var credsFile = Path.Combine(dir, "user.creds");
            await File.WriteAllTextAsync(credsFile, TestJwt.Creds(user.Jwt, user.Key));
            await using var server = await _server.StartServerAsync(_operator.Config([account], operatorFile));

            await using var nats = new NatsConnection(new NatsOpts
            {
                Url = server.Url,
                MaxReconnectRetry = 0,
                AuthOpts = new NatsAuthOpts { CredsFile = credsFile },
            });
            await nats.ConnectAsync();
            using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
            await using var sub = await nats.SubscribeCoreAsync<string>(subject, cancellationToken: cts.Token);
            await nats.PingAsync(cts.Token);
            await nats.PublishAsync(subject, "with creds", cancellationToken: cts.Token);
            Assert.Equal("with creds", (await sub.Msgs.ReadAsync(cts.Token)).Data);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public async Task Nats_js_connects_with_a_creds_file_and_a_revoked_one_is_refused()
    {
        var dir = Directory.CreateTempSubdirectory("courier-creds-").FullName;
        try
        {
            var revokedKey = KeyPair.CreatePair(PrefixByte.User);
            var now = TestJwt.Now;
            var account = _operator.NewAccount("A", nats => nats["revocations"] = new JsonObject { [revokedKey.GetPublicKey()] = now });
            var user = TestOperator.NewUser(account);
            var revokedJwt = TestJwt.Encode(account.Key, new JsonObject
            {
                ["sub"] = revokedKey.GetPublicKey(),
                ["iat"] = now - 10,
                ["nats"] = TestOperator.UserNats(),
            });
            var credsFile = Path.Combine(dir, "user.creds");
            var revokedFile = Path.Combine(dir, "revoked.creds");
            await File.WriteAllTextAsync(credsFile, TestJwt.Creds(user.Jwt, user.Key));
            await File.WriteAllTextAsync(revokedFile, TestJwt.Creds(revokedJwt, revokedKey));
            await using var server = await _server.StartServerAsync(_operator.Config([account]));

            await NodeScript.RunAsync("auth_creds", server, new Dictionary<string, string>
            {
                ["NATS_CREDS"] = credsFile,
                ["NATS_REVOKED_CREDS"] = revokedFile,
            });
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public async Task An_account_JWT_with_JetStream_limits_gets_streams_and_jsz_names_it_by_its_JWT_name()
    {
        // nsc's "unlimited" JetStream limits in the account JWT enable JetStream for the account.
        var account = _operator.NewAccount("TeamA", nats =>
        {
            var limits = nats["limits"]!.AsObject();
            limits["mem_storage"] = -1;
            limits["disk_storage"] = -1;
            limits["streams"] = -1;
            limits["consumer"] = -1;
        });
        await _server.WithJetStreamAsync(
            async server =>
            {
                var p = Subjects.NewPrefix();
                await using var c = await ConnectAsync(server, TestOperator.NewUser(account));
                await c.SendAsync($"SUB {p}.reply 1\r\n");
                var create = $$"""{"name":"ORDERS","subjects":["{{p}}.orders.>"],"storage":"file"}""";
                await c.SendAsync($"PUB $JS.API.STREAM.CREATE.ORDERS {p}.reply {create.Length}\r\n{create}\r\n");
                var created = await c.ExpectMsgAsync();
                Assert.Contains("io.nats.jetstream.api.v1.stream_create_response", created.PayloadText, StringComparison.Ordinal);
                Assert.DoesNotContain("\"error\"", created.PayloadText, StringComparison.Ordinal);

                // nats-server's accountDetail: the JWT's name as name, the public key as id.
                using var monitor = new MonitorClient(server);
                var jsz = await monitor.GetJsonAsync("/jsz?accounts=true&streams=true");
                var detail = Assert.Single(jsz.GetProperty("account_details").EnumerateArray());
                Assert.Equal("TeamA", detail.GetProperty("name").GetString());
                Assert.Equal(account.PublicKey, detail.GetProperty("id").GetString());
                Assert.Equal("ORDERS", Assert.Single(detail.GetProperty("stream_detail").EnumerateArray()).GetProperty("name").GetString());
            },
            _operator.Config([account]));
    }
}

[Trait("server", "nats-server")]
public sealed class OperatorModeTests_NatsServer(NatsServerFixture server) : OperatorModeTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class OperatorModeTests_Courier(CourierFixture server) : OperatorModeTests<CourierFixture>(server);
