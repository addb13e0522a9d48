using System.Collections.Immutable;
using Akka.Actor;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// An account's streams on this node, by name: their stores, and the mirror and sources streams
/// that copy from each. A copying stream reads its origin's store directly (stores are safe to read
/// from any thread, as consumers do) and is told once per flushed batch of the origin that there is
/// more to read: one actor message per batch and follower, never one per NATS message.
/// </summary>
internal sealed class LocalStreams
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, IStreamStore> _stores = new(StringComparer.Ordinal);
    private readonly Dictionary<string, ImmutableArray<IActorRef>> _followers = new(StringComparer.Ordinal);
    private readonly Func<string, LocalStreams?> _external;

    /// <param name="external">
    /// The streams an external origin's API prefix reaches (another account's, through a service
    /// import of its <c>$JS.API.&gt;</c>); null when the prefix reaches none on this node.
    /// </param>
    public LocalStreams(Func<string, LocalStreams?>? external = null)
    {
        _external = external ?? (_ => null);
    }

    /// <summary>The streams that <paramref name="apiPrefix"/> (an origin's <c>external.api</c>) reaches, or null.</summary>
    public LocalStreams? External(string apiPrefix) => _external(apiPrefix);

    /// <summary>The stream <paramref name="name"/> is open with <paramref name="store"/>.</summary>
    public void Open(string name, IStreamStore store)
    {
        lock (_lock)
        {
            _stores[name] = store;
        }
    }

    /// <summary>The stream <paramref name="name"/> stopped (unless it was opened again with another store meanwhile).</summary>
    public void Close(string name, IStreamStore store)
    {
        lock (_lock)
        {
            if (_stores.TryGetValue(name, out var current) && ReferenceEquals(current, store))
            {
                _stores.Remove(name);
            }
        }
    }

    /// <summary>The store of the stream <paramref name="name"/>, or null when there is no such stream here.</summary>
    public IStreamStore? Find(string name)
    {
        lock (_lock)
        {
            return _stores.GetValueOrDefault(name);
        }
    }

    /// <summary><paramref name="follower"/> hears <see cref="StreamActor.Protocol.OriginAdvanced"/> after each flush of <paramref name="origin"/>.</summary>
    public void Follow(string origin, IActorRef follower)
    {
        lock (_lock)
        {
            var current = _followers.GetValueOrDefault(origin, []);
            if (!current.Contains(follower))
            {
                _followers[origin] = current.Add(follower);
            }
        }
    }

    /// <summary>Stops telling <paramref name="follower"/> about <paramref name="origin"/>.</summary>
    public void Unfollow(string origin, IActorRef follower)
    {
        lock (_lock)
        {
            if (_followers.TryGetValue(origin, out var current))
            {
                var rest = current.Remove(follower);
                if (rest.IsEmpty)
                {
                    _followers.Remove(origin);
                }
                else
                {
                    _followers[origin] = rest;
                }
            }
        }
    }

    /// <summary>The stream <paramref name="origin"/> flushed new messages: each follower is told once.</summary>
    public void Notify(string origin)
    {
        ImmutableArray<IActorRef> followers;
        lock (_lock)
        {
            if (!_followers.TryGetValue(origin, out followers))
            {
                return;
            }
        }

        foreach (var follower in followers)
        {
            follower.Tell(StreamActor.Protocol.OriginAdvanced.Instance);
        }
    }
}
