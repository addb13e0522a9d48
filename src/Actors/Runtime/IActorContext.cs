namespace Courier.Actors.Runtime;

/// <summary>
/// The actor's view of itself and the runtime (Akka.NET <c>IActorContext</c>). Use it only on the actor's own
/// turn (in its constructor, hooks and handlers), never from another thread or a callback.
/// </summary>
public interface IActorContext
{
    /// <summary>This actor's ref.</summary>
    IActorRef Self { get; }

    /// <summary>The sender of the message being processed; dead letters when it had none.</summary>
    IActorRef Sender { get; }

    /// <summary>The supervisor (for a top-level actor, the user guardian).</summary>
    IActorRef Parent { get; }

    /// <summary>The system this actor belongs to.</summary>
    ActorSystem System { get; }

    /// <summary>The props this actor was created from.</summary>
    Props Props { get; }

    /// <summary>Creates a child supervised by this actor.</summary>
    /// <param name="props">How to create it.</param>
    /// <param name="name">Unique among the siblings; null for a generated <c>$</c>-name.</param>
    /// <exception cref="InvalidActorNameException">The name is malformed or taken.</exception>
    IActorRef ActorOf(Props props, string? name = null);

    /// <summary>Stops <paramref name="actor"/> (usually a child or <see cref="Self"/>) asynchronously:
    /// it finishes its current message, stops its children, runs <c>PostStop</c>, then its watchers get
    /// <see cref="Terminated"/>.</summary>
    void Stop(IActorRef actor);

    /// <summary>Delivers <see cref="Terminated"/> to this actor when <paramref name="subject"/> stops (at
    /// once if it already has). Returns <paramref name="subject"/>.</summary>
    IActorRef Watch(IActorRef subject);

    /// <summary>Cancels <see cref="Watch"/>; a <see cref="Terminated"/> already queued is dropped.</summary>
    IActorRef Unwatch(IActorRef subject);

    /// <summary>The children, including those that are stopping.</summary>
    IEnumerable<IActorRef> GetChildren();

    /// <summary>The child named <paramref name="name"/>, or <see cref="ActorRefs.Nobody"/>.</summary>
    IActorRef Child(string name);

    /// <summary>Replaces the current behaviour (the top of the behaviour stack).</summary>
    void Become(Receive receive);

    /// <summary>Pushes a behaviour; <see cref="UnbecomeStacked"/> returns to the previous one.</summary>
    void BecomeStacked(Receive receive);

    /// <summary>Pops the behaviour stack; at the bottom, returns to the actor's initial behaviour.</summary>
    void UnbecomeStacked();
}
