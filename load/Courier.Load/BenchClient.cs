using System.Buffers.Text;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;

namespace Courier.Load;

/// <summary>
/// A lean NATS client over a raw socket, the same bytes for both servers: CONNECT, batched PUBs,
/// PING/PONG, counting delivered bytes, and reading MSG frames for request/reply.
/// </summary>
/// <remarks>
/// NATS.Client.Core (the client BENCHMARKS.md names) cannot be restored from this project's NuGet
/// mirror, so both servers are driven by this client; the ratio is what counts.
/// </remarks>
internal sealed class BenchClient : IDisposable
{
    private const int ReadBufferSize = 1024 * 1024; // bytes per receive: large, to keep the client cheap

    private readonly Socket _socket;
    private readonly SslStream? _tls;
    private readonly byte[] _buffer;
    private int _start;
    private int _end;

    /// <param name="port">The server's client port on 127.0.0.1.</param>
    /// <param name="handshake">Read INFO and send CONNECT.</param>
    /// <param name="tls">After INFO, upgrade to TLS as a NATS client does (the server certificate is not
    /// checked: a loopback benchmark against a test certificate); every later byte goes through it.</param>
    /// <param name="user">Log in as this user, with the user name as password (the acct row's accounts); null: no credentials.</param>
    /// <param name="readBufferSize">Bytes per receive. A client that only connects (the storm, the idle connections) takes a
    /// small one: a megabyte zeroed per connection made the storm's client cost more CPU than either server.</param>
    public BenchClient(int port, bool handshake = true, bool tls = false, string? user = null, int readBufferSize = ReadBufferSize)
    {
        _buffer = new byte[readBufferSize];
        _socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        _socket.Connect("127.0.0.1", port);
        if (handshake)
        {
            ReadLine(); // INFO
            if (tls)
            {
                _tls = new SslStream(new NetworkStream(_socket, ownsSocket: false), leaveInnerStreamOpen: false);
                _tls.AuthenticateAsClient(new SslClientAuthenticationOptions
                {
                    TargetHost = "localhost",
                    RemoteCertificateValidationCallback = (_, _, _, _) => true,
                });
            }

            var credentials = user is null ? "" : $",\"user\":\"{user}\",\"pass\":\"{user}\"";
            Send("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1" + credentials + "}\r\n");
            Flush();
        }
    }

    /// <summary>How long a read may wait (0: forever, the default); a read that waits longer throws <see cref="SocketException"/>.</summary>
    public TimeSpan ReceiveTimeout
    {
        get => TimeSpan.FromMilliseconds(_socket.ReceiveTimeout);
        set => _socket.ReceiveTimeout = (int)value.TotalMilliseconds;
    }

    public void Send(string text) => Send(Encoding.ASCII.GetBytes(text));

    public void Send(ReadOnlySpan<byte> bytes)
    {
        if (_tls is not null)
        {
            _tls.Write(bytes); // one call: the TLS layer cuts it into records
            return;
        }

        while (!bytes.IsEmpty)
        {
            bytes = bytes[_socket.Send(bytes)..];
        }
    }

    /// <summary>PING and wait for PONG (skipping anything before it): everything sent before is processed.</summary>
    public void Flush()
    {
        Send("PING\r\n"u8);
        while (ReadLine() != "PONG")
        {
        }
    }

    /// <summary>Receives and discards exactly <paramref name="bytes"/> bytes.</summary>
    public void Drain(long bytes)
    {
        var buffered = _end - _start;
        if (buffered > 0)
        {
            var take = (int)Math.Min(buffered, bytes);
            _start += take;
            bytes -= take;
        }

        while (bytes > 0)
        {
            var n = Receive(_buffer, 0, (int)Math.Min(_buffer.Length, bytes));
            if (n == 0)
            {
                throw new IOException("server closed the connection");
            }

            bytes -= n;
        }

        _start = _end = 0;
    }

    /// <summary>Reads one MSG (or HMSG) frame; returns its reply subject (empty if none), the only string it makes.</summary>
    public string ReadMsg()
    {
        var line = NextMsgLine(out var hmsg);
        var reply = Token(line, 3);
        var replyText = CountTokens(line) == (hmsg ? 6 : 5) ? Encoding.ASCII.GetString(reply) : "";
        Skip(LastNumber(line) + 2);
        return replyText;
    }

    /// <summary>Reads one MSG (or HMSG) frame and returns its payload (after any headers) as UTF-8 text (control requests only).</summary>
    public string ReadMsgPayload()
    {
        var line = NextMsgLine(out var hmsg);
        var total = LastNumber(line);
        var headers = hmsg ? (int)long.Parse(Encoding.ASCII.GetString(Token(line, CountTokens(line) - 2)), System.Globalization.CultureInfo.InvariantCulture) : 0;
        var bytes = new byte[total + 2];
        var read = 0;
        while (read < bytes.Length)
        {
            if (_start == _end)
            {
                Fill();
            }

            var n = Math.Min(_end - _start, bytes.Length - read);
            _buffer.AsSpan(_start, n).CopyTo(bytes.AsSpan(read));
            _start += n;
            read += n;
        }

        return Encoding.UTF8.GetString(bytes, headers, total - headers);
    }

