using System.Text;
using System.Text.Json;
using Courier.Protocols.Nats;
using Xunit;

namespace Courier.Protocols.Tests.Nats;

/// <summary>The server-to-client frames, byte for byte as nats-server writes them.</summary>
public sealed class ProtocolWriterTests
{
    private static string Latin1(ReadOnlySpan<byte> bytes) => Encoding.Latin1.GetString(bytes);

    // Formats the template, then assembles prefix + sid + suffix the way a fan-out would.
    private static string Msg(string subject, string reply, int headerSize, int totalSize, string sid)
    {
        Span<byte> template = stackalloc byte[512];
        Assert.True(ProtocolWriter.TryFormatMsgTemplate(
            template, Encoding.UTF8.GetBytes(subject), Encoding.UTF8.GetBytes(reply), headerSize, totalSize, out var prefix, out var suffix));
        return Latin1(template[..prefix]) + sid + Latin1(template.Slice(prefix, suffix));
    }

    // MSG <subject> <sid> [reply-to] <#bytes>\r\n

    [Fact]
    public void Msg_template_without_reply_is_subject_sid_and_size() =>
        Assert.Equal("MSG foo.bar 22 5\r\n", Msg("foo.bar", "", -1, 5, "22"));

    [Fact]
    public void Msg_template_with_reply_puts_the_reply_after_the_sid() =>
        Assert.Equal("MSG foo.bar 22 _INBOX.x.1 5\r\n", Msg("foo.bar", "_INBOX.x.1", -1, 5, "22"));

    [Fact]
    public void Msg_template_for_an_empty_payload_says_zero() =>
        Assert.Equal("MSG foo 1 0\r\n", Msg("foo", "", -1, 0, "1"));

    // HMSG <subject> <sid> [reply-to] <#header bytes> <#total bytes>\r\n

    [Fact]
    public void Hmsg_template_without_reply_is_subject_sid_and_both_sizes() =>
        Assert.Equal("HMSG foo.bar 9 12 17\r\n", Msg("foo.bar", "", 12, 17, "9"));

    [Fact]
    public void Hmsg_template_with_reply_puts_the_reply_after_the_sid() =>
        Assert.Equal("HMSG foo.bar 9 reply.to 12 17\r\n", Msg("foo.bar", "reply.to", 12, 17, "9"));

    [Fact]
    public void Msg_template_prefix_is_the_op_and_subject_and_suffix_starts_at_the_sid_end()
    {
        Span<byte> template = stackalloc byte[128];
        Assert.True(ProtocolWriter.TryFormatMsgTemplate(template, "a.b"u8, "r"u8, -1, 42, out var prefix, out var suffix));
        Assert.Equal("MSG a.b ", Latin1(template[..prefix]));
        Assert.Equal(" r 42\r\n", Latin1(template.Slice(prefix, suffix)));
    }

    [Fact]
    public void Msg_template_fits_the_largest_sizes_in_a_buffer_of_exactly_the_worst_case_length()
    {
        // "HMSG a " + " b 2147483647 2147483647\r\n"
        const string Expected = "HMSG a  b 2147483647 2147483647\r\n";
        var exact = new byte[Expected.Length];
        Assert.True(ProtocolWriter.TryFormatMsgTemplate(exact, "a"u8, "b"u8, int.MaxValue, int.MaxValue, out var prefix, out var suffix));
        Assert.Equal(Expected.Length, prefix + suffix);
        Assert.Equal(Expected, Latin1(exact));
    }

    [Fact]
    public void Msg_template_reports_a_too_small_buffer_instead_of_writing_past_it()
    {
        var small = new byte[10];
        Assert.False(ProtocolWriter.TryFormatMsgTemplate(small, "foo.bar.baz"u8, ""u8, -1, 5, out var prefix, out var suffix));
        Assert.Equal(0, prefix);
        Assert.Equal(0, suffix);
    }

    // -ERR '<text>'\r\n, and the fixed frames.

    [Fact]
    public void Error_quotes_the_text_in_single_quotes() =>
        Assert.Equal("-ERR 'x'\r\n", Latin1(ProtocolWriter.Error("x")));

    [Theory]
    [InlineData(ParseError.UnknownOperation, "-ERR 'Unknown Protocol Operation'\r\n")]
    [InlineData(ParseError.MaxControlLineExceeded, "-ERR 'maximum control line exceeded'\r\n")]
    [InlineData(ParseError.MaxPayloadViolation, "-ERR 'Maximum Payload Violation'\r\n")]
    public void Each_parse_error_has_the_nats_server_text(ParseError error, string frame) =>
        Assert.Equal(frame, Latin1(ProtocolWriter.Error(NatsErrors.ToText(error))));

