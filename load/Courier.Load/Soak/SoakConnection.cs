using System.Buffers.Text;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Courier.Load.Soak;

/// <summary>
/// One raw-protocol client of the soak: a subscriber (one SUB on its own subject, counting the
/// MSGs it gets) or the core publisher (PUBs at a steady rate to random subscribers). It reconnects
/// after any loss, as a NATS client does, and reports each loss to the <see cref="SoakLedger"/>.
/// </summary>
/// <remarks>
/// Thousands of these share the soak process: one 4 KiB buffer each, no allocation per message
/// received, one socket send per PUB batch.
/// </remarks>
internal sealed class SoakConnection
{
    private const int BufferSize = 4096; // bytes: a subscriber's messages are small; a longer line is an error
    private static readonly TimeSpan HandshakeTimeout = TimeSpan.FromSeconds(30); // INFO to PONG, on a loaded 2-core box
    private static readonly byte[] Pong = "PONG\r\n"u8.ToArray();
    private static readonly TimeSpan TickPeriod = TimeSpan.FromMilliseconds(100); // the publisher's batch period

    private readonly int _id;
    private readonly IPEndPoint _server;
    private readonly IPAddress _source;
    private readonly SoakLedger _ledger;
    private readonly SemaphoreSlim _connectGate;
    private readonly int _publishRate;
    private readonly int _subscribers;

    /// <param name="id">The subscriber's number (its subject), -1 for the publisher.</param>
    /// <param name="server">The server's client port.</param>
    /// <param name="source">The loopback source address to connect from.</param>
    /// <param name="ledger">Where connections, losses and message counts go.</param>
    /// <param name="connectGate">Bounds the handshakes in flight at once.</param>
    /// <param name="publishRate">0: a subscriber; else the core publisher's messages per second.</param>
    /// <param name="subscribers">How many subscribers the publisher spreads its messages over.</param>
    public SoakConnection(int id, IPEndPoint server, IPAddress source, SoakLedger ledger, SemaphoreSlim connectGate, int publishRate = 0, int subscribers = 0)
    {
        _id = id;
        _server = server;
        _source = source;
        _ledger = ledger;
        _connectGate = connectGate;
        _publishRate = publishRate;
        _subscribers = subscribers;
    }

    private bool IsPublisher => _publishRate > 0;

    /// <summary>The subject subscriber <paramref name="id"/> listens on.</summary>
    public static string Subject(int id) => $"soak.c.{id}";

    /// <summary>Connects, holds, and reconnects after each loss until <paramref name="stop"/>.</summary>
    public async Task RunAsync(CancellationToken stop)
    {
        var buffer = new byte[BufferSize];
        var first = true;
        while (!stop.IsCancellationRequested)
        {
            var held = false;
            var reason = "";
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            try
            {
                socket.Bind(new IPEndPoint(_source, 0));
                await _connectGate.WaitAsync(stop).ConfigureAwait(false);
                var start = 0;
                var end = 0;
                try
                {
                    using var handshake = CancellationTokenSource.CreateLinkedTokenSource(stop);
                    handshake.CancelAfter(HandshakeTimeout);
                    await socket.ConnectAsync(_server, handshake.Token).ConfigureAwait(false);
                    (start, end) = await HandshakeAsync(socket, buffer, handshake.Token).ConfigureAwait(false);
                }
                finally
                {
                    _connectGate.Release();
                }

                held = true;
                _ledger.Connected(again: !first, counted: !IsPublisher);
                first = false;
                if (IsPublisher)
                {
                    using var either = CancellationTokenSource.CreateLinkedTokenSource(stop);
                    var read = ReadLoopAsync(socket, buffer, start, end, either.Token);
                    var publish = PublishLoopAsync(socket, either.Token);
                    var done = await Task.WhenAny(read, publish).ConfigureAwait(false);
                    await either.CancelAsync().ConfigureAwait(false);
                    socket.Dispose();
                    await Task.WhenAll(read, publish).ContinueWith(static _ => { }, TaskScheduler.Default).ConfigureAwait(false);
                    await done.ConfigureAwait(false); // rethrows the first failure
                }
                else
                {
                    await ReadLoopAsync(socket, buffer, start, end, stop).ConfigureAwait(false);
                }

                reason = "server closed the connection";
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                break;
            }
            catch (OperationCanceledException)
            {
                reason = "handshake timed out";
            }
            catch (SocketException e)
            {
                reason = $"socket: {e.SocketErrorCode}";
            }
            catch (IOException e)
            {
                reason = e.Message;
            }
            catch (ObjectDisposedException)
            {
                reason = "socket closed";
            }

            if (held && !stop.IsCancellationRequested)
            {
                _ledger.Lost(_id, reason, counted: !IsPublisher);
            }

            try
            {
                await Task.Delay(Random.Shared.Next(200, 1000), stop).ConfigureAwait(false); // reconnect jitter, as clients do
            }
            catch (OperationCanceledException)
            {
                break;
            }
        }
    }