    /// <summary>Reads one MSG (or HMSG) frame and skips it (answering a PING met on the way), without allocating: the client's per-message cost stays small next to the server's.</summary>
    public void SkipMsg()
    {
        var line = NextMsgLine(out _);
        Skip(LastNumber(line) + 2);
    }

    // The next MSG/HMSG control line (without CRLF), consumed from the buffer; valid until the next Fill.
    private ReadOnlySpan<byte> NextMsgLine(out bool hmsg)
    {
        while (true)
        {
            var line = NextLine();
            if (line.StartsWith("MSG "u8) || line.StartsWith("HMSG "u8))
            {
                hmsg = line[0] == (byte)'H';
                return line;
            }

            if (line.SequenceEqual("PING"u8))
            {
                Send("PONG\r\n"u8);
            }
        }
    }

    // The next line (without CRLF), consumed from the buffer; valid until the next Fill.
    private ReadOnlySpan<byte> NextLine()
    {
        while (true)
        {
            var span = _buffer.AsSpan(_start, _end - _start);
            var lf = span.IndexOf((byte)'\n');
            if (lf >= 0)
            {
                _start += lf + 1;
                return span[..(lf > 0 && span[lf - 1] == '\r' ? lf - 1 : lf)];
            }

            Fill();
        }
    }

    private static int CountTokens(ReadOnlySpan<byte> line) => line.Count((byte)' ') + 1;

    private static ReadOnlySpan<byte> Token(ReadOnlySpan<byte> line, int index)
    {
        for (var i = 0; i < index; i++)
        {
            var space = line.IndexOf((byte)' ');
            if (space < 0)
            {
                return default;
            }

            line = line[(space + 1)..];
        }

        var end = line.IndexOf((byte)' ');
        return end < 0 ? line : line[..end];
    }

    private static int LastNumber(ReadOnlySpan<byte> line)
    {
        if (!Utf8Parser.TryParse(line[(line.LastIndexOf((byte)' ') + 1)..], out int value, out _))
        {
            throw new IOException("a MSG line without a size: " + Encoding.ASCII.GetString(line));
        }

        return value;
    }

    /// <summary>Reads one MSG (or HMSG) frame, skipping its payload; returns its control line.</summary>
    public string ReadMsgLine()
    {
        var line = NextMsgLine(out _);
        var text = Encoding.ASCII.GetString(line);
        Skip(LastNumber(line) + 2);
        return text;
    }

    public string ReadLine() => Encoding.ASCII.GetString(NextLine());

    private void Skip(int count)
    {
        while (_end - _start < count)
        {
            Fill();
        }

        _start += count;
    }

    private void Fill()
    {
        if (_start > 0)
        {
            Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }

        var n = Receive(_buffer, _end, _buffer.Length - _end);
        if (n == 0)
        {
            throw new IOException("server closed the connection");
        }

        _end += n;
    }

    private int Receive(byte[] buffer, int offset, int count) =>
        _tls is not null ? _tls.Read(buffer, offset, count) : _socket.Receive(buffer, offset, count, SocketFlags.None);

    public void Dispose()
    {
        _tls?.Dispose();
        _socket.Dispose();
    }

    /// <summary>count copies of "PUB subject [reply] size\r\npayload\r\n" back to back.</summary>
    public static byte[] PubBatch(string subject, int payloadSize, int count, string? reply = null)
    {
        var head = Encoding.ASCII.GetBytes(reply is null ? $"PUB {subject} {payloadSize}\r\n" : $"PUB {subject} {reply} {payloadSize}\r\n");
        var one = new byte[head.Length + payloadSize + 2];
        head.CopyTo(one, 0);
        one.AsSpan(head.Length, payloadSize).Fill((byte)'x');
        "\r\n"u8.CopyTo(one.AsSpan(head.Length + payloadSize));
        var batch = new byte[one.Length * count];
        for (var i = 0; i < count; i++)
        {
            one.CopyTo(batch, i * one.Length);
        }

        return batch;
    }

    /// <summary>Bytes of one "MSG subject sid size\r\npayload\r\n" frame.</summary>
    public static int MsgFrameSize(string subject, string sid, int payloadSize)
    {
        Span<byte> digits = stackalloc byte[16];
        Utf8Formatter.TryFormat(payloadSize, digits, out var n);
        return 4 + subject.Length + 1 + sid.Length + 1 + n + 2 + payloadSize + 2;
    }
}
