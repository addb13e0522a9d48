using System.Diagnostics.CodeAnalysis;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>
/// A raw TCP connection speaking the NATS client protocol by hand, for exact wire transcripts:
/// <c>Send("SUB foo 1\r\nPUB foo 5\r\nhello\r\n"); Expect("MSG foo 1 5\r\nhello\r\n")</c>.
/// </summary>
/// <remarks>
/// Received bytes are split into server frames: a control line (<c>INFO</c>, <c>+OK</c>, <c>-ERR</c>,
/// <c>PING</c>, <c>PONG</c>) or a whole <c>MSG</c>/<c>HMSG</c> with its payload. Expectations consume
/// whole frames. The server's own keep-alive <c>PING</c>s (nats-server sends one soon after CONNECT)
/// are answered with <c>PONG</c> and skipped while <see cref="AnswerServerPings"/> is true.
/// Every wait is bounded by <see cref="Timeout"/>; a failed expectation reports what was received
/// and the server's log tail.
/// </remarks>
public sealed class WireClient : IAsyncDisposable
{
    /// <summary>The CONNECT most tests use: quiet (no +OK), not pedantic, headers and no-responders on.</summary>
    public const string QuietConnect = """{"verbose":false,"pedantic":false,"headers":true,"no_responders":true}""";

    private const int MaxShown = 400; // characters of a frame shown in a failure message
    private const int RecentFrames = 12; // frames kept for failure messages

    private static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(10);

    private readonly Socket _socket;
    private SslStream? _tls;
    private readonly Func<string> _diagnostics;
    private readonly Queue<string> _recent = new();
    private byte[] _buffer = new byte[64 * 1024];
    private int _start;
    private int _end;
    private bool _closed;

    private WireClient(Socket socket, Func<string> diagnostics)
    {
        _socket = socket;
        _diagnostics = diagnostics;
    }

    /// <summary>The server's INFO JSON.</summary>
    public JsonElement Info { get; private set; }

    /// <summary>The INFO line as received, including <c>\r\n</c>.</summary>
    public string InfoLine { get; private set; } = string.Empty;

    /// <summary>The local port of this connection (what /connz reports as "port").</summary>
    public int LocalPort => ((IPEndPoint)_socket.LocalEndPoint!).Port;

    /// <summary>Answer and hide the server's PINGs (default). Off to observe them.</summary>
    public bool AnswerServerPings { get; set; } = true;

    /// <summary>The limit of each expectation.</summary>
    public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>The TLS version in use, after <see cref="UpgradeToTlsAsync"/>.</summary>
    public System.Security.Authentication.SslProtocols? TlsProtocol => _tls?.SslProtocol;

