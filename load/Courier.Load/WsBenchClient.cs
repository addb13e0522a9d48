using System.Buffers.Binary;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;

namespace Courier.Load;

/// <summary>
/// The lean raw client of <see cref="BenchClient"/> over WebSocket (RFC 6455, no compression): the
/// HTTP upgrade, then NATS commands in masked binary frames (a batch is framed and masked once, up
/// front, so the client spends nothing per message), and the server's frames unwrapped on receive.
/// Over wss the TLS handshake comes first and every byte goes through it.
/// </summary>
internal sealed class WsBenchClient : IDisposable
{
    private const int ReadBufferSize = 1024 * 1024; // bytes per receive, as BenchClient
    private static readonly byte[] MaskKey = [0x5a, 0x17, 0xc3, 0x08];

    private readonly Socket _socket;
    private readonly SslStream? _tls;
    private readonly byte[] _buffer = new byte[ReadBufferSize];
    private int _start;
    private int _end;
    private long _frameRemaining; // payload bytes of the current server frame not yet consumed

    /// <param name="port">The WebSocket port on 127.0.0.1.</param>
    /// <param name="tls">wss: a TLS handshake before the upgrade (the server certificate is not checked:
    /// a loopback benchmark against a test certificate).</param>
    public WsBenchClient(int port, bool tls = false)
    {
        _socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        _socket.Connect("127.0.0.1", port);
        if (tls)
        {
            _tls = new SslStream(new NetworkStream(_socket, ownsSocket: false), leaveInnerStreamOpen: false);
            _tls.AuthenticateAsClient(new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                RemoteCertificateValidationCallback = (_, _, _, _) => true,
            });
        }

        Send(Encoding.ASCII.GetBytes(
            $"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"));
        ReadHttpHead();
        ReadLine(); // INFO
        SendCommands("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}\r\n");
        Flush();
    }

    /// <summary>One masked binary frame carrying <paramref name="payload"/>.</summary>
    public static byte[] Frame(ReadOnlySpan<byte> payload)
    {
        var header = payload.Length <= 125 ? 2 : payload.Length <= ushort.MaxValue ? 4 : 10;
        var frame = new byte[header + 4 + payload.Length];
        frame[0] = 0x82;
        if (header == 2)
        {
            frame[1] = (byte)(0x80 | payload.Length);
        }
        else if (header == 4)
        {
            frame[1] = 0x80 | 126;
            BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(2), (ushort)payload.Length);
        }
        else
        {
            frame[1] = 0x80 | 127;
            BinaryPrimitives.WriteUInt64BigEndian(frame.AsSpan(2), (ulong)payload.Length);
        }

        MaskKey.CopyTo(frame, header);
        for (var i = 0; i < payload.Length; i++)
        {
            frame[header + 4 + i] = (byte)(payload[i] ^ MaskKey[i & 3]);
        }

        return frame;
    }

    public void SendCommands(string text) => Send(Frame(Encoding.ASCII.GetBytes(text)));

    /// <summary>Sends bytes as they are (already framed).</summary>
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

    /// <summary>PING and wait for PONG: everything sent before is processed.</summary>
    public void Flush()
    {
        SendCommands("PING\r\n");
        while (ReadLine() != "PONG")
        {
        }
    }

    /// <summary>Receives and discards exactly <paramref name="bytes"/> bytes of frame payload.</summary>
    public void Drain(long bytes)
    {
        while (bytes > 0)
        {
            if (_end == _start)
            {
                Fill();
            }

            if (_frameRemaining == 0 && !TryStartFrame())
            {
                Fill();
                continue;
            }

            var take = (int)Math.Min(Math.Min(_end - _start, _frameRemaining), bytes);
            _start += take;
            _frameRemaining -= take;
            bytes -= take;
        }
    }

    private string ReadLine()
    {
        var line = new StringBuilder();
        while (true)
        {
            if (_frameRemaining == 0)
            {
                while (!TryStartFrame())
                {
                    Fill();
                }

                continue;
            }

            if (_end == _start)
            {
                Fill();
            }

            var b = _buffer[_start++];
            _frameRemaining--;
            if (b == '\n')
            {
                return line.ToString().TrimEnd('\r');
            }

            line.Append((char)b);
        }
    }

    /// <summary>Consumes the next server frame's header when it is buffered whole.</summary>
    private bool TryStartFrame()
    {
        var available = _end - _start;
        if (available < 2)
        {
            return false;
        }

        var length = (long)(_buffer[_start + 1] & 0x7f);
        var header = length == 126 ? 4 : length == 127 ? 10 : 2;
        if (available < header)
        {
            return false;
        }

        if (length == 126)
        {
            length = BinaryPrimitives.ReadUInt16BigEndian(_buffer.AsSpan(_start + 2));
        }
        else if (length == 127)
        {
            length = (long)BinaryPrimitives.ReadUInt64BigEndian(_buffer.AsSpan(_start + 2));
        }

        _start += header;
        _frameRemaining = length;
        return true;
    }

    private void ReadHttpHead()
    {
        while (true)
        {
            var end = _buffer.AsSpan(_start, _end - _start).IndexOf("\r\n\r\n"u8);
            if (end >= 0)
            {
                var head = Encoding.ASCII.GetString(_buffer, _start, end);
                if (!head.StartsWith("HTTP/1.1 101", StringComparison.Ordinal))
                {
                    throw new IOException($"upgrade refused: {head}");
                }

                _start += end + 4;
                return;
            }

            Fill();
        }
    }

    private void Fill()
    {
        if (_start > 0)
        {
            Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }

        var n = _tls is not null ? _tls.Read(_buffer, _end, _buffer.Length - _end) : _socket.Receive(_buffer, _end, _buffer.Length - _end, SocketFlags.None);
        if (n == 0)
        {
            throw new IOException("server closed the connection");
        }

        _end += n;
    }

    public void Dispose()
    {
        _tls?.Dispose();
        _socket.Dispose();
    }
}
