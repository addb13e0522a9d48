using Courier.Actors.Server;
using Courier.Gateway.Configuration;
using Courier.Testing;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

public sealed class ClusterConfigurationTests
{
    private static (ServerOptions Options, IReadOnlyList<string> Warnings) Bind(string text)
    {
        var options = new ServerOptions();
        var warnings = OptionsBinder.Bind(ConfigParser.Parse(text, "test.conf"), options);
        return (options, warnings);
    }

    private static string BindFails(string text) => Assert.Throws<ConfigException>(() => Bind(text)).Message;

    [Fact]
    public void Every_cluster_key_binds_to_its_option()
    {
        var (options, warnings) = Bind("""
            cluster {
              name: "east"
              host: 127.0.0.1
              port: 6222
              routes: [
                nats-route://127.0.0.1:6222
                nats-route://ruser:rpass@127.0.0.1:6223
              ]
              no_advertise: true
              connect_retries: 5
              advertise: "10.0.0.1:6222"
              authorization { user: ruser, password: rpass, timeout: 0.5 }
            }
            """);

        Assert.Empty(warnings);
        var cluster = options.Cluster;
        Assert.True(cluster.Enabled);
        Assert.Equal("east", cluster.Name);
        Assert.Equal("127.0.0.1", cluster.Host);
        Assert.Equal(6222, cluster.Port);
        Assert.Equal(2, cluster.Routes.Count);
        Assert.Equal(6222, cluster.Routes[0].Port);
        Assert.Equal("ruser:rpass", cluster.Routes[1].UserInfo);
        Assert.True(cluster.NoAdvertise);
        Assert.Equal(5, cluster.ConnectRetries);
        Assert.Equal("10.0.0.1:6222", cluster.Advertise);
        Assert.Equal("ruser", cluster.Username);
        Assert.Equal("rpass", cluster.Password);
        Assert.Equal(TimeSpan.FromSeconds(0.5), cluster.AuthTimeout);
    }

    [Fact]
    public void Listen_sets_host_and_port_and_without_a_block_there_is_no_cluster()
    {
        var (options, _) = Bind("cluster { listen: \"127.0.0.2:-1\" }");
        Assert.Equal("127.0.0.2", options.Cluster.Host);
        Assert.Equal(-1, options.Cluster.Port);
        Assert.True(options.Cluster.Enabled);

        Assert.False(Bind("port: 4222").Options.Cluster.Enabled);
    }

    [Fact]
    public void Akka_port_and_akka_advertise_set_where_akka_remote_listens_and_what_peers_are_told()
    {
        var (options, warnings) = Bind("cluster { port: 6222, akka_port: 7222, akka_advertise: \"127.0.0.9:17222\" }");
        Assert.Empty(warnings);
        Assert.Equal(7222, options.Cluster.AkkaPort);
        Assert.Equal("127.0.0.9:17222", options.Cluster.AkkaAdvertise);

        var (defaults, _) = Bind("cluster { port: 6222 }");
        Assert.Equal(0, defaults.Cluster.AkkaPort); // ephemeral
        Assert.Null(defaults.Cluster.AkkaAdvertise);
        Assert.Contains("akka_advertise must be host:port", BindFails("cluster { port: 6222, akka_advertise: 17222 }"), StringComparison.Ordinal);
    }

