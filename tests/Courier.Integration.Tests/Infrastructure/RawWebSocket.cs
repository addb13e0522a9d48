using System.Buffers.Binary;
using System.IO.Compression;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>One frame the server sent.</summary>
public sealed record ServerFrame(byte Opcode, bool Final, bool Compressed, bool Masked, byte[] Payload)
{
    public const byte Continuation = 0x0;
    public const byte Binary = 0x2;
    public const byte Close = 0x8;
    public const byte Ping = 0x9;
    public const byte Pong = 0xA;

    /// <summary>The payload as text (inflated first when compressed).</summary>
    public string Text => Encoding.UTF8.GetString(Compressed ? RawWebSocket.Inflate(Payload) : Payload);

    /// <summary>A close frame's status code.</summary>
    public int CloseStatus => Payload.Length >= 2 ? BinaryPrimitives.ReadUInt16BigEndian(Payload) : 1005;

    /// <summary>A close frame's reason.</summary>
    public string CloseReason => Payload.Length > 2 ? Encoding.UTF8.GetString(Payload, 2, Payload.Length - 2) : "";
}

/// <summary>
/// A hand-written RFC 6455 client for framing edge cases: it sends exactly the bytes a test
/// builds (masked or not, fragmented, oversized) and reads the server's frames one by one.
/// Every wait is bounded by <see cref="Timeout"/>.
/// </summary>
public sealed class RawWebSocket : IAsyncDisposable
{
    private static readonly byte[] Key = [0x0b, 0xad, 0xf0, 0x0d];

    private readonly Socket _socket;
    private Stream _stream = null!;
    private readonly Func<string> _diagnostics;
    private readonly List<byte> _buffer = [];

    private RawWebSocket(Socket socket, Func<string> diagnostics)
    {
        _socket = socket;
        _diagnostics = diagnostics;
    }

    /// <summary>The status code of the server's answer to the upgrade request.</summary>
    public int Status { get; private set; }

    /// <summary>The server's answer head (status line and headers).</summary>
    public string ResponseHead { get; private set; } = "";

