namespace Courier.Protocols.Nats;

/// <summary>
/// Formats the leaf node protocol's interest and message lines as nats-server 2.9 writes them
/// (leafnode.go's writeLeafSub, client.go's msgHeaderForRouteOrLeaf for a LEAF target): the route
/// forms without an account, since a leaf link is bound to one. Into a caller's span, no allocation;
/// each method returns the bytes written, or -1 when the span is too small.
/// </summary>
public static class LeafWriter
{
    /// <summary><c>LS+ &lt;subject&gt;[ &lt;queue&gt; &lt;weight&gt;]\r\n</c>; the weight is sent with a queue only.</summary>
    public static int WriteSub(Span<byte> into, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, int weight)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(weight);
        var w = new RouteWriter.LineWriter(into);
        w.Put("LS+ "u8);
        w.Put(subject);
        if (!queue.IsEmpty)
        {
            w.Put((byte)' ');
            w.Put(queue);
            w.Put((byte)' ');
            w.Put(weight);
        }

        w.Put("\r\n"u8);
        return w.Written;
    }

    /// <summary><c>LS- &lt;subject&gt;[ &lt;queue&gt;]\r\n</c>.</summary>
    public static int WriteUnsub(Span<byte> into, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue)
    {
        var w = new RouteWriter.LineWriter(into);
        w.Put("LS- "u8);
        w.Put(subject);
        if (!queue.IsEmpty)
        {
            w.Put((byte)' ');
            w.Put(queue);
        }

        w.Put("\r\n"u8);
        return w.Written;
    }

    /// <summary>
    /// The control line of a message over a leaf link: <c>LMSG &lt;subject&gt; [reply] &lt;size&gt;\r\n</c>, or with
    /// the queue groups it is for, <c>LMSG &lt;subject&gt; + &lt;reply&gt; &lt;queues&gt; &lt;size&gt;</c> (<c>| &lt;queues&gt;</c>
    /// without a reply). With <paramref name="headerSize"/> at or above 0 it is
    /// <c>HMSG &lt;subject&gt; ... &lt;header size&gt; &lt;size&gt;</c>, as nats-server turns the L into an H.
    /// <paramref name="queues"/> is the names separated by single spaces.
    /// </summary>
    public static int WriteMsgLine(Span<byte> into, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, ReadOnlySpan<byte> queues, int headerSize, int totalSize)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(totalSize);
        var w = new RouteWriter.LineWriter(into);
        w.Put(headerSize >= 0 ? "HMSG "u8 : "LMSG "u8);
        w.Put(subject);
        if (!queues.IsEmpty)
        {
            if (replyTo.IsEmpty)
            {
                w.Put(" |"u8);
            }
            else
            {
                w.Put(" + "u8);
                w.Put(replyTo);
            }

            w.Put((byte)' ');
            w.Put(queues);
        }
        else if (!replyTo.IsEmpty)
        {
            w.Put((byte)' ');
            w.Put(replyTo);
        }

        if (headerSize >= 0)
        {
            w.Put((byte)' ');
            w.Put(headerSize);
        }

        w.Put((byte)' ');
        w.Put(totalSize);
        w.Put("\r\n"u8);
        return w.Written;
    }
}
