using System.Buffers;
using System.Runtime.CompilerServices;

namespace Courier.Protocols.Nats;

/// <summary>
/// Parses the client side of the NATS protocol, one command per call, from a
/// <see cref="SequenceReader{T}"/> over a pipe's buffer.
/// </summary>
/// <remarks>
/// Hot path: no allocation per command. The control line is read in place when it lies in one
/// segment, otherwise copied once into a line buffer owned by this parser (sized by the control
/// line limit, allocated the first time it is needed). Payloads are slices of the input, never copies.
/// Every length is checked against <see cref="MaxControlLine"/> and <see cref="MaxPayload"/>
/// before anything is read past it. Grammar as nats-server's parser.go: ops are case-insensitive,
/// arguments are separated by runs of spaces or tabs, a line ends at LF with an optional CR.
/// </remarks>
public sealed class NatsParser
{
    // Longest op plus its separator ("CONNECT ") and the CR: slack over max_control_line, which
    // nats-server applies to the arguments only. Bytes.
    private const int OpSlack = 9;

    // An argument count above any op's maximum (HPUB has 4) so a line with too many is rejected.
    private const int MaxArgs = 5;

    private int _maxLine;
    private int _maxControlLine;
    private byte[]? _lineBuffer; // allocated the first time a control line spans segments

