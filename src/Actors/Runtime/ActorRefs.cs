using Courier.Actors.Runtime.Internal;

namespace Courier.Actors.Runtime;

/// <summary>Well-known refs (Akka.NET <c>ActorRefs</c>).</summary>
public static class ActorRefs
{
    /// <summary>"No sender": the receiver's <c>Sender</c> is the system's dead letters.</summary>
    public static readonly IActorRef? NoSender;

    /// <summary>A ref to no actor: messages to it are dropped; watching it yields <see cref="Terminated"/> at once.</summary>
    public static readonly IActorRef Nobody = NobodyActorRef.Instance;
}
