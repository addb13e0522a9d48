using System.Buffers.Text;

namespace Courier.Protocols.Nats;

/// <summary>
/// Formats the route protocol's interest and message lines as nats-server 2.9 writes them
/// (route.go's addRouteSubOrUnsubProtoToBuf, client.go's RMSG/HMSG lines), into a caller's span:
/// no allocation. Each method returns the bytes written, or -1 when the span is too small.
/// </summary>
public static class RouteWriter
{
    /// <summary>
    /// <c>RS+ &lt;account&gt; &lt;subject&gt;[ &lt;queue&gt; &lt;weight&gt;]\r\n</c>; the weight is sent with a queue only.
    /// </summary>
    public static int WriteSub(Span<byte> into, ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, int weight)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(weight);
        var w = Interest(into, "RS+ "u8, account, subject, queue);
        if (!queue.IsEmpty)
        {
            w.Put((byte)' ');
            w.Put(weight);
        }

        w.Put("\r\n"u8);
        return w.Written;
    }

    /// <summary>
    /// nats-server's lnoc form of RS+ for interest from a leaf link in a named cluster:
    /// <c>LS+ &lt;origin&gt; &lt;account&gt; &lt;subject&gt;[ &lt;queue&gt; &lt;weight&gt;]\r\n</c> (its removal is
    /// <c>LS- &lt;account&gt; &lt;subject&gt;[ &lt;queue&gt;]\r\n</c>, <see cref="WriteOriginUnsub"/>).
    /// </summary>
    public static int WriteOriginSub(Span<byte> into, ReadOnlySpan<byte> origin, ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, int weight)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(weight);
        var w = new LineWriter(into);
        w.Put("LS+ "u8);
        w.Put(origin);
        w.Put((byte)' ');
        w.Put(account);
        w.Put((byte)' ');
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

    /// <summary><c>LS- &lt;account&gt; &lt;subject&gt;[ &lt;queue&gt;]\r\n</c>: the removal of interest told with <see cref="WriteOriginSub"/>.</summary>
    public static int WriteOriginUnsub(Span<byte> into, ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue)
    {
        var w = Interest(into, "LS- "u8, account, subject, queue);
        w.Put("\r\n"u8);
        return w.Written;
    }

    /// <summary><c>RS- &lt;account&gt; &lt;subject&gt;[ &lt;queue&gt;]\r\n</c>.</summary>
    public static int WriteUnsub(Span<byte> into, ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue)
    {
        var w = Interest(into, "RS- "u8, account, subject, queue);
        w.Put("\r\n"u8);
        return w.Written;
    }

    // "<op><account> <subject>[ <queue>]"
    private static LineWriter Interest(Span<byte> into, ReadOnlySpan<byte> op, ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue)
    {
        var w = new LineWriter(into);
        w.Put(op);
        w.Put(account);
        w.Put((byte)' ');
        w.Put(subject);
        if (!queue.IsEmpty)
        {
            w.Put((byte)' ');
            w.Put(queue);
        }

        return w;
    }

    /// <summary>
    /// The control line of a routed message: <c>RMSG &lt;account&gt; &lt;subject&gt; [reply] &lt;size&gt;\r\n</c>
    /// for plain subscribers, or with the queue groups it is for, <c>... + &lt;reply&gt; &lt;queues&gt; &lt;size&gt;</c>
    /// (<c>| &lt;queues&gt;</c> without a reply). With <paramref name="headerSize"/> at or above 0 it is HMSG (nats-server's route form)
    /// with the header size before the total. <paramref name="queues"/> is the names separated by single spaces.
    /// </summary>
    public static int WriteMsgLine(Span<byte> into, ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, ReadOnlySpan<byte> queues, int headerSize, int totalSize) =>
        WriteMsgLine(into, default, account, subject, replyTo, queues, headerSize, totalSize);

    /// <summary>
    /// As <see cref="WriteMsgLine(Span{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte}, ReadOnlySpan{byte}, int, int)"/>;
    /// with an <paramref name="origin"/> (the cluster of the leaf link the message came from), nats-server's lnoc
    /// form <c>LMSG &lt;origin&gt; &lt;account&gt; &lt;subject&gt; ... &lt;header size&gt; &lt;size&gt;</c>, the header size always there (0 without headers).
    /// </summary>
    public static int WriteMsgLine(Span<byte> into, ReadOnlySpan<byte> origin, ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, ReadOnlySpan<byte> queues, int headerSize, int totalSize)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(totalSize);
        var w = new LineWriter(into);
        if (!origin.IsEmpty)
        {
            w.Put("LMSG "u8);
            w.Put(origin);
            w.Put((byte)' ');
            headerSize = Math.Max(headerSize, 0);
        }
        else
        {
            w.Put(headerSize >= 0 ? "HMSG "u8 : "RMSG "u8); // on routes nats-server 2.9 parses HMSG, not HRMSG
        }

        w.Put(account);
        w.Put((byte)' ');
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

    // Appends into a span; once something does not fit, Written is -1 and stays so.
    internal ref struct LineWriter(Span<byte> into)
    {
        private readonly Span<byte> _into = into;
        private int _at;

        public readonly int Written => _at;

        public void Put(ReadOnlySpan<byte> bytes)
        {
            if (_at < 0 || !bytes.TryCopyTo(_into[_at..]))
            {
                _at = -1;
                return;
            }

            _at += bytes.Length;
        }

        public void Put(byte b)
        {
            if (_at < 0 || _at >= _into.Length)
            {
                _at = -1;
                return;
            }

            _into[_at++] = b;
        }

        public void Put(int n)
        {
            if (_at < 0 || !Utf8Formatter.TryFormat(n, _into[_at..], out var written))
            {
                _at = -1;
                return;
            }

            _at += written;
        }
    }
}
