using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Courier.Actors.Server;
using Courier.Gateway.Configuration;
using Courier.Testing;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

/// <summary>The <c>tls { }</c> block and the <c>--tls*</c> flags, with certificates made for the test.</summary>
public sealed class TlsConfigurationTests : IClassFixture<TlsConfigurationTests.Certificates>
{
    private readonly TestCertificates _certs;

    public TlsConfigurationTests(Certificates certificates)
    {
        _certs = certificates.Set;
    }

    private static (ServerOptions Options, IReadOnlyList<string> Warnings) Bind(string text)
    {
        var options = new ServerOptions();
        var warnings = OptionsBinder.Bind(ConfigParser.Parse(text, "test.conf"), options);
        return (options, warnings);
    }

    private static string BindFails(string text) => Assert.Throws<ConfigException>(() => Bind(text)).Message;

    private string Block(string extra = "") => $$"""
        tls {
          cert_file: "{{_certs.ServerCert}}"
          key_file: "{{_certs.ServerKey}}"
          {{extra}}
        }
        """;

    [Fact]
    public void A_tls_block_loads_an_rsa_certificate_and_key_with_nats_server_defaults()
    {
        var (options, warnings) = Bind(Block());

        Assert.Empty(warnings);
        var tls = Assert.IsType<TlsOptions>(options.Tls);
        Assert.True(tls.Certificate.HasPrivateKey);
        Assert.Equal("CN=courier-server", tls.Certificate.Subject);
        Assert.False(tls.Verify);
        Assert.False(tls.MapCertificateToUser);
        Assert.False(tls.HandshakeFirst);
        Assert.Null(tls.ClientCas);
        Assert.Null(tls.CipherSuites);
        Assert.Equal(TimeSpan.FromSeconds(2), tls.Timeout);
        Assert.Equal(SslProtocols.Tls12, tls.MinVersion);
    }

    [Fact]
    public void Ec_keys_and_pkcs1_rsa_keys_load_too()
    {
        var ec = Bind($$"""tls { cert_file: "{{_certs.ServerEcCert}}", key_file: "{{_certs.ServerEcKey}}" }""").Options.Tls!;
        var pkcs1 = Bind($$"""tls { cert_file: "{{_certs.ServerCert}}", key_file: "{{_certs.ServerRsaPkcs1Key}}" }""").Options.Tls!;

        Assert.True(ec.Certificate.HasPrivateKey);
        Assert.NotNull(ec.Certificate.GetECDsaPrivateKey());
        Assert.NotNull(pkcs1.Certificate.GetRSAPrivateKey());
    }

    [Fact]
    public void Every_setting_of_the_block_is_read()
    {
        var (options, warnings) = Bind(Block($$"""
            ca_file: "{{_certs.CaFile}}"
            verify_and_map: true
            timeout: 0.75
            handshake_first: true
            cipher_suites: [ "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305" ]
            min_version: "1.3"
            """));

        Assert.Empty(warnings);
        var tls = options.Tls!;
        Assert.True(tls.Verify);
        Assert.True(tls.MapCertificateToUser);
        Assert.Equal(TimeSpan.FromMilliseconds(750), tls.Timeout);
        Assert.True(tls.HandshakeFirst);
        Assert.Equal([TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TlsCipherSuite.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256], tls.CipherSuites);
        Assert.Equal(SslProtocols.Tls13, tls.MinVersion);
        Assert.Equal("CN=Courier Test CA", Assert.Single(tls.ClientCas!).Subject);
    }

    [Theory]
    [InlineData("timeout: \"1500ms\"", 1500)]
    [InlineData("timeout: 3", 3000)]
    [InlineData("timeout: 0", 2000)]
    public void The_handshake_timeout_takes_seconds_or_a_duration(string line, int milliseconds)
    {
        Assert.Equal(TimeSpan.FromMilliseconds(milliseconds), Bind(Block(line)).Options.Tls!.Timeout);
    }