    [Fact]
    public void A_duplicate_route_is_a_warning_and_kept_once()
    {
        var (options, warnings) = Bind("cluster { port: 6222, routes: [\"nats://127.0.0.1:6223\", \"nats://127.0.0.1:6223\"] }");
        Assert.Single(options.Cluster.Routes);
        Assert.Contains(warnings, w => w.Contains("Duplicate route entry detected", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("cluster { port: 6222, authorization { users: [{user: a, password: b}] } }", "Cluster authorization does not allow multiple users")]
    [InlineData("cluster { port: 6222, authorization { token: abc } }", "Cluster authorization does not support tokens")]
    [InlineData("cluster { port: 6222, routes: [\"not a url\"] }", "error parsing route url")]
    [InlineData("cluster = 6222", "Expected map to define cluster")]
    [InlineData("cluster { port: 6222, tls { cert_file: a } }", "missing 'key_file' in TLS configuration")]
    public void Bad_cluster_blocks_are_refused_with_nats_servers_words(string text, string error)
    {
        Assert.Contains(error, BindFails(text), StringComparison.Ordinal);
    }

    [Fact]
    public void Cluster_tls_always_verifies_the_peer_as_nats_servers_route_tls_config()
    {
        using var certificates = TestCertificates.Create();
        var (options, _) = Bind($$"""
            cluster {
              port: 6222
              tls { cert_file: "{{certificates.ServerCert}}", key_file: "{{certificates.ServerKey}}", ca_file: "{{certificates.CaFile}}", timeout: 3 }
            }
            """);

        var tls = Assert.IsType<TlsOptions>(options.Cluster.Tls);
        Assert.True(tls.Verify); // no "verify: true" in the block: routes require and check the peer's certificate anyway
        Assert.NotNull(tls.ClientCas);
        Assert.Equal(TimeSpan.FromSeconds(3), tls.Timeout);
    }

    [Fact]
    public void Cluster_flags_set_listen_routes_name_and_no_advertise()
    {
        var config = ServerConfiguration.Load([
            "--cluster", "nats://127.0.0.1:-1", "--routes", "nats-route://127.0.0.1:6223, nats-route://127.0.0.1:6224",
            "--cluster_name", "west", "--no_advertise", "--connect_retries", "3",
        ]);

        Assert.Equal(CommandLineAction.Run, config.Action);
        var cluster = config.Options.Cluster;
        Assert.Equal("127.0.0.1", cluster.Host);
        Assert.Equal(-1, cluster.Port);
        Assert.Equal([6223, 6224], cluster.Routes.Select(r => r.Port));
        Assert.Equal("west", cluster.Name);
        Assert.True(cluster.NoAdvertise);
        Assert.Equal(3, cluster.ConnectRetries);
    }

    [Fact]
    public void Cluster_listen_flag_takes_credentials_from_the_url()
    {
        var config = ServerConfiguration.Load(["--cluster_listen", "nats://ruser:rpass@127.0.0.1:6222"]);
        Assert.Equal("ruser", config.Options.Cluster.Username);
        Assert.Equal("rpass", config.Options.Cluster.Password);
        Assert.Equal(6222, config.Options.Cluster.Port);

        var missingPassword = ServerConfiguration.Load(["--cluster_listen", "nats://ruser@127.0.0.1:6222"]);
        Assert.Equal(CommandLineAction.Error, missingPassword.Action);
        Assert.Equal("expected cluster password to be set", missingPassword.Error);
    }

    [Fact]
    public void Flags_override_the_files_cluster_block()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", """
            cluster { name: file, port: 6222, routes: ["nats://127.0.0.1:7000"] }
            """);

        var config = ServerConfiguration.Load(["-c", file, "--routes", "nats://127.0.0.1:7001", "--cluster_name", "flag"]);
        Assert.Equal(CommandLineAction.Run, config.Action);
        Assert.Equal([7001], config.Options.Cluster.Routes.Select(r => r.Port));
        Assert.Equal("flag", config.Options.Cluster.Name);
        Assert.Equal(6222, config.Options.Cluster.Port);

        var off = ServerConfiguration.Load(["-c", file, "--cluster", ""]);
        Assert.False(off.Options.Cluster.Enabled);
    }

    [Fact]
    public void Routes_without_a_cluster_listener_are_refused_as_nats_server()
    {
        var config = ServerConfiguration.Load(["--routes", "nats://127.0.0.1:6222"]);
        Assert.Equal(CommandLineAction.Error, config.Action);
        Assert.Equal("solicited routes require cluster capabilities, e.g. --cluster", config.Error);
    }

    [Theory]
    [InlineData("courier-1")]
    [InlineData("courier-2")]
    [InlineData("courier-3")]
    public void The_docker_compose_node_configs_load_as_three_routed_nodes(string node)
    {
        var root = new DirectoryInfo(AppContext.BaseDirectory);
        while (root is not null && !File.Exists(Path.Combine(root.FullName, "Courier.slnx")))
        {
            root = root.Parent;
        }

        Assert.NotNull(root);
        var config = ServerConfiguration.Load(["-c", Path.Combine(root.FullName, "deploy", "cluster", node + ".conf")]);
        Assert.True(config.Action == CommandLineAction.Run, config.Error);
        Assert.Empty(config.Warnings);
        Assert.Equal(node, config.Options.ServerName);
        Assert.Equal("courier", config.Options.Cluster.Name);
        Assert.Equal(6222, config.Options.Cluster.Port);
        Assert.Equal(["courier-1", "courier-2", "courier-3"], config.Options.Cluster.Routes.Select(r => r.Host));
    }
}
