using Courier.Actors.Server;
using Courier.Gateway.Configuration;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

/// <summary><c>gateway { }</c>: bound as nats-server 2.9 reads it; a key Courier does not implement stops the start.</summary>
public sealed class GatewayConfigurationTests
{
    private static ServerOptions Bind(string text)
    {
        var options = new ServerOptions();
        var warnings = OptionsBinder.Bind(ConfigParser.Parse(text, "test.conf"), options);
        Assert.Empty(warnings);
        return options;
    }

    private static (ServerOptions Options, ConfigException Error) BindFails(string text)
    {
        var options = new ServerOptions();
        var error = Assert.Throws<ConfigException>(() => OptionsBinder.Bind(ConfigParser.Parse(text, "test.conf"), options));
        return (options, error);
    }

    [Fact]
    public void The_name_listener_authorization_and_remote_gateways_are_bound()
    {
        var options = Bind("""
            gateway {
              name: "east"
              listen: "127.0.0.1:7222"
              authorization { user: gw, password: secret, timeout: 3 }
              reject_unknown_cluster: true
              connect_retries: 4
              gateways [
                { name: "west", urls: ["nats://u:p@w1:7222", "nats://w2:7222"] }
                { name: "south", url: "nats://s1:7222" }
              ]
            }
            """);

        var gateway = options.Gateway;
        Assert.Equal("east", gateway.Name);
        Assert.Equal(("127.0.0.1", 7222), (gateway.Host, gateway.Port));
        Assert.Equal(("gw", "secret"), (gateway.Username, gateway.Password));
        Assert.Equal(TimeSpan.FromSeconds(3), gateway.AuthTimeout);
        Assert.True(gateway.RejectUnknown);
        Assert.Equal(4, gateway.ConnectRetries);
        Assert.Equal(["west", "south"], gateway.Remotes.Select(r => r.Name));
        Assert.Equal(["w1", "w2"], gateway.Remotes[0].Urls.Select(u => u.Host));
        Assert.Equal("u:p", gateway.Remotes[0].Urls[0].UserInfo);
        Assert.Equal(["s1"], gateway.Remotes[1].Urls.Select(u => u.Host));
    }

    [Fact]
    public void Host_and_port_are_taken_as_separate_keys()
    {
        var options = Bind("gateway { name: g, host: 127.0.0.1, port: -1, reject_unknown: true }");

        Assert.Equal(("127.0.0.1", -1), (options.Gateway.Host, options.Gateway.Port));
        Assert.True(options.Gateway.RejectUnknown);
    }

    [Fact]
    public void A_cluster_takes_the_gateway_name_and_a_different_cluster_name_is_refused_as_nats_server()
    {
        var options = Bind("cluster { port: 6222 }\ngateway { name: east, port: 7222 }");
        Assert.Equal("east", options.Cluster.Name);

        var (_, error) = BindFails("gateway { name: east, port: 7222 }\ncluster { name: west, port: 6222 }");
        Assert.Contains(error.Errors, text => text.Contains("cluster name conflicts between cluster and gateway definitions", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("gateway { name: g, port: 7222, tls { cert_file: a } }", "missing 'key_file' in TLS configuration")]
    [InlineData("gateway { name: g, port: 7222, tls { cert_file: a, key_file: b, verify_and_map: true } }", "field \"verify_and_map\" in gateway tls block is not implemented by Courier")]
    [InlineData("gateway { name: g, port: 7222, advertise: \"x:1\" }", "field \"advertise\" is not implemented by Courier")]
    [InlineData("gateway { name: g, gateways [ { name: w, url: \"nats://h:1\", tls { } } ] }", "missing 'cert_file' and 'key_file' in TLS configuration")]
    [InlineData("gateway { name: g, gateways [ { name: w, url: \"nats://h:1\", tls { cert_file: a, key_file: b, handshake_first: true } } ] }", "field \"handshake_first\" in a gateways entry's tls block is not implemented by Courier")]
    [InlineData("gateway { name: g, gateways [ { name: w, url: \"tls://h:1\" } ] }", "asks for TLS but neither the gateway nor its entry has a tls block")]
    [InlineData("gateway { name: g, gateways [ { url: \"nats://h:1\" } ] }", "gateway entry requires a name")]
    [InlineData("gateway { name: g, gateways [ { name: w } ] }", "gateway \"w\" has no URL")]
    [InlineData("gateway { name: g, authorization { token: t } }", "Gateway authorization does not allow token")]
    [InlineData("gateway { name: \"a b\", port: 7222 }", "gateway name cannot contain spaces")]
    [InlineData("gateway { port: 7222 }", "gateway has no name")]
    [InlineData("gateway { name: g, colour: blue }", "unknown field \"colour\"")]
    public void What_courier_does_not_implement_or_nats_server_rejects_stops_the_start(string config, string error)
    {
        var (_, e) = BindFails(config);

        Assert.Contains(e.Errors, text => text.Contains(error, StringComparison.Ordinal));
    }
}
