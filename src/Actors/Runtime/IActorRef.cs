namespace Courier.Actors.Runtime;

/// <summary>
/// An immutable, thread-safe handle to an actor (Akka.NET <c>Akka.Actor.IActorRef</c>). Two refs are
/// equal only if they are the same object: a restarted actor keeps its ref, a new actor under the same
/// name gets a new one.
/// </summary>
public interface IActorRef
{
    /// <summary>The actor's path, e.g. <c>akka://courier/user/router/shard-1</c>.</summary>
    string Path { get; }

    /// <summary>
    /// Enqueues <paramref name="message"/> for the actor and returns at once. Never throws for a stopped
    /// actor: the message goes to dead letters. Messages from one sender to one receiver keep their order.
    /// </summary>
    /// <param name="message">The message; not null.</param>
    /// <param name="sender">The sender the receiver sees as <c>Sender</c>; null for none
    /// (<see cref="ActorRefs.NoSender"/>). The one-argument <c>Tell</c> extension passes <c>Self</c>
    /// when called inside an actor, as Akka.NET does.</param>
    void Tell(object message, IActorRef? sender);
}
