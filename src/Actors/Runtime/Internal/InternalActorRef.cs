namespace Courier.Actors.Runtime.Internal;

/// <summary>What the runtime needs from a ref beyond <see cref="IActorRef"/> (Akka's <c>InternalActorRef</c>).</summary>
internal abstract class InternalActorRef : IActorRef
{
    public abstract string Path { get; }

    /// <summary>True once the actor behind the ref has stopped for good.</summary>
    public abstract bool IsTerminated { get; }

    /// <summary>The system the ref belongs to; null for <see cref="NobodyActorRef"/>.</summary>
    public abstract ActorSystem? System { get; }

    public abstract void Tell(object message, IActorRef? sender);

    public abstract void SendSystemMessage(SystemMessage message);

    /// <summary>The runtime's refs only: watching and supervision need <see cref="SendSystemMessage"/>.</summary>
    public static InternalActorRef From(IActorRef actorRef, string paramName) =>
        actorRef as InternalActorRef
        ?? throw new ArgumentException($"{actorRef.GetType().Name} is not a ref of this actor runtime.", paramName);

    /// <summary>Replies to a <see cref="Watch"/> on a ref whose actor is gone (or never existed).</summary>
    protected void ReplyToWatchOfDeadActor(SystemMessage message)
    {
        if (message is Watch watch && ReferenceEquals(watch.Watchee, this) && !ReferenceEquals(watch.Watcher, this))
        {
            watch.Watcher.SendSystemMessage(new DeathWatchNotification(this, existenceConfirmed: false));
        }
    }

    public override string ToString() => $"[{Path}]";
}
