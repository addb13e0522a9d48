using System.Buffers;
using Courier.Protocols.Nats;
using Xunit;
using static Courier.Protocols.Tests.Nats.ParsedCommand;

namespace Courier.Protocols.Tests.Nats;

/// <summary>
/// Hostile and malformed input: every length is judged from the control line alone, before any
/// payload is waited for, and each error is the one nats-server sends. Every input is fed every
/// way (see <see cref="ParserFeeds"/>).
/// </summary>
public sealed class NatsParserRejectionTests
{
    // Small enough to build lines around by hand, as nats-server's tests do. Bytes.
    private const int SmallControlLine = 64;

    private static NatsParser DefaultParser() => new();

    private static NatsParser SmallParser() => new(maxControlLine: SmallControlLine);

    private static void AssertRejected(string input, ParseError error, params ParsedCommand[] before) =>
        ParserFeeds.AssertEveryFeeding(DefaultParser, input, ParseOutcome.Rejected(error, before));

    // Sizes against max_payload.

    [Theory]
    [InlineData("PUB foo 99999999999\r\n")]
    [InlineData("PUB foo reply 99999999999\r\n")]
    [InlineData("PUB foo 1073741824\r\n")]
    [InlineData("PUB foo 999999999999999999\r\n")]
    [InlineData("HPUB foo 12 99999999999\r\n")]
    [InlineData("HPUB foo reply 12 1073741824\r\n")]
    public void Pub_announcing_a_huge_payload_is_rejected_without_waiting_for_the_payload(string line) =>
        AssertRejected(line, ParseError.MaxPayloadViolation);

    [Theory]
    [InlineData("PUB foo 5\r\nhelloXY")]
    [InlineData("PUB foo 5\r\nhello\rX")]
    [InlineData("PUB foo bar 5\r\nhello\n\r")]
    public void Pub_whose_payload_is_not_followed_by_crlf_is_an_unknown_operation(string input) =>
        AssertRejected(input, ParseError.UnknownOperation);

    [Fact]
    public void Jpub_is_an_unknown_operation_as_in_nats_server() =>
        AssertRejected("JPUB d s r 0 5\r\nhello\r\n", ParseError.UnknownOperation);

    [Theory]
    [InlineData("PUB foo bar baz 5\r\nhello\r\n")]
    [InlineData("PUB foo 5x\r\nhello\r\n")]
    [InlineData("PUB foo -5\r\nhello\r\n")]
    public void Pub_with_too_many_arguments_or_a_bad_size_is_refused(string input) =>
        AssertRejected(input, ParseError.InvalidArguments);

    [Fact]
    public void Pub_one_byte_over_max_payload_is_rejected() =>
        AssertRejected("PUB foo 1048577\r\n", ParseError.MaxPayloadViolation);

    [Fact]
    public void Hpub_total_one_byte_over_max_payload_is_rejected() =>
        AssertRejected("HPUB foo 12 1048577\r\n", ParseError.MaxPayloadViolation);

    [Fact]
    public void Max_payload_counts_headers_and_body_together()
    {
        ParserFeeds.AssertEveryFeeding(
            () => new NatsParser(maxPayload: 16),
            "HPUB foo 12 17\r\nNATS/1.0\r\n\r\nhello\r\n",
            ParseOutcome.Rejected(ParseError.MaxPayloadViolation));
        ParserFeeds.AssertEveryFeeding(
            () => new NatsParser(maxPayload: 17),
            "HPUB foo 12 17\r\nNATS/1.0\r\n\r\nhello\r\n",
            ParseOutcome.Complete(HPub("foo", 12, "NATS/1.0\r\n\r\nhello")));
    }

    [Fact]
    public void Pub_exactly_at_max_payload_waits_for_its_payload()
    {
        const string Line = "PUB foo 1048576\r\n";
        ParserFeeds.AssertEveryFeeding(DefaultParser, Line, ParseOutcome.Partial(Line.Length));
    }

    [Fact]
    public void Max_payload_may_be_lowered_on_a_live_parser()
    {
        var parser = new NatsParser { MaxPayload = 4 };
        var outcome = ParserFeeds.Run(parser, new ReadOnlySequence<byte>(ParserFeeds.Bytes("PUB foo 4\r\nabcd\r\nPUB foo 5\r\n")));
        Assert.Equal(ParseOutcome.Rejected(ParseError.MaxPayloadViolation, Pub("foo", "abcd")), outcome);
    }

    [Fact]
    public void Pub_with_a_size_of_int_max_under_an_int_max_limit_waits_for_its_payload()
    {
        const string Line = "PUB foo 2147483647\r\n";
        ParserFeeds.AssertEveryFeeding(() => new NatsParser(maxPayload: int.MaxValue), Line, ParseOutcome.Partial(Line.Length));
    }

