using System.Buffers;
using System.Buffers.Text;
using System.IO.Pipelines;
using System.Text;
using Courier.Actors.Connections;
using Courier.Actors.Server;
using Courier.Protocols.Nats;

namespace Courier.Actors.JetStream;

/// <summary>A message received by an <see cref="InternalClient"/>, copied out of the read buffer.</summary>
internal sealed record InternalMessage(string Subject, string? ReplyTo, byte[]? Headers, byte[] Payload)
{
    /// <summary>A copy of a MSG or HMSG frame, whose spans are valid only while it is being handed over.</summary>
    public static InternalMessage From(ref ServerFrame frame)
    {
        var all = frame.Payload.ToArray();
        var headerSize = Math.Max(frame.HeaderSize, 0);
        return new InternalMessage(
            Encoding.UTF8.GetString(frame.Subject),
            frame.ReplyTo.IsEmpty ? null : Encoding.UTF8.GetString(frame.ReplyTo),
            headerSize > 0 ? all[..headerSize] : null,
            headerSize > 0 ? all[headerSize..] : all);
    }
}

/// <summary>
/// An in-process NATS client of the broker for Courier's own services: it speaks the protocol over
/// a pipe pair, so the services see exactly what a network client sees and the publish path needs
/// no special case. Messages are handed over per read batch and subscription, never one by one.
/// </summary>
internal sealed class InternalClient : IAsyncDisposable
{
    /// <summary>The CONNECT name of a JetStream API's client, whose subscriptions are told to routes (<see cref="ClientConnection.IsJetStream"/>).</summary>
    public const string JetStreamName = "courier-jetstream";

    private readonly PipeReader _input;
    private readonly PipeWriter _output;
    private readonly string _name;
    private readonly Lock _writeLock = new();
    private readonly AsyncSignal _flushSignal = new();
    private readonly Dictionary<int, FrameSink> _handlers = [];
    private readonly Lock _handlersLock = new();
    private readonly Queue<TaskCompletionSource> _pongWaiters = new();
    private readonly DirectSubscribers _direct = new();
    private ArrayBufferWriter<byte> _pending = new(4096);
    private ArrayBufferWriter<byte> _flushing = new(4096);
    private int _nextSid;
    private bool _closed;
    private bool _writing; // one writer into the pipe at a time: the write loop or an inline flush

    // Deferred flush (see BeginDeferred): per thread, because one client serves every JetStream actor.
    private const int DeferredWriteBytes = 256 * 1024;

    [ThreadStatic]
    private static int _threadDeferDepth;
    [ThreadStatic]
    private static InternalClient? _threadDeferred;
    private Task _readLoop = Task.CompletedTask;
    private Task _writeLoop = Task.CompletedTask;

    /// <param name="broker">The broker to connect to.</param>
    /// <param name="name">The CONNECT name (plain letters, dashes): the server side of the connection may act on it.</param>
    /// <param name="account">The account whose subject space the client uses; null: the global account.</param>
    public InternalClient(Broker broker, string name = "courier-internal", Accounts.Account? account = null)
    {
        (_input, _output) = broker.ConnectInternal(account, _direct);
        _name = name;
    }

    /// <summary>Sends CONNECT and starts the loops.</summary>
    public void Start()
    {
        Write(Encoding.UTF8.GetBytes("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"echo\":false,\"name\":\"" + _name + "\",\"protocol\":1}\r\n"));
        _writeLoop = Task.Run(WriteLoopAsync);
        _readLoop = Task.Run(ReadLoopAsync);
    }

    /// <summary>Subscribes; <paramref name="handler"/> receives each read batch's messages for this subscription.</summary>
    public string Subscribe(string subject, string? queue, Action<IReadOnlyList<InternalMessage>> handler) =>
        Subscribe(subject, queue, new MessageSink(handler));

    /// <summary>
    /// Subscribes with a sink that sees each message's frame (spans into the read buffer, valid only
    /// during <see cref="FrameSink.Add"/>) and is completed once per read batch.
    /// </summary>
    public string Subscribe(string subject, string? queue, FrameSink sink)
    {
        var id = Interlocked.Increment(ref _nextSid);
        lock (_handlersLock)
        {
            _handlers[id] = sink;
        }

        var sid = id.ToString(System.Globalization.CultureInfo.InvariantCulture);
        if (sink is DirectSink direct)
        {
            _direct.Add(sid, direct); // before the SUB: the broker binds it when it makes the subscription
        }

        Write(Encoding.UTF8.GetBytes(queue is null ? $"SUB {subject} {sid}\r\n" : $"SUB {subject} {queue} {sid}\r\n"));
        return sid;
    }

