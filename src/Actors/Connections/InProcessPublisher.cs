using Courier.Actors.JetStream;

namespace Courier.Actors.Connections;

/// <summary>
/// One actor's way out to the subject space through its <see cref="InProcessClient"/>: what it publishes
/// during a turn (a batch of PubAcks, a delivery pass, API replies) goes to the publish pipeline as one
/// batch when the turn ends (<see cref="EndTurn"/>), so the subscribers it reaches are signalled once
/// per turn, on the actor's thread. Outside a turn (after an await) a publish goes at once.
/// </summary>
/// <remarks>
/// The actor wraps each turn in <see cref="BeginTurn"/> and <see cref="EndTurn"/>. A long turn hands its
/// batch over in pieces of <see cref="FlushBytes"/>. The lock is uncontended but for a publish from
/// another thread during a turn, which then joins the turn's batch.
/// </remarks>
internal sealed class InProcessPublisher
{
    private const int FlushBytes = 256 * 1024; // bytes: a push consumer's delivery pass goes out as it runs

    private readonly InProcessClient _client;
    private readonly Lock _lock = new();
    private PublishBatch? _batch;
    private bool _inTurn;

    internal InProcessPublisher(InProcessClient client) => _client = client;

    public void BeginTurn()
    {
        lock (_lock)
        {
            _inTurn = true;
        }
    }

    /// <summary>Hands what the turn published to the pipeline.</summary>
    public void EndTurn()
    {
        PublishBatch? batch;
        lock (_lock)
        {
            _inTurn = false;
            batch = _batch;
            _batch = null;
        }

        if (batch is not null)
        {
            _client.Enqueue(batch);
        }
    }

    // PUB <subject> [reply-to] <#bytes>, or HPUB with headers
    public void Publish(string subject, string? replyTo, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        PublishBatch? due;
        lock (_lock)
        {
            var batch = _batch ??= _client.Rent();
            batch.Add(subject, null, replyTo, headers, payload);
            due = TakeIfDue(batch);
        }

        Hand(due);
    }

    /// <summary>A publish to a subject given as UTF-8 bytes (a reply subject kept from a request), no headers.</summary>
    public void Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> payload)
    {
        PublishBatch? due;
        lock (_lock)
        {
            var batch = _batch ??= _client.Rent();
            batch.Add(subject, payload);
            due = TakeIfDue(batch);
        }

        Hand(due);
    }

    /// <summary>
    /// Delivers a stored message to <paramref name="deliverSubject"/> (a consumer's inbox): routed on the
    /// deliver subject, shown with the message's own subject, as nats-server delivers JetStream messages;
    /// the ack reply formatted straight into the batch.
    /// </summary>
    public void Deliver(string deliverSubject, string subject, in AckReply ack, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        PublishBatch? due;
        lock (_lock)
        {
            var batch = _batch ??= _client.Rent();
            batch.Add(deliverSubject, subject, ack, headers, payload);
            due = TakeIfDue(batch);
        }

        Hand(due);
    }

    // Caller holds _lock: the batch goes now outside a turn, or when it has grown to FlushBytes.
    private PublishBatch? TakeIfDue(PublishBatch batch)
    {
        if (_inTurn && batch.Bytes < FlushBytes)
        {
            return null;
        }

        _batch = null;
        return batch;
    }

    private void Hand(PublishBatch? due)
    {
        if (due is not null)
        {
            _client.Enqueue(due); // outside the lock: running the pipeline may reach other sinks and actors
        }
    }
}
