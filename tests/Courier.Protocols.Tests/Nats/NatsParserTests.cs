using System.Buffers;
using System.Runtime.InteropServices;
using Courier.Protocols.Nats;
using Xunit;
using static Courier.Protocols.Tests.Nats.ParsedCommand;

namespace Courier.Protocols.Tests.Nats;

/// <summary>
/// The client grammar, as nats-server's parser.go reads it. Every input is fed whole, byte by byte,
/// split at every position and through a simulated pipe (see <see cref="ParserFeeds"/>).
/// </summary>
public sealed class NatsParserTests
{
    private static void AssertParses(string input, params ParsedCommand[] expected) =>
        ParserFeeds.AssertEveryFeeding(() => new NatsParser(), input, ParseOutcome.Complete(expected));

    // CONNECT {json}\r\n

    [Fact]
    public void Connect_is_read_with_its_json_as_arguments() =>
        AssertParses(
            "CONNECT {\"verbose\":false,\"pedantic\":false,\"lang\":\"go\"}\r\n",
            Connect("{\"verbose\":false,\"pedantic\":false,\"lang\":\"go\"}"));

    [Fact]
    public void Connect_arguments_start_after_a_run_of_spaces_and_tabs() =>
        AssertParses("CONNECT \t  {}\r\n", Connect("{}"));

    [Fact]
    public void Connect_json_may_contain_spaces() =>
        AssertParses("CONNECT { \"name\" : \"a b\" }\r\n", Connect("{ \"name\" : \"a b\" }"));

    // PING\r\n, PONG\r\n

    [Fact]
    public void Ping_is_read() => AssertParses("PING\r\n", Ping);

    [Fact]
    public void Pong_is_read() => AssertParses("PONG\r\n", Pong);

    [Fact]
    public void Ping_ignores_bytes_after_the_op_up_to_the_line_end_as_nats_server() =>
        AssertParses("PING now\r\nPONG\t!\r\n", Ping, Pong);

    // PUB <subject> [reply-to] <#bytes>\r\n[payload]\r\n

    [Fact]
    public void Pub_without_reply_is_read_with_its_payload() =>
        AssertParses("PUB foo 5\r\nhello\r\n", Pub("foo", "hello"));

    [Fact]
    public void Pub_with_reply_is_read_with_its_payload() =>
        AssertParses("PUB foo.bar _INBOX.Rx8.22 11\r\nhello world\r\n", Pub("foo.bar", "hello world", replyTo: "_INBOX.Rx8.22"));

    // The parser reads "PUB subject [reply] size" with single spaces in one pass; every other spelling
    // the grammar allows goes the general way and must read the same.
    [Theory]
    [InlineData("PUB\tfoo.bar 5\r\nhello\r\n", "foo.bar", "")]
    [InlineData("PUB  foo.bar 5\r\nhello\r\n", "foo.bar", "")]
    [InlineData("PUB foo.bar\t5\r\nhello\r\n", "foo.bar", "")]
    [InlineData("PUB foo.bar \t 5\r\nhello\r\n", "foo.bar", "")]
    [InlineData("PUB foo.bar 5 \r\nhello\r\n", "foo.bar", "")]
    [InlineData("PUB foo.bar 5\nhello\r\n", "foo.bar", "")]
    [InlineData("pub foo.bar 5\r\nhello\r\n", "foo.bar", "")]
    [InlineData("PUB foo.bar 0000000005\r\nhello\r\n", "foo.bar", "")]
    [InlineData("PUB foo.bar  _INBOX.1 5\r\nhello\r\n", "foo.bar", "_INBOX.1")]
    [InlineData("PUB foo.bar _INBOX.1\t5\r\nhello\r\n", "foo.bar", "_INBOX.1")]
    [InlineData("PUB foo.bar\t_INBOX.1 5\r\nhello\r\n", "foo.bar", "_INBOX.1")]
    public void Pub_spelled_with_tabs_runs_of_spaces_or_a_bare_lf_reads_as_the_canonical_form(string input, string subject, string reply) =>
        AssertParses(input, Pub(subject, "hello", replyTo: reply));

