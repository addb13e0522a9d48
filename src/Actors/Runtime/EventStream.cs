namespace Courier.Actors.Runtime;

/// <summary>
/// Publish/subscribe by type (Akka.NET <c>EventStream</c>): an event goes to every subscriber of a channel
/// type it is assignable to. Subscriptions are copy-on-write, so publishing takes no lock. A subscriber that
/// has stopped is dropped at the next publish.
/// </summary>
public sealed class EventStream
{
    private readonly Lock _lock = new();
    private Subscription[] _subscriptions = [];

    /// <summary>Subscribes <paramref name="subscriber"/> to events of type <paramref name="channel"/> (and its subtypes).</summary>
    /// <returns>False if it already was.</returns>
    public bool Subscribe(IActorRef subscriber, Type channel)
    {
        ArgumentNullException.ThrowIfNull(subscriber);
        ArgumentNullException.ThrowIfNull(channel);
        lock (_lock)
        {
            var current = _subscriptions;
            if (Array.IndexOf(current, new Subscription(subscriber, channel)) >= 0)
            {
                return false;
            }

            _subscriptions = [.. current, new Subscription(subscriber, channel)];
            return true;
        }
    }

    /// <summary>Cancels one subscription.</summary>
    /// <returns>False if there was none.</returns>
    public bool Unsubscribe(IActorRef subscriber, Type channel)
    {
        ArgumentNullException.ThrowIfNull(subscriber);
        ArgumentNullException.ThrowIfNull(channel);
        return RemoveWhere(s => ReferenceEquals(s.Subscriber, subscriber) && s.Channel == channel);
    }

    /// <summary>Cancels every subscription of <paramref name="subscriber"/>.</summary>
    /// <returns>False if there was none.</returns>
    public bool Unsubscribe(IActorRef subscriber)
    {
        ArgumentNullException.ThrowIfNull(subscriber);
        return RemoveWhere(s => ReferenceEquals(s.Subscriber, subscriber));
    }

    /// <summary>Tells <paramref name="event"/> (without a sender) to every matching subscriber.</summary>
    public void Publish(object @event)
    {
        ArgumentNullException.ThrowIfNull(@event);
        var type = @event.GetType();
        foreach (var subscription in Volatile.Read(ref _subscriptions))
        {
            if (!subscription.Channel.IsAssignableFrom(type))
            {
                continue;
            }

            if (subscription.Subscriber is Internal.InternalActorRef { IsTerminated: true })
            {
                Unsubscribe(subscription.Subscriber);
                continue;
            }

            subscription.Subscriber.Tell(@event, null);
        }
    }

    private bool RemoveWhere(Func<Subscription, bool> match)
    {
        lock (_lock)
        {
            var current = _subscriptions;
            var kept = current.Where(s => !match(s)).ToArray();
            if (kept.Length == current.Length)
            {
                return false;
            }

            _subscriptions = kept;
            return true;
        }
    }

    private readonly record struct Subscription(IActorRef Subscriber, Type Channel);
}
