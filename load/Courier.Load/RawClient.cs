using System.Net.Sockets;
using System.Text;

namespace Courier.Load;

/// <summary>
/// A lean NATS client over a raw socket, the same bytes for both servers: CONNECT, batched PUBs,
/// PING/PONG round trips, and counting received MSG frames by size.
/// </summary>
internal sealed class RawClient : IDisposable
{
    private readonly Socket _socket;
    private readonly byte[] _readBuffer = new byte[256 * 1024];

    public RawClient(int port)
    {
        _socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        _socket.Connect("127.0.0.1", port);
        ReadUntil("\r\n"); // INFO
        Send("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"protocol\":1}\r\n");
        Flush();
    }

    public void Send(string text) => _socket.Send(Encoding.ASCII.GetBytes(text));

    public void Send(ReadOnlySpan<byte> bytes)
    {
        while (!bytes.IsEmpty)
        {
            var n = _socket.Send(bytes);
            bytes = bytes[n..];
        }
    }

    /// <summary>PING and wait for PONG: everything sent before is processed.</summary>
    public void Flush()
    {
        Send("PING\r\n");
        ReadUntil("PONG\r\n");
    }

    /// <summary>Reads until <paramref name="bytes"/> more bytes have arrived.</summary>
    public void ReadBytes(long bytes)
    {
        while (bytes > 0)
        {
            var n = _socket.Receive(_readBuffer);
            if (n == 0)
            {
                throw new IOException("server closed the connection");
            }

            bytes -= n;
        }
    }

    private void ReadUntil(string marker)
    {
        var seen = new StringBuilder();
        var one = new byte[1];
        while (!seen.ToString().EndsWith(marker, StringComparison.Ordinal))
        {
            if (_socket.Receive(one) == 0)
            {
                throw new IOException("server closed the connection");
            }

            seen.Append((char)one[0]);
        }
    }

    public void Dispose() => _socket.Dispose();
}
