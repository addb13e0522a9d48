using System.Collections.Concurrent;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// A stream's hand-over of the messages an append removes to keep max_msgs_per_subject (a KV
/// bucket's history) to the consumers that have not read them yet. A consumer is told of a new
/// message and reads it from the store later, on its own turn; the next put of the same key can be
/// stored (removing the first) in between, and without this the consumer would skip a value it was
/// told of: a KV watcher would miss an update. nats-server has the same window but its consumer
/// goroutine nearly always wins it; here the store hands the message over before it goes
/// (<see cref="IDisplacementObserver"/>), so the outcome does not depend on scheduling.
/// </summary>
/// <remarks>
/// Only consumers that are delivering (a push consumer with a subscriber, a pull consumer with a
/// waiting request) and have not passed the message yet get it, at most
/// <see cref="ConsumerFeed.Capacity"/> each: a consumer that is idle or far behind skips removed
/// messages, as it does on nats-server. The observer runs on the stream's thread under the store's
/// lock; each consumer drains its own feed on its turn.
/// </remarks>
internal sealed class DisplacedMessages : IDisplacementObserver
{
    private readonly Lock _lock = new();
    private volatile ConsumerFeed[] _feeds = [];

    /// <summary>Registers a consumer (replacing an earlier one of that name) and returns its feed.</summary>
    public ConsumerFeed Join(string name)
    {
        var feed = new ConsumerFeed(name);
        lock (_lock)
        {
            _feeds = [.. _feeds.Where(f => f.Name != name), feed];
        }

        return feed;
    }

    /// <summary>Forgets a consumer.</summary>
    public void Leave(string name)
    {
        lock (_lock)
        {
            _feeds = [.. _feeds.Where(f => f.Name != name)];
        }
    }

    /// <summary>Forgets every consumer (the stream restarts them).</summary>
    public void Clear()
    {
        lock (_lock)
        {
            _feeds = [];
        }
    }

    public bool Wants(ulong sequence)
    {
        foreach (var feed in _feeds)
        {
            if (feed.Wants(sequence))
            {
                return true;
            }
        }

        return false;
    }

    public void Displaced(StoredMessage message)
    {
        foreach (var feed in _feeds)
        {
            if (feed.Wants(message.Sequence))
            {
                feed.Offer(message);
            }
        }
    }
}

/// <summary>
/// One consumer's side of <see cref="DisplacedMessages"/>: where it has read up to (published after
/// each delivery pass) and the removed messages it was handed since.
/// </summary>
internal sealed class ConsumerFeed(string name)
{
    /// <summary>Most removed messages held for one consumer; more are skipped, as by a slow consumer.</summary>
    public const int Capacity = 1024;

    private readonly ConcurrentQueue<StoredMessage> _queue = new();
    private ulong _next = ulong.MaxValue; // nothing wanted until the consumer says where it reads
    private int _count;

    public string Name { get; } = name;

    /// <summary>Whether anything was handed over since the last <see cref="TryTake"/> emptied the feed.</summary>
    public bool IsEmpty => Volatile.Read(ref _count) == 0;

    /// <summary>
    /// The consumer reads from <paramref name="nextSequence"/> on and is delivering (<paramref name="active"/>),
    /// or is not and wants nothing.
    /// </summary>
    public void Publish(ulong nextSequence, bool active) => Volatile.Write(ref _next, active ? nextSequence : ulong.MaxValue);

    public bool Wants(ulong sequence) => Volatile.Read(ref _next) <= sequence && Volatile.Read(ref _count) < Capacity;

    public void Offer(StoredMessage message)
    {
        Interlocked.Increment(ref _count);
        _queue.Enqueue(message);
    }

    public bool TryTake(out StoredMessage message)
    {
        if (_queue.TryDequeue(out message!))
        {
            Interlocked.Decrement(ref _count);
            return true;
        }

        return false;
    }
}
