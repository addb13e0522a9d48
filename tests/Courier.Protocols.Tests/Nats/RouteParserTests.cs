using System.Buffers;
using System.Text;
using Courier.Protocols.Nats;
using Xunit;

namespace Courier.Protocols.Tests.Nats;

/// <summary>
/// The route protocol as nats-server 2.9 speaks it (route.go's processRemoteSub, processRemoteUnsub,
/// processRoutedMsgArgs and processRoutedHeaderMsgArgs), each input delivered whole, byte by byte and
/// split in two at every position.
/// </summary>
public sealed class RouteParserTests
{
    [Fact]
    public void Rs_plus_without_a_queue_names_the_account_and_subject()
    {
        var parsed = AssertEveryFeeding("RS+ $G foo.*\r\n");
        Assert.Equal(["Sub acc=$G subj=foo.* queue= weight=0"], parsed);
    }

    [Fact]
    public void Rs_plus_with_a_queue_carries_its_weight()
    {
        var parsed = AssertEveryFeeding("rs+ ACC  orders.>\tworkers 3\r\n");
        Assert.Equal(["Sub acc=ACC subj=orders.> queue=workers weight=3"], parsed);
    }

    [Fact]
    public void Rs_minus_with_and_without_a_queue()
    {
        var parsed = AssertEveryFeeding("RS- $G foo\r\nRS- $G foo workers\r\n");
        Assert.Equal(["Unsub acc=$G subj=foo queue=", "Unsub acc=$G subj=foo queue=workers"], parsed);
    }

    [Fact]
    public void Rmsg_forms_for_plain_subscribers_with_and_without_a_reply()
    {
        var parsed = AssertEveryFeeding("RMSG $G foo 5\r\nhello\r\nRMSG $G foo _INBOX.1 2\r\nhi\r\n");
        Assert.Equal(
        [
            "Msg acc=$G subj=foo reply= queues=[] hdr=-1 payload=hello",
            "Msg acc=$G subj=foo reply=_INBOX.1 queues=[] hdr=-1 payload=hi",
        ],
            parsed);
    }

    // As nats-server's parser: arguments separated by runs of spaces or tabs, a case-insensitive op, a bare LF.
    [Theory]
    [InlineData("RMSG\t$G foo _INBOX.1 2\r\nhi\r\n")]
    [InlineData("RMSG $G  foo _INBOX.1 2\r\nhi\r\n")]
    [InlineData("RMSG $G foo\t_INBOX.1 2\r\nhi\r\n")]
    [InlineData("RMSG $G foo _INBOX.1 2 \r\nhi\r\n")]
    [InlineData("rmsg $G foo _INBOX.1 2\r\nhi\r\n")]
    [InlineData("RMSG $G foo _INBOX.1 2\nhi\r\n")]
    public void Rmsg_spelled_with_tabs_runs_of_spaces_or_a_bare_lf_reads_as_with_single_spaces(string input) =>
        Assert.Equal(["Msg acc=$G subj=foo reply=_INBOX.1 queues=[] hdr=-1 payload=hi"], AssertEveryFeeding(input));

    [Fact]
    public void Rmsg_with_a_reply_indicator_lists_the_queue_groups_it_is_for()
    {
        var parsed = AssertEveryFeeding("RMSG $G foo + _INBOX.7 q1 q2 3\r\nabc\r\nRMSG $G foo | q1 1\r\nx\r\nRMSG $G foo + r 0\r\n\r\n");
        Assert.Equal(
        [
            "Msg acc=$G subj=foo reply=_INBOX.7 queues=[q1,q2] hdr=-1 payload=abc",
            "Msg acc=$G subj=foo reply= queues=[q1] hdr=-1 payload=x",
            "Msg acc=$G subj=foo reply=r queues=[] hdr=-1 payload=",
        ],
            parsed);
    }

