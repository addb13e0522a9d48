using System.Buffers;

namespace Courier.Protocols.Nats;

/// <summary>
/// Parses what a peer server sends over a route, nats-server 2.9's route protocol: INFO, CONNECT,
/// PING, PONG, +OK, -ERR, RS+, RS-, RMSG and HMSG (or HRMSG), one command per call, from a
/// <see cref="SequenceReader{T}"/> over a pipe's buffer.
/// </summary>
/// <remarks>
/// The same contract and grammar as <see cref="NatsParser"/> (case-insensitive ops, arguments
/// separated by runs of spaces or tabs, no allocation per command, payloads sliced from the input,
/// lengths checked before anything past them is read). A route has no max_payload of its own in
/// nats-server; <see cref="MaxPayload"/> bounds what one message may make the connection buffer.
/// Any malformed command is an error: the route is closed, as nats-server closes it.
/// </remarks>
public sealed class RouteParser
{
    /// <summary>nats-server's largest configurable max_payload (64 MB), the default bound here.</summary>
    public const int DefaultMaxPayload = 64 * 1024 * 1024;

    // Longest op plus its separator ("CONNECT ") and the CR, over the arguments' limit.
    private const int OpSlack = 9;

    private readonly int _maxLine;
    private readonly bool _leaf;
    private byte[]? _lineBuffer;

    /// <summary>Creates a route parser.</summary>
    /// <param name="maxControlLine">Bytes allowed in a control line's arguments.</param>
    /// <param name="maxPayload">Bytes allowed in one routed message (headers included).</param>
    /// <param name="leaf">
    /// Parse the leaf node protocol instead: <c>LS+ &lt;subject&gt; [&lt;queue&gt; &lt;weight&gt;]</c>,
    /// <c>LS- &lt;subject&gt; [&lt;queue&gt;]</c>, <c>LMSG</c> and <c>HMSG</c>, none with an account (a leaf
    /// link is bound to one account), into the same <see cref="RouteCommand"/>s with an empty account.
    /// </param>
    public RouteParser(int maxControlLine = 4096, int maxPayload = DefaultMaxPayload, bool leaf = false)
    {
        _leaf = leaf;
        ArgumentOutOfRangeException.ThrowIfLessThan(maxControlLine, 32);
        ArgumentOutOfRangeException.ThrowIfNegative(maxPayload);
        MaxControlLine = maxControlLine;
        MaxPayload = maxPayload;
        _maxLine = maxControlLine + OpSlack;
    }

    /// <summary>Bytes allowed in a control line's arguments.</summary>
    public int MaxControlLine { get; }

    /// <summary>Bytes allowed in one routed message.</summary>
    public int MaxPayload { get; }

    /// <summary>
    /// Reads one command. On <see cref="ParseStatus.Command"/> the reader is past the command; on
    /// <see cref="ParseStatus.NeedMoreData"/> it is where it was; on <see cref="ParseStatus.Error"/>
    /// its position is undefined and the route must be closed.
    /// </summary>
    public ParseStatus TryRead(ref SequenceReader<byte> reader, ref RouteCommand command, out ParseError error)
    {
        command = default;
        error = ParseError.None;
        if (reader.End)
        {
            return ParseStatus.NeedMoreData;
        }

        var start = reader.Consumed;
        var status = NatsParser.ReadLine(ref reader, _maxLine, ref _lineBuffer, out var line, out error);
        if (status != ParseStatus.Command)
        {
            return status;
        }

        var result = ParseLine(line, ref reader, ref command, out error);
        if (result == ParseStatus.NeedMoreData)
        {
            reader.Rewind(reader.Consumed - start);
        }

        return result;
    }

    /// <summary>
    /// Takes the next queue name off <paramref name="queues"/> (an RMSG's <see cref="RouteCommand.Queues"/>);
    /// false when none is left.
    /// </summary>
    public static bool NextQueue(ref ReadOnlySpan<byte> queues, out ReadOnlySpan<byte> queue)
    {
        queues = NatsParser.TrimStart(queues);
        if (queues.IsEmpty)
        {
            queue = default;
            return false;
        }

        var end = queues.IndexOfAny((byte)' ', (byte)'\t');
        if (end < 0)
        {
            end = queues.Length;
        }

        queue = queues[..end];
        queues = queues[end..];
        return true;
    }

