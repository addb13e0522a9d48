using System.Text;
using Courier.Protocols.Nats;
using Xunit;

namespace Courier.Protocols.Tests.Nats;

/// <summary>The leaf node lines nats-server 2.9 writes (leafnode.go's writeLeafSub, client.go's LMSG/HMSG to a leaf), byte for byte.</summary>
public sealed class LeafWriterTests
{
    [Theory]
    [InlineData("", 0, "LS+ foo.>\r\n")]
    [InlineData("workers", 12, "LS+ foo.> workers 12\r\n")]
    public void Ls_plus_sends_the_weight_only_with_a_queue(string queue, int weight, string expected)
    {
        var into = new byte[64];
        var n = LeafWriter.WriteSub(into, "foo.>"u8, Encoding.ASCII.GetBytes(queue), weight);
        Assert.Equal(expected, Encoding.ASCII.GetString(into, 0, n));
    }

    [Theory]
    [InlineData("", "LS- foo\r\n")]
    [InlineData("workers", "LS- foo workers\r\n")]
    public void Ls_minus_names_the_queue_without_a_weight(string queue, string expected)
    {
        var into = new byte[64];
        var n = LeafWriter.WriteUnsub(into, "foo"u8, Encoding.ASCII.GetBytes(queue));
        Assert.Equal(expected, Encoding.ASCII.GetString(into, 0, n));
    }

    [Theory]
    [InlineData("", "", -1, 5, "LMSG foo 5\r\n")]
    [InlineData("_INBOX.1", "", -1, 5, "LMSG foo _INBOX.1 5\r\n")]
    [InlineData("_INBOX.1", "q1 q2", -1, 5, "LMSG foo + _INBOX.1 q1 q2 5\r\n")]
    [InlineData("", "q1", -1, 5, "LMSG foo | q1 5\r\n")]
    [InlineData("", "", 3, 5, "HMSG foo 3 5\r\n")]
    [InlineData("r", "q1", 3, 5, "HMSG foo + r q1 3 5\r\n")]
    public void Message_lines_have_nats_servers_leaf_forms(string reply, string queues, int headerSize, int size, string expected)
    {
        var into = new byte[128];
        var n = LeafWriter.WriteMsgLine(into, "foo"u8, Encoding.ASCII.GetBytes(reply), Encoding.ASCII.GetBytes(queues), headerSize, size);
        Assert.Equal(expected, Encoding.ASCII.GetString(into, 0, n));
    }

    [Fact]
    public void A_line_that_does_not_fit_is_not_written()
    {
        Assert.Equal(-1, LeafWriter.WriteMsgLine(new byte[8], "a.long.subject"u8, default, default, -1, 5));
    }
}