    /// <summary>
    /// <see cref="Subscribe(string, string?, FrameSink)"/> served by calls on the publisher's thread
    /// (<see cref="IDirectSubscriber"/>) instead of MSG frames through the pipe, for the hot paths (a
    /// stream's capture). The sink sees the same frames and completions, now from several threads one
    /// at a time; a frame that still comes through the pipe (an import, a route) goes to it too.
    /// </summary>
    public string SubscribeDirect(string subject, FrameSink sink) => Subscribe(subject, null, new DirectSink(sink));

    public void Unsubscribe(string sid)
    {
        FrameSink? sink;
        lock (_handlersLock)
        {
            _handlers.Remove(int.Parse(sid, System.Globalization.CultureInfo.InvariantCulture), out sink);
        }

        if (sink is DirectSink direct)
        {
            _direct.Remove(sid);
            direct.Close(); // deliveries racing the UNSUB are dropped, as frames for a removed handler are
        }

        Write(Encoding.UTF8.GetBytes($"UNSUB {sid}\r\n"));
    }

    /// <summary>Completes when the broker has processed everything sent before (PING/PONG).</summary>
    public Task FlushAsync()
    {
        var waiter = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_writeLock)
        {
            _pongWaiters.Enqueue(waiter);
            Append("PING\r\n"u8);
        }