    private ParseStatus ParseLine(ReadOnlySpan<byte> line, ref SequenceReader<byte> reader, scoped ref RouteCommand command, out ParseError error)
    {
        error = ParseError.None;
        if (line.IsEmpty)
        {
            return NatsParser.Fail(ParseError.UnknownOperation, out error);
        }

        switch (line[0] | 0x20)
        {
            case 'l' when _leaf:
                if (NatsParser.StartsWithOp(line, "LMSG"u8))
                {
                    return ParseMsg(RouteOp.Msg, line[4..], ref reader, ref command, out error);
                }

                if (NatsParser.StartsWithOp(line, "LS+"u8))
                {
                    return ParseSub(line[3..], ref command, out error);
                }

                if (NatsParser.StartsWithOp(line, "LS-"u8))
                {
                    return ParseUnsub(line[3..], ref command, out error);
                }

                break;
            case 'l':
                // On a route, nats-server 2.9 (lnoc) sends interest and messages of leaf links in a named
                // cluster with that origin cluster: LS+ <origin> <account> ..., LS- <account> ...,
                // LMSG <origin> <account> ... <#header bytes> <size> (always with the header size).
                if (NatsParser.StartsWithOp(line, "LMSG"u8))
                {
                    return ParseMsg(RouteOp.HMsg, line[4..], ref reader, ref command, out error, origin: true);
                }

                if (NatsParser.StartsWithOp(line, "LS+"u8))
                {
                    return ParseSub(line[3..], ref command, out error, origin: true);
                }

                if (NatsParser.StartsWithOp(line, "LS-"u8))
                {
                    return ParseUnsub(line[3..], ref command, out error);
                }

                break;
            case 'r' when !_leaf:
                if (NatsParser.StartsWithOp(line, "RMSG"u8))
                {
                    return ParseMsg(RouteOp.Msg, line[4..], ref reader, ref command, out error);
                }

                if (NatsParser.StartsWithOp(line, "RS+"u8))
                {
                    return ParseSub(line[3..], ref command, out error);
                }

                if (NatsParser.StartsWithOp(line, "RS-"u8))
                {
                    return ParseUnsub(line[3..], ref command, out error);
                }

                break;
            case 'h':
                // nats-server 2.9 sends a routed message with headers as HMSG (its RMSG line with the
                // R turned into an H, client.go's msgHeaderForRouteOrLeaf); HRMSG is accepted too.
                if (NatsParser.StartsWithOp(line, "HMSG"u8))
                {
                    return ParseMsg(RouteOp.HMsg, line[4..], ref reader, ref command, out error);
                }

                if (!_leaf && NatsParser.StartsWithOp(line, "HRMSG"u8))
                {
                    return ParseMsg(RouteOp.HMsg, line[5..], ref reader, ref command, out error);
                }

                break;
            case 'p':
                if (NatsParser.StartsWithPrefix(line, "PING"u8))
                {
                    command.Op = RouteOp.Ping;
                    return ParseStatus.Command;
                }

                if (NatsParser.StartsWithPrefix(line, "PONG"u8))
                {
                    command.Op = RouteOp.Pong;
                    return ParseStatus.Command;
                }

                break;
            case 'i':
                if (NatsParser.StartsWithOp(line, "INFO"u8))
                {
                    return ParseText(RouteOp.Info, line[4..], ref command, out error);
                }

                break;
            case 'c':
                if (NatsParser.StartsWithOp(line, "CONNECT"u8))
                {
                    return ParseText(RouteOp.Connect, line[7..], ref command, out error);
                }

                break;
            case '+':
                if (NatsParser.StartsWithPrefix(line, "+OK"u8))
                {
                    command.Op = RouteOp.Ok;
                    return ParseStatus.Command;
                }

                break;
            case '-':
                if (NatsParser.StartsWithOp(line, "-ERR"u8))
                {
                    return ParseText(RouteOp.Err, line[4..], ref command, out error);
                }

                break;
        }

        return NatsParser.Fail(ParseError.UnknownOperation, out error);
    }

    private ParseStatus ParseText(RouteOp op, ReadOnlySpan<byte> args, scoped ref RouteCommand command, out ParseError error)
    {
        args = NatsParser.TrimStart(args);
        if (args.Length > MaxControlLine)
        {
            return NatsParser.Fail(ParseError.MaxControlLineExceeded, out error);
        }

        command.Op = op;
        command.Arguments = args;
        error = ParseError.None;
        return ParseStatus.Command;
    }

    // RS+ <account> <subject>\r\n or RS+ <account> <subject> <queue> <weight>\r\n
    // LS+ <subject>\r\n or LS+ <subject> <queue> <weight>\r\n   (a leaf link)
    // LS+ <origin> <account> <subject> [<queue> <weight>]\r\n   (a route, with the origin cluster)
    private ParseStatus ParseSub(ReadOnlySpan<byte> args, scoped ref RouteCommand command, out ParseError error, bool origin = false)
    {
        Span<Range> ranges = stackalloc Range[6];
        var a = (_leaf ? 0 : 1) + (origin ? 1 : 0); // arguments before the subject
        var count = NatsParser.SplitArgs(args, ranges);
        if (count == a + 3)
        {
            var weight = NatsParser.ParseSize(args[ranges[a + 2]]);
            if (weight < 0 || weight > int.MaxValue)
            {
                return NatsParser.Fail(ParseError.InvalidArguments, out error);
            }

            command.Queue = args[ranges[a + 1]];
            command.Weight = (int)weight;
        }
        else if (count != a + 1)
        {
            return NatsParser.Fail(ParseError.InvalidArguments, out error);
        }

        command.Op = RouteOp.Sub;
        command.Origin = origin ? args[ranges[0]] : default;
        command.Account = _leaf ? default : args[ranges[a - 1]];
        command.Subject = args[ranges[a]];
        error = ParseError.None;
        return ParseStatus.Command;
    }