    /// <summary>Creates a parser with nats-server's limits.</summary>
    /// <param name="maxControlLine">Bytes allowed in a control line's arguments.</param>
    /// <param name="maxPayload">Bytes allowed in a PUB/HPUB payload (headers included).</param>
    public NatsParser(int maxControlLine = 4096, int maxPayload = 1024 * 1024)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxControlLine, 32);
        ArgumentOutOfRangeException.ThrowIfNegative(maxPayload);
        MaxControlLine = maxControlLine;
        MaxPayload = maxPayload;
    }

    /// <summary>Bytes allowed in a control line's arguments (<c>max_control_line</c>; a reload may change it).</summary>
    public int MaxControlLine
    {
        get => _maxControlLine;
        set
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(value, 32);
            _maxControlLine = value;
            _maxLine = value + OpSlack;
        }
    }

    /// <summary>Bytes allowed in a message (<c>max_payload</c>).</summary>
    public int MaxPayload { get; set; }

    /// <summary>
    /// Reads one command. On <see cref="ParseStatus.Command"/> the reader is past the command; on
    /// <see cref="ParseStatus.NeedMoreData"/> it is where it was; on <see cref="ParseStatus.Error"/>
    /// its position is undefined and the connection must be closed with <paramref name="error"/>.
    /// </summary>
    public ParseStatus TryRead(ref SequenceReader<byte> reader, ref ClientCommand command, out ParseError error)
    {
        command = default;
        error = ParseError.None;
        if (reader.End)
        {
            return ParseStatus.NeedMoreData;
        }

        if (TryReadCanonicalPub(ref reader, ref command))
        {
            return ParseStatus.Command;
        }

        var start = reader.Consumed;
        var status = ReadLine(ref reader, _maxLine, ref _lineBuffer, out var line, out error);
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
    /// The commonest command in its canonical form, <c>PUB subject [reply] size\r\npayload\r\n</c> with
    /// single spaces, an upper-case op and everything in the current segment, read in one pass over the
    /// span. Anything else (tabs, runs of spaces, a size over the limit, a command split across segments
    /// or incomplete, a bad control line) is left to the general path, untouched: this only makes the
    /// common case cheaper, never changes what is accepted or how a bad command fails (a payload not
    /// followed by CRLF included: the general path's <see cref="ReadPayload"/> reports it).
    /// </summary>
    private bool TryReadCanonicalPub(scoped ref SequenceReader<byte> reader, scoped ref ClientCommand command)
    {
        var unread = reader.UnreadSpan;
        if (unread.Length < 10 || unread[0] != (byte)'P' || unread[1] != (byte)'U' || unread[2] != (byte)'B' || unread[3] != (byte)' ')
        {
            return false;
        }

        var lf = unread.IndexOf((byte)'\n');
        if (lf < 6 || lf > _maxLine || unread[lf - 1] != (byte)'\r')
        {
            return false;
        }

        var args = unread[4..(lf - 1)];
        if (args.Length > MaxControlLine)
        {
            return false;
        }

        // Tokens separated by exactly one space (a tab or a run of spaces goes the general way); the
        // last one is the size, whose digits are checked below.
        var first = args.IndexOfAny((byte)' ', (byte)'\t');
        if (first <= 0 || args[first] != (byte)' ')
        {
            return false;
        }

        var rest = args[(first + 1)..];
        var second = rest.IndexOfAny((byte)' ', (byte)'\t');
        ReadOnlySpan<byte> reply = default;
        var digits = rest;
        if (second >= 0)
        {
            if (second == 0 || rest[second] != (byte)' ')
            {
                return false;
            }

            reply = rest[..second];
            digits = rest[(second + 1)..];
        }

        // At most 9 digits, so the size fits an int; a bad, empty or over-limit size goes the general way.
        var size = digits.Length > 9 ? -1 : (int)ParseSize(digits);
        var payloadStart = lf + 1;
        if (size < 0 || size > MaxPayload || (long)payloadStart + size + 2 > unread.Length
            || unread[payloadStart + size] != (byte)'\r' || unread[payloadStart + size + 1] != (byte)'\n')
        {
            return false;
        }

        command.Op = ClientOp.Pub;
        command.Subject = args[..first];
        command.ReplyTo = reply;
        command.HeaderSize = -1;
        command.SetPayloadSlice(reader.Sequence, reader.Consumed + payloadStart, size);
        reader.Advance(payloadStart + size + 2);
        return true;
    }

    /// <summary>
    /// <paramref name="length"/> bytes at <paramref name="offset"/> into the reader's current segment (the
    /// caller checked they are there), without moving the reader. A pipe's buffer is a chain of segments:
    /// the slice is then built on the segment directly, without seeking through the sequence.
    /// </summary>
    private static ReadOnlySequence<byte> SliceUnread(scoped ref SequenceReader<byte> reader, int offset, int length)
    {
        var position = reader.Position;
        if (position.GetObject() is ReadOnlySequenceSegment<byte> segment)
        {
            var start = position.GetInteger() + offset;
            return new ReadOnlySequence<byte>(segment, start, segment, start + length);
        }

        return reader.Sequence.Slice(reader.Sequence.GetPosition(offset, position), length);
    }

    /// <summary>
    /// Reads a control line up to its LF (without the CR), in place when it lies in one segment, else
    /// copied into <paramref name="lineBuffer"/> (allocated the first time). Fails when it is longer
    /// than <paramref name="maxLine"/>; leaves the reader unmoved when the line is not complete yet.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ParseStatus ReadLine(scoped ref SequenceReader<byte> reader, int maxLine, ref byte[]? lineBuffer, out ReadOnlySpan<byte> line, out ParseError error)
    {
        error = ParseError.None;
        var unread = reader.UnreadSpan;
        var lf = unread.IndexOf((byte)'\n');
        if (lf >= 0)
        {
            // Fast path: the whole control line is in the current segment.
            line = unread[..lf];
            if (line.Length > maxLine)
            {
                return Fail(ParseError.MaxControlLineExceeded, out error);
            }

            reader.Advance(lf + 1);
        }
        else
        {
            var status = ReadSpanningLine(ref reader, maxLine, ref lineBuffer, out line, out error);
            if (status != ParseStatus.Command)
            {
                return status;
            }
        }

        if (line.Length > 0 && line[^1] == (byte)'\r')
        {
            line = line[..^1];
        }

        return ParseStatus.Command;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static ParseStatus ReadSpanningLine(scoped ref SequenceReader<byte> reader, int maxLine, ref byte[]? lineBuffer, out ReadOnlySpan<byte> line, out ParseError error)
    {
        line = default;
        error = ParseError.None;
        var probe = reader;
        if (!probe.TryReadTo(out ReadOnlySequence<byte> lineSequence, (byte)'\n', advancePastDelimiter: true))
        {
            // No line end yet: wait for more, unless what is buffered already breaks the limit.
            return reader.Remaining > maxLine
                ? Fail(ParseError.MaxControlLineExceeded, out error)
                : ParseStatus.NeedMoreData;
        }

        if (lineSequence.Length > maxLine)
        {
            return Fail(ParseError.MaxControlLineExceeded, out error);
        }

        lineBuffer ??= new byte[maxLine];
        lineSequence.CopyTo(lineBuffer);
        line = lineBuffer.AsSpan(0, (int)lineSequence.Length);
        reader = probe;
        return ParseStatus.Command;
    }

    private ParseStatus ParseLine(ReadOnlySpan<byte> line, scoped ref SequenceReader<byte> reader, scoped ref ClientCommand command, out ParseError error)
    {
        error = ParseError.None;
        if (line.IsEmpty)
        {
            return Fail(ParseError.UnknownOperation, out error);
        }

        switch (line[0] | 0x20)
        {
            case 'p':
                if (StartsWithOp(line, "PUB"u8))
                {
                    return ParsePub(line[3..], ref reader, ref command, out error);
                }

                if (StartsWithPrefix(line, "PING"u8))
                {
                    // PING ignores anything up to the line end, as nats-server.
                    command.Op = ClientOp.Ping;
                    return ParseStatus.Command;
                }

                if (StartsWithPrefix(line, "PONG"u8))
                {
                    command.Op = ClientOp.Pong;
                    return ParseStatus.Command;
                }

                break;
            case 'h':
                if (StartsWithOp(line, "HPUB"u8))
                {
                    return ParseHPub(line[4..], ref reader, ref command, out error);
                }

                break;
            case 's':
                if (StartsWithOp(line, "SUB"u8))
                {
                    return ParseSub(line[3..], ref command, out error);
                }

                break;
            case 'u':
                if (StartsWithOp(line, "UNSUB"u8))
                {
                    return ParseUnsub(line[5..], ref command, out error);
                }

                break;
            case 'c':
                if (StartsWithOp(line, "CONNECT"u8))
                {
                    return ParseText(ClientOp.Connect, line[7..], ref command, out error);
                }

                if (line.Length == 7 && StartsWithPrefix(line, "CONNECT"u8))
                {
                    // CONNECT with no JSON: nats-server fails to decode it and closes silently.
                    return Fail(ParseError.InvalidArguments, out error);
                }

                break;
            case 'i':
                if (StartsWithOp(line, "INFO"u8))
                {
                    return ParseText(ClientOp.Info, line[4..], ref command, out error);
                }

                break;
            case '+':
                if (StartsWithPrefix(line, "+OK"u8))
                {
                    command.Op = ClientOp.Ok;
                    return ParseStatus.Command;
                }

                break;
            case '-':
                if (StartsWithOp(line, "-ERR"u8))
                {
                    return ParseText(ClientOp.Err, line[4..], ref command, out error);
                }

                break;
        }

        return Fail(ParseError.UnknownOperation, out error);
    }

    // CONNECT <json>\r\n, INFO <json>\r\n, -ERR <error>\r\n: the rest of the line, as one argument.
    private ParseStatus ParseText(ClientOp op, ReadOnlySpan<byte> args, scoped ref ClientCommand command, out ParseError error)
    {
        args = TrimStart(args);
        if (args.Length > MaxControlLine)
        {
            return Fail(ParseError.MaxControlLineExceeded, out error);
        }

        command.Op = op;
        command.Arguments = args;
        error = ParseError.None;
        return ParseStatus.Command;
    }

    // PUB <subject> [reply-to] <#bytes>\r\n[payload]\r\n
    private ParseStatus ParsePub(ReadOnlySpan<byte> args, ref SequenceReader<byte> reader, scoped ref ClientCommand command, out ParseError error)
    {
        args = TrimStart(args);
        if (args.Length > MaxControlLine)
        {
            return Fail(ParseError.MaxControlLineExceeded, out error);
        }

        Span<Range> ranges = stackalloc Range[MaxArgs];
        var count = SplitArgs(args, ranges);
        long size;
        switch (count)
        {
            case 2:
                command.Subject = args[ranges[0]];
                size = ParseSize(args[ranges[1]]);
                break;
            case 3:
                command.Subject = args[ranges[0]];
                command.ReplyTo = args[ranges[1]];
                size = ParseSize(args[ranges[2]]);
                break;
            default:
                return Fail(ParseError.InvalidArguments, out error);
        }

        if (size < 0)
        {
            return Fail(ParseError.InvalidArguments, out error);
        }

        if (size > MaxPayload)
        {
            return Fail(ParseError.MaxPayloadViolation, out error);
        }

        command.Op = ClientOp.Pub;
        command.HeaderSize = -1;
        var status = ReadPayload(ref reader, (int)size, out var payload, out error);
        command.Payload = payload;
        return status;
    }

    // HPUB <subject> [reply-to] <#header bytes> <#total bytes>\r\n[headers]\r\n\r\n[payload]\r\n
    private ParseStatus ParseHPub(ReadOnlySpan<byte> args, ref SequenceReader<byte> reader, scoped ref ClientCommand command, out ParseError error)
    {
        args = TrimStart(args);
        if (args.Length > MaxControlLine)
        {
            return Fail(ParseError.MaxControlLineExceeded, out error);
        }

        Span<Range> ranges = stackalloc Range[MaxArgs];
        var count = SplitArgs(args, ranges);
        long headerSize, size;
        switch (count)
        {
            case 3:
                command.Subject = args[ranges[0]];
                headerSize = ParseSize(args[ranges[1]]);
                size = ParseSize(args[ranges[2]]);
                break;
            case 4:
                command.Subject = args[ranges[0]];
                command.ReplyTo = args[ranges[1]];
                headerSize = ParseSize(args[ranges[2]]);
                size = ParseSize(args[ranges[3]]);
                break;
            default:
                return Fail(ParseError.InvalidArguments, out error);
        }

        if (headerSize < 0 || size < 0 || headerSize > size)
        {
            return Fail(ParseError.InvalidArguments, out error);
        }

        if (size > MaxPayload)
        {
            return Fail(ParseError.MaxPayloadViolation, out error);
        }

        command.Op = ClientOp.HPub;
        command.HeaderSize = (int)headerSize;
        var status = ReadPayload(ref reader, (int)size, out var payload, out error);
        command.Payload = payload;
        return status;
    }

    // [payload]\r\n: the payload is a slice of the input. The CRLF after it is checked a byte at a
    // time as it arrives, as nats-server's MSG_END_R/MSG_END_N states, so a wrong byte fails at once.
    internal static ParseStatus ReadPayload(ref SequenceReader<byte> reader, int size, out ReadOnlySequence<byte> payload, out ParseError error)
    {
        error = ParseError.None;
        payload = default;
        var unread = reader.UnreadSpan;
        if ((long)size + 2 <= unread.Length)
        {
            // Fast path: the payload and its CRLF are in the current segment; one slice, no reads.
            if (unread[size] != (byte)'\r' || unread[size + 1] != (byte)'\n')
            {
                return Fail(ParseError.UnknownOperation, out error);
            }

            payload = SliceUnread(ref reader, 0, size);
            reader.Advance(size + 2);
            return ParseStatus.Command;
        }

        if (reader.Remaining < size)
        {
            return ParseStatus.NeedMoreData;
        }

        payload = reader.UnreadSequence.Slice(0, size);
        reader.Advance(size);
        if (!reader.TryRead(out var cr))
        {
            return ParseStatus.NeedMoreData;
        }

        if (cr != (byte)'\r')
        {
            return Fail(ParseError.UnknownOperation, out error);
        }

        if (!reader.TryRead(out var lf))
        {
            return ParseStatus.NeedMoreData;
        }

        return lf == (byte)'\n' ? ParseStatus.Command : Fail(ParseError.UnknownOperation, out error);
    }

    // SUB <subject> [queue group] <sid>\r\n
    private ParseStatus ParseSub(ReadOnlySpan<byte> args, scoped ref ClientCommand command, out ParseError error)
    {
        args = TrimStart(args);
        if (args.Length > MaxControlLine)
        {
            return Fail(ParseError.MaxControlLineExceeded, out error);
        }

        Span<Range> ranges = stackalloc Range[MaxArgs];
        switch (SplitArgs(args, ranges))
        {
            case 2:
                command.Subject = args[ranges[0]];
                command.Sid = args[ranges[1]];
                break;
            case 3:
                command.Subject = args[ranges[0]];
                command.Queue = args[ranges[1]];
                command.Sid = args[ranges[2]];
                break;
            default:
                return Fail(ParseError.InvalidArguments, out error);
        }

        command.Op = ClientOp.Sub;
        error = ParseError.None;
        return ParseStatus.Command;
    }

    // UNSUB <sid> [max_msgs]\r\n
    private ParseStatus ParseUnsub(ReadOnlySpan<byte> args, scoped ref ClientCommand command, out ParseError error)
    {
        args = TrimStart(args);
        if (args.Length > MaxControlLine)
        {
            return Fail(ParseError.MaxControlLineExceeded, out error);
        }

        Span<Range> ranges = stackalloc Range[MaxArgs];
        switch (SplitArgs(args, ranges))
        {
            case 1:
                command.Sid = args[ranges[0]];
                command.Max = -1;
                break;
            case 2:
                command.Sid = args[ranges[0]];
                command.Max = ParseSize(args[ranges[1]]);
                break;
            default:
                return Fail(ParseError.InvalidArguments, out error);
        }

        command.Op = ClientOp.Unsub;
        error = ParseError.None;
        return ParseStatus.Command;
    }

    /// <summary>
    /// Splits arguments at runs of spaces and tabs. Returns how many there are; a count above
    /// <paramref name="ranges"/>' length means too many.
    /// </summary>
    internal static int SplitArgs(ReadOnlySpan<byte> args, Span<Range> ranges)
    {
        // Vectorized searches for each token's start and end: the arguments are mostly subjects tens
        // of bytes long, where a byte-at-a-time loop cost
        // more than the rest of the command.
        var count = 0;
        var offset = 0;
        while (true)
        {
            var skip = args[offset..].IndexOfAnyExcept((byte)' ', (byte)'\t');
            if (skip < 0)
            {
                return count;
            }

            var start = offset + skip;
            var length = args[start..].IndexOfAny((byte)' ', (byte)'\t');
            if (count == ranges.Length)
            {
                return count + 1;
            }

            if (length < 0)
            {
                ranges[count++] = new Range(start, args.Length);
                return count;
            }

            offset = start + length;
            ranges[count++] = new Range(start, offset);
        }
    }

    /// <summary>
    /// A non-negative decimal as nats-server's parseSize: -1 for empty, a non-digit, or overflow.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long ParseSize(ReadOnlySpan<byte> digits)
    {
        // 18 digits always fit in a long. nats-server reads at most 9, so a 10-18 digit size is a
        // max payload violation here and a parse error there; both close the connection.
        const int MaxDigits = 18;
        if (digits.IsEmpty || digits.Length > MaxDigits)
        {
            return -1;
        }

        long n = 0;
        foreach (var d in digits)
        {
            var v = d - (byte)'0';
            if ((uint)v > 9)
            {
                return -1;
            }

            n = (n * 10) + v;
        }

        return n;
    }

    // The op followed by a space or a tab, case-insensitive.
    internal static bool StartsWithOp(ReadOnlySpan<byte> line, ReadOnlySpan<byte> op) =>
        line.Length > op.Length
        && (line[op.Length] == (byte)' ' || line[op.Length] == (byte)'\t')
        && EqualsIgnoreCase(line[..op.Length], op);

    internal static bool StartsWithPrefix(ReadOnlySpan<byte> line, ReadOnlySpan<byte> op) =>
        line.Length >= op.Length && EqualsIgnoreCase(line[..op.Length], op);

    private static bool EqualsIgnoreCase(ReadOnlySpan<byte> a, ReadOnlySpan<byte> upper)
    {
        for (var i = 0; i < upper.Length; i++)
        {
            var b = a[i];
            if (b >= (byte)'a' && b <= (byte)'z')
            {
                b -= 0x20;
            }

            if (b != upper[i])
            {
                return false;
            }
        }

        return true;
    }

    internal static ReadOnlySpan<byte> TrimStart(ReadOnlySpan<byte> s)
    {
        var i = 0;
        while (i < s.Length && (s[i] == (byte)' ' || s[i] == (byte)'\t'))
        {
            i++;
        }

        return s[i..];
    }

    internal static ParseStatus Fail(ParseError reason, out ParseError error)
    {
        error = reason;
        return ParseStatus.Error;
    }
}
