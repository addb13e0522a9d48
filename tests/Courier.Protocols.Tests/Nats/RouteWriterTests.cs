using System.Buffers;
using System.Text;
using Courier.Protocols.Nats;
using Xunit;

namespace Courier.Protocols.Tests.Nats;

/// <summary>The route lines nats-server 2.9 writes, byte for byte, and read back by <see cref="RouteParser"/>.</summary>
public sealed class RouteWriterTests
{
    [Theory]
    [InlineData("", 0, "RS+ $G foo.>\r\n")]
    [InlineData("workers", 12, "RS+ $G foo.> workers 12\r\n")]
    public void Rs_plus_sends_the_weight_only_with_a_queue(string queue, int weight, string expected)
    {
        var into = new byte[64];
        var n = RouteWriter.WriteSub(into, "$G"u8, "foo.>"u8, Encoding.ASCII.GetBytes(queue), weight);
        Assert.Equal(expected, Encoding.ASCII.GetString(into, 0, n));
    }

    [Theory]
    [InlineData("", "RS- $G foo\r\n")]
    [InlineData("workers", "RS- $G foo workers\r\n")]
    public void Rs_minus_names_the_queue_without_a_weight(string queue, string expected)
    {
        var into = new byte[64];
        var n = RouteWriter.WriteUnsub(into, "$G"u8, "foo"u8, Encoding.ASCII.GetBytes(queue));
        Assert.Equal(expected, Encoding.ASCII.GetString(into, 0, n));
    }

    [Theory]
    [InlineData("", "", -1, 5, "RMSG $G foo 5\r\n")]
    [InlineData("_INBOX.1", "", -1, 5, "RMSG $G foo _INBOX.1 5\r\n")]
    [InlineData("_INBOX.1", "q1 q2", -1, 5, "RMSG $G foo + _INBOX.1 q1 q2 5\r\n")]
    [InlineData("", "q1", -1, 5, "RMSG $G foo | q1 5\r\n")]
    [InlineData("", "", 3, 5, "HMSG $G foo 3 5\r\n")]
    [InlineData("r", "q1", 3, 5, "HMSG $G foo + r q1 3 5\r\n")]
    public void Message_lines_have_nats_servers_forms_and_parse_back(string reply, string queues, int headerSize, int size, string expected)
    {
        var into = new byte[128];
        var n = RouteWriter.WriteMsgLine(into, "$G"u8, "foo"u8, Encoding.ASCII.GetBytes(reply), Encoding.ASCII.GetBytes(queues), headerSize, size);
        Assert.Equal(expected, Encoding.ASCII.GetString(into, 0, n));

        var frame = Encoding.ASCII.GetBytes(expected + "NATS/\r\n"[..size] + "\r\n");
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(frame));
        var command = default(RouteCommand);
        Assert.Equal(ParseStatus.Command, new RouteParser().TryRead(ref reader, ref command, out _));
        Assert.Equal(reply, Encoding.ASCII.GetString(command.ReplyTo));
        Assert.Equal(queues, Encoding.ASCII.GetString(command.Queues));
        Assert.Equal(headerSize, command.HeaderSize);
        Assert.Equal(size, command.Payload.Length);
    }

    [Fact]
    public void A_span_too_small_gets_minus_one_and_nothing_past_its_end()
    {
        var into = new byte[10];
        Assert.Equal(-1, RouteWriter.WriteSub(into, "$G"u8, "a.long.subject"u8, default, 0));
        Assert.Equal(-1, RouteWriter.WriteMsgLine(into, "$G"u8, "foo"u8, default, default, -1, 123456));
    }

    // nats-server 2.9's lnoc forms, for interest and messages of a leaf link in a named cluster.
    [Theory]
    [InlineData("", 0, "LS+ LC $G foo.>\r\n")]
    [InlineData("workers", 3, "LS+ LC $G foo.> workers 3\r\n")]
    public void Ls_plus_on_a_route_names_the_origin_cluster_before_the_account(string queue, int weight, string expected)
    {
        var into = new byte[64];
        var n = RouteWriter.WriteOriginSub(into, "LC"u8, "$G"u8, "foo.>"u8, Encoding.ASCII.GetBytes(queue), weight);
        Assert.Equal(expected, Encoding.ASCII.GetString(into, 0, n));
        Assert.Equal("LS- $G foo.> workers\r\n", Encoding.ASCII.GetString(into, 0, RouteWriter.WriteOriginUnsub(into, "$G"u8, "foo.>"u8, "workers"u8)));
    }

    [Theory]
    [InlineData("", "", -1, 5, "LMSG LC $G foo 0 5\r\n")]
    [InlineData("r", "q1", -1, 5, "LMSG LC $G foo + r q1 0 5\r\n")]
    [InlineData("r", "", 3, 5, "LMSG LC $G foo r 3 5\r\n")]
    public void Lmsg_on_a_route_names_the_origin_and_always_the_header_size(string reply, string queues, int headerSize, int size, string expected)
    {
        var into = new byte[128];
        var n = RouteWriter.WriteMsgLine(into, "LC"u8, "$G"u8, "foo"u8, Encoding.ASCII.GetBytes(reply), Encoding.ASCII.GetBytes(queues), headerSize, size);
        Assert.Equal(expected, Encoding.ASCII.GetString(into, 0, n));
    }
}