        _flushSignal.Set(); // never deferred: the caller awaits the PONG
        return waiter.Task;
    }

    // PUB <subject> [reply-to] <#bytes>\r\n[payload]\r\n
    // HPUB <subject> [reply-to] <#header bytes> <#total bytes>\r\n[headers][payload]\r\n
    public void Publish(string subject, string? replyTo, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        lock (_writeLock)
        {
            if (headers.IsEmpty)
            {
                AppendControlLine("PUB "u8, subject, replyTo, null, -1, payload.Length);
            }
            else
            {
                AppendControlLine("HPUB "u8, subject, replyTo, null, headers.Length, headers.Length + payload.Length);
            }

            _pending.Write(headers);
            _pending.Write(payload);
            _pending.Write("\r\n"u8);
        }

        Signal();
    }

    /// <summary>PUB to a subject given as UTF-8 bytes (a reply subject straight from a read buffer), no headers.</summary>
    public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> payload)
    {
        lock (_writeLock)
        {
            var line = _pending.GetSpan(4 + subject.Length + 16);
            "PUB "u8.CopyTo(line);
            subject.CopyTo(line[4..]);
            var p = 4 + subject.Length;
            line[p++] = (byte)' ';
            Utf8Formatter.TryFormat(payload.Length, line[p..], out var written);
            p += written;
            line[p++] = (byte)'\r';
            line[p++] = (byte)'\n';
            _pending.Advance(p);
            _pending.Write(payload);
            _pending.Write("\r\n"u8);
        }

        Signal();
    }

    // JPUB <deliver-subject> <subject> <reply-to> <#header bytes> <#total bytes>\r\n[headers][payload]\r\n
    /// <summary>
    /// Delivers a stored message to <paramref name="deliverSubject"/> (a consumer's inbox) with its
    /// own subject on the MSG line, as nats-server delivers JetStream messages.
    /// </summary>
    public void Deliver(string deliverSubject, string subject, string replyTo, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        lock (_writeLock)
        {
            AppendControlLine("JPUB "u8, deliverSubject, subject, replyTo, headers.Length, headers.Length + payload.Length);
            _pending.Write(headers);
            _pending.Write(payload);
            _pending.Write("\r\n"u8);
        }

        Signal();
    }

    /// <summary>
    /// <see cref="Deliver(string, string, string, ReadOnlySpan{byte}, ReadOnlySpan{byte})"/> with the
    /// ack reply subject formatted straight into the buffer: no string per delivered message.
    /// </summary>
    public void Deliver(string deliverSubject, string subject, in AckReply ack, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        lock (_writeLock)
        {
            var line = _pending.GetSpan(5 + Encoding.UTF8.GetMaxByteCount(deliverSubject.Length + subject.Length) + AckReply.MaxLength(ack.Prefix) + 32);
            "JPUB "u8.CopyTo(line);
            var p = 5;
            p += Encoding.UTF8.GetBytes(deliverSubject, line[p..]);
            line[p++] = (byte)' ';
            p += Encoding.UTF8.GetBytes(subject, line[p..]);
            line[p++] = (byte)' ';
            p += ack.Format(line[p..]);
            p += FormatSizes(line[p..], headers.Length, headers.Length + payload.Length);
            _pending.Advance(p);
            _pending.Write(headers);
            _pending.Write(payload);
            _pending.Write("\r\n"u8);
        }

        Signal();
    }

    // " <#header bytes> <#total bytes>\r\n"
    private static int FormatSizes(Span<byte> line, int headerSize, int totalSize)
    {
        var p = 0;
        line[p++] = (byte)' ';
        Utf8Formatter.TryFormat(headerSize, line[p..], out var written);
        p += written;
        line[p++] = (byte)' ';
        Utf8Formatter.TryFormat(totalSize, line[p..], out written);
        p += written;
        line[p++] = (byte)'\r';
        line[p++] = (byte)'\n';
        return p;
    }

    public async ValueTask DisposeAsync()
    {
        lock (_writeLock)
        {
            _closed = true;
        }

        _flushSignal.Set();
        await _writeLoop.ConfigureAwait(false);
        await _output.CompleteAsync().ConfigureAwait(false);
        _input.CancelPendingRead();
        await _readLoop.ConfigureAwait(false);
    }

    // Caller holds _writeLock. "<op><a> [<b>] [<c>] [<#header bytes>] <#total bytes>\r\n", formatted
    // straight into the pending buffer: no string per message.
    private void AppendControlLine(ReadOnlySpan<byte> op, string a, string? b, string? c, int headerSize, int totalSize)
    {
        var line = _pending.GetSpan(op.Length + Encoding.UTF8.GetMaxByteCount(a.Length + (b?.Length ?? 0) + (c?.Length ?? 0)) + 32);
        op.CopyTo(line);
        var p = op.Length;
        p += Encoding.UTF8.GetBytes(a, line[p..]);
        foreach (var token in (ReadOnlySpan<string?>)[b, c])
        {
            if (token is not null)
            {
                line[p++] = (byte)' ';
                p += Encoding.UTF8.GetBytes(token, line[p..]);
            }
        }

        int written;
        if (headerSize >= 0)
        {
            line[p++] = (byte)' ';
            Utf8Formatter.TryFormat(headerSize, line[p..], out written);
            p += written;
        }

        line[p++] = (byte)' ';
        Utf8Formatter.TryFormat(totalSize, line[p..], out written);
        p += written;
        line[p++] = (byte)'\r';
        line[p++] = (byte)'\n';
        _pending.Advance(p);
    }

    private void Write(ReadOnlySpan<byte> bytes)
    {
        lock (_writeLock)
        {
            Append(bytes);
        }

        Signal();
    }

    // Caller holds _writeLock.
    private void Append(ReadOnlySpan<byte> bytes) => _pending.Write(bytes);

    /// <summary>
    /// Defers this thread's wake-ups of the write loop until the matching <see cref="EndDeferred"/>,
    /// which then writes everything pending into the pipe on this thread. An actor wraps its turn in
    /// the pair, so a turn's replies (a batch of PubAcks, a delivery pass) reach the broker without a
    /// thread-pool hop, in one pipe write.
    /// </summary>
    public static void BeginDeferred() => _threadDeferDepth++;

    /// <summary>Ends <see cref="BeginDeferred"/>; the outermost end writes what this thread deferred.</summary>
    public static void EndDeferred()
    {
        if (--_threadDeferDepth > 0)
        {
            return;
        }

        var client = _threadDeferred;
        _threadDeferred = null;
        client?.WriteNow();
    }

    // Caller has appended to _pending (not holding _writeLock).
    private void Signal()
    {
        if (_threadDeferDepth > 0)
        {
            if (_threadDeferred is null)
            {
                _threadDeferred = this;
                return;
            }

            if (ReferenceEquals(_threadDeferred, this))
            {
                // A long turn (a push consumer's delivery pass) writes as it goes, in bounded pieces.
                // The count is read without the lock: a stale value only moves the write a little.
                if (_pending.WrittenCount >= DeferredWriteBytes)
                {
                    WriteNow();
                }

                return;
            }
        }

        _flushSignal.Set();
    }

    /// <summary>Writes what is pending on this thread, unless a write is already under way (it picks this up).</summary>
    private void WriteNow()
    {
        ArrayBufferWriter<byte> batch;
        lock (_writeLock)
        {
            if (_writing || _closed || _pending.WrittenCount == 0)
            {
                return;
            }

            _writing = true;
            (_pending, _flushing) = (_flushing, _pending);
            batch = _flushing;
        }

        ValueTask<FlushResult> write;
        try
        {
            write = _output.WriteAsync(batch.WrittenMemory);
        }
        catch (Exception e) when (e is InvalidOperationException or IOException)
        {
            WriteDone(batch); // the broker closed the pipe; the read loop ends the client
            return;
        }

        if (write.IsCompleted)
        {
            ObserveAndFinish(write, batch);
        }
        else
        {
            // The pipe is full (the broker's reader is behind): finish off this thread.
            _ = FinishAsync(write, batch);
        }
    }

    private void ObserveAndFinish(ValueTask<FlushResult> write, ArrayBufferWriter<byte> batch)
    {
        try
        {
            _ = write.Result;
        }
        catch (Exception e) when (e is InvalidOperationException or IOException or OperationCanceledException)
        {
            // The broker closed the pipe; the read loop ends the client.
        }

        WriteDone(batch);
    }

    private async Task FinishAsync(ValueTask<FlushResult> write, ArrayBufferWriter<byte> batch)
    {
        try
        {
            await write.ConfigureAwait(false);
        }
        catch (Exception e) when (e is InvalidOperationException or IOException or OperationCanceledException)
        {
            // As above.
        }

        WriteDone(batch);
    }

    // The write of `batch` is over: let the next writer in, and wake the loop for anything appended meanwhile.
    private void WriteDone(ArrayBufferWriter<byte> batch)
    {
        bool more;
        lock (_writeLock)
        {
            batch.ResetWrittenCount();
            _writing = false;
            more = _pending.WrittenCount > 0 || _closed;
        }

        if (more)
        {
            _flushSignal.Set();
        }
    }

    private async Task WriteLoopAsync()
    {
        while (true)
        {
            await _flushSignal.WaitAsync().ConfigureAwait(false);
            ArrayBufferWriter<byte> batch;
            bool closed;
            lock (_writeLock)
            {
                if (_writing)
                {
                    continue; // an inline write is under way; it signals again when done
                }

                closed = _closed;
                if (_pending.WrittenCount == 0)
                {
                    if (closed)
                    {
                        return;
                    }

                    continue;
                }

                _writing = true;
                (_pending, _flushing) = (_flushing, _pending);
                batch = _flushing;
            }

            FlushResult result;
            try
            {
                result = await _output.WriteAsync(batch.WrittenMemory).ConfigureAwait(false);
            }
            finally
            {
                lock (_writeLock)
                {
                    batch.ResetWrittenCount();
                    _writing = false;
                }
            }

            if (result.IsCompleted)
            {
                return;
            }

            // Whatever was appended during the write (or the close) is picked up by another turn.
            _flushSignal.Set();
        }
    }

    private async Task ReadLoopAsync()
    {
        var parser = new ServerFrameParser();
        var touched = new List<FrameSink>();
        try
        {
            while (true)
            {
                var result = await _input.ReadAsync().ConfigureAwait(false);
                var buffer = result.Buffer;
                var consumed = Parse(parser, buffer, touched, out var error);
                _input.AdvanceTo(consumed, buffer.End);
                foreach (var sink in touched)
                {
                    sink.Touched = false;
                    sink.Complete();
                }

                touched.Clear();
                if (error || result.IsCompleted || result.IsCanceled)
                {
                    break;
                }
            }
        }
        catch (Exception e) when (e is InvalidOperationException or IOException or OperationCanceledException)
        {
            // The broker closed the connection.
        }
        finally
        {
            await _input.CompleteAsync().ConfigureAwait(false);
            lock (_writeLock)
            {
                while (_pongWaiters.TryDequeue(out var waiter))
                {
                    waiter.TrySetCanceled();
                }
            }
        }
    }

    private SequencePosition Parse(ServerFrameParser parser, ReadOnlySequence<byte> buffer, List<FrameSink> touched, out bool error)
    {
        var reader = new SequenceReader<byte>(buffer);
        var frame = default(ServerFrame);
        var lastSid = -1;
        FrameSink? lastSink = null;
        error = false;
        while (true)
        {
            var status = parser.TryRead(ref reader, ref frame);
            if (status == ParseStatus.NeedMoreData)
            {
                break;
            }

            if (status == ParseStatus.Error)
            {
                error = true;
                break;
            }

            switch (frame.Op)
            {
                case ServerOp.Msg:
                case ServerOp.HMsg:
                    if (!Utf8Parser.TryParse(frame.Sid, out int sid, out _))
                    {
                        break;
                    }

                    if (sid != lastSid)
                    {
                        lock (_handlersLock)
                        {
                            _handlers.TryGetValue(sid, out lastSink);
                        }

                        lastSid = sid;
                    }

                    if (lastSink is null)
                    {
                        break; // unsubscribed meanwhile
                    }

                    if (!lastSink.Touched)
                    {
                        lastSink.Touched = true;
                        touched.Add(lastSink);
                    }

                    lastSink.Add(ref frame);
                    break;
                case ServerOp.Ping:
                    Write("PONG\r\n"u8);
                    break;
                case ServerOp.Pong:
                    TaskCompletionSource? waiter;
                    lock (_writeLock)
                    {
                        _pongWaiters.TryDequeue(out waiter);
                    }

                    waiter?.TrySetResult();
                    break;
            }
        }

        return reader.Position;
    }

    /// <summary>
    /// A sink fed by calls from publishers' threads (<see cref="IDirectSubscriber"/>) and by the read
    /// loop: one at a time under its lock, so the sink inside sees what a read loop alone would show it.
    /// </summary>
    private sealed class DirectSink(FrameSink inner) : FrameSink, IDirectSubscriber
    {
        private readonly Lock _lock = new();
        private bool _pending;
        private bool _closed;
        private long _calls;     // deliveries by call since the last report (Complete(out, out))
        private long _callBytes;

        public bool Deliver(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload, out bool first)
        {
            var frame = new ServerFrame
            {
                Op = headerSize >= 0 ? ServerOp.HMsg : ServerOp.Msg,
                Subject = subject,
                ReplyTo = replyTo,
                HeaderSize = headerSize,
                Payload = payload,
            };
            lock (_lock)
            {
                first = false;
                if (_closed)
                {
                    return false;
                }

                inner.Add(ref frame);
                _pending = true;
                first = _calls == 0;
                _calls++;
                _callBytes += payload.Length;
                return true;
            }
        }

        public override void Add(ref ServerFrame frame)
        {
            lock (_lock)
            {
                if (!_closed)
                {
                    inner.Add(ref frame);
                    _pending = true;
                }
            }
        }

        public override void Complete()
        {
            lock (_lock)
            {
                CompleteLocked();
            }
        }

        public void Complete(out long messages, out long bytes)
        {
            lock (_lock)
            {
                messages = _calls;
                bytes = _callBytes;
                _calls = 0;
                _callBytes = 0;
                CompleteLocked();
            }
        }

        private void CompleteLocked()
        {
            if (_pending)
            {
                _pending = false;
                inner.Complete();
            }
        }

        public void Close()
        {
            lock (_lock)
            {
                _closed = true;
            }
        }
    }

    /// <summary>Collects whole messages and hands them over as one list per read batch.</summary>
    private sealed class MessageSink(Action<IReadOnlyList<InternalMessage>> handler) : FrameSink
    {
        private readonly List<InternalMessage> _batch = [];

        public override void Add(ref ServerFrame frame) => _batch.Add(InternalMessage.From(ref frame));

        public override void Complete()
        {
            var batch = _batch.ToArray();
            _batch.Clear();
            handler(batch);
        }
    }
}

/// <summary>
/// What an <see cref="InternalClient"/> subscription feeds: every message of a read batch through
/// <see cref="Add"/> (on the client's read loop, one at a time), then <see cref="Complete"/> once.
/// </summary>
internal abstract class FrameSink
{
    /// <summary>Set while the sink is in the current read batch's list.</summary>
    internal bool Touched { get; set; }

    /// <summary>One MSG or HMSG; its spans point into the read buffer and are valid only during the call.</summary>
    public abstract void Add(ref ServerFrame frame);

    /// <summary>The read batch is over: hand on what was collected.</summary>
    public abstract void Complete();
}