    [Fact]
    public void Hmsg_as_nats_server_sends_it_and_hrmsg_carry_the_header_size_before_the_total()
    {
        const string Headers = "NATS/1.0\r\nA: b\r\n\r\n";
        var total = Headers.Length + 2;
        var parsed = AssertEveryFeeding(
            $"HRMSG $G foo {Headers.Length} {total}\r\n{Headers}hi\r\n" +
            $"HMSG $G foo + reply q1 {Headers.Length} {total}\r\n{Headers}hi\r\n");
        var body = Headers.Replace("\r\n", "|", StringComparison.Ordinal) + "hi";
        Assert.Equal(
        [
            $"HMsg acc=$G subj=foo reply= queues=[] hdr={Headers.Length} payload={body}",
            $"HMsg acc=$G subj=foo reply=reply queues=[q1] hdr={Headers.Length} payload={body}",
        ],
            parsed);
    }

    [Fact]
    public void Handshake_and_keepalive_ops_are_read_with_their_text()
    {
        var parsed = AssertEveryFeeding("INFO {\"server_id\":\"A\"}\r\nCONNECT {\"name\":\"A\"}\r\nPING\r\nPONG\r\n+OK\r\n-ERR 'Unknown Protocol Operation'\r\n");
        Assert.Equal(
        [
            "Info {\"server_id\":\"A\"}",
            "Connect {\"name\":\"A\"}",
            "Ping",
            "Pong",
            "Ok",
            "Err 'Unknown Protocol Operation'",
        ],
            parsed);
    }

    [Theory]
    [InlineData("RS+ $G\r\n")] // no subject
    [InlineData("RS+ $G foo q\r\n")] // a queue without its weight
    [InlineData("RS+ $G foo q x\r\n")] // a weight that is not a number
    [InlineData("RS- $G\r\n")]
    [InlineData("RS- $G foo q extra\r\n")]
    [InlineData("RMSG $G 5\r\n")] // no subject
    [InlineData("RMSG $G foo x\r\n")] // the size is not a number
    [InlineData("RMSG $G foo ? r q 1\r\n")] // neither + nor |
    [InlineData("RMSG $G foo ++ r q 1\r\n")]
    [InlineData("HRMSG $G foo 5\r\n")] // no total size
    [InlineData("HRMSG $G foo 9 5\r\n")] // headers larger than the total
    public void Malformed_arguments_close_the_route(string input) =>
        Assert.Equal(ParseError.InvalidArguments, Fails(input));

    [Fact]
    public void An_unknown_op_and_a_payload_without_its_crlf_are_protocol_errors()
    {
        Assert.Equal(ParseError.UnknownOperation, Fails("SUB foo 1\r\n"));
        Assert.Equal(ParseError.UnknownOperation, Fails("RMSG $G foo 2\r\nhiX\r\n"));
    }

