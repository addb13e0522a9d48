namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// Watching (Akka's <c>DeathWatch</c>): who this actor watches, who watches it, and the
/// <see cref="Terminated"/> messages between them.
/// </summary>
internal sealed partial class ActorCell
{
    private readonly HashSet<InternalActorRef> _watching = [];
    private readonly HashSet<InternalActorRef> _watchedBy = [];
    private readonly HashSet<IActorRef> _terminatedQueued = [];

    public IActorRef Watch(IActorRef subject)
    {
        ArgumentNullException.ThrowIfNull(subject);
        var target = InternalActorRef.From(subject, nameof(subject));
        if (!ReferenceEquals(target, _self) && _watching.Add(target))
        {
            target.SendSystemMessage(new Watch(target, _self));
        }

        return subject;
    }

    public IActorRef Unwatch(IActorRef subject)
    {
        ArgumentNullException.ThrowIfNull(subject);
        var target = InternalActorRef.From(subject, nameof(subject));
        if (!ReferenceEquals(target, _self) && _watching.Remove(target))
        {
            target.SendSystemMessage(new Unwatch(target, _self));
        }

        _terminatedQueued.Remove(target);
        return subject;
    }

    private void AddWatcher(InternalActorRef watchee, InternalActorRef watcher)
    {
        if (ReferenceEquals(watchee, _self) && !ReferenceEquals(watcher, _self))
        {
            _watchedBy.Add(watcher);
        }
    }

    private void RemoveWatcher(InternalActorRef watchee, InternalActorRef watcher)
    {
        if (ReferenceEquals(watchee, _self))
        {
            _watchedBy.Remove(watcher);
        }
    }

    /// <summary>
    /// <paramref name="actor"/> stopped. If this actor watches it, a <see cref="Terminated"/> joins the user
    /// queue, behind every message the dead actor sent before it stopped. If it was a child, its name is freed.
    /// </summary>
    private void WatchedActorTerminated(IActorRef actor, bool existenceConfirmed)
    {
        if (actor is InternalActorRef watched && _watching.Remove(watched) && !_isTerminating)
        {
            _terminatedQueued.Add(actor);
            _self.Tell(new Terminated(actor, existenceConfirmed), actor);
        }

        if (actor is LocalActorRef child)
        {
            HandleChildTerminated(child);
        }
    }

    /// <summary>A queued <see cref="Terminated"/> reaches the behaviour only if the watch is still wanted.</summary>
    private void ReceivedTerminated(Terminated terminated)
    {
        if (_terminatedQueued.Remove(terminated.ActorRef))
        {
            ReceiveMessage(terminated);
        }
    }

    private void UnwatchWatchedActors()
    {
        foreach (var watched in _watching)
        {
            watched.SendSystemMessage(new Unwatch(watched, _self));
        }

        _watching.Clear();
        _terminatedQueued.Clear();
    }

    private void TellWatchersWeDied()
    {
        var parent = _parent?.Self;
        foreach (var watcher in _watchedBy)
        {
            if (!ReferenceEquals(watcher, parent))
            {
                watcher.SendSystemMessage(new DeathWatchNotification(_self, existenceConfirmed: true));
            }
        }

        _watchedBy.Clear();
    }
}
