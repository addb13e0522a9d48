namespace Courier.Actors.Runtime.Internal;

/// <summary>A ref to no actor (Akka's <c>Nobody</c>): drops messages; a watch on it terminates at once.</summary>
internal sealed class NobodyActorRef : InternalActorRef
{
    public static readonly NobodyActorRef Instance = new();

    private NobodyActorRef()
    {
    }

    public override string Path => "akka://all-systems/Nobody";

    public override bool IsTerminated => true;

    public override ActorSystem? System => null;

    public override void Tell(object message, IActorRef? sender) => ArgumentNullException.ThrowIfNull(message);

    public override void SendSystemMessage(SystemMessage message) => ReplyToWatchOfDeadActor(message);
}
