namespace Courier.Actors.Runtime;

/// <summary>
/// Thrown by an actor that did not handle a <see cref="Terminated"/> for an actor it watched. The default
/// strategy stops the actor.
/// </summary>
public class DeathPactException : AkkaException
{
    /// <summary>Creates the exception.</summary>
    public DeathPactException(IActorRef deadActor)
        : base($"Monitored actor [{deadActor}] terminated") => DeadActor = deadActor;

    /// <summary>The watched actor that stopped.</summary>
    public IActorRef DeadActor { get; }
}