    /// <summary>The limit of each wait.</summary>
    public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>A request head with the headers every upgrade needs, plus <paramref name="extraHeaders"/>.</summary>
    public static string UpgradeRequest(int port, string extraHeaders = "", string path = "/", string key = "dGhlIHNhbXBsZSBub25jZQ==") =>
        $"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        $"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extraHeaders}\r\n";

    /// <summary>The client's port, to find this connection in /connz.</summary>
    public int LocalPort => ((IPEndPoint)_socket.LocalEndPoint!).Port;

    /// <summary>The negotiated TLS version over wss; null over plain ws.</summary>
    public SslProtocols? TlsProtocol => (_stream as SslStream)?.SslProtocol;

    /// <summary>
    /// Connects to the server's WebSocket port, sends <paramref name="request"/> and reads the answer's head.
    /// With <paramref name="caFile"/> it is wss: a TLS handshake first, the server certificate checked
    /// against that CA, <paramref name="clientCertificate"/> offered when given. Throws what the handshake throws.
    /// </summary>
    public static async Task<RawWebSocket> ConnectAsync(ServerProcess server, string? request = null, string? caFile = null, X509Certificate2? clientCertificate = null)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        var client = new RawWebSocket(socket, () => server.Diagnostics());
        try
        {
            using var cts = new CancellationTokenSource(client.Timeout);
            await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.WebSocketPort), cts.Token);
            client._stream = new NetworkStream(socket, ownsSocket: true);
            if (caFile is not null)
            {
                client._stream = await AuthenticateAsync(client._stream, caFile, clientCertificate, cts.Token);
            }

            await client.SendRawAsync(Encoding.ASCII.GetBytes(request ?? UpgradeRequest(server.WebSocketPort)));
            await client.ReadHeadAsync();
            return client;
        }
        catch
        {
            await client.DisposeAsync();
            throw;
        }
    }

    private static async Task<SslStream> AuthenticateAsync(Stream inner, string caFile, X509Certificate2? clientCertificate, CancellationToken cancellationToken)
    {
        var trust = new X509Certificate2Collection();
        trust.ImportFromPemFile(caFile);
        var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
        policy.CustomTrustStore.AddRange(trust);
        var tls = new SslStream(inner, leaveInnerStreamOpen: false);
        await tls.AuthenticateAsClientAsync(
            new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                ClientCertificates = clientCertificate is null ? null : [clientCertificate],
                CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
                CertificateChainPolicy = policy,
            },
            cancellationToken);
        return tls;
    }

    /// <summary>The Sec-WebSocket-Accept value for <paramref name="key"/> (RFC 6455 §4.2.2).</summary>
    public static string AcceptFor(string key) =>
        Convert.ToBase64String(SHA1.HashData(Encoding.ASCII.GetBytes(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")));

    /// <summary>A client frame: masked unless told otherwise.</summary>
    public static byte[] Frame(byte opcode, ReadOnlySpan<byte> payload, bool final = true, bool masked = true, bool compressed = false, ulong? declaredLength = null)
    {
        var output = new List<byte> { (byte)((final ? 0x80 : 0) | (compressed ? 0x40 : 0) | opcode) };
        var maskBit = masked ? 0x80 : 0;
        var length = declaredLength ?? (ulong)payload.Length;
        if (length <= 125)
        {
            output.Add((byte)(maskBit | (int)length));
        }
        else if (length <= ushort.MaxValue)
        {
            output.Add((byte)(maskBit | 126));
            output.Add((byte)(length >> 8));
            output.Add((byte)length);
        }
        else
        {
            output.Add((byte)(maskBit | 127));
            var bytes = new byte[8];
            BinaryPrimitives.WriteUInt64BigEndian(bytes, length);
            output.AddRange(bytes);
        }

        if (masked)
        {
            output.AddRange(Key);
        }

        for (var i = 0; i < payload.Length; i++)
        {
            output.Add(masked ? (byte)(payload[i] ^ Key[i & 3]) : payload[i]);
        }

        return [.. output];
    }

    /// <summary>A masked binary frame of <paramref name="text"/>.</summary>
    public static byte[] Binary(string text, bool final = true) => Frame(ServerFrame.Binary, Encoding.UTF8.GetBytes(text), final);

    /// <summary>Raw DEFLATE of <paramref name="text"/> with the sync-flush tail removed (RFC 7692 §7.2.1).</summary>
    public static byte[] Deflate(string text)
    {
        using var output = new MemoryStream();
        using (var deflate = new DeflateStream(output, CompressionLevel.Optimal, leaveOpen: true))
        {
            deflate.Write(Encoding.UTF8.GetBytes(text));
            deflate.Flush();
        }

        var bytes = output.ToArray();
        var tail = bytes.AsSpan().LastIndexOf(new byte[] { 0, 0, 0xff, 0xff });
        return bytes[..tail];
    }

    /// <summary>Inflates a permessage-deflate payload.</summary>
    public static byte[] Inflate(byte[] payload)
    {
        using var input = new MemoryStream([.. payload, 0x00, 0x00, 0xff, 0xff]);
        using var inflate = new DeflateStream(input, CompressionMode.Decompress);
        using var output = new MemoryStream();
        inflate.CopyTo(output);
        return output.ToArray();
    }

    public async Task SendRawAsync(byte[] bytes)
    {
        using var cts = new CancellationTokenSource(Timeout);
        await _stream.WriteAsync(bytes, cts.Token);
    }

    /// <summary>Sends <paramref name="text"/> as one masked binary frame.</summary>
    public Task SendAsync(string text) => SendRawAsync(Binary(text));

    /// <summary>Reads the next frame; null when the server closed the connection.</summary>
    public async Task<ServerFrame?> ReadFrameAsync()
    {
        if (!await FillAsync(2))
        {
            return null;
        }

        var b0 = _buffer[0];
        var b1 = _buffer[1];
        var length = (ulong)(b1 & 0x7f);
        var header = 2;
        if (length == 126)
        {
            header = 4;
        }
        else if (length == 127)
        {
            header = 10;
        }

        var masked = (b1 & 0x80) != 0;
        if (masked)
        {
            header += 4;
        }

        if (!await FillAsync(header))
        {
            return null;
        }

        if (header >= 4 && (b1 & 0x7f) == 126)
        {
            length = BinaryPrimitives.ReadUInt16BigEndian([.. _buffer.GetRange(2, 2)]);
        }
        else if ((b1 & 0x7f) == 127)
        {
            length = BinaryPrimitives.ReadUInt64BigEndian([.. _buffer.GetRange(2, 8)]);
        }

        if (!await FillAsync(header + (int)length))
        {
            return null;
        }

        var payload = _buffer.GetRange(header, (int)length).ToArray();
        _buffer.RemoveRange(0, header + (int)length);
        return new ServerFrame((byte)(b0 & 0x0f), (b0 & 0x80) != 0, (b0 & 0x40) != 0, masked, payload);
    }

    /// <summary>Reads frames until a data frame arrives; fails on anything else but server pings.</summary>
    public async Task<ServerFrame> ReadDataFrameAsync()
    {
        while (true)
        {
            var frame = await ReadFrameAsync() ?? throw new Xunit.Sdk.XunitException($"connection closed while waiting for a data frame\n{_diagnostics()}");
            if (frame.Opcode is ServerFrame.Binary or ServerFrame.Continuation or 0x1)
            {
                return frame;
            }

            Assert.Fail($"expected a data frame, got opcode {frame.Opcode} ({frame.Text})\n{_diagnostics()}");
        }
    }

    /// <summary>Reads data frames until their text (joined) contains <paramref name="expected"/>; returns the text read.</summary>
    public async Task<string> ExpectTextAsync(string expected)
    {
        var text = new StringBuilder();
        while (!text.ToString().Contains(expected, StringComparison.Ordinal))
        {
            var frame = await ReadFrameAsync() ?? throw new Xunit.Sdk.XunitException($"connection closed; expected \"{expected}\", got \"{text}\"\n{_diagnostics()}");
            if (frame.Opcode == ServerFrame.Close)
            {
                Assert.Fail($"close frame {frame.CloseStatus} {frame.CloseReason}; expected \"{expected}\", got \"{text}\"\n{_diagnostics()}");
            }

            if (frame.Opcode != ServerFrame.Pong)
            {
                text.Append(frame.Text);
            }
        }

        return text.ToString();
    }

    /// <summary>Reads until a close frame; returns it, and asserts the connection then ends.</summary>
    public async Task<ServerFrame> ExpectCloseAsync()
    {
        while (true)
        {
            var frame = await ReadFrameAsync() ?? throw new Xunit.Sdk.XunitException($"connection ended without a close frame\n{_diagnostics()}");
            if (frame.Opcode == ServerFrame.Close)
            {
                Assert.Null(await ReadFrameAsync());
                return frame;
            }
        }
    }

    /// <summary>Reads until the connection ends; returns the close frame the server sent first, if any.</summary>
    public async Task<ServerFrame?> ExpectEndAsync()
    {
        ServerFrame? close = null;
        while (await ReadFrameAsync() is { } frame)
        {
            if (frame.Opcode == ServerFrame.Close)
            {
                close = frame;
            }
        }

        return close;
    }

    /// <summary>Reads the rest of the stream (an HTTP error body) until the server closes it.</summary>
    public async Task<string> ReadToEndAsync()
    {
        while (await FillAsync(_buffer.Count + 1))
        {
        }

        return Encoding.ASCII.GetString([.. _buffer]);
    }

    private async Task ReadHeadAsync()
    {
        while (true)
        {
            var end = IndexOfHeadEnd();
            if (end >= 0)
            {
                ResponseHead = Encoding.ASCII.GetString([.. _buffer.GetRange(0, end)]);
                _buffer.RemoveRange(0, end + 4);
                Status = int.Parse(ResponseHead.Split(' ')[1], System.Globalization.CultureInfo.InvariantCulture);
                return;
            }

            if (!await FillAsync(_buffer.Count + 1))
            {
                throw new Xunit.Sdk.XunitException($"connection closed before the upgrade answer\n{_diagnostics()}");
            }
        }
    }

    private int IndexOfHeadEnd()
    {
        for (var i = 0; i + 3 < _buffer.Count; i++)
        {
            if (_buffer[i] == '\r' && _buffer[i + 1] == '\n' && _buffer[i + 2] == '\r' && _buffer[i + 3] == '\n')
            {
                return i;
            }
        }

        return -1;
    }

    /// <summary>Reads until <paramref name="count"/> bytes are buffered; false when the server closed first.</summary>
    private async Task<bool> FillAsync(int count)
    {
        var chunk = new byte[64 * 1024];
        using var cts = new CancellationTokenSource(Timeout);
        while (_buffer.Count < count)
        {
            int read;
            try
            {
                read = await _stream.ReadAsync(chunk, cts.Token);
            }
            catch (OperationCanceledException)
            {
                throw new Xunit.Sdk.XunitException($"timed out after {Timeout.TotalSeconds} s waiting for {count} bytes (have {_buffer.Count})\n{_diagnostics()}");
            }
            catch (IOException)
            {
                return false; // reset by the server
            }

            if (read == 0)
            {
                return false;
            }

            _buffer.AddRange(chunk.AsSpan(0, read));
        }

        return true;
    }

    public async ValueTask DisposeAsync()
    {
        if (_stream is not null)
        {
            await _stream.DisposeAsync();
        }

        _socket.Dispose();
    }
}
