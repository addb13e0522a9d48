using Courier.Actors.Server;
using Courier.Gateway.Configuration;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

public sealed class WebSocketOptionsBinderTests
{
    private static (ServerOptions Options, IReadOnlyList<string> Warnings) Bind(string text)
    {
        var options = new ServerOptions();
        var warnings = OptionsBinder.Bind(ConfigParser.Parse(text, "test.conf"), options);
        return (options, warnings);
    }

    private static string BindFails(string text) => Assert.Throws<ConfigException>(() => Bind(text)).Message;

    [Fact]
    public void Every_websocket_key_binds_to_its_option()
    {
        var (options, warnings) = Bind("""
            websocket {
              host: 127.0.0.1
              port: 8080
              no_tls: true
              compression: true
              same_origin: true
              allowed_origins: ["http://a.example.com", "https://b.example.com:8443"]
              handshake_timeout: "3s"
              authorization { user: web, password: pw, timeout: 1.5 }
            }
            """);

        Assert.Empty(warnings);
        var ws = options.WebSocket!;
        Assert.Equal("127.0.0.1", ws.Host);
        Assert.Equal(8080, ws.Port);
        Assert.True(ws.NoTls);
        Assert.True(ws.Compression);
        Assert.True(ws.SameOrigin);
        Assert.Equal(["http://a.example.com", "https://b.example.com:8443"], ws.AllowedOrigins);
        Assert.Equal(TimeSpan.FromSeconds(3), ws.HandshakeTimeout);
        Assert.Equal("web", ws.Username);
        Assert.Equal("pw", ws.Password);
        Assert.Equal(TimeSpan.FromSeconds(1.5), ws.AuthTimeout);
        Assert.True(ws.AuthOverride);
    }

    [Fact]
    public void The_ws_alias_listen_and_integer_handshake_timeout_are_accepted()
    {
        var (options, _) = Bind("ws { listen: \"127.0.0.1:9090\", no_tls: true, handshake_timeout: 4, compress: true }");
        Assert.Equal(9090, options.WebSocket!.Port);
        Assert.Equal("127.0.0.1", options.WebSocket.Host);
        Assert.Equal(TimeSpan.FromSeconds(4), options.WebSocket.HandshakeTimeout);
        Assert.True(options.WebSocket.Compression);
    }

    [Fact]
    public void A_websocket_port_without_tls_or_no_tls_is_refused_as_nats_server()
    {
        Assert.Contains("websocket requires TLS configuration", BindFails("websocket { port: 8080 }"), StringComparison.Ordinal);
    }

    [Fact]
    public void No_auth_user_must_be_one_of_the_users()
    {
        Assert.Contains("no_auth_user: \"ghost\" present, but users are not defined",
            BindFails("websocket { port: 8080, no_tls: true, no_auth_user: ghost }"), StringComparison.Ordinal);
        Assert.Contains("not present as user",
            BindFails("authorization { users: [{user: a, password: b}] }\nwebsocket { port: 8080, no_tls: true, no_auth_user: ghost }"), StringComparison.Ordinal);
        var (options, _) = Bind("websocket { port: 8080, no_tls: true, no_auth_user: a }\nauthorization { users: [{user: a, password: b}] }");
        Assert.Equal("a", options.WebSocket!.NoAuthUser);
    }

    [Fact]
    public void A_websocket_username_or_token_with_users_is_refused()
    {
        Assert.Contains("websocket authentication username not compatible with presence of users/nkeys",
            BindFails("authorization { users: [{user: a, password: b}] }\nwebsocket { port: 8080, no_tls: true, authorization { user: x, password: y } }"),
            StringComparison.Ordinal);
        Assert.Contains("websocket authentication token not compatible with presence of users/nkeys",
            BindFails("authorization { users: [{user: a, password: b}] }\nwebsocket { port: 8080, no_tls: true, authorization { token: t } }"),
            StringComparison.Ordinal);
    }

    [Fact]
    public void A_jwt_cookie_needs_trusted_operators()
    {
        Assert.Contains("trusted operators or trusted keys configuration is required for JWT authentication via cookie \"jwt\"",
            BindFails("websocket { port: 8080, no_tls: true, jwt_cookie: jwt }"), StringComparison.Ordinal);
    }

    [Fact]
    public void An_unknown_websocket_key_is_nats_servers_error()
    {
        var e = Assert.Throws<ConfigException>(() => Bind("websocket { port: 8080, no_tls: true, bogus: 1 }"));
        Assert.EndsWith(":1:38: unknown field \"bogus\"", e.Message, StringComparison.Ordinal);
    }
}
