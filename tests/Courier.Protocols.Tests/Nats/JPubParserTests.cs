using Courier.Protocols.Nats;
using Xunit;
using static Courier.Protocols.Tests.Nats.ParsedCommand;

namespace Courier.Protocols.Tests.Nats;

/// <summary>
/// JPUB, the op through which JetStream's actors hand a delivery to their in-process connection:
/// <c>JPUB &lt;deliver-subject&gt; &lt;subject&gt; &lt;reply-to&gt; &lt;#header bytes&gt; &lt;#total bytes&gt;</c>.
/// Read in one pass when whole and canonical, by the general path otherwise (every feeding of
/// <see cref="ParserFeeds"/> goes through both); accepted only by a parser that allows internal ops.
/// </summary>
public sealed class JPubParserTests
{
    private const string Reply = "$JS.ACK.ORDERS.proc.1.48213.48213.1764251721123456789.0";

    private static NatsParser Internal() => new() { AllowInternalOps = true };

    [Fact]
    public void A_delivery_is_read_with_its_three_subjects_and_payload() =>
        ParserFeeds.AssertEveryFeeding(
            Internal,
            $"JPUB _INBOX.push orders.eu.created {Reply} 0 5\r\nhello\r\nJPUB d s r 0 0\r\n\r\n",
            ParseOutcome.Complete(JPub("_INBOX.push", "orders.eu.created", Reply, 0, "hello"), JPub("d", "s", "r", 0, "")));

    [Fact]
    public void A_delivery_with_headers_counts_them_in_its_total() =>
        ParserFeeds.AssertEveryFeeding(
            Internal,
            $"JPUB _INBOX.push orders.eu.created {Reply} 18 23\r\nNATS/1.0\r\nA: b\r\n\r\nhello\r\n",
            ParseOutcome.Complete(JPub("_INBOX.push", "orders.eu.created", Reply, 18, "NATS/1.0\r\nA: b\r\n\r\nhello")));

    [Theory]
    [InlineData("JPUB\td s r 0 5\r\nhello\r\n")]
    [InlineData("JPUB  d  s\tr 0 5\r\nhello\r\n")]
    [InlineData("JPUB d s r 0 5 \r\nhello\r\n")]
    [InlineData("JPUB d s r 0 5\nhello\r\n")]
    [InlineData("jpub d s r 0 5\r\nhello\r\n")]
    public void Other_spellings_read_as_the_canonical_form(string input) =>
        ParserFeeds.AssertEveryFeeding(Internal, input, ParseOutcome.Complete(JPub("d", "s", "r", 0, "hello")));

    [Theory]
    [InlineData("JPUB d s r 6 5\r\nhello\r\n")]
    [InlineData("JPUB d s 0 5\r\nhello\r\n")]
    [InlineData("JPUB d s r 0 5 6\r\nhello\r\n")]
    [InlineData("JPUB d s r x 5\r\nhello\r\n")]
    [InlineData("JPUB d s r 0 5x\r\nhello\r\n")]
    [InlineData("JPUB d s r 0 9999999999\r\nhello\r\n")]
    public void A_bad_count_of_arguments_or_sizes_is_refused(string input) =>
        ParserFeeds.AssertEveryFeeding(Internal, input, ParseOutcome.Rejected(ParseError.InvalidArguments));

    [Fact]
    public void A_payload_not_followed_by_crlf_is_an_unknown_operation() =>
        ParserFeeds.AssertEveryFeeding(Internal, "JPUB d s r 0 5\r\nhelloXY", ParseOutcome.Rejected(ParseError.UnknownOperation));

    [Fact]
    public void A_client_connection_does_not_accept_it() =>
        ParserFeeds.AssertEveryFeeding(() => new NatsParser(), "JPUB d s r 0 5\r\nhello\r\n", ParseOutcome.Rejected(ParseError.UnknownOperation));
}
