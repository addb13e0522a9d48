using System.Collections.Concurrent;
using System.Globalization;
using System.Text;
using Courier.Actors.Accounts;

namespace Courier.Actors.Connections;

/// <summary>A message received by an <see cref="InProcessClient"/>'s subscription, copied out of the publisher's buffers.</summary>
internal sealed record InternalMessage(string Subject, string? ReplyTo, byte[]? Headers, byte[] Payload)
{
    /// <summary>Published by an MQTT client with RETAIN set (a kept session's Retain As Published keeps it).</summary>
    public bool Retained { get; init; }

    public static InternalMessage From(in InProcessMessage message)
    {
        var all = System.Buffers.BuffersExtensions.ToArray(message.Payload);
        var headerSize = Math.Max(message.HeaderSize, 0);
        return new InternalMessage(
            Encoding.UTF8.GetString(message.Subject),
            message.ReplyTo.IsEmpty ? null : Encoding.UTF8.GetString(message.ReplyTo),
            headerSize > 0 ? all[..headerSize] : null,
            headerSize > 0 ? all[headerSize..] : all);
    }
}

/// <summary>What an in-process client is to the rest of the node, fixed when it is made.</summary>
internal enum InProcessRole
{
    /// <summary>One of Courier's own services ($SYS, an account's service imports): its interest stays on this node.</summary>
    Service,

    /// <summary>An account's JetStream: its subscriptions (streams, acks, flow control, cluster forwarding) are told to routes.</summary>
    JetStream,

    /// <summary>The MQTT sessions' capture: an MQTT publisher that reaches it defers its PUBACKs until the sessions journaled.</summary>
    MqttCapture,
}

/// <summary>
/// An in-process endpoint of the subject space for Courier's own services (JetStream, <c>$SYS</c>, the
/// MQTT capture): it subscribes with a <see cref="DeliverySink"/> that publishers call on their own
/// threads (no MSG frame, pipe or parser), and publishes by handing batches of messages to the publish
/// pipeline of its connection (no protocol text). As nats-server's internal clients: subscriptions are
/// callbacks, publishes fill the publish path directly.
/// </summary>
/// <remarks>
/// Publishes are serialized through one queue of batches: whoever finds the pipeline free runs every
/// queued batch and signals the touched subscribers once per batch; nobody waits for another (a
/// publish made while another thread runs the pipeline is run by that thread). While a SUB or UNSUB is
/// not yet in effect in the routers, batches wait in the queue, so a publish after a subscribe never
/// overtakes it (invariant 2).
/// </remarks>
internal sealed class InProcessClient : IAsyncDisposable
{
    private const int MaxPooledBatchBytes = 1024 * 1024; // bytes: a batch grown past this is dropped, not pooled

    private readonly InProcessConnection _connection;
    private readonly Lock _subscribeLock = new();
    private readonly Dictionary<string, DirectSink> _sinks = new(StringComparer.Ordinal); // under _subscribeLock
    private readonly ConcurrentQueue<PublishBatch> _queue = new();
    private readonly ConcurrentQueue<PublishBatch> _free = new();
    private int _draining; // 1 while a thread runs the queue
    private Task? _blocked; // SUB/UNSUB not yet in effect: the queue waits for it (written under _subscribeLock)
    private int _nextSid;

    /// <param name="node">What every connection uses of the node.</param>
    /// <param name="role">What the endpoint is to the node (routes, the MQTT capture).</param>
    /// <param name="account">The account whose subject space the client uses; null: the global account.</param>
    public InProcessClient(ConnectionContext node, InProcessRole role = InProcessRole.Service, Account? account = null) =>
        _connection = InProcessConnection.Create(node, account ?? node.Accounts.Global, role);

    /// <summary>Subscribes; <paramref name="handler"/> receives each publisher batch's messages, copied.</summary>
    public string Subscribe(string subject, string? queue, Action<IReadOnlyList<InternalMessage>> handler) =>
        Subscribe(subject, queue, new CopyingSink(handler));

    /// <summary>
    /// Subscribes with a sink that publishers call on their own threads, one at a time: each message
    /// (spans valid only during the call), then a completion once per publisher batch.
    /// </summary>
    public string Subscribe(string subject, string? queue, DeliverySink sink)
    {
        var direct = new DirectSink(sink);
        lock (_subscribeLock)
        {
            var sid = (++_nextSid).ToString(CultureInfo.InvariantCulture);
            _sinks[sid] = direct;
            _connection.Subscribe(subject, queue, sid, direct);
            WaitForRouters(_connection.ApplySubscriptionChangesAsync());
            return sid;
        }
    }

    public void Unsubscribe(string sid)
    {
        lock (_subscribeLock)
        {
            if (_sinks.Remove(sid, out var direct))
            {
                direct.Close(); // deliveries racing the UNSUB are dropped
            }

            _connection.Unsubscribe(sid);
            WaitForRouters(_connection.ApplySubscriptionChangesAsync());
        }
    }

    /// <summary>Completes once every SUB, UNSUB and publish made before is in effect (delivered).</summary>
    public Task FlushAsync()
    {
        var batch = Rent();
        var barrier = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        batch.Barrier = barrier;
        Enqueue(batch);
        return barrier.Task;
    }