    [Fact]
    public void Pub_with_zero_length_payload_is_read() =>
        AssertParses("PUB foo 0\r\n\r\n", Pub("foo", ""));

    [Fact]
    public void Pub_with_reply_and_zero_length_payload_is_read() =>
        AssertParses("PUB foo bar 0\r\n\r\nPING\r\n", Pub("foo", "", replyTo: "bar"), Ping);

    [Fact]
    public void Pub_payload_may_contain_crlf_and_text_that_looks_like_commands() =>
        AssertParses("PUB foo 10\r\na\r\nPING\r\nb\r\n", Pub("foo", "a\r\nPING\r\nb"));

    [Fact]
    public void Pub_payload_may_be_nothing_but_crlf() =>
        AssertParses("PUB foo 4\r\n\r\n\r\n\r\n", Pub("foo", "\r\n\r\n"));

    [Fact]
    public void Pub_payload_may_hold_every_byte_value()
    {
        var payload = new string(Enumerable.Range(0, 256).Select(b => (char)b).ToArray());
        AssertParses($"PUB bin 256\r\n{payload}\r\n", Pub("bin", payload));
    }

    [Fact]
    public void Pub_payload_is_a_slice_of_the_input_not_a_copy()
    {
        var input = ParserFeeds.Bytes("PUB foo 5\r\nhello\r\n");
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(input));
        var command = default(ClientCommand);

        var status = new NatsParser().TryRead(ref reader, ref command, out _);