    // Sizes that are not sizes.

    [Theory]
    [InlineData("PUB foo -1\r\n")]
    [InlineData("PUB foo -5\r\nhello\r\n")]
    [InlineData("PUB foo five\r\n")]
    [InlineData("PUB foo 5x\r\n")]
    [InlineData("PUB foo +5\r\n")]
    [InlineData("PUB foo 0x10\r\n")]
    [InlineData("PUB foo 5.0\r\n")]
    [InlineData("PUB foo reply -1\r\n")]
    [InlineData("PUB foo 1234567890123456789\r\n")]
    [InlineData("HPUB foo -1 5\r\n")]
    [InlineData("HPUB foo 1 -5\r\n")]
    [InlineData("HPUB foo x 5\r\n")]
    [InlineData("HPUB foo 12 y\r\n")]
    [InlineData("HPUB foo reply 12 y\r\n")]
    public void Negative_or_non_numeric_sizes_are_invalid_arguments(string line) =>
        AssertRejected(line, ParseError.InvalidArguments);

    [Theory]
    [InlineData("HPUB foo 13 12\r\n")]
    [InlineData("HPUB foo reply 6 5\r\nhello\r\n")]
    [InlineData("HPUB foo 1 0\r\n\r\n")]
    public void Hpub_header_size_over_total_size_is_invalid_arguments(string input) =>
        AssertRejected(input, ParseError.InvalidArguments);

    // Argument counts.

    [Theory]
    [InlineData("PUB \r\n")]
    [InlineData("PUB foo\r\n")]
    [InlineData("PUB 5\r\n")]
    [InlineData("PUB foo bar baz 5\r\n")]
    [InlineData("PUB a b c d e f 5\r\n")]
    [InlineData("HPUB foo\r\n")]
    [InlineData("HPUB foo 5\r\n")]
    [InlineData("HPUB foo bar baz 0 5\r\n")]
    [InlineData("HPUB a b c d e f 0 5\r\n")]
    [InlineData("SUB foo\r\n")]
    [InlineData("SUB foo q 1 2\r\n")]
    [InlineData("SUB a b c d e f\r\n")]
    [InlineData("UNSUB \r\n")]
    [InlineData("UNSUB 1 2 3\r\n")]
    [InlineData("CONNECT\r\n")]
    public void Wrong_argument_counts_are_invalid_arguments(string line) =>
        AssertRejected(line, ParseError.InvalidArguments);

    // An op with no separator after it is not the op at all (nats-server: parse error in OP_PUB etc.).
    [Theory]
    [InlineData("PUB\r\n")]
    [InlineData("HPUB\r\n")]
    [InlineData("SUB\r\n")]
    [InlineData("UNSUB\r\n")]
    [InlineData("-ERR\r\n")]
    public void An_op_without_its_arguments_is_an_unknown_operation(string line) =>
        AssertRejected(line, ParseError.UnknownOperation);

    // Ops.

    [Theory]
    [InlineData("FOO\r\n")]
    [InlineData("FOO bar\r\n")]
    [InlineData("\r\n")]
    [InlineData("\n")]
    [InlineData(" PING\r\n")]
    [InlineData("MSG foo 1 5\r\nhello\r\n")]
    [InlineData("HMSG foo 1 12 12\r\nNATS/1.0\r\n\r\n\r\n")]
    [InlineData("PUBX foo 5\r\n")]
    [InlineData("SUBfoo 1\r\n")]
    [InlineData("UNSUB1\r\n")]
    [InlineData("PIN\r\n")]
    [InlineData("PO\r\n")]
    [InlineData("+O\r\n")]
    [InlineData("-ER 'x'\r\n")]
    [InlineData("RS+ $G foo 1\r\n")]
    [InlineData("LS+ $G foo\r\n")]
    [InlineData("A+ foo\r\n")]
    public void Unknown_ops_are_unknown_operations(string line) =>
        AssertRejected(line, ParseError.UnknownOperation);

    [Fact]
    public void Commands_before_a_bad_one_are_still_read() =>
        AssertRejected("PING\r\nSUB foo 1\r\nFOO\r\nPONG\r\n", ParseError.UnknownOperation, Ping, Sub("foo", "1"));

    // The CRLF that ends a payload.

    [Theory]
    [InlineData("PUB foo 5\r\nhelloX\r\n")]
    [InlineData("PUB foo 5\r\nhello world\r\n")]
    [InlineData("PUB foo 5\r\nhello\rX")]
    [InlineData("PUB foo 5\r\nhello\n")]
    [InlineData("PUB foo 5\r\nhello\nPING\r\n")]
    [InlineData("PUB foo 0\r\nX\r\n")]
    [InlineData("HPUB foo 12 12\r\nNATS/1.0\r\n\r\nX\r\n")]
    public void A_payload_not_followed_by_crlf_is_an_unknown_operation(string input) =>
        AssertRejected(input, ParseError.UnknownOperation);

