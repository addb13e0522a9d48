using System.Buffers;

namespace Courier.Protocols.Nats;

/// <summary>The operations one server sends another over a route (nats-server 2.9's route protocol).</summary>
public enum RouteOp : byte
{
    None,
    Info,
    Connect,
    Ping,
    Pong,
    Ok,
    Err,

    /// <summary><c>RS+ &lt;account&gt; &lt;subject&gt; [&lt;queue&gt; &lt;weight&gt;]</c>: the peer has interest.</summary>
    Sub,

    /// <summary><c>RS- &lt;account&gt; &lt;subject&gt; [&lt;queue&gt;]</c>: the peer lost that interest.</summary>
    Unsub,

    /// <summary><c>RMSG &lt;account&gt; &lt;subject&gt; [...] &lt;size&gt;</c>: a message for the peer's subscribers.</summary>
    Msg,

    /// <summary><c>HMSG</c>: <see cref="Msg"/> with a header block.</summary>
    HMsg,
}

/// <summary>
/// One parsed route command. Spans point into the read buffer (or the parser's line buffer when the
/// control line spanned segments) and are valid until the next <see cref="RouteParser.TryRead"/> call
/// or until the buffer is advanced past them; the payload is a slice of the read buffer, not a copy.
/// </summary>
public ref struct RouteCommand
{
    /// <summary>The operation.</summary>
    public RouteOp Op;

    /// <summary>
    /// A route's LS+/LMSG (nats-server's lnoc forms): the cluster of the leaf link the interest or message
    /// came from, so it is never sent back into that cluster; empty otherwise.
    /// </summary>
    public ReadOnlySpan<byte> Origin;

    /// <summary>RS+/RS-/RMSG: the account the interest or message belongs to.</summary>
    public ReadOnlySpan<byte> Account;

    /// <summary>RS+/RS-: the subscription's subject (wildcards allowed); RMSG: the message's subject.</summary>
    public ReadOnlySpan<byte> Subject;

    /// <summary>RMSG: the reply subject, or empty.</summary>
    public ReadOnlySpan<byte> ReplyTo;

    /// <summary>RS+/RS-: the queue group, or empty for a plain subscription.</summary>
    public ReadOnlySpan<byte> Queue;

    /// <summary>RS+ with a queue: how many members the peer has in that group (nats-server's queue weight).</summary>
    public int Weight;

    /// <summary>
    /// RMSG: the queue groups the message is for on the peer, as they stand on the line (names separated
    /// by spaces or tabs; see <see cref="RouteParser.NextQueue"/>), or empty when it is for plain
    /// subscribers only.
    /// </summary>
    public ReadOnlySpan<byte> Queues;

    /// <summary>HMSG: the size of the header block at the start of <see cref="Payload"/>; -1 for RMSG.</summary>
    public int HeaderSize;

    /// <summary>RMSG/HMSG: headers and payload, a slice of the read buffer.</summary>
    public ReadOnlySequence<byte> Payload;

    /// <summary>INFO/CONNECT: the JSON; -ERR: the error text.</summary>
    public ReadOnlySpan<byte> Arguments;
}
