using Courier.Actors.Server;
using Courier.Gateway.Configuration;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

/// <summary><c>leafnodes { }</c>: bound as nats-server 2.9 reads it; a key Courier does not implement stops the start.</summary>
public sealed class LeafNodesConfigurationTests
{
    private static ServerOptions Bind(string text)
    {
        var options = new ServerOptions();
        var warnings = OptionsBinder.Bind(ConfigParser.Parse(text, "test.conf"), options);
        Assert.Empty(warnings);
        return options;
    }

    private static ConfigException BindFails(string text) =>
        Assert.Throws<ConfigException>(() => Bind(text));

    [Fact]
    public void The_listener_authorization_remotes_and_reconnect_are_bound()
    {
        var options = Bind("""
            leafnodes {
              listen: "127.0.0.1:7422"
              authorization {
                timeout: 3
                users [ { user: leaf, password: secret, account: A }, { user: other, password: x } ]
              }
              remotes [
                { urls: ["nats-leaf://u:p@hub1:7422", "nats-leaf://hub2:7422"], account: B, deny_imports: ["private.>"], deny_exports: "secret.*", credentials: "/etc/leaf.creds" }
              ]
              reconnect: 5
            }
            """);

        var leaf = options.LeafNodes;
        Assert.Equal("127.0.0.1", leaf.Host);
        Assert.Equal(7422, leaf.Port);
        Assert.Equal(TimeSpan.FromSeconds(3), leaf.AuthTimeout);
        Assert.Equal([new LeafNodeUser("leaf", "secret", "A"), new LeafNodeUser("other", "x", null)], leaf.Users);
        var remote = Assert.Single(leaf.Remotes);
        Assert.Equal(["hub1", "hub2"], remote.Urls.Select(u => u.Host));
        Assert.Equal("B", remote.Account);
        Assert.Equal("/etc/leaf.creds", remote.Credentials);
        Assert.Equal(["private.>"], remote.DenyImports);
        Assert.Equal(["secret.*"], remote.DenyExports);
        Assert.Equal(TimeSpan.FromSeconds(5), leaf.ReconnectInterval);
    }

    [Fact]
    public void A_tls_url_alone_means_tls_with_the_systems_roots_and_a_remote_block_takes_insecure()
    {
        var options = new ServerOptions();
        var warnings = OptionsBinder.Bind(ConfigParser.Parse("""
            leafnodes {
              remotes [
                { url: "tls://hub1:7422" }
                { url: "nats-leaf://hub2:7422", tls { insecure: true, timeout: 3 } }
                { url: "nats-leaf://hub3:7422" }
              ]
            }
            """, "test.conf"), options);
        var leaf = options.LeafNodes;

        Assert.Contains(warnings, w => w.Contains("will not be verified. DO NOT USE IN PRODUCTION!", StringComparison.Ordinal));

        Assert.Same(RemoteTlsOptions.Default, leaf.Remotes[0].Tls);
        Assert.True(leaf.Remotes[1].Tls!.Insecure);
        Assert.Null(leaf.Remotes[1].Tls!.Certificate);
        Assert.Equal(TimeSpan.FromSeconds(3), leaf.Remotes[1].Tls!.Timeout);
        Assert.Null(leaf.Remotes[2].Tls);
    }

    [Fact]
    public void A_single_leaf_user_is_bound_to_its_account()
    {
        var leaf = Bind("leaf { port: -1, authorization { user: l, password: p, account: A } }").LeafNodes;

        Assert.Equal(-1, leaf.Port);
        Assert.Equal(("l", "p", "A"), (leaf.Username, leaf.Password, leaf.Account));
        Assert.True(leaf.AuthRequired);
    }

    [Theory]
    [InlineData("leafnodes { port: 7422, tls { cert_file: a } }", "missing 'key_file' in TLS configuration")]
    [InlineData("leafnodes { port: 7422, tls { cert_file: a, key_file: b, verify_and_map: true } }", "field \"verify_and_map\" in leafnodes tls block is not implemented by Courier")]
    [InlineData("leafnodes { port: 7422, tls { cert_file: a, key_file: b, handshake_first: true } }", "field \"handshake_first\" in leafnodes tls block is not implemented by Courier")]
    [InlineData("leafnodes { port: 7422, tls { cert_file: a, key_file: b, pinned_certs: [] } }", "field \"pinned_certs\" is not implemented by Courier")]
    [InlineData("leafnodes { remotes [ { url: \"nats-leaf://h:1\", tls { handshake_first: true } } ] }", "field \"handshake_first\" in a leafnode remote's tls block is not implemented by Courier")]
    [InlineData("leafnodes { remotes [ { url: \"nats-leaf://h:1\", tls { ca_file: \"/nonexistent/ca.pem\" } } ] }", "open /nonexistent/ca.pem: no such file or directory")]
    [InlineData("leafnodes { port: 7422, advertise: \"x:1\" }", "field \"advertise\" is not implemented by Courier")]
    [InlineData("leafnodes { remotes [ { url: \"nats-leaf://h:1\", hub: true } ] }", "field \"hub\" is not implemented by Courier")]
    [InlineData("leafnodes { remotes [ { url: \"ws://h:1\" } ] }", "over WebSocket")]
    [InlineData("leafnodes { remotes [ { account: A } ] }", "remote leafnode entry requires a url")]
    [InlineData("leafnodes { authorization { token: t } }", "unknown field \"token\"")]
    [InlineData("leafnodes { colour: blue }", "unknown field \"colour\"")]
    public void What_courier_does_not_implement_stops_the_start(string config, string error)
    {
        var e = BindFails(config);

        Assert.Contains(e.Errors, text => text.Contains(error, StringComparison.Ordinal));
    }
}
