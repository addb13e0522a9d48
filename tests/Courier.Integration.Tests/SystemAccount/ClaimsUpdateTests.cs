using System.Text.Json;
using Courier.Integration.Tests.Identity;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.SystemAccount;

/// <summary>
/// Operator mode with the full directory resolver: a system-account user pushes an account JWT with
/// <c>$SYS.REQ.CLAIMS.UPDATE</c> (or the account's own subject); it is stored and answered as
/// nats-server 2.9.10 answers, and the account's users can connect from then on.
/// </summary>
public abstract class ClaimsUpdateTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;
    private readonly TestOperator _operator = new();

    protected ClaimsUpdateTests(TServer server)
    {
        _server = server;
    }

    private static async Task<NatsConnection> ConnectAsync(ServerProcess server, TestUser user)
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


    private async Task WithDirectoryServerAsync(Func<ServerProcess, string, Task> test)
    {
        var dir = Directory.CreateTempSubdirectory("courier-claims-").FullName;
        try
        {
            await using var server = await _server.StartServerAsync(_operator.DirectoryConfig([], dir));
            await test(server, dir);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public Task A_pushed_account_JWT_is_stored_and_lets_its_users_connect() => WithDirectoryServerAsync(async (server, dir) =>
    {
        var p = Subjects.NewPrefix();
        var account = _operator.NewAccount("PUSHED");
        var user = TestOperator.NewUser(account);
        await Assert.ThrowsAnyAsync<NatsException>(async () => await ConnectAsync(server, user)); // not known yet

        await using var sys = await ConnectAsync(server, TestOperator.NewUser(_operator.System));
        var answer = await NatsJson.RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", account.Jwt);
        Assert.Equal(JsonValueKind.Object, answer.GetProperty("server").ValueKind);
        var data = answer.GetProperty("data");
        Assert.Equal(account.PublicKey, data.GetProperty("account").GetString());
        Assert.Equal(200, data.GetProperty("code").GetInt32());
        Assert.Equal("jwt updated", data.GetProperty("message").GetString());
        Assert.Equal(account.Jwt, File.ReadAllText(Path.Combine(dir, account.PublicKey + ".jwt")).Trim());

        await using var client = await ConnectAsync(server, user);
        await using var sub = await client.SubscribeCoreAsync<string>($"{p}.x");
        await client.PingAsync();
        await client.PublishAsync($"{p}.x", "works");
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        Assert.Equal("works", (await sub.Msgs.ReadAsync(cts.Token)).Data);
    });

    [Fact]
    public async Task A_pushed_account_JWT_with_JetStream_limits_gives_its_users_JetStream_and_one_without_gets_not_enabled()
    {
        var dir = Directory.CreateTempSubdirectory("courier-claims-").FullName;
        var storeDir = Directory.CreateTempSubdirectory("courier-claims-js-").FullName;
        try
        {
            await using var server = await _server.StartServerAsync(_operator.DirectoryConfig([], dir), "-js", "-sd", storeDir);
            var p = Subjects.NewPrefix();
            var withJs = _operator.NewAccount("STREAMS", nats =>
            {
                var limits = nats["limits"]!.AsObject();
                limits["mem_storage"] = -1;
                limits["disk_storage"] = -1;
                limits["streams"] = -1;
                limits["consumer"] = -1;
            });
            var without = _operator.NewAccount("PLAIN");
            await using (var sys = await ConnectAsync(server, TestOperator.NewUser(_operator.System)))
            {
                Assert.Equal(200, (await NatsJson.RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", withJs.Jwt)).GetProperty("data").GetProperty("code").GetInt32());
                Assert.Equal(200, (await NatsJson.RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", without.Jwt)).GetProperty("data").GetProperty("code").GetInt32());
            }

            // The first user of the pushed account creates a stream and publishes to it, as soon as it is connected.
            await using (var client = await ConnectAsync(server, TestOperator.NewUser(withJs)))
            {
                using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
                var js = new NatsJSContext(client);
                await js.CreateStreamAsync(new StreamConfig("LATE", [$"{p}.late.>"]), cts.Token);
                var ack = await js.PublishAsync($"{p}.late.1", "stored", cancellationToken: cts.Token);
                ack.EnsureSuccess();
                Assert.Equal(1UL, ack.Seq);
            }

            // The other account's JWT has no JetStream limits: nats-server's "not enabled for account".
            await using var plain = await ConnectAsync(server, TestOperator.NewUser(without));
            var info = await NatsJson.RequestAsync(plain, "$JS.API.INFO", "");
            var error = info.GetProperty("error");
            Assert.Equal(503, error.GetProperty("code").GetInt32());
            Assert.Equal(10039, error.GetProperty("err_code").GetInt32());
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public Task An_update_on_the_accounts_own_subject_is_answered_and_one_for_another_account_is_refused() => WithDirectoryServerAsync(async (server, unusedDir) =>
    {
        var account = _operator.NewAccount("OWN");
        var other = _operator.NewAccount("OTHER");
        await using var sys = await ConnectAsync(server, TestOperator.NewUser(_operator.System));

        var ok = await NatsJson.RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{account.PublicKey}.CLAIMS.UPDATE", account.Jwt);
        Assert.Equal("jwt updated", ok.GetProperty("data").GetProperty("message").GetString());

        var mismatch = await NatsJson.RequestAsync(sys, $"$SYS.REQ.ACCOUNT.{account.PublicKey}.CLAIMS.UPDATE", other.Jwt);
        var error = mismatch.GetProperty("error");
        Assert.Equal(account.PublicKey, error.GetProperty("account").GetString());
        Assert.Equal(500, error.GetProperty("code").GetInt32());
        Assert.Equal("jwt update resulted in error - subject does not match jwt content", error.GetProperty("description").GetString());
        Assert.False(mismatch.TryGetProperty("data", out _));
    });

    [Fact]
    public Task A_push_that_is_not_an_account_JWT_gets_the_error_form() => WithDirectoryServerAsync(async (server, unusedDir) =>
    {
        await using var sys = await ConnectAsync(server, TestOperator.NewUser(_operator.System));

        var answer = await NatsJson.RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", "not-a-jwt");
        var error = answer.GetProperty("error");
        Assert.Equal("n/a", error.GetProperty("account").GetString());
        Assert.Equal(500, error.GetProperty("code").GetInt32());
        Assert.StartsWith("jwt update resulted in error - ", error.GetProperty("description").GetString(), StringComparison.Ordinal);
    });

    [Fact]
    public Task A_pushed_JWT_that_revokes_a_user_closes_its_connection_and_refuses_the_next() => WithDirectoryServerAsync(async (server, unusedDir) =>
    {
        var account = _operator.NewAccount("REV");
        await using var sys = await ConnectAsync(server, TestOperator.NewUser(_operator.System));
        Assert.Equal(200, (await NatsJson.RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", account.Jwt)).GetProperty("data").GetProperty("code").GetInt32());
        var user = TestOperator.NewUser(account, issuedAt: TestJwt.Now - 60);
        await using var connected = await WireClient.ConnectAsync(server);
        await connected.SendAsync($"CONNECT {user.Connect(connected.Info.GetProperty("nonce").GetString()!)}\r\n");
        await connected.PingPongAsync();

        // The same account key, a newer JWT that revokes the user (issued before now).
        var revoking = _operator.ReissueAccount(account, "REV", nats => nats["revocations"] = new System.Text.Json.Nodes.JsonObject { [user.PublicKey] = TestJwt.Now });
        Assert.Equal(200, (await NatsJson.RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", revoking.Jwt)).GetProperty("data").GetProperty("code").GetInt32());

        await connected.ExpectAsync("-ERR 'User Authentication Revoked'\r\n");
        await Assert.ThrowsAnyAsync<NatsException>(async () => await ConnectAsync(server, user));
    });
}

[Trait("server", "nats-server")]
public sealed class ClaimsUpdateTests_NatsServer(NatsServerFixture server) : ClaimsUpdateTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class ClaimsUpdateTests_Courier(CourierFixture server) : ClaimsUpdateTests<CourierFixture>(server);