    [Fact]
    public void A_message_over_the_payload_bound_is_refused_from_its_control_line()
    {
        var parser = new RouteParser(maxPayload: 10);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("RMSG $G foo 11\r\n"u8.ToArray()));
        var command = default(RouteCommand);
        Assert.Equal(ParseStatus.Error, parser.TryRead(ref reader, ref command, out var error));
        Assert.Equal(ParseError.MaxPayloadViolation, error);
    }

    [Fact]
    public void A_control_line_over_the_limit_is_refused_before_its_end_arrives()
    {
        var parser = new RouteParser(maxControlLine: 64);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(Encoding.ASCII.GetBytes("RS+ $G " + new string('a', 100))));
        var command = default(RouteCommand);
        Assert.Equal(ParseStatus.Error, parser.TryRead(ref reader, ref command, out var error));
        Assert.Equal(ParseError.MaxControlLineExceeded, error);
    }

    [Fact]
    public void Next_queue_walks_a_queue_list_separated_by_spaces_and_tabs()
    {
        ReadOnlySpan<byte> queues = "a \tbb  c"u8;
        var names = new List<string>();
        while (RouteParser.NextQueue(ref queues, out var q))
        {
            names.Add(Encoding.ASCII.GetString(q));
        }

        Assert.Equal(["a", "bb", "c"], names);
    }

    // The leaf node protocol (leafnode.go's processLeafSub, processLeafUnsub, processLeafMsgArgs and
    // processLeafHeaderMsgArgs): the route forms without an account.
    [Fact]
    public void Ls_plus_and_ls_minus_name_the_subject_and_queue_without_an_account()
    {
        var parsed = AssertEveryFeeding("LS+ foo.*\r\nls+ orders.>\tworkers 3\r\nLS- foo.*\r\nLS- orders.> workers\r\n", leaf: true);
        Assert.Equal(
        [
            "Sub acc= subj=foo.* queue= weight=0",
            "Sub acc= subj=orders.> queue=workers weight=3",
            "Unsub acc= subj=foo.* queue=",
            "Unsub acc= subj=orders.> queue=workers",
        ],
            parsed);
    }

    [Fact]
    public void Lmsg_and_a_leafs_hmsg_carry_the_reply_and_queue_groups_without_an_account()
    {
        const string Headers = "NATS/1.0\r\n\r\n";
        var total = Headers.Length + 2;
        var parsed = AssertEveryFeeding(
            "LMSG foo 5\r\nhello\r\nLMSG foo _INBOX.1 2\r\nhi\r\nLMSG foo + _INBOX.7 q1 q2 3\r\nabc\r\nLMSG foo | q1 1\r\nx\r\n" +
            $"HMSG foo reply {Headers.Length} {total}\r\n{Headers}hi\r\n",
            leaf: true);
        Assert.Equal(
        [
            "Msg acc= subj=foo reply= queues=[] hdr=-1 payload=hello",
            "Msg acc= subj=foo reply=_INBOX.1 queues=[] hdr=-1 payload=hi",
            "Msg acc= subj=foo reply=_INBOX.7 queues=[q1,q2] hdr=-1 payload=abc",
            "Msg acc= subj=foo reply= queues=[q1] hdr=-1 payload=x",
            $"HMsg acc= subj=foo reply=reply queues=[] hdr={Headers.Length} payload=NATS/1.0||hi",
        ],
            parsed);
    }

    [Theory]
    [InlineData("RS+ $G foo\r\n")]
    [InlineData("RMSG $G foo 1\r\nx\r\n")]
    [InlineData("LS+ foo q\r\n")]
    [InlineData("LMSG foo\r\n")]
    public void A_leaf_link_refuses_route_ops_and_malformed_leaf_lines(string input) =>
        Assert.NotEqual(ParseError.None, Fails(input, leaf: true));

    [Fact]
    public void A_route_refuses_leaf_link_forms_without_origin_and_account() =>
        Assert.NotEqual(ParseError.None, Fails("LS+ foo\r\n"));

    // nats-server 2.9's lnoc forms on a route: interest and messages of a leaf link in a named cluster.
    [Fact]
    public void A_routes_ls_plus_ls_minus_and_lmsg_carry_the_origin_cluster_and_account()
    {
        var parsed = AssertEveryFeeding("LS+ LC $G foo q 2\r\nLS+ LC $G bar\r\nLS- $G foo q\r\nLMSG LC $G foo + r q1 0 2\r\nhi\r\nLMSG LC $G foo 0 2\r\nhi\r\n");
        Assert.Equal(
        [
            "Sub acc=$G subj=foo queue=q weight=2",
            "Sub acc=$G subj=bar queue= weight=0",
            "Unsub acc=$G subj=foo queue=q",
            "HMsg acc=$G subj=foo reply=r queues=[q1] hdr=0 payload=hi",
            "HMsg acc=$G subj=foo reply= queues=[] hdr=0 payload=hi",
        ],
            parsed);

        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(Encoding.ASCII.GetBytes("LMSG LC $G foo 0 2\r\nhi\r\n")));
        var command = default(RouteCommand);
        Assert.Equal(ParseStatus.Command, new RouteParser().TryRead(ref reader, ref command, out _));
        Assert.Equal("LC", Encoding.ASCII.GetString(command.Origin));
    }

    private static List<string> AssertEveryFeeding(string input, bool leaf = false)
    {
        var bytes = Encoding.ASCII.GetBytes(input);
        var whole = Run(new ReadOnlySequence<byte>(bytes), out var status, leaf);
        Assert.Equal(ParseStatus.NeedMoreData, status);
        Assert.Equal(whole, Run(Sequences.ByteByByte(bytes), out _, leaf));
        for (var i = 0; i <= bytes.Length; i++)
        {
            Assert.Equal(whole, Run(Sequences.SplitAt(bytes, i), out _, leaf));
        }

        // As a pipe delivers it: a byte more each round, the unconsumed rest kept.
        var parser = new RouteParser(leaf: leaf);
        var incremental = new List<string>();
        var consumed = 0;
        for (var received = 1; received <= bytes.Length; received++)
        {
            var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(bytes, consumed, received - consumed));
            incremental.AddRange(Read(parser, ref reader, out _));
            consumed += (int)reader.Consumed;
        }

        Assert.Equal(whole, incremental);
        return whole;
    }

    private static List<string> Run(ReadOnlySequence<byte> buffer, out ParseStatus final, bool leaf = false)
    {
        var reader = new SequenceReader<byte>(buffer);
        var parsed = Read(new RouteParser(leaf: leaf), ref reader, out final);
        Assert.Equal(0, reader.Remaining);
        return parsed;
    }

    private static List<string> Read(RouteParser parser, ref SequenceReader<byte> reader, out ParseStatus final)
    {
        var parsed = new List<string>();
        var command = default(RouteCommand);
        while (true)
        {
            var before = reader.Consumed;
            final = parser.TryRead(ref reader, ref command, out var error);
            if (final != ParseStatus.Command)
            {
                Assert.Equal(ParseStatus.NeedMoreData, final);
                Assert.Equal(ParseError.None, error);
                Assert.Equal(before, reader.Consumed);
                return parsed;
            }

            parsed.Add(Describe(command));
        }
    }

    private static ParseError Fails(string input, bool leaf = false)
    {
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(Encoding.ASCII.GetBytes(input)));
        var command = default(RouteCommand);
        var parser = new RouteParser(leaf: leaf);
        ParseStatus status;
        ParseError error;
        do
        {
            status = parser.TryRead(ref reader, ref command, out error);
        }
        while (status == ParseStatus.Command);

        Assert.Equal(ParseStatus.Error, status);
        return error;
    }

    private static string Describe(in RouteCommand c)
    {
        static string S(ReadOnlySpan<byte> s) => Encoding.ASCII.GetString(s);
        switch (c.Op)
        {
            case RouteOp.Sub:
                return $"Sub acc={S(c.Account)} subj={S(c.Subject)} queue={S(c.Queue)} weight={c.Weight}";
            case RouteOp.Unsub:
                return $"Unsub acc={S(c.Account)} subj={S(c.Subject)} queue={S(c.Queue)}";
            case RouteOp.Msg:
            case RouteOp.HMsg:
                var queues = new List<string>();
                var list = c.Queues;
                while (RouteParser.NextQueue(ref list, out var q))
                {
                    queues.Add(S(q));
                }

                var payload = Encoding.ASCII.GetString(c.Payload.ToArray()).Replace("\r\n", "|", StringComparison.Ordinal);
                return $"{c.Op} acc={S(c.Account)} subj={S(c.Subject)} reply={S(c.ReplyTo)} queues=[{string.Join(',', queues)}] hdr={c.HeaderSize} payload={payload}";
            case RouteOp.Info:
            case RouteOp.Connect:
            case RouteOp.Err:
                return $"{c.Op} {S(c.Arguments)}";
            default:
                return c.Op.ToString();
        }
    }
}