    /// <summary>Publishes one message now (a service outside an actor turn; actors use an <see cref="InProcessPublisher"/>).</summary>
    /// <param name="subject">The subject.</param>
    /// <param name="replyTo">The reply subject, or null.</param>
    /// <param name="headers">The header block, or empty.</param>
    /// <param name="payload">The payload.</param>
    /// <param name="mqttQoS">Published as from an MQTT client at this QoS (a will its session publishes); 0 otherwise.</param>
    public void Publish(string subject, string? replyTo, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload, byte mqttQoS = 0)
    {
        var batch = Rent();
        batch.Add(subject, null, replyTo, headers, payload, mqttQoS);
        Enqueue(batch);
    }

    /// <summary>A publisher for one actor: what it publishes during a turn goes to the pipeline as one batch at the turn's end.</summary>
    public InProcessPublisher CreatePublisher() => new(this);

    public ValueTask DisposeAsync()
    {
        _connection.Shutdown("Server Shutdown");
        Drain(); // barriers still queued are released
        return ValueTask.CompletedTask;
    }

    internal PublishBatch Rent() => _free.TryDequeue(out var batch) ? batch : new PublishBatch();

    /// <summary>Queues a batch for the pipeline and runs the queue unless another thread is running it.</summary>
    internal void Enqueue(PublishBatch batch)
    {
        _queue.Enqueue(batch);
        Drain();
    }

    private void Drain()
    {
        if (Volatile.Read(ref _blocked) is not null || Interlocked.CompareExchange(ref _draining, 1, 0) != 0)
        {
            return; // the router acknowledgement, or the thread running the queue, runs it
        }

        // Inline, also inside a sink's completion (a memory stream's turn run by its publisher, whose
        // PubAck then goes out on the publisher's thread, as nats-server stores and acks on the reading
        // goroutine): a pool hop there cost the jssync row a quarter of its rate.
        while (true)
        {
            try
            {
                // Peek first: a SUB made after this batch was queued must not be overtaken by it, and one
                // made before it (visible here, as the batch is) holds it back.
                while (_queue.TryPeek(out var batch) && Volatile.Read(ref _blocked) is null)
                {
                    _queue.TryDequeue(out _);
                    Run(batch);
                }
            }
            finally
            {
                Interlocked.Exchange(ref _draining, 0); // a full fence: the emptiness check below sees later enqueues
            }

            if (_queue.IsEmpty || Volatile.Read(ref _blocked) is not null || Interlocked.CompareExchange(ref _draining, 1, 0) != 0)
            {
                return;
            }
        }
    }

    private void Run(PublishBatch batch)
    {
        try
        {
            if (batch.Count > 0 && !_connection.IsClosed)
            {
                batch.PublishTo(_connection.Publisher);
                _connection.Publisher.Flush();
            }
        }
        finally
        {
            batch.Barrier?.TrySetResult();
            if (batch.Reset() <= MaxPooledBatchBytes)
            {
                _free.Enqueue(batch);
            }
        }
    }

    // Caller holds _subscribeLock.
    private void WaitForRouters(Task applied)
    {
        if (applied.IsCompleted)
        {
            return;
        }

        var blocked = _blocked is { IsCompleted: false } previous ? Task.WhenAll(previous, applied) : applied;
        Volatile.Write(ref _blocked, blocked);
        _ = blocked.ContinueWith(static (done, state) => ((InProcessClient)state!).Unblock(done), this, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default);
    }

    private void Unblock(Task done)
    {
        lock (_subscribeLock)
        {
            if (!ReferenceEquals(_blocked, done))
            {
                return; // a later change is still on its way: its acknowledgement runs the queue
            }

            Volatile.Write(ref _blocked, null);
        }

        Drain();
    }

    /// <summary>
    /// A sink fed by publishers' threads: one at a time under its lock, so the sink inside sees what a
    /// single reader would show it. The completion runs under the lock too (so batches are handed on in
    /// the order they were collected), and with it whatever the hand-over runs inline.
    /// </summary>
    private sealed class DirectSink(DeliverySink inner) : IDirectSubscriber
    {
        private readonly Lock _lock = new();
        private bool _pending;
        private bool _closed;
        private long _calls; // deliveries since the last report (Complete)
        private long _callBytes;

        public bool Deliver(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in System.Buffers.ReadOnlySequence<byte> payload, Publisher from, out bool first)
        {
            var message = new InProcessMessage(subject, replyTo, headerSize, payload, from.Source, from.InboundRetain);
            lock (_lock)
            {
                first = false;
                if (_closed)
                {
                    return false;
                }

                inner.Add(message);
                _pending = true;
                first = _calls == 0;
                _calls++;
                _callBytes += payload.Length;
                return true;
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
                if (_pending)
                {
                    _pending = false;
                    inner.Complete();
                }
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

    /// <summary>Collects whole messages and hands them over as one list per publisher batch.</summary>
    private sealed class CopyingSink(Action<IReadOnlyList<InternalMessage>> handler) : DeliverySink
    {
        private readonly List<InternalMessage> _batch = [];

        public override void Add(in InProcessMessage message) => _batch.Add(InternalMessage.From(message));

        public override void Complete()
        {
            var batch = _batch.ToArray();
            _batch.Clear();
            handler(batch);
        }
    }
}
