namespace Courier.Actors.Runtime.Internal;

/// <summary>Children: creation, names, stopping, and waiting for them to die (Akka's <c>ChildrenContainer</c>).</summary>
internal sealed partial class ActorCell
{
    private readonly Lock _childrenLock = new();
    private readonly Dictionary<string, ChildRestartStats> _children = new(StringComparer.Ordinal);
    private readonly HashSet<LocalActorRef> _toDie = [];
    private ChildrenState _childrenState;
    private Exception? _recreateCause;
    private long _nextChildNumber;

    /// <summary>What the actor waits for before it goes on: nothing, or some of its children to stop.</summary>
    private enum ChildrenState
    {
        Normal,
        Recreating,
        Creating,
        Terminating,
        Terminated,
    }

    public IActorRef ActorOf(Props props, string? name = null)
    {
        ArgumentNullException.ThrowIfNull(props);
        if (name is null)
        {
            name = ActorNames.Generated(Interlocked.Increment(ref _nextChildNumber));
        }
        else
        {
            ActorNames.Validate(name);
        }

        var child = new ActorCell(_system, props, this, name, $"{_self.Path}/{name}");
        lock (_childrenLock)
        {
            if (_childrenState is ChildrenState.Terminating or ChildrenState.Terminated)
            {
                throw new InvalidOperationException($"Cannot create child [{name}]: {_self} is stopping.");
            }

            if (!_children.TryAdd(name, new ChildRestartStats(child.Self)))
            {
                throw new InvalidActorNameException($"Actor name [{name}] is not unique under {_self}.");
            }
        }

        child.Self.SendSystemMessage(Create.Instance);
        return child.Self;
    }

    public void Stop(IActorRef actor)
    {
        ArgumentNullException.ThrowIfNull(actor);
        var target = InternalActorRef.From(actor, nameof(actor));
        if (target is LocalActorRef local)
        {
            lock (_childrenLock)
            {
                if (IsChildLocked(local))
                {
                    _toDie.Add(local);
                }
            }
        }

        target.SendSystemMessage(Terminate.Instance);
    }

    public IEnumerable<IActorRef> GetChildren()
    {
        lock (_childrenLock)
        {
            var children = new IActorRef[_children.Count];
            var i = 0;
            foreach (var stats in _children.Values)
            {
                children[i++] = stats.Child;
            }

            return children;
        }
    }

    public IActorRef Child(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        lock (_childrenLock)
        {
            return _children.TryGetValue(name, out var stats) ? stats.Child : ActorRefs.Nobody;
        }
    }

    private bool IsChildLocked(LocalActorRef actor) =>
        _children.TryGetValue(actor.Cell.Name, out var stats) && ReferenceEquals(stats.Child, actor);

    private ChildRestartStats? GetChildStats(LocalActorRef actor)
    {
        lock (_childrenLock)
        {
            return IsChildLocked(actor) ? _children[actor.Cell.Name] : null;
        }
    }

    private LocalActorRef[] ChildrenSnapshot()
    {
        lock (_childrenLock)
        {
            var children = new LocalActorRef[_children.Count];
            var i = 0;
            foreach (var stats in _children.Values)
            {
                children[i++] = stats.Child;
            }

            return children;
        }
    }

    /// <summary>
    /// Enters <paramref name="state"/> if some children are still dying (the caller then waits for
    /// <see cref="HandleChildTerminated"/>); returns false, staying Normal, if none are.
    /// </summary>
    private bool WaitForDyingChildren(ChildrenState state, Exception? recreateCause)
    {
        lock (_childrenLock)
        {
            if (_toDie.Count == 0)
            {
                return false;
            }

            _childrenState = state;
            _recreateCause = recreateCause;
            return true;
        }
    }

    /// <summary>A child has stopped: frees its name and finishes whatever waited for it.</summary>
    private void HandleChildTerminated(LocalActorRef child)
    {
        ChildrenState state;
        Exception? recreateCause;
        lock (_childrenLock)
        {
            if (!IsChildLocked(child))
            {
                return;
            }

            _children.Remove(child.Cell.Name);
            _toDie.Remove(child);
            state = _childrenState;
            recreateCause = _recreateCause;
            var done = state == ChildrenState.Terminating ? _children.Count == 0 : _toDie.Count == 0;
            if (!done)
            {
                return;
            }

            if (state is ChildrenState.Recreating or ChildrenState.Creating)
            {
                _childrenState = ChildrenState.Normal;
                _recreateCause = null;
            }
        }

        switch (state)
        {
            case ChildrenState.Recreating:
                FinishRecreate(recreateCause!);
                break;
            case ChildrenState.Creating:
                FinishCreate();
                break;
            case ChildrenState.Terminating:
                FinishTerminate();
                break;
        }
    }
}
