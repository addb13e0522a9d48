using System.Buffers;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using Courier.Protocols.WebSocket;

namespace Courier.Actors.Connections;

/// <summary>
/// A client connection's stream after the WebSocket handshake: reads unframe and unmask the
/// client's frames (answering pings and closes), writes go out as one binary frame per write
/// batch. <see cref="ClientConnection"/> runs its usual pumps over it.
/// </summary>
/// <remarks>
/// Hot path: payloads are unmasked in this stream's receive buffer and copied once into the read
/// pump's buffer; a write batch gets a 2-10 byte header and goes out with the batch's chunks in one
/// gathered socket send. Nothing is allocated per message (compression, which is opt-in, allocates
/// a zlib stream per batch and per received message). The transport may be a TLS stream: then the
/// header and chunks are written to it in order instead of gathered on the socket.
/// </remarks>
internal sealed class WebSocketStream : Stream, IBatchWriteStream
{
    private const int BrowserFrameSize = 4096; // bytes: nats-server's frame limit for browsers (wsFrameSizeForBrowsers)
    private const int ReceiveBufferSize = 64 * 1024; // bytes: a full socket read, as the plain client's pipe buffer
    private const int SmallReceiveBufferSize = 4 * 1024; // bytes: a quiet client's buffer, as the plain client's first
    private const int ShortReadsToShrink = 16; // reads under the small size in a row before an idle client's buffer shrinks

    private readonly Stream _transport;
    private readonly SocketGatherSender? _sender;
    private readonly WebSocketFrameReader _frames;
    private readonly bool _compress;
    private readonly int _maxMessage;
    private readonly SemaphoreSlim _writeLock = new(1, 1);
    private readonly byte[] _header = new byte[WebSocketFrameWriter.MaxHeaderSize];
    private readonly List<ArraySegment<byte>> _gather = [];
    private readonly ArraySegment<byte>[] _compressedPart = new ArraySegment<byte>[1];
    private byte[] _frameHeaders = [];
    private byte[] _receive;
    private int _start;
    private int _end;
    private bool _lastReadFilled; // the last transport read filled the buffer: grow it before the next
    private int _shortReads;

    // Decoded payload bytes waiting to be copied out: a range of _receive, or of _inflated.
    private int _dataOffset;
    private int _dataCount;
    private ArrayBufferWriter<byte>? _compressed;
    private ArrayBufferWriter<byte>? _inflated;
    private int _inflatedOffset;
    private MemoryStream? _deflated;
    private bool _closeReceived;
    private bool _closeSent;
    private int _disposed;

    /// <param name="transport">The connection after the upgrade (the socket's stream, or a TLS stream over it).</param>
    /// <param name="socket">The socket when <paramref name="transport"/> is its plain stream: writes are gathered on it.</param>
    /// <param name="upgrade">What the handshake negotiated.</param>
    /// <param name="maxMessage">Bytes: the largest frame payload, and the largest (de)compressed message.</param>
    /// <param name="pending">Bytes the client sent after its handshake, already read from the transport.</param>
    public WebSocketStream(Stream transport, Socket? socket, WebSocketUpgradeResult upgrade, int maxMessage, ReadOnlySpan<byte> pending = default)
    {
        _transport = transport;
        _sender = socket is not null ? new SocketGatherSender(socket) : null;
        _compress = upgrade.Compress;
        _maxMessage = maxMessage;
        Upgrade = upgrade;
        _frames = new WebSocketFrameReader(maxMessage, requireMask: !upgrade.NoMasking, compressionNegotiated: upgrade.Compress);
        // Its own array, not pooled: a read may still be in flight on it when the connection is disposed.
        // Small until a read fills it (then 64 KB), as ReadBufferPool sizes a plain client's reads, so
        // thousands of idle browser clients do not hold 64 KB each.
        _receive = new byte[Math.Max(SmallReceiveBufferSize, pending.Length)];
        pending.CopyTo(_receive);
        _end = pending.Length;
    }

    /// <summary>What the handshake negotiated.</summary>
    public WebSocketUpgradeResult Upgrade { get; }

    /// <summary>Bytes of the receive buffer now (for tests: it grows with full reads, shrinks when idle).</summary>
    internal int ReceiveBufferLength => _receive.Length;

    /// <summary>The TLS session under the frames (wss); null over plain TCP.</summary>
    public System.Net.Security.SslStream? Tls => _transport as System.Net.Security.SslStream;