    [Theory]
    [InlineData("colour: blue", "error parsing tls config, unknown field [\"colour\"]")]
    [InlineData("verify: \"yes\"", "error parsing tls config, expected 'verify' to be a boolean")]
    [InlineData("verify_and_map: 1", "error parsing tls config, expected 'verify_and_map' to be a boolean")]
    [InlineData("cipher_suites: [ \"TLS_NOPE\" ]", "unrecognized cipher TLS_NOPE")]
    [InlineData("cipher_suites: []", "error parsing tls config, 'cipher_suites' cannot be empty")]
    [InlineData("min_version: \"1.1\"", "error parsing tls config: unsupported TLS version: TLS 1.1")]
    [InlineData("min_version: \"2.0\"", "error parsing tls config: unknown version: 2.0")]
    [InlineData("timeout: \"soon\"", "error parsing tls config, 'timeout'")]
    [InlineData("timeout: [1]", "error parsing tls config, 'timeout' wrong type")]
    [InlineData("handshake_first: \"maybe\"", "field \"handshake_first\"'s value \"maybe\" is invalid")]
    public void Bad_settings_are_rejected_with_nats_server_wording_and_position(string line, string message)
    {
        var error = BindFails(Block(line));

        Assert.StartsWith("test.conf:4:", error);
        Assert.Contains(message, error);
    }

    [Fact]
    public void Settings_nats_server_has_but_courier_does_not_are_warnings()
    {
        var (options, warnings) = Bind(Block("curve_preferences: [\"X25519\"]"));

        Assert.NotNull(options.Tls);
        Assert.Contains(warnings, w => w.Contains("field \"curve_preferences\" is not supported by Courier", StringComparison.Ordinal));
    }

    [Fact]
    public void Missing_or_unreadable_files_are_errors_naming_the_problem()
    {
        Assert.Contains("missing 'key_file' in TLS configuration", BindFails($$"""tls { cert_file: "{{_certs.ServerCert}}" }"""));
        Assert.Contains("missing 'cert_file' in TLS configuration", BindFails($$"""tls { key_file: "{{_certs.ServerKey}}" }"""));
        Assert.Contains("error parsing X509 certificate/key pair: open /nonexistent/cert.pem: no such file or directory",
            BindFails($$"""tls { cert_file: "/nonexistent/cert.pem", key_file: "{{_certs.ServerKey}}" }"""));
        Assert.Contains("error parsing X509 certificate/key pair",
            BindFails($$"""tls { cert_file: "{{_certs.ServerCert}}", key_file: "{{_certs.ServerEcKey}}" }"""));
        Assert.Contains("failed to parse root ca certificate", BindFails(Block($$"""ca_file: "{{_certs.ServerKey}}" """)));
        Assert.Contains("open /nonexistent/ca.pem: no such file or directory", BindFails(Block("""ca_file: "/nonexistent/ca.pem" """)));
    }

    [Fact]
    public void Https_port_is_read_and_needs_the_tls_block()
    {
        using var dir = new TempConfigDirectory();
        var withTls = dir.Write("tls.conf", Block() + "\nhttps_port: 8443\n");
        var withoutTls = dir.Write("plain.conf", "https_port: 8443\n");

        var ok = ServerConfiguration.Load(["-c", withTls]);
        var bad = ServerConfiguration.Load(["-c", withoutTls]);

        Assert.Equal(CommandLineAction.Run, ok.Action);
        Assert.Equal(8443, ok.Options.HttpsPort);
        Assert.Equal(CommandLineAction.Error, bad.Action);
        Assert.Equal("TLS cert and key required for HTTPS", bad.Error);
    }

    [Fact]
    public void Tls_flags_build_the_client_tls_as_nats_server_does()
    {
        var config = ServerConfiguration.Load(["--tlscert", _certs.ServerCert, "--tlskey", _certs.ServerKey, "--tlscacert", _certs.CaFile, "--tlsverify"]);

        Assert.Equal(CommandLineAction.Run, config.Action);
        var tls = config.Options.Tls!;
        Assert.True(tls.Verify);
        Assert.False(tls.MapCertificateToUser);
        Assert.NotNull(tls.ClientCas);
    }

    [Fact]
    public void Tls_flags_replace_the_file_block_and_tls_false_turns_it_off()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", Block("verify: true\nhandshake_first: true"));

        var replaced = ServerConfiguration.Load(["-c", file, "--tls", "--tlscert", _certs.ServerEcCert, "--tlskey", _certs.ServerEcKey]);
        var off = ServerConfiguration.Load(["-c", file, "--tls=false"]);