    // RS- <account> <subject> [queue]\r\n   or   LS- <subject> [queue]\r\n
    private ParseStatus ParseUnsub(ReadOnlySpan<byte> args, scoped ref RouteCommand command, out ParseError error)
    {
        Span<Range> ranges = stackalloc Range[4];
        var a = _leaf ? 0 : 1; // arguments before the subject
        var count = NatsParser.SplitArgs(args, ranges);
        if (count == a + 2)
        {
            command.Queue = args[ranges[a + 1]];
        }
        else if (count != a + 1)
        {
            return NatsParser.Fail(ParseError.InvalidArguments, out error);
        }

        command.Op = RouteOp.Unsub;
        command.Account = _leaf ? default : args[ranges[0]];
        command.Subject = args[ranges[a]];
        error = ParseError.None;
        return ParseStatus.Command;
    }

    // RMSG <account> <subject> [reply] <size>
    // RMSG <account> <subject> + <reply> <queue>... <size>   (or | instead of "+ <reply>": no reply)
    // HRMSG: the same with <#header bytes> before <size>.
    // LMSG <origin> <account> <subject> ... <#header bytes> <size>   (a route, with the origin cluster)
    private ParseStatus ParseMsg(RouteOp op, ReadOnlySpan<byte> args, ref SequenceReader<byte> reader, scoped ref RouteCommand command, out ParseError error, bool origin = false)
    {
        args = NatsParser.TrimStart(args);
        if (args.Length > MaxControlLine)
        {
            return NatsParser.Fail(ParseError.MaxControlLineExceeded, out error);
        }

        // The leading arguments and the trailing sizes, then whatever lies between is the queue list.
        var sizes = op == RouteOp.HMsg ? 2 : 1;
        Span<Range> head = stackalloc Range[6];
        Span<Range> tail = stackalloc Range[2];
        var count = 0;
        var start = -1;
        for (var i = 0; i <= args.Length; i++)
        {
            var separator = i == args.Length || args[i] == (byte)' ' || args[i] == (byte)'\t';
            if (!separator)
            {
                if (start < 0)
                {
                    start = i;
                }

                continue;
            }

            if (start < 0)
            {
                continue;
            }

            var token = new Range(start, i);
            if (count < head.Length)
            {
                head[count] = token;
            }

            tail[0] = tail[1];
            tail[1] = token;
            count++;
            start = -1;
        }

        var a = (_leaf ? 0 : 1) + (origin ? 1 : 0); // arguments before the subject: [origin] account on a route, none on a leaf link
        if (count < a + 1 + sizes)
        {
            return NatsParser.Fail(ParseError.InvalidArguments, out error);
        }

        command.Origin = origin ? args[head[0]] : default;
        command.Account = _leaf ? default : args[head[a - 1]];
        command.Subject = args[head[a]];
        var rest = count - a - 1 - sizes; // between the subject and the sizes
        if (rest == 1)
        {
            command.ReplyTo = args[head[a + 1]];
        }
        else if (rest > 1)
        {
            var indicator = args[head[a + 1]];
            int firstQueue;
            if (indicator.Length == 1 && indicator[0] == (byte)'+')
            {
                command.ReplyTo = args[head[a + 2]];
                firstQueue = a + 3;
            }
            else if (indicator.Length == 1 && indicator[0] == (byte)'|')
            {
                firstQueue = a + 2;
            }
            else
            {
                return NatsParser.Fail(ParseError.InvalidArguments, out error);
            }

            if (rest > firstQueue - a - 1)
            {
                // The names run from the first queue to the token before the sizes.
                var firstSize = sizes == 2 ? tail[0] : tail[1];
                command.Queues = args[head[firstQueue].Start.Value..PreviousTokenEnd(args, firstSize.Start.Value)];
            }
        }

        long headerSize = -1;
        if (sizes == 2)
        {
            headerSize = NatsParser.ParseSize(args[tail[0]]);
        }

        var size = NatsParser.ParseSize(args[tail[1]]);
        if (size < 0 || (sizes == 2 && (headerSize < 0 || headerSize > size)))
        {
            return NatsParser.Fail(ParseError.InvalidArguments, out error);
        }

        if (size > MaxPayload)
        {
            return NatsParser.Fail(ParseError.MaxPayloadViolation, out error);
        }

        command.Op = op;
        command.HeaderSize = (int)headerSize;
        return NatsParser.ReadPayload(ref reader, (int)size, out command.Payload, out error);
    }

    // The end of the token before the separator run that precedes position <paramref name="at"/>.
    private static int PreviousTokenEnd(ReadOnlySpan<byte> args, int at)
    {
        var end = at;
        while (end > 0 && (args[end - 1] == (byte)' ' || args[end - 1] == (byte)'\t'))
        {
            end--;
        }

        return end;
    }
}
