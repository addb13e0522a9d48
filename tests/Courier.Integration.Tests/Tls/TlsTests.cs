using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Tls;

/// <summary>
/// TLS on the client listener, as nats-server 2.9: INFO in the clear says <c>tls_required</c>, the client
/// upgrades, mutual TLS with <c>verify</c>, users mapped from certificates with <c>verify_and_map</c>, and
/// bad handshakes closing only their own connection. Certificates are made by the test.
/// </summary>
public abstract class TlsTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;
    private readonly TlsCertificatesFixture _tls;

    protected TlsTests(TServer server, TlsCertificatesFixture tls)
    {
        _server = server;
        _tls = tls;
    }

    private TestCertificates Certs => _tls.Certificates;

    [Fact]
    public async Task Info_says_tls_required_and_the_client_upgrades_after_it()
    {
        await using var server = await _server.StartServerAsync(_tls.TlsBlock());
        await using var c = await WireClient.ConnectAsync(server);

        Assert.True(c.Info.GetProperty("tls_required").GetBoolean(), c.InfoLine);
        Assert.False(c.Info.TryGetProperty("tls_verify", out _), c.InfoLine);
        await c.UpgradeToTlsAsync(Certs.CaFile);
        await c.HandshakeAsync();
        await c.SendAsync("SUB tls.wire 1\r\nPUB tls.wire 5\r\nhello\r\n");
        var msg = await c.ExpectMsgAsync();
        Assert.Equal("tls.wire", msg.Subject);
        Assert.Equal("hello", msg.PayloadText);
    }

    [Fact]
    public async Task Connz_shows_the_tls_version_and_cipher_suite_of_a_tls_client()
    {
        await using var server = await _server.StartServerAsync(_tls.TlsBlock());
        await using var c = await WireClient.ConnectAsync(server);
        await c.UpgradeToTlsAsync(Certs.CaFile);
        await c.HandshakeAsync();
        using var monitor = new MonitorClient(server);

        var connection = await monitor.GetConnectionAsync(c.LocalPort);

        Assert.Equal("1.3", connection.GetProperty("tls_version").GetString());
        Assert.StartsWith("TLS_", connection.GetProperty("tls_cipher_suite").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Info_says_tls_verify_when_client_certificates_are_verified()
    {
        await using var server = await _server.StartServerAsync(_tls.VerifyBlock());
        await using var c = await WireClient.ConnectAsync(server);

        Assert.True(c.Info.GetProperty("tls_required").GetBoolean(), c.InfoLine);
        Assert.True(c.Info.GetProperty("tls_verify").GetBoolean(), c.InfoLine);
    }

    [Fact]
    public async Task NatsNet_publishes_subscribes_and_requests_over_tls()
    {
        await using var server = await _server.StartServerAsync(_tls.TlsBlock());
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var nats = await ConnectNatsNetAsync(server, new NatsTlsOpts { CaFile = Certs.CaFile });
        var subject = Subjects.NewPrefix() + ".tls";

        await using var sub = await nats.SubscribeCoreAsync<string>(subject, cancellationToken: cts.Token);
        await using var service = await nats.SubscribeCoreAsync<string>(subject + ".svc", cancellationToken: cts.Token);
        var replies = Task.Run(
            async () =>
            {
                await foreach (var request in service.Msgs.ReadAllAsync(cts.Token))
                {
                    await request.ReplyAsync("re:" + request.Data, cancellationToken: cts.Token);
                }
            },
            cts.Token);
        await nats.PingAsync(cts.Token);
        for (var i = 0; i < 100; i++)
        {
            await nats.PublishAsync(subject, $"m{i}", cancellationToken: cts.Token);
        }

        for (var i = 0; i < 100; i++)
        {
            var msg = await sub.Msgs.ReadAsync(cts.Token);
            Assert.Equal($"m{i}", msg.Data);
        }

        var reply = await nats.RequestAsync<string, string>(subject + ".svc", "ping", cancellationToken: cts.Token);
        Assert.Equal("re:ping", reply.Data);
        Assert.Equal(NatsConnectionState.Open, nats.ConnectionState);
    }

    [Fact]
    public async Task NatsJs_publishes_subscribes_and_requests_over_tls()
    {
        await using var server = await _server.StartServerAsync(_tls.TlsBlock());

        await NodeScript.RunAsync("tls", server, new Dictionary<string, string> { ["NATS_TLS_CA"] = Certs.CaFile });
    }

    [Fact]
    public async Task NatsJs_with_a_client_certificate_is_accepted_under_verify_and_without_one_refused()
    {
        await using var server = await _server.StartServerAsync(_tls.VerifyBlock());

        await NodeScript.RunAsync("tls", server, new Dictionary<string, string>
        {
            ["NATS_TLS_CA"] = Certs.CaFile,
            ["NATS_TLS_CERT"] = Certs.ClientCert("alice"),
            ["NATS_TLS_KEY"] = Certs.ClientKey("alice"),
        });
        await NodeScript.RunAsync("tls", server, new Dictionary<string, string>
        {
            ["NATS_TLS_CA"] = Certs.CaFile,
            ["NATS_TLS_EXPECT_REFUSED"] = "1",
        });
    }

    [Fact]
    public async Task A_client_certificate_from_the_ca_is_accepted_under_verify()
    {
        await using var server = await _server.StartServerAsync(_tls.VerifyBlock());
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);

        await using var nats = await ConnectNatsNetAsync(server, ClientTls("alice"));
        await nats.PingAsync(cts.Token);

        Assert.Equal(NatsConnectionState.Open, nats.ConnectionState);
    }

    [Fact]
    public async Task A_reload_applies_a_changed_tls_block_to_new_clients_and_keeps_the_secured_ones()
    {
        await using var server = await _server.StartServerAsync(_tls.TlsBlock());
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var before = await ConnectNatsNetAsync(server, new NatsTlsOpts { CaFile = Certs.CaFile });

        // Client certificates required from now on.
        await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), _tls.VerifyBlock());
        await server.SignalAsync("HUP");
        var deadline = DateTime.UtcNow.AddSeconds(20);
        while (!server.Log.All().Contains("Reloaded server configuration", StringComparison.Ordinal) && DateTime.UtcNow < deadline)
        {
            await Task.Delay(50, cts.Token);
        }

        Assert.Contains("Reloaded: tls = enabled", server.Log.All(), StringComparison.Ordinal);
        await using (var c = await WireClient.ConnectAsync(server))
        {
            Assert.True(c.Info.GetProperty("tls_verify").GetBoolean(), c.InfoLine);
        }

        await Assert.ThrowsAnyAsync<Exception>(async () =>
        {
            await using var refused = await ConnectNatsNetAsync(server, new NatsTlsOpts { CaFile = Certs.CaFile });
            await refused.PingAsync(cts.Token);
        });
        await using var alice = await ConnectNatsNetAsync(server, ClientTls("alice"));
        await alice.PingAsync(cts.Token);

        // The client secured before the reload goes on.
        await before.PingAsync(cts.Token);
    }

    [Theory]
    [InlineData(null)]
    [InlineData("stranger")]
    [InlineData("expired")]
    public async Task Verify_refuses_a_missing_untrusted_or_expired_client_certificate_and_serves_others(string? client)
    {
        await using var server = await _server.StartServerAsync(_tls.VerifyBlock());
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var good = await ConnectNatsNetAsync(server, ClientTls("alice"));

        var tls = client is null ? new NatsTlsOpts { CaFile = Certs.CaFile } : ClientTls(client);
        await Assert.ThrowsAnyAsync<Exception>(async () =>
        {
            await using var refused = await ConnectNatsNetAsync(server, tls);
            await refused.PingAsync(cts.Token);
        });

        // On the wire: with TLS 1.3 the client's side of the handshake completes before the server judges
        // its certificate, so the refusal shows as the connection closing without a NATS frame.
        await using var raw = await WireClient.ConnectAsync(server);
        await raw.UpgradeToTlsAsync(Certs.CaFile, client is null ? null : Certs.LoadClient(client));
        try
        {
            await raw.SendAsync($"CONNECT {WireClient.QuietConnect}\r\nPING\r\n");
        }
        catch (IOException)
        {
            // The server's reset may arrive before this write: the connection is closed already.
        }

        await raw.ExpectClosedAsync();

        await good.PingAsync(cts.Token);
        Assert.Equal(NatsConnectionState.Open, good.ConnectionState);
    }

    [Fact]
    public async Task Verify_and_map_gives_the_certificate_subjects_user_its_permissions()
    {
        await using var server = await _server.StartServerAsync(MapConfig());
        await using var alice = await WireClient.ConnectAsync(server);
        await alice.UpgradeToTlsAsync(Certs.CaFile, Certs.LoadClient("alice"));
        await alice.HandshakeAsync();

        await alice.SendAsync("SUB alice.in 1\r\nPUB alice.in 2\r\nok\r\nPING\r\n");
        Assert.Equal("ok", (await alice.ExpectMsgAsync()).PayloadText);
        await alice.ExpectAsync("PONG\r\n");
        await alice.SendAsync("PUB bob.in 2\r\nno\r\nPING\r\n");
        await alice.ExpectAsync("-ERR 'Permissions Violation for Publish to \"bob.in\"'\r\n");
        await alice.ExpectAsync("PONG\r\n");
    }

    [Fact]
    public async Task Verify_and_map_maps_an_email_san_to_its_user()
    {
        await using var server = await _server.StartServerAsync(MapConfig());
        await using var bob = await WireClient.ConnectAsync(server);
        await bob.UpgradeToTlsAsync(Certs.CaFile, Certs.LoadClient("bob"));
        await bob.HandshakeAsync();

        await bob.SendAsync("PUB bob.in 2\r\nok\r\nPUB alice.in 2\r\nno\r\nPING\r\n");
        await bob.ExpectAsync("-ERR 'Permissions Violation for Publish to \"alice.in\"'\r\n");
        await bob.ExpectAsync("PONG\r\n");
    }

    [Fact]
    public async Task Verify_and_map_refuses_a_certificate_that_names_no_user()
    {
        await using var server = await _server.StartServerAsync(MapConfig());
        await using var mallory = await WireClient.ConnectAsync(server);
        await mallory.UpgradeToTlsAsync(Certs.CaFile, Certs.LoadClient("mallory"));

        await mallory.SendAsync($"CONNECT {WireClient.QuietConnect}\r\nPING\r\n");

        await mallory.ExpectErrAndCloseAsync("Authorization Violation");
    }

    [Fact]
    public async Task A_plain_text_client_on_a_tls_port_is_closed_and_others_are_served()
    {
        await using var server = await _server.StartServerAsync(_tls.TlsBlock());
        await using var good = await WireClient.ConnectAsync(server);
        await good.UpgradeToTlsAsync(Certs.CaFile);
        await good.HandshakeAsync();

        await using var plain = await WireClient.ConnectAsync(server);
        await plain.SendAsync($"CONNECT {WireClient.QuietConnect}\r\nPING\r\n");
        await plain.ExpectClosedAsync();

        await good.PingPongAsync();
        await ExpectLogAsync(server, "TLS handshake error");
    }

    [Fact]
    public async Task A_client_that_never_starts_the_handshake_is_closed_after_the_timeout()
    {
        await using var server = await _server.StartServerAsync(_tls.TlsBlock("timeout: 0.5"));
        await using var silent = await WireClient.ConnectAsync(server);

        await silent.ExpectClosedAsync();
        // nats-server logs "TLS handshake timeout" or, when its read deadline wins the race with its timer,
        // "TLS handshake error: ... i/o timeout"; Courier logs the former.
        await ExpectLogAsync(server, server.Kind == ServerKind.Courier ? "TLS handshake timeout" : "TLS handshake");
    }

    /// <summary>Waits (bounded) for the server to log a line containing <paramref name="text"/>.</summary>
    private static async Task ExpectLogAsync(ServerProcess server, string text)
    {
        for (var i = 0; i < 50 && !server.Log.All().Contains(text, StringComparison.Ordinal); i++)
        {
            await Task.Delay(100);
        }

        Assert.True(server.Log.All().Contains(text, StringComparison.Ordinal), $"no log line with \"{text}\"\n{server.Diagnostics()}");
    }

    private string MapConfig() => _tls.TlsBlock($$"""
        ca_file: "{{Certs.CaFile}}"
        verify_and_map: true
        """) + $$"""

        authorization {
          users = [
            { user: "{{TestCertificates.AliceSubject}}", permissions: { publish: ["alice.>"], subscribe: ["alice.>"] } }
            { user: "{{TestCertificates.BobEmail}}", permissions: { publish: ["bob.>"], subscribe: ["bob.>"] } }
          ]
        }
        """;

    private NatsTlsOpts ClientTls(string name) =>
        new() { CaFile = Certs.CaFile, CertFile = Certs.ClientCert(name), KeyFile = Certs.ClientKey(name) };

    private static async Task<NatsConnection> ConnectNatsNetAsync(ServerProcess server, NatsTlsOpts tls)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = $"tls://127.0.0.1:{server.Port}",
            Name = "natsnet-tls",
            TlsOpts = tls,
            MaxReconnectRetry = 0,
            ConnectTimeout = TimeSpan.FromSeconds(10),
            CommandTimeout = TimeSpan.FromSeconds(10),
            RequestTimeout = TimeSpan.FromSeconds(10),
        });
        try
        {
            await nats.ConnectAsync();
            return nats;
        }
        catch
        {
            await nats.DisposeAsync();
            throw;
        }
    }
}

public sealed class TlsTests_NatsServer(NatsServerFixture server, TlsCertificatesFixture tls)
    : TlsTests<NatsServerFixture>(server, tls), IClassFixture<TlsCertificatesFixture>;

public sealed class TlsTests_Courier(CourierFixture server, TlsCertificatesFixture tls)
    : TlsTests<CourierFixture>(server, tls), IClassFixture<TlsCertificatesFixture>;