        Assert.Equal("CN=courier-server-ec", replaced.Options.Tls!.Certificate.Subject);
        Assert.False(replaced.Options.Tls.Verify);
        Assert.False(replaced.Options.Tls.HandshakeFirst);
        Assert.Null(off.Options.Tls);
    }

    [Fact]
    public void With_tls_the_default_auth_timeout_is_the_tls_timeout_plus_a_second()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", Block("timeout: 1.5"));

        var config = ServerConfiguration.Load(["-c", file]);

        Assert.Equal(TimeSpan.FromSeconds(2.5), config.Options.AuthTimeout);
    }

    [Theory]
    [InlineData("TLS Server certificate must be present and valid", "--tls")]
    [InlineData("TLS Server private key must be present and valid", "--tlsverify", "--tlscert", "x.pem")]
    public void Tls_flags_without_both_files_are_errors(string message, params string[] args)
    {
        var config = ServerConfiguration.Load(args);

        Assert.Equal(CommandLineAction.Error, config.Action);
        Assert.Equal(message, config.Error);
    }

    [Fact]
    public void A_tls_block_in_websocket_serves_wss_with_its_own_verify_and_leaves_the_client_listener_plain()
    {
        var (options, _) = Bind($$"""
            websocket {
              port: 8443
              {{Block($"ca_file: \"{_certs.CaFile}\"\nverify_and_map: true")}}
            }
            """);

        Assert.Null(options.Tls);
        var tls = Assert.IsType<TlsOptions>(options.WebSocket!.Tls);
        Assert.True(tls.Verify);
        Assert.True(tls.MapCertificateToUser);
        Assert.NotNull(tls.ClientCas);
        Assert.False(options.WebSocket.NoTls);
    }

    [Fact]
    public void A_websocket_tls_block_with_a_missing_file_is_refused_with_nats_servers_words()
    {
        var error = BindFails("""websocket { port: 8443, tls { cert_file: "/nonexistent/c.pem", key_file: "/nonexistent/k.pem" } }""");

        Assert.Contains("error parsing X509 certificate/key pair: open /nonexistent/c.pem: no such file or directory", error, StringComparison.Ordinal);
        Assert.DoesNotContain("websocket requires TLS configuration", error, StringComparison.Ordinal);
    }

    [Fact]
    public void A_tls_block_in_mqtt_is_loaded_for_the_mqtt_listener_only()
    {
        var (options, warnings) = Bind($$"""
            mqtt {
              port: 8883
              {{Block("verify: true")}}
            }
            """);

        Assert.Empty(warnings);
        Assert.Null(options.Tls);
        var tls = Assert.IsType<TlsOptions>(options.Mqtt!.Tls);
        Assert.True(tls.Verify);
        Assert.False(tls.MapCertificateToUser);
    }

    [Fact]
    public void Leaf_node_listener_remote_and_gateway_tls_blocks_are_loaded()
    {
        var (options, warnings) = Bind($$"""
            leafnodes {
              port: 7422
              tls { cert_file: "{{_certs.ServerCert}}", key_file: "{{_certs.ServerKey}}", ca_file: "{{_certs.CaFile}}", verify: true, timeout: 3 }
              remotes [ { url: "nats-leaf://127.0.0.1:7423", tls { ca_file: "{{_certs.CaFile}}", cert_file: "{{_certs.ClientCert("alice")}}", key_file: "{{_certs.ClientKey("alice")}}" } } ]
            }
            gateway {
              name: east
              port: 7222
              tls { cert_file: "{{_certs.RouteCert}}", key_file: "{{_certs.RouteKey}}", ca_file: "{{_certs.CaFile}}" }
              gateways [
                { name: west, url: "tls://127.0.0.1:7223", tls { cert_file: "{{_certs.RouteCert}}", key_file: "{{_certs.RouteKey}}", ca_file: "{{_certs.CaFile}}", timeout: 4 } }
                { name: south, url: "nats://127.0.0.1:7224" }
              ]
            }
            """);

        Assert.Empty(warnings);
        var leaf = options.LeafNodes.Tls!;
        Assert.True(leaf.Verify);
        Assert.Equal(TimeSpan.FromSeconds(3), leaf.Timeout);
        var remote = options.LeafNodes.Remotes[0].Tls!;
        Assert.NotNull(remote.Certificate);
        Assert.Single(remote.Cas!);
        Assert.False(remote.Insecure);
        Assert.True(options.Gateway.Tls!.Verify); // gateways always verify the peer, as nats-server's getTLSConfig
        Assert.Equal(TimeSpan.FromSeconds(4), options.Gateway.Remotes[0].Tls!.Timeout);
        Assert.True(options.Gateway.Remotes[0].Tls!.Verify);
        Assert.Null(options.Gateway.Remotes[1].Tls);
        Assert.Equal(TimeSpan.FromSeconds(3), options.Gateway.AuthTimeout); // no authorization timeout: TLS's (2 s) + 1 s
    }

    /// <summary>One PKI for the class.</summary>
    public sealed class Certificates : IDisposable
    {
        public TestCertificates Set { get; } = TestCertificates.Create();

        public void Dispose() => Set.Dispose();
    }
}
