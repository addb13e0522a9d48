using System.Buffers;
using System.Text.Json;
using Courier.Protocols.Nats;
using Xunit;

namespace Courier.Protocols.Tests.Nats;

/// <summary>The CONNECT JSON that real clients send, read with the source-generated context.</summary>
public sealed class ConnectOptionsTests
{
    private static ConnectOptions Read(string json)
    {
        var options = JsonSerializer.Deserialize(json, NatsJsonContext.Default.ConnectOptions);
        Assert.NotNull(options);
        return options;
    }

    [Fact]
    public void Nats_js_connect_with_echo_off_and_user_password_is_read()
    {
        // As nats.js 2.x sends it (field order from its Connect class).
        var options = Read(
            "{\"protocol\":1,\"version\":\"2.29.3\",\"lang\":\"nats.js\",\"echo\":false,\"verbose\":false,"
            + "\"pedantic\":false,\"headers\":true,\"no_responders\":true,\"user\":\"alice\",\"pass\":\"s3cr3t\"}");

        Assert.Equal(1, options.Protocol);
        Assert.Equal("2.29.3", options.Version);
        Assert.Equal("nats.js", options.Lang);
        Assert.False(options.Echo);
        Assert.False(options.Verbose);
        Assert.False(options.Pedantic);
        Assert.True(options.Headers);
        Assert.True(options.NoResponders);
        Assert.Equal("alice", options.User);
        Assert.Equal("s3cr3t", options.Pass);
        Assert.Null(options.AuthToken);
    }

    [Fact]
    public void Nats_client_core_connect_with_nulls_and_unknown_fields_is_read()
    {
        // As NATS.Client.Core 2.x serializes ClientOpts, including fields Courier does not model.
        var options = Read(
            "{\"echo\":true,\"verbose\":false,\"pedantic\":false,\"tls_required\":false,\"nkey\":null,\"jwt\":null,"
            + "\"sig\":null,\"auth_token\":\"t0k3n\",\"user\":null,\"pass\":null,\"name\":\"orders-service\",\"lang\":\".NET\","
            + "\"version\":\"2.5.5\",\"protocol\":1,\"account\":null,\"new_account\":null,\"headers\":true,\"no_responders\":true}");

        Assert.True(options.Echo);
        Assert.False(options.TlsRequired);
        Assert.Equal("t0k3n", options.AuthToken);
        Assert.Null(options.User);
        Assert.Null(options.Pass);
        Assert.Null(options.Jwt);
        Assert.Null(options.Nkey);
        Assert.Null(options.Sig);
        Assert.Equal("orders-service", options.Name);
        Assert.Equal(".NET", options.Lang);
        Assert.Equal("2.5.5", options.Version);
        Assert.Equal(1, options.Protocol);
        Assert.True(options.Headers);
        Assert.True(options.NoResponders);
    }

    [Fact]
    public void Nats_go_connect_with_verbose_and_pedantic_is_read()
    {
        var options = Read(
            "{\"verbose\":true,\"pedantic\":true,\"tls_required\":false,\"name\":\"\",\"lang\":\"go\",\"version\":\"1.37.0\","
            + "\"protocol\":1,\"echo\":true,\"headers\":true,\"no_responders\":true}");

        Assert.True(options.Verbose);
        Assert.True(options.Pedantic);
        Assert.Equal("go", options.Lang);
        Assert.Equal("", options.Name);
    }

    [Fact]
    public void Echo_verbose_and_pedantic_default_to_true_and_everything_else_to_off_when_absent()
    {
        // nats-server decodes CONNECT over defaults of verbose, pedantic and echo all true.
        var options = Read("{}");

        Assert.True(options.Echo);
        Assert.True(options.Verbose);
        Assert.True(options.Pedantic);
        Assert.False(options.Headers);
        Assert.False(options.NoResponders);
        Assert.Equal(0, options.Protocol);
        Assert.Null(options.User);
        Assert.Null(options.AuthToken);
    }

    [Fact]
    public void A_telnet_style_connect_with_only_verbose_is_read()
    {
        var options = Read("{\"verbose\":false}");
        Assert.True(options.Echo);
        Assert.False(options.Verbose);
    }

    [Fact]
    public void Nkey_and_signed_nonce_are_read()
    {
        var options = Read("{\"nkey\":\"UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4\",\"sig\":\"c2lnbmF0dXJl\",\"jwt\":\"eyJ0\"}");
        Assert.Equal("UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4", options.Nkey);
        Assert.Equal("c2lnbmF0dXJl", options.Sig);
        Assert.Equal("eyJ0", options.Jwt);
    }

    [Fact]
    public void Connect_arguments_from_the_parser_deserialize_in_place()
    {
        var line = ParserFeeds.Bytes("CONNECT {\"lang\":\"nats.js\",\"echo\":false,\"headers\":true}\r\n");
        var reader = new SequenceReader<byte>(Sequences.ByteByByte(line));
        var command = default(ClientCommand);

        Assert.Equal(ParseStatus.Command, new NatsParser().TryRead(ref reader, ref command, out _));
        Assert.Equal(ClientOp.Connect, command.Op);

        var options = JsonSerializer.Deserialize(command.Arguments, NatsJsonContext.Default.ConnectOptions);
        Assert.NotNull(options);
        Assert.Equal("nats.js", options.Lang);
        Assert.False(options.Echo);
        Assert.True(options.Headers);
    }

    [Fact]
    public void Malformed_connect_json_throws_json_exception() =>
        Assert.ThrowsAny<JsonException>(() => Read("{\"verbose\":"));
}