        Assert.Equal(ParseStatus.Command, status);
        Assert.True(command.Payload.IsSingleSegment);
        Assert.True(MemoryMarshal.TryGetArray(command.Payload.First, out var segment));
        Assert.Same(input, segment.Array);
        Assert.Equal(11, segment.Offset);
        Assert.Equal(5, segment.Count);
    }

    // HPUB <subject> [reply-to] <#header bytes> <#total bytes>\r\n[headers]\r\n\r\n[payload]\r\n

    [Fact]
    public void Hpub_without_reply_is_read_with_header_size_and_whole_payload() =>
        AssertParses(
            "HPUB foo 12 17\r\nNATS/1.0\r\n\r\nhello\r\n",
            HPub("foo", 12, "NATS/1.0\r\n\r\nhello"));

    [Fact]
    public void Hpub_with_reply_is_read_with_header_size_and_whole_payload() =>
        AssertParses(
            "HPUB foo _INBOX.1 18 23\r\nNATS/1.0\r\nA: B\r\n\r\nhello\r\n",
            HPub("foo", 18, "NATS/1.0\r\nA: B\r\n\r\nhello", replyTo: "_INBOX.1"));

    [Fact]
    public void Hpub_with_headers_and_no_body_is_read() =>
        AssertParses("HPUB foo 12 12\r\nNATS/1.0\r\n\r\n\r\n", HPub("foo", 12, "NATS/1.0\r\n\r\n"));

    [Fact]
    public void Hpub_with_zero_header_and_total_size_is_read() =>
        AssertParses("HPUB foo 0 0\r\n\r\n", HPub("foo", 0, ""));

    // SUB <subject> [queue group] <sid>\r\n

    [Fact]
    public void Sub_without_queue_is_read() => AssertParses("SUB foo.* 1\r\n", Sub("foo.*", "1"));

    [Fact]
    public void Sub_with_queue_is_read() =>
        AssertParses("SUB foo.> workers 42\r\n", Sub("foo.>", "42", queue: "workers"));

    [Fact]
    public void Sub_sid_may_be_any_token() => AssertParses("SUB foo Abc-9_x\r\n", Sub("foo", "Abc-9_x"));

    // UNSUB <sid> [max_msgs]\r\n

    [Fact]
    public void Unsub_without_max_is_read_with_max_minus_one() => AssertParses("UNSUB 1\r\n", Unsub("1"));

    [Fact]
    public void Unsub_with_max_is_read() => AssertParses("UNSUB 1 10\r\n", Unsub("1", 10));

    [Fact]
    public void Unsub_with_a_non_numeric_max_is_read_as_immediate_as_nats_server() =>
        AssertParses("UNSUB 7 ten\r\n", Unsub("7", -1));

    // INFO {json}\r\n, +OK\r\n, -ERR <error>\r\n (a client may echo them; the server ignores them)

    [Fact]
    public void Info_is_read_with_its_json_as_arguments() =>
        AssertParses("INFO {\"server_id\":\"x\"}\r\n", Info("{\"server_id\":\"x\"}"));

    [Fact]
    public void Ok_is_read() => AssertParses("+OK\r\n", Ok);

    [Fact]
    public void Err_is_read_with_its_text_as_arguments() =>
        AssertParses("-ERR 'Unknown Protocol Operation'\r\n", Err("'Unknown Protocol Operation'"));

    // Grammar shared by every op.

    [Theory]
    [InlineData("pub foo 5\r\nhello\r\n", "PUB foo 5\r\nhello\r\n")]
    [InlineData("Pub FOO.Bar Reply 1\r\nx\r\n", "PUB FOO.Bar Reply 1\r\nx\r\n")]
    [InlineData("hpub foo 12 12\r\nNATS/1.0\r\n\r\n\r\n", "HPUB foo 12 12\r\nNATS/1.0\r\n\r\n\r\n")]
    [InlineData("sUb foo q 1\r\n", "SUB foo q 1\r\n")]
    [InlineData("unsub 1 2\r\n", "UNSUB 1 2\r\n")]
    [InlineData("PiNg\r\n", "PING\r\n")]
    [InlineData("pong\r\n", "PONG\r\n")]
    [InlineData("connect {}\r\n", "CONNECT {}\r\n")]
    [InlineData("iNfO {}\r\n", "INFO {}\r\n")]
    [InlineData("+ok\r\n", "+OK\r\n")]
    [InlineData("-err 'x'\r\n", "-ERR 'x'\r\n")]
    public void Ops_are_case_insensitive_and_arguments_keep_their_case(string mixedCase, string upperCase)
    {
        var expected = ParserFeeds.Run(new NatsParser(), new ReadOnlySequence<byte>(ParserFeeds.Bytes(upperCase)));
        Assert.Single(expected.Commands);
        ParserFeeds.AssertEveryFeeding(() => new NatsParser(), mixedCase, expected);
    }

    [Theory]
    [InlineData("")]
    [InlineData(" \t ")]
    [InlineData("a")]
    [InlineData("  a")]
    [InlineData("a  ")]
    [InlineData("\ta\tb\t")]
    [InlineData("a b c d e")]
    [InlineData("a b c d e f")]
    [InlineData("_INBOX.Kf7YpQ2mWbX9cLr4TnZs8a orders.eu.created $JS.ACK.ORDERS.processor.1.48213.48213.1764251721123456789.0 0 128")]
    [InlineData("  _INBOX.Kf7YpQ2mWbX9cLr4TnZs8a\t\t orders.eu.created   $JS.ACK.ORDERS.processor.1.48213.48213.1764251721123456789.0 \t0 128 \t")]
    public void Split_args_finds_the_tokens_between_runs_of_spaces_and_tabs_and_counts_one_past_the_room(string args)
    {
        var expected = args.Split([' ', '\t'], StringSplitOptions.RemoveEmptyEntries);
        var ranges = new Range[5];
        var bytes = System.Text.Encoding.ASCII.GetBytes(args);
        var count = NatsParser.SplitArgs(bytes, ranges);
        Assert.Equal(Math.Min(expected.Length, ranges.Length + 1), count);
        for (var i = 0; i < Math.Min(count, ranges.Length); i++)
        {
            Assert.Equal(expected[i], System.Text.Encoding.ASCII.GetString(bytes[ranges[i]]));
        }
    }

    [Fact]
    public void Arguments_are_separated_by_tabs_and_runs_of_spaces() =>
        AssertParses(
            "PUB\tfoo \t bar\t\t5 \r\nhello\r\n"
            + "HPUB  foo\t12   12\t\r\nNATS/1.0\r\n\r\n\r\n"
            + "SUB \t foo\t\tq   1  \r\n"
            + "UNSUB\t1\t 5\r\n",
            Pub("foo", "hello", replyTo: "bar"),
            HPub("foo", 12, "NATS/1.0\r\n\r\n"),
            Sub("foo", "1", queue: "q"),
            Unsub("1", 5));

    [Fact]
    public void Control_lines_may_end_with_a_bare_lf() =>
        AssertParses(
            "CONNECT {}\nPING\nPONG\nPUB foo 5\nhello\r\nHPUB foo 12 14\nNATS/1.0\r\n\r\nhi\r\nSUB foo 1\nUNSUB 1 3\n+OK\n-ERR 'x'\n",
            Connect("{}"),
            Ping,
            Pong,
            Pub("foo", "hello"),
            HPub("foo", 12, "NATS/1.0\r\n\r\nhi"),
            Sub("foo", "1"),
            Unsub("1", 3),
            Ok,
            Err("'x'"));

    [Fact]
    public void Many_commands_in_one_buffer_are_read_in_order() =>
        AssertParses(
            "CONNECT {\"verbose\":false}\r\n"
            + "PING\r\n"
            + "SUB foo 1\r\n"
            + "SUB foo.* q 2\r\n"
            + "PUB foo 5\r\nhello\r\n"
            + "PUB foo r 0\r\n\r\n"
            + "HPUB foo r 12 17\r\nNATS/1.0\r\n\r\nworld\r\n"
            + "UNSUB 1\r\n"
            + "UNSUB 2 100\r\n"
            + "PONG\r\n",
            Connect("{\"verbose\":false}"),
            Ping,
            Sub("foo", "1"),
            Sub("foo.*", "2", queue: "q"),
            Pub("foo", "hello"),
            Pub("foo", "", replyTo: "r"),
            HPub("foo", 12, "NATS/1.0\r\n\r\nworld", replyTo: "r"),
            Unsub("1"),
            Unsub("2", 100),
            Pong);

    [Fact]
    public void Same_pub_repeated_many_times_is_read_every_time()
    {
        var input = string.Concat(Enumerable.Repeat("PUB a.b 3\r\nabc\r\n", 20));
        AssertParses(input, Enumerable.Repeat(Pub("a.b", "abc"), 20).ToArray());
    }

    [Fact]
    public void Empty_input_needs_more_data() => AssertParses("");

    [Theory]
    [InlineData("P")]
    [InlineData("PING")]
    [InlineData("PING\r")]
    [InlineData("SUB foo 1")]
    [InlineData("PUB foo 5\r\n")]
    [InlineData("PUB foo 5\r\nhel")]
    [InlineData("PUB foo 5\r\nhello")]
    [InlineData("PUB foo 5\r\nhello\r")]
    [InlineData("HPUB foo 12 17\r\nNATS/1.0\r\n\r\nhello")]
    public void A_command_cut_short_needs_more_data_and_consumes_nothing(string input) =>
        ParserFeeds.AssertEveryFeeding(() => new NatsParser(), input, ParseOutcome.Partial(input.Length));

    [Fact]
    public void Complete_commands_before_a_cut_short_one_are_read_and_the_rest_left_unconsumed() =>
        ParserFeeds.AssertEveryFeeding(
            () => new NatsParser(),
            "PING\r\nSUB foo 1\r\nPUB foo 5\r\nhe",
            ParseOutcome.Partial("PUB foo 5\r\nhe".Length, Ping, Sub("foo", "1")));

    [Fact]
    public void A_parser_keeps_no_state_between_calls_so_one_parser_serves_many_buffers()
    {
        var parser = new NatsParser();
        var first = ParserFeeds.Run(parser, Sequences.ByteByByte(ParserFeeds.Bytes("SUB a 1\r\n")));
        var second = ParserFeeds.Run(parser, new ReadOnlySequence<byte>(ParserFeeds.Bytes("PUB b 1\r\nx\r\n")));

        Assert.Equal(ParseOutcome.Complete(Sub("a", "1")), first);
        Assert.Equal(ParseOutcome.Complete(Pub("b", "x")), second);
    }
}
