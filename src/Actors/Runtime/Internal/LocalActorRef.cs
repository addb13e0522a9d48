namespace Courier.Actors.Runtime.Internal;

/// <summary>The ref of an actor of this process; one per actor for its whole life, restarts included.</summary>
internal sealed class LocalActorRef : InternalActorRef
{
    public LocalActorRef(ActorCell cell, string path)
    {
        Cell = cell;
        Path = path;
    }

    public ActorCell Cell { get; }

    public override string Path { get; }

    public override bool IsTerminated => Cell.Mailbox.IsClosed;

    public override ActorSystem System => Cell.System;

    public override void Tell(object message, IActorRef? sender)
    {
        ArgumentNullException.ThrowIfNull(message);
        Cell.Mailbox.Post(new Envelope(message, sender));
    }

    public override void SendSystemMessage(SystemMessage message) => Cell.Mailbox.PostSystem(message);
}