    /// <summary>Why the client's frames were refused, once they were.</summary>
    public string? ProtocolError { get; private set; }

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    /// <summary>Returns decoded payload bytes of the client's data frames; 0 once the client closed.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        var total = 0;
        while (true)
        {
            if (buffer.Length == 0)
            {
                // A zero-byte read waits for data without committing a buffer (the pipe's idle wait).
                if (_dataCount > 0 || _end > _start || _closeReceived)
                {
                    return 0;
                }

                if (_receive.Length > SmallReceiveBufferSize && _shortReads >= ShortReadsToShrink)
                {
                    _receive = new byte[SmallReceiveBufferSize]; // idle after a run of short reads: nothing is buffered
                    _start = _end = 0;
                    _lastReadFilled = false;
                }

                await _transport.ReadAsync(Memory<byte>.Empty, cancellationToken).ConfigureAwait(false);
                return 0;
            }

            // Fill the caller's buffer from as many buffered frames as fit before going back to the socket.
            total += CopyPending(buffer.Span[total..]);
            if (total == buffer.Length || _closeReceived)
            {
                return total;
            }

            if (await DecodeAsync().ConfigureAwait(false))
            {
                continue;
            }

            if (total > 0)
            {
                return total;
            }

            // Nothing decodable is buffered: keep the partial frame at the front and read more.
            if (_start > 0)
            {
                _receive.AsSpan(_start, _end - _start).CopyTo(_receive);
                _end -= _start;
                _start = 0;
            }

            if (_lastReadFilled && _receive.Length < ReceiveBufferSize)
            {
                var grown = new byte[ReceiveBufferSize];
                _receive.AsSpan(0, _end).CopyTo(grown);
                _receive = grown;
            }

            var space = _receive.Length - _end;
            var read = await _transport.ReadAsync(_receive.AsMemory(_end), cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                return 0;
            }

            _end += read;
            _lastReadFilled = read == space;
            _shortReads = read < SmallReceiveBufferSize ? _shortReads + 1 : 0;
        }
    }

    /// <summary>Decodes buffered frames until payload bytes are waiting; false when more bytes must be read first.</summary>
    private async ValueTask<bool> DecodeAsync()
    {
        while (_end > _start)
        {
            var status = _frames.Read(_receive.AsSpan(_start, _end - _start), out var consumed, out var frame);
            switch (status)
            {
                case WebSocketReadStatus.NeedMoreData:
                    return false;
                case WebSocketReadStatus.Error:
                    await FailAsync(frame.CloseStatus, frame.Error!).ConfigureAwait(false);
                    break; // not reached: FailAsync throws
                case WebSocketReadStatus.Control:
                    var payload = _receive.AsMemory(_start + frame.Offset, frame.Length);
                    _start += consumed;
                    await OnControlAsync(frame.Opcode, payload).ConfigureAwait(false);
                    if (_closeReceived)
                    {
                        return true;
                    }

                    break;
                default:
                    var offset = _start + frame.Offset;
                    _start += consumed;
                    if (frame.Compressed)
                    {
                        if (AppendCompressed(offset, frame.Length, frame.EndOfMessage))
                        {
                            return true;
                        }

                        await FailAsync(WebSocketCloseStatus.MessageTooBig, "compressed message bigger than maximum allowed or invalid").ConfigureAwait(false);
                    }

                    if (frame.Length > 0)
                    {
                        _dataOffset = offset;
                        _dataCount = frame.Length;
                        return true;
                    }

                    break;
            }
        }

        return false;
    }

    /// <summary>Buffers a compressed message's bytes; at its end inflates it. True when inflated bytes wait (or nothing is wrong yet).</summary>
    private bool AppendCompressed(int offset, int length, bool endOfMessage)
    {
        _compressed ??= new ArrayBufferWriter<byte>();
        if (_compressed.WrittenCount + length > _maxMessage)
        {
            return false;
        }

        _compressed.Write(_receive.AsSpan(offset, length));
        if (!endOfMessage)
        {
            return true;
        }

        _inflated ??= new ArrayBufferWriter<byte>();
        _inflated.Clear();
        _inflatedOffset = 0;
        var ok = PerMessageDeflate.TryDecompress(_compressed.WrittenSpan, _maxMessage, _inflated);
        _compressed.Clear();
        return ok;
    }

    private int CopyPending(Span<byte> destination)
    {
        if (_inflated is not null && _inflatedOffset < _inflated.WrittenCount)
        {
            var count = Math.Min(destination.Length, _inflated.WrittenCount - _inflatedOffset);
            _inflated.WrittenSpan.Slice(_inflatedOffset, count).CopyTo(destination);
            _inflatedOffset += count;
            return count;
        }

        if (_dataCount > 0)
        {
            var count = Math.Min(destination.Length, _dataCount);
            _receive.AsSpan(_dataOffset, count).CopyTo(destination);
            _dataOffset += count;
            _dataCount -= count;
            return count;
        }

        return 0;
    }

    private async ValueTask OnControlAsync(WebSocketOpcode opcode, ReadOnlyMemory<byte> payload)
    {
        switch (opcode)
        {
            case WebSocketOpcode.Ping:
                await SendControlAsync(WebSocketFrameWriter.Control(WebSocketOpcode.Pong, payload.Span), close: false).ConfigureAwait(false);
                break;
            case WebSocketOpcode.Close:
                // Answer with the client's status (nats-server echoes it), then end the stream.
                _closeReceived = true;
                await SendControlAsync(WebSocketFrameWriter.CloseReply(payload.Span), close: true).ConfigureAwait(false);
                break;
        }
    }

    private async ValueTask FailAsync(ushort status, string reason)
    {
        ProtocolError = reason;
        await SendControlAsync(WebSocketFrameWriter.Close(status, reason), close: true).ConfigureAwait(false);
        throw new IOException($"websocket protocol error: {reason}");
    }

    /// <summary>
    /// Sends a close frame for a connection the server ends, with nats-server's status for
    /// <paramref name="reason"/> (unless a close frame was already sent).
    /// </summary>
    public ValueTask CloseAsync(string reason) =>
        SendControlAsync(WebSocketFrameWriter.Close(CloseStatusFor(reason), reason), close: true);

    /// <summary>nats-server's <c>wsEnqueueCloseMessage</c> mapping from close reason to status.</summary>
    internal static ushort CloseStatusFor(string reason) => reason switch
    {
        "Client Closed" => WebSocketCloseStatus.NormalClosure,
        "Authentication Timeout" or "Authentication Failure" or "Authentication Expired" or "Authorization Violation" or "Slow Consumer (Pending Bytes)"
            or "Slow Consumer (Write Deadline)" or "Maximum Connections Exceeded" or "Maximum Account Connections Exceeded" or "Maximum Control Line Exceeded"
            or "Maximum Subscriptions Exceeded" => WebSocketCloseStatus.PolicyViolation,
        "Protocol Error" or "Protocol Violation" or "Parse Error" or "Bad Client Protocol Version" => WebSocketCloseStatus.ProtocolError,
        "Maximum Payload Exceeded" => WebSocketCloseStatus.MessageTooBig,
        "Server Shutdown" => WebSocketCloseStatus.GoingAway,
        "Write Error" or "Read Error" or "Stale Connection" => WebSocketCloseStatus.AbnormalClosure,
        _ => WebSocketCloseStatus.InternalServerError,
    };

    private async ValueTask SendControlAsync(byte[] frame, bool close)
    {
        await _writeLock.WaitAsync().ConfigureAwait(false);
        try
        {
            if (_closeSent || Volatile.Read(ref _disposed) != 0)
            {
                return;
            }

            _closeSent = close;
            await _transport.WriteAsync(frame).ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException)
        {
            // The peer is gone; closing goes on.
        }
        finally
        {
            _writeLock.Release();
        }
    }

    /// <inheritdoc />
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public async ValueTask WriteBatchAsync(List<ArraySegment<byte>> batch)
    {
        long total = 0;
        foreach (var chunk in batch)
        {
            total += chunk.Count;
        }

        await _writeLock.WaitAsync().ConfigureAwait(false);
        try
        {
            if (_closeSent)
            {
                return; // RFC 6455 §5.5.1: no data after a close frame
            }

            if (_compress && total > PerMessageDeflate.CompressThreshold)
            {
                _deflated ??= new MemoryStream();
                PerMessageDeflate.Compress(batch, _deflated);
                _compressedPart[0] = new ArraySegment<byte>(_deflated.GetBuffer(), 0, (int)_deflated.Length);
                if (Upgrade.Browser && !Upgrade.SafariCompression && _deflated.Length > BrowserFrameSize)
                {
                    AppendBrowserFrames(_compressedPart, _deflated.Length, compressed: true);
                }
                else
                {
                    var size = WebSocketFrameWriter.WriteHeader(_header, WebSocketOpcode.Binary, _deflated.Length, compressed: true);
                    _gather.Add(new ArraySegment<byte>(_header, 0, size));
                    _gather.Add(_compressedPart[0]);
                }
            }
            else if (Upgrade.Browser && total > BrowserFrameSize)
            {
                AppendBrowserFrames(batch, total, compressed: false);
            }
            else
            {
                var size = WebSocketFrameWriter.WriteHeader(_header, WebSocketOpcode.Binary, total);
                _gather.Add(new ArraySegment<byte>(_header, 0, size));
                _gather.AddRange(batch);
            }

            await SendGatheredAsync().ConfigureAwait(false);
        }
        finally
        {
            _gather.Clear();
            _writeLock.Release();
        }
    }

    /// <summary>
    /// nats-server's framing for browsers (their WebSocket stacks do better with small frames): the
    /// batch goes out in frames of at most 4 KB, each its own message, or for a compressed batch as
    /// the fragments of one message. Still one gathered send; the headers share one buffer.
    /// </summary>
    private void AppendBrowserFrames(IReadOnlyList<ArraySegment<byte>> parts, long total, bool compressed)
    {
        var frames = (int)((total + BrowserFrameSize - 1) / BrowserFrameSize);
        var needed = frames * 4; // bytes: a header of a frame of at most 4 KB is 2 or 4 bytes
        if (_frameHeaders.Length < needed)
        {
            _frameHeaders = new byte[Math.Max(needed, _frameHeaders.Length * 2)];
        }

        var headerPosition = 0;
        var headerSlot = -1;
        var inFrame = 0;
        var left = total;
        var first = true;
        foreach (var part in parts)
        {
            var offset = part.Offset;
            var count = part.Count;
            while (count > 0)
            {
                if (inFrame == 0)
                {
                    headerSlot = _gather.Count;
                    _gather.Add(default);
                }

                var take = Math.Min(count, BrowserFrameSize - inFrame);
                _gather.Add(new ArraySegment<byte>(part.Array!, offset, take));
                offset += take;
                count -= take;
                inFrame += take;
                if (inFrame == BrowserFrameSize || inFrame == left)
                {
                    left -= inFrame;
                    var opcode = compressed && !first ? WebSocketOpcode.Continuation : WebSocketOpcode.Binary;
                    var size = WebSocketFrameWriter.WriteHeader(_frameHeaders.AsSpan(headerPosition), opcode, inFrame,
                        compressed: compressed && first, final: !compressed || left == 0);
                    _gather[headerSlot] = new ArraySegment<byte>(_frameHeaders, headerPosition, size);
                    headerPosition += size;
                    inFrame = 0;
                    first = false;
                }
            }
        }
    }

    private async ValueTask SendGatheredAsync()
    {
        if (_sender is not null)
        {
            long expected = 0;
            foreach (var part in _gather)
            {
                expected += part.Count;
            }

            var sent = await _sender.SendAsync(_gather).ConfigureAwait(false);
            if (sent != expected)
            {
                throw new IOException("short write on the websocket connection");
            }

            return;
        }

        foreach (var part in _gather)
        {
            await _transport.WriteAsync(part.AsMemory()).ConfigureAwait(false);
        }
    }

    public override void Write(byte[] buffer, int offset, int count) => WriteAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    /// <summary>A single write is one binary frame (the batch path is <see cref="WriteBatchAsync"/>).</summary>
    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (!System.Runtime.InteropServices.MemoryMarshal.TryGetArray(buffer, out var segment))
        {
            segment = new ArraySegment<byte>(buffer.ToArray());
        }

        await WriteBatchAsync([segment]).ConfigureAwait(false);
    }

    public override void Flush()
    {
    }

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        // Not under the write lock: a write stuck on a peer that reads nothing holds it, and closing
        // the transport is what ends that write.
        await _transport.DisposeAsync().ConfigureAwait(false);
        _sender?.Dispose();
        await base.DisposeAsync().ConfigureAwait(false);
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing && Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _transport.Dispose();
            _sender?.Dispose();
        }

        base.Dispose(disposing);
    }
}