    // max_control_line.

    [Theory]
    [InlineData("PUB ", " 0", "\r\n")]
    [InlineData("PUB ", " reply 0", "\r\n")]
    [InlineData("HPUB ", " 0 0", "\r\n")]
    [InlineData("SUB ", " 1", "")]
    [InlineData("SUB ", " queue 1", "")]
    [InlineData("UNSUB ", " 1", "")]
    [InlineData("CONNECT {\"name\":\"", "\"}", "")]
    [InlineData("INFO {\"server_id\":\"", "\"}", "")]
    [InlineData("-ERR '", "'", "")]
    public void Arguments_of_exactly_max_control_line_are_read_and_one_byte_more_is_rejected(string lineStart, string argsEnd, string afterLine)
    {
        // As nats-server, the limit applies to the arguments: what follows the op and its separator.
        var argsStart = lineStart[(lineStart.IndexOf(' ') + 1)..];
        string Input(int argsLength) =>
            lineStart + new string('a', argsLength - argsStart.Length - argsEnd.Length) + argsEnd + "\r\n" + afterLine;

        var atLimit = ParserFeeds.AssertEveryFeedingAgrees(SmallParser, ParserFeeds.Bytes(Input(SmallControlLine)));
        Assert.True(atLimit.Final == ParseStatus.NeedMoreData, atLimit.ToString());
        Assert.Single(atLimit.Commands);
        Assert.Equal(0, atLimit.Unconsumed);

        ParserFeeds.AssertEveryFeeding(SmallParser, Input(SmallControlLine + 1), ParseOutcome.Rejected(ParseError.MaxControlLineExceeded));
    }

    [Theory]
    [InlineData("PUB foo ")]
    [InlineData("SUB ")]
    [InlineData("CONNECT ")]
    [InlineData("INFO ")]
    public void A_complete_control_line_far_over_the_limit_is_rejected(string lineStart) =>
        ParserFeeds.AssertEveryFeeding(
            SmallParser,
            lineStart + new string('a', 10 * SmallControlLine) + " 1\r\n",
            ParseOutcome.Rejected(ParseError.MaxControlLineExceeded));

    [Fact]
    public void A_control_line_over_the_default_limit_is_rejected() =>
        AssertRejected("SUB " + new string('a', 4096) + " 1\r\n", ParseError.MaxControlLineExceeded);

    [Theory]
    [InlineData("PUB ")]
    [InlineData("SUB ")]
    [InlineData("CONNECT ")]
    [InlineData("-ERR ")]
    public void A_control_line_with_no_lf_is_rejected_once_it_outgrows_the_limit_in_every_feeding(string lineStart) =>
        ParserFeeds.AssertEveryFeeding(
            SmallParser,
            lineStart + new string('a', 10 * SmallControlLine),
            ParseOutcome.Rejected(ParseError.MaxControlLineExceeded));

    [Fact]
    public void A_control_line_with_no_lf_needs_more_data_while_under_the_limit_and_is_rejected_just_past_it()
    {
        // Delivered one byte per read, each read a new segment, as a slow-loris client would.
        var input = ParserFeeds.Bytes("SUB " + new string('a', 10 * SmallControlLine));
        var parser = SmallParser();
        var rejectedAt = -1;
        for (var length = 1; length <= input.Length && rejectedAt < 0; length++)
        {
            var buffered = Sequences.ByteByByte(input[..length]);
            var reader = new SequenceReader<byte>(buffered);
            var command = default(ClientCommand);
            var status = parser.TryRead(ref reader, ref command, out var error);
            if (status == ParseStatus.NeedMoreData)
            {
                Assert.Equal(0, reader.Consumed);
                continue;
            }

            Assert.Equal(ParseStatus.Error, status);
            Assert.Equal(ParseError.MaxControlLineExceeded, error);
            rejectedAt = length;
        }

        // nats-server allows "SUB " plus max_control_line argument bytes; a few bytes of slack
        // for the op are fine, but the line must not grow without bound.
        Assert.InRange(rejectedAt, "SUB ".Length + SmallControlLine + 1, SmallControlLine + 16);
    }

    [Fact]
    public void A_control_line_with_no_lf_under_the_limit_just_waits() =>
        ParserFeeds.AssertEveryFeeding(
            SmallParser,
            "SUB " + new string('a', SmallControlLine - 8),
            ParseOutcome.Partial("SUB ".Length + SmallControlLine - 8));
}