    /// <summary>
    /// Runs the client side of a TLS handshake on this connection (after INFO, as a NATS client does when
    /// INFO says <c>tls_required</c>; or first thing, for <c>handshake_first</c>). The server certificate
    /// must chain to <paramref name="caFile"/>; <paramref name="clientCertificate"/> is offered when given.
    /// From then on every frame goes through TLS. Throws what the handshake throws.
    /// </summary>
    public async Task UpgradeToTlsAsync(string caFile, X509Certificate2? clientCertificate = null)
    {
        var trust = new X509Certificate2Collection();
        trust.ImportFromPemFile(caFile);
        var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
        policy.CustomTrustStore.AddRange(trust);
        var tls = new SslStream(new NetworkStream(_socket, ownsSocket: false), leaveInnerStreamOpen: false);
        using var cts = new CancellationTokenSource(Timeout);
        await tls.AuthenticateAsClientAsync(
            new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                ClientCertificates = clientCertificate is null ? null : [clientCertificate],
                CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
                CertificateChainPolicy = policy,
            },
            cts.Token);
        _tls = tls;
    }

    /// <summary>Connects, completes the TLS handshake before anything else (<c>handshake_first</c>), then reads INFO.</summary>
    public static async Task<WireClient> ConnectTlsFirstAsync(ServerProcess server, string caFile, X509Certificate2? clientCertificate = null)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        var client = new WireClient(socket, () => server.Diagnostics());
        try
        {
            using var cts = new CancellationTokenSource(ConnectTimeout);
            await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.Port), cts.Token);
            await client.UpgradeToTlsAsync(caFile, clientCertificate);
            await client.ReadInfoAsync();
            return client;
        }
        catch
        {
            await client.DisposeAsync();
            throw;
        }
    }

    /// <summary>Connects to <paramref name="server"/> and reads its INFO.</summary>
    public static Task<WireClient> ConnectAsync(ServerProcess server, int? receiveBufferSize = null) =>
        ConnectAsync(server.Port, () => server.Diagnostics(), receiveBufferSize);

    /// <summary>Connects to 127.0.0.1:<paramref name="port"/> and reads the INFO the server sends first.</summary>
    public static async Task<WireClient> ConnectAsync(int port, Func<string> diagnostics, int? receiveBufferSize = null)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        if (receiveBufferSize is { } size)
        {
            socket.ReceiveBufferSize = size; // before connecting, so the window is small from the start
        }

        var client = new WireClient(socket, diagnostics);
        try
        {
            using var cts = new CancellationTokenSource(ConnectTimeout);
            await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), cts.Token);
            await client.ReadInfoAsync();
            return client;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private async Task ReadInfoAsync()
    {
        var info = await ReadFrameAsync("INFO");
        var line = Encoding.UTF8.GetString(info);
        var match = Regex.Match(line, @"^INFO (\{.*\}) ?\r\n$", RegexOptions.Singleline);
        if (!match.Success)
        {
            Fail($"expected INFO {{...}}\\r\\n first, got {Show(info)}");
        }

        InfoLine = line;
        using var doc = JsonDocument.Parse(match.Groups[1].Value);
        Info = doc.RootElement.Clone();
    }

    /// <summary>Sends CONNECT with <paramref name="connectJson"/> and a PING, and expects the PONG.</summary>
    public async Task HandshakeAsync(string connectJson = QuietConnect)
    {
        await SendAsync($"CONNECT {connectJson}\r\nPING\r\n");
        await ExpectAsync("PONG\r\n");
    }

    /// <summary>Sends PING and expects PONG as the very next frame: everything the server sent this
    /// connection before it has arrived, and nothing unexpected has.</summary>
    public async Task PingPongAsync()
    {
        await SendAsync("PING\r\n");
        await ExpectAsync("PONG\r\n");
    }

    /// <summary>Sends <paramref name="text"/> as UTF-8 in one write.</summary>
    public Task SendAsync(string text) => SendAsync(Encoding.UTF8.GetBytes(text));

    /// <summary>Sends <paramref name="bytes"/> in one write.</summary>
    public async Task SendAsync(ReadOnlyMemory<byte> bytes)
    {
        using var cts = new CancellationTokenSource(Timeout);
        try
        {
            while (!bytes.IsEmpty)
            {
                if (_tls is not null)
                {
                    await _tls.WriteAsync(bytes, cts.Token);
                    await _tls.FlushAsync(cts.Token);
                    break;
                }

                var sent = await _socket.SendAsync(bytes, SocketFlags.None, cts.Token);
                bytes = bytes[sent..];
            }
        }
        catch (OperationCanceledException)
        {
            Fail($"timed out after {Timeout.TotalSeconds} s sending {bytes.Length} bytes (the server is not reading)");
        }
    }

    /// <summary>Sends <paramref name="text"/> one byte per write, with a pause between, so the
    /// server sees the commands split at every position.</summary>
    public async Task SendByteByByteAsync(string text)
    {
        foreach (var b in Encoding.UTF8.GetBytes(text))
        {
            await SendAsync(new[] { b });
            await Task.Delay(1);
        }
    }

    /// <summary>Expects the next frames to be exactly <paramref name="exact"/> (whole frames).</summary>
    public async Task ExpectAsync(string exact)
    {
        var expected = Encoding.UTF8.GetBytes(exact);
        var got = new List<byte>();
        while (got.Count < expected.Length)
        {
            got.AddRange(await ReadFrameAsync(Show(expected)));
        }

        if (!got.SequenceEqual(expected))
        {
            Fail($"expected {Show(expected)}\n     got {Show(got.ToArray())}");
        }
    }

    /// <summary>Expects the next frame's first line (without <c>\r\n</c>) to match <paramref name="pattern"/>;
    /// returns that line.</summary>
    public async Task<string> ExpectLineAsync(Regex pattern)
    {
        var frame = await ReadFrameAsync($"a line matching /{pattern}/");
        var text = Encoding.UTF8.GetString(frame);
        var line = text[..text.IndexOf("\r\n", StringComparison.Ordinal)];
        if (!pattern.IsMatch(line))
        {
            Fail($"expected a line matching /{pattern}/, got {Show(frame)}");
        }

        return line;
    }

    /// <summary>Expects the next frame to be a well-formed MSG or HMSG and returns it.</summary>
    public async Task<WireMessage> ExpectMsgAsync()
    {
        var frame = await ReadFrameAsync("MSG or HMSG");
        var msg = WireMessage.TryParse(frame);
        if (msg is null)
        {
            Fail($"expected a MSG or HMSG frame, got {Show(frame)}");
        }

        return msg;
    }

    /// <summary>Expects <c>-ERR '&lt;text&gt;'</c> and then the server closing the connection.</summary>
    public async Task ExpectErrAndCloseAsync(string text)
    {
        await ExpectAsync($"-ERR '{text}'\r\n");
        await ExpectClosedAsync();
    }

    /// <summary>Expects the server to close the connection with nothing more sent but its PINGs.</summary>
    public async Task ExpectClosedAsync()
    {
        using var cts = new CancellationTokenSource(Timeout);
        while (true)
        {
            if (TryTakeFrame(out var frame))
            {
                if (IsPing(frame))
                {
                    continue; // after an error the server may still have queued a keep-alive PING
                }

                Fail($"expected the connection to be closed, got {Show(frame)}");
            }

            if (_closed)
            {
                if (_end > _start)
                {
                    Fail($"connection closed after a partial frame: {Show(_buffer.AsSpan(_start, _end - _start).ToArray())}");
                }

                return;
            }

            if (!await FillAsync(cts.Token))
            {
                Fail($"expected the connection to be closed, but it is still open after {Timeout.TotalSeconds} s");
            }
        }
    }

    /// <summary>
    /// Reads and discards MSG/HMSG frames until the server closes the connection, as a slow consumer
    /// is closed: no other frame may come. A truncated last frame is allowed (the server may drop
    /// its buffer mid-frame). Returns the number of whole messages read.
    /// </summary>
    public async Task<int> ExpectMessagesThenClosedAsync(int maxFrames)
    {
        using var cts = new CancellationTokenSource(Timeout);
        var messages = 0;
        while (messages <= maxFrames)
        {
            if (TryTakeFrame(out var frame))
            {
                if (frame.AsSpan().StartsWith("MSG "u8) || frame.AsSpan().StartsWith("HMSG "u8))
                {
                    messages++;
                }
                else if (!IsPing(frame))
                {
                    Fail($"expected only messages before the close, got {Show(frame)}");
                }

                continue;
            }

            if (_closed)
            {
                return messages;
            }

            if (!await FillAsync(cts.Token))
            {
                Fail($"expected the connection to be closed, but it is still open after {Timeout.TotalSeconds} s ({messages} messages read)");
            }
        }

        Fail($"more than {maxFrames} messages and the connection is still open");
        return messages;
    }

    /// <summary>Reads the next frame (answering and skipping server PINGs unless
    /// <see cref="AnswerServerPings"/> is off).</summary>
    public async Task<byte[]> ReadFrameAsync(string waitingFor = "a frame")
    {
        using var cts = new CancellationTokenSource(Timeout);
        while (true)
        {
            if (TryTakeFrame(out var frame))
            {
                if (AnswerServerPings && IsPing(frame))
                {
                    await SendAsync("PONG\r\n"u8.ToArray());
                    continue;
                }

                return frame;
            }

            if (_closed)
            {
                Fail($"connection closed by the server while waiting for {waitingFor}");
            }

            if (!await FillAsync(cts.Token))
            {
                Fail($"timed out after {Timeout.TotalSeconds} s waiting for {waitingFor}");
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_tls is not null)
        {
            await _tls.DisposeAsync();
        }

        _socket.Dispose();
    }

    private static bool IsPing(byte[] frame) => frame.AsSpan().SequenceEqual("PING\r\n"u8);

    // One frame: a control line, or MSG/HMSG with its payload (size from the line's last argument).
    private bool TryTakeFrame(out byte[] frame)
    {
        frame = [];
        var available = _buffer.AsSpan(_start, _end - _start);
        var lineEnd = available.IndexOf("\r\n"u8);
        if (lineEnd < 0)
        {
            return false;
        }

        var length = lineEnd + 2;
        if (available.StartsWith("MSG "u8) || available.StartsWith("HMSG "u8))
        {
            var line = Encoding.ASCII.GetString(available[..lineEnd]);
            var lastArg = line[(line.LastIndexOf(' ') + 1)..];
            if (int.TryParse(lastArg, out var size) && size >= 0)
            {
                length += size + 2;
            }
        }

        if (available.Length < length)
        {
            return false;
        }

        frame = available[..length].ToArray();
        _start += length;
        Remember(frame);
        return true;
    }

    // Reads more bytes; false when the token expired first. Sets _closed at end of stream.
    private async Task<bool> FillAsync(CancellationToken token)
    {
        if (_start > 0)
        {
            Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }

        if (_end == _buffer.Length)
        {
            Array.Resize(ref _buffer, _buffer.Length * 2);
        }

        try
        {
            var read = _tls is not null
                ? await _tls.ReadAsync(_buffer.AsMemory(_end), token)
                : await _socket.ReceiveAsync(_buffer.AsMemory(_end), SocketFlags.None, token);
            if (read == 0)
            {
                _closed = true;
            }

            _end += read;
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.ConnectionAborted)
        {
            _closed = true;
            return true;
        }
        catch (IOException) when (_tls is not null)
        {
            // The peer reset the connection, or closed it without a TLS close_notify.
            _closed = true;
            return true;
        }
    }

    private void Remember(byte[] frame)
    {
        _recent.Enqueue(Show(frame));
        while (_recent.Count > RecentFrames)
        {
            _recent.Dequeue();
        }
    }

    [DoesNotReturn]
    private void Fail(string message)
    {
        Assert.Fail(
            $"{message}\n--- last frames received on this connection ---\n{string.Join('\n', _recent)}\n" +
            $"--- unconsumed bytes: {Show(_buffer.AsSpan(_start, _end - _start).ToArray())}\n{_diagnostics()}");
    }

    /// <summary>Bytes as a readable, escaped, length-limited string.</summary>
    public static string Show(byte[] bytes)
    {
        var sb = new StringBuilder("\"");
        foreach (var b in bytes.Take(MaxShown))
        {
            sb.Append(b switch
            {
                (byte)'\r' => "\\r",
                (byte)'\n' => "\\n",
                (byte)'"' => "\\\"",
                < 0x20 or >= 0x7f => $"\\x{b:x2}",
                _ => ((char)b).ToString(),
            });
        }

        sb.Append('"');
        if (bytes.Length > MaxShown)
        {
            sb.Append($"... ({bytes.Length} bytes)");
        }

        return sb.ToString();
    }
}