    [Fact]
    public void Permission_violations_name_the_subject_and_queue_in_double_quotes()
    {
        Assert.Equal("Permissions Violation for Publish to \"foo\"", NatsErrors.PublishViolation("foo"));
        Assert.Equal("Permissions Violation for Subscription to \"foo\"", NatsErrors.SubscribeViolation("foo", null));
        Assert.Equal(
            "Permissions Violation for Subscription to \"foo\" using queue \"q\"",
            NatsErrors.SubscribeViolation("foo", "q"));
    }

    [Fact]
    public void Fixed_frames_are_exact()
    {
        Assert.Equal("PING\r\n", Latin1(ProtocolWriter.Ping));
        Assert.Equal("PONG\r\n", Latin1(ProtocolWriter.Pong));
        Assert.Equal("+OK\r\n", Latin1(ProtocolWriter.Ok));
        Assert.Equal("\r\n", Latin1(ProtocolWriter.CrLf));
    }

    [Fact]
    public void No_responders_header_is_the_16_byte_503_status_block()
    {
        Assert.Equal(16, ProtocolWriter.NoRespondersHeader.Length);
        Assert.Equal("NATS/1.0 503\r\n\r\n", Latin1(ProtocolWriter.NoRespondersHeader));
    }

    // INFO {json}\r\n

    private static ServerInfo SampleInfo() => new()
    {
        ServerId = "NCOURIER0001",
        ServerName = "courier-a",
        Version = "2.10.22",
        Proto = 1,
        Host = "0.0.0.0",
        Port = 4222,
        Headers = true,
        MaxPayload = 1048576,
        ClientId = 7,
    };

    private static JsonElement InfoJson(ServerInfo info)
    {
        var frame = Latin1(ProtocolWriter.Info(info));
        Assert.StartsWith("INFO {", frame);
        Assert.EndsWith("}\r\n", frame);
        var json = frame["INFO ".Length..^2];
        Assert.DoesNotContain('\n', json);
        Assert.DoesNotContain('\r', json);
        return JsonDocument.Parse(json).RootElement.Clone();
    }

    private static string[] Names(JsonElement json) => json.EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal).ToArray();

    [Fact]
    public void Info_is_one_line_of_json_with_nats_server_field_names_and_values()
    {
        var json = InfoJson(SampleInfo());

        Assert.Equal("NCOURIER0001", json.GetProperty("server_id").GetString());
        Assert.Equal("courier-a", json.GetProperty("server_name").GetString());
        Assert.Equal("2.10.22", json.GetProperty("version").GetString());
        Assert.Equal(1, json.GetProperty("proto").GetInt32());
        Assert.Equal("0.0.0.0", json.GetProperty("host").GetString());
        Assert.Equal(4222, json.GetProperty("port").GetInt32());
        Assert.True(json.GetProperty("headers").GetBoolean());
        Assert.Equal(1048576, json.GetProperty("max_payload").GetInt32());
        Assert.Equal(7UL, json.GetProperty("client_id").GetUInt64());
    }

    [Fact]
    public void Info_leaves_out_false_flags_and_absent_optional_fields()
    {
        var json = InfoJson(SampleInfo());

        Assert.Equal(
            ["client_id", "go", "headers", "host", "max_payload", "port", "proto", "server_id", "server_name", "version"],
            Names(json));
    }

    [Fact]
    public void Info_includes_flags_and_optional_fields_when_set()
    {
        var info = SampleInfo();
        info.AuthRequired = true;
        info.TlsRequired = true;
        info.JetStream = true;
        info.ClientIp = "127.0.0.1";
        info.Nonce = "abc";
        info.ConnectUrls = ["10.0.0.1:4222"];

        var json = InfoJson(info);

        Assert.True(json.GetProperty("auth_required").GetBoolean());
        Assert.True(json.GetProperty("tls_required").GetBoolean());
        Assert.True(json.GetProperty("jetstream").GetBoolean());
        Assert.Equal("127.0.0.1", json.GetProperty("client_ip").GetString());
        Assert.Equal("abc", json.GetProperty("nonce").GetString());
        Assert.Equal("10.0.0.1:4222", json.GetProperty("connect_urls")[0].GetString());
    }

    [Fact]
    public void Info_writes_headers_false_because_clients_read_its_absence_as_no_headers()
    {
        var info = SampleInfo();
        info.Headers = false;
        Assert.False(InfoJson(info).GetProperty("headers").GetBoolean());
    }

    [Fact]
    public void Info_clone_copies_fields_so_per_client_values_do_not_leak()
    {
        var shared = SampleInfo();
        var perClient = shared.Clone();
        perClient.ClientId = 99;
        perClient.ClientIp = "10.1.1.1";

        Assert.Equal(7UL, shared.ClientId);
        Assert.Null(shared.ClientIp);
        Assert.Equal("NCOURIER0001", perClient.ServerId);
    }
}
