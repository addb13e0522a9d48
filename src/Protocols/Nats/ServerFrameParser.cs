using System.Buffers;

namespace Courier.Protocols.Nats;

/// <summary>The frames a NATS server sends to a client.</summary>
public enum ServerOp : byte
{
    None,
    Info,
    Msg,
    HMsg,
    Ping,
    Pong,
    Ok,
    Err,
}

/// <summary>
/// One parsed server frame. Spans and the payload point into the read buffer and are valid until
/// the buffer is advanced past them.
/// </summary>
public ref struct ServerFrame
{
    public ServerOp Op;
    public ReadOnlySpan<byte> Subject;
    public ReadOnlySpan<byte> Sid;
    public ReadOnlySpan<byte> ReplyTo;

    /// <summary>HMSG header block size in bytes; -1 for MSG.</summary>
    public int HeaderSize;

    /// <summary>MSG: the payload. HMSG: the header block followed by the payload.</summary>
    public ReadOnlySequence<byte> Payload;

    /// <summary>INFO JSON or the -ERR text.</summary>
    public ReadOnlySpan<byte> Arguments;
}

/// <summary>
/// Parses what a server sends (INFO, MSG, HMSG, PING, PONG, +OK, -ERR), for Courier's own
/// in-process clients (JetStream) and tests. Same rules as <see cref="NatsParser"/>: one frame per
/// call, the reader unmoved on <see cref="ParseStatus.NeedMoreData"/>, payloads never copied.
/// </summary>
public sealed class ServerFrameParser
{
    private const int MaxArgs = 6;
    private readonly int _maxLine;
    private byte[]? _lineBuffer;

    /// <param name="maxControlLine">Bytes allowed in a control line (a server's INFO can be long).</param>
    public ServerFrameParser(int maxControlLine = 64 * 1024)
    {
        _maxLine = maxControlLine;
    }

    /// <summary>Reads one frame; see <see cref="NatsParser.TryRead"/> for the contract.</summary>
    public ParseStatus TryRead(ref SequenceReader<byte> reader, ref ServerFrame frame)
    {
        frame = default;
        var start = reader.Consumed;
        ReadOnlySpan<byte> line;
        var unread = reader.UnreadSpan;
        var lf = unread.IndexOf((byte)'\n');
        if (lf >= 0)
        {
            line = unread[..lf];
            reader.Advance(lf + 1);
        }
        else
        {
            var probe = reader;
            if (!probe.TryReadTo(out ReadOnlySequence<byte> lineSequence, (byte)'\n', advancePastDelimiter: true))
            {
                return reader.Remaining > _maxLine ? ParseStatus.Error : ParseStatus.NeedMoreData;
            }

            if (lineSequence.Length > _maxLine)
            {
                return ParseStatus.Error;
            }

            _lineBuffer ??= new byte[_maxLine];
            lineSequence.CopyTo(_lineBuffer);
            line = _lineBuffer.AsSpan(0, (int)lineSequence.Length);
            reader = probe;
        }

        if (line.Length > 0 && line[^1] == (byte)'\r')
        {
            line = line[..^1];
        }

        var status = ParseLine(line, ref reader, ref frame);
        if (status == ParseStatus.NeedMoreData)
        {
            reader.Rewind(reader.Consumed - start);
        }

        return status;
    }

    private static ParseStatus ParseLine(ReadOnlySpan<byte> line, scoped ref SequenceReader<byte> reader, scoped ref ServerFrame frame)
    {
        if (line.StartsWith("MSG "u8))
        {
            return ParseMsg(line[4..], headers: false, ref reader, ref frame);
        }

        if (line.StartsWith("HMSG "u8))
        {
            return ParseMsg(line[5..], headers: true, ref reader, ref frame);
        }

        if (line.SequenceEqual("PING"u8))
        {
            frame.Op = ServerOp.Ping;
            return ParseStatus.Command;
        }

        if (line.SequenceEqual("PONG"u8))
        {
            frame.Op = ServerOp.Pong;
            return ParseStatus.Command;
        }

        if (line.SequenceEqual("+OK"u8))
        {
            frame.Op = ServerOp.Ok;
            return ParseStatus.Command;
        }

        if (line.StartsWith("-ERR"u8))
        {
            frame.Op = ServerOp.Err;
            frame.Arguments = line[4..].TrimStart((byte)' ');
            return ParseStatus.Command;
        }

        if (line.StartsWith("INFO "u8))
        {
            frame.Op = ServerOp.Info;
            frame.Arguments = line[5..];
            return ParseStatus.Command;
        }

        return ParseStatus.Error;
    }

    // MSG <subject> <sid> [reply-to] <#bytes>
    // HMSG <subject> <sid> [reply-to] <#header bytes> <#total bytes>
    private static ParseStatus ParseMsg(ReadOnlySpan<byte> args, bool headers, scoped ref SequenceReader<byte> reader, scoped ref ServerFrame frame)
    {
        Span<Range> ranges = stackalloc Range[MaxArgs];
        var count = NatsParser.SplitArgs(args, ranges);
        var sizes = headers ? 2 : 1;
        if (count != 2 + sizes && count != 3 + sizes)
        {
            return ParseStatus.Error;
        }

        frame.Subject = args[ranges[0]];
        frame.Sid = args[ranges[1]];
        if (count == 3 + sizes)
        {
            frame.ReplyTo = args[ranges[2]];
        }

        var total = NatsParser.ParseSize(args[ranges[count - 1]]);
        var headerSize = headers ? NatsParser.ParseSize(args[ranges[count - 2]]) : -1;
        if (total < 0 || total > int.MaxValue || (headers && (headerSize < 0 || headerSize > total)))
        {
            return ParseStatus.Error;
        }

        if (reader.Remaining < total + 2)
        {
            return ParseStatus.NeedMoreData;
        }

        frame.Op = headers ? ServerOp.HMsg : ServerOp.Msg;
        frame.HeaderSize = (int)headerSize;
        frame.Payload = reader.UnreadSequence.Slice(0, total);
        reader.Advance(total);
        return reader.IsNext("\r\n"u8, advancePast: true) ? ParseStatus.Command : ParseStatus.Error;
    }
}