    // Reads INFO, sends CONNECT (+ SUB) + PING and reads to the PONG. Returns what is left in the buffer.
    private async Task<(int Start, int End)> HandshakeAsync(Socket socket, byte[] buffer, CancellationToken token)
    {
        var start = 0;
        var end = 0;
        var sentConnect = false;
        while (true)
        {
            var lf = buffer.AsSpan(start, end - start).IndexOf((byte)'\n');
            if (lf < 0)
            {
                if (start > 0)
                {
                    Buffer.BlockCopy(buffer, start, buffer, 0, end - start);
                    end -= start;
                    start = 0;
                }

                if (end == buffer.Length)
                {
                    // INFO longer than the buffer: only the line's end matters here.
                    end = 0;
                }

                var n = await socket.ReceiveAsync(buffer.AsMemory(end), token).ConfigureAwait(false);
                if (n == 0)
                {
                    throw new IOException("server closed the connection during the handshake");
                }

                end += n;
                continue;
            }

            var line = buffer.AsSpan(start, lf);
            start += lf + 1;
            if (!sentConnect && line.StartsWith("INFO "u8))
            {
                // CONNECT {...}\r\n SUB <subject> <sid>\r\n PING\r\n
                var sub = IsPublisher ? "" : $"SUB {Subject(_id)} 1\r\n";
                var hello = Encoding.ASCII.GetBytes("CONNECT {\"verbose\":false,\"pedantic\":false,\"protocol\":1,\"name\":\"soak\"}\r\n" + sub + "PING\r\n");
                await socket.SendAsync(hello, token).ConfigureAwait(false);
                sentConnect = true;
            }
            else if (sentConnect && line.StartsWith("PONG"u8))
            {
                return (start, end);
            }
            else if (line.StartsWith("-ERR"u8))
            {
                throw new IOException(Encoding.ASCII.GetString(line).TrimEnd('\r'));
            }
        }
    }

    // MSG <subject> <sid> <#bytes>\r\n[payload]\r\n; PING -> PONG; -ERR ends the connection.
    private async Task ReadLoopAsync(Socket socket, byte[] buffer, int start, int end, CancellationToken token)
    {
        var skip = 0; // payload bytes (and CRLF) still to pass over
        while (true)
        {
            long delivered = 0;
            while (true)
            {
                if (skip > 0)
                {
                    var take = Math.Min(skip, end - start);
                    start += take;
                    skip -= take;
                    if (skip > 0)
                    {
                        break;
                    }
                }

                var lf = buffer.AsSpan(start, end - start).IndexOf((byte)'\n');
                if (lf < 0)
                {
                    break;
                }

                var line = buffer.AsSpan(start, lf > 0 && buffer[start + lf - 1] == '\r' ? lf - 1 : lf);
                start += lf + 1;
                if (line.StartsWith("MSG "u8))
                {
                    var space = line.LastIndexOf((byte)' ');
                    if (!Utf8Parser.TryParse(line[(space + 1)..], out int size, out _))
                    {
                        throw new IOException("bad MSG line");
                    }

                    skip = size + 2;
                    delivered++;
                }
                else if (line.SequenceEqual("PING"u8))
                {
                    await socket.SendAsync(Pong, token).ConfigureAwait(false);
                }
                else if (line.StartsWith("-ERR"u8))
                {
                    throw new IOException(Encoding.ASCII.GetString(line));
                }
            }

            if (delivered > 0)
            {
                _ledger.AddDelivered(delivered);
            }

            if (start == end)
            {
                start = end = 0;
            }
            else if (start > 0)
            {
                Buffer.BlockCopy(buffer, start, buffer, 0, end - start);
                end -= start;
                start = 0;
            }

            if (end == buffer.Length)
            {
                throw new IOException("a protocol line longer than the soak client's buffer");
            }

            var n = await socket.ReceiveAsync(buffer.AsMemory(end), token).ConfigureAwait(false);
            if (n == 0)
            {
                return;
            }

            end += n;
        }
    }

    // Every tick: rate/10 PUBs of 64 bytes to random subscribers, one send.
    private async Task PublishLoopAsync(Socket socket, CancellationToken token)
    {
        var perTick = Math.Max(1, _publishRate / 10);
        var batch = new byte[perTick * 96]; // "PUB soak.c.<id> 64\r\n" + 64 + CRLF fits in 96 bytes
        var payload = new byte[64];
        payload.AsSpan().Fill((byte)'s');
        using var timer = new PeriodicTimer(TickPeriod);
        while (await timer.WaitForNextTickAsync(token).ConfigureAwait(false))
        {
            var length = 0;
            for (var i = 0; i < perTick; i++)
            {
                // PUB <subject> <#bytes>\r\n[payload]\r\n
                var span = batch.AsSpan(length);
                "PUB soak.c."u8.CopyTo(span);
                var at = 11;
                Utf8Formatter.TryFormat(Random.Shared.Next(_subscribers), span[at..], out var w);
                at += w;
                " 64\r\n"u8.CopyTo(span[at..]);
                at += 5;
                payload.CopyTo(span[at..]);
                at += payload.Length;
                "\r\n"u8.CopyTo(span[at..]);
                length += at + 2;
            }

            var sent = 0;
            while (sent < length)
            {
                sent += await socket.SendAsync(batch.AsMemory(sent, length - sent), token).ConfigureAwait(false);
            }

            _ledger.AddPublished(perTick);
        }
    }
}
