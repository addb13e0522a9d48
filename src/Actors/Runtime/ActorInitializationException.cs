namespace Courier.Actors.Runtime;

/// <summary>
/// An actor could not be created or started: its factory, constructor, <c>PreStart</c> or <c>PostRestart</c>
/// threw (the original is <see cref="Exception.InnerException"/>). The default strategy stops the actor.
/// </summary>
public class ActorInitializationException : AkkaException
{
    /// <summary>Creates the exception.</summary>
    public ActorInitializationException(IActorRef? actor, string message, Exception? cause = null)
        : base(message, cause) => Actor = actor;

    /// <summary>The actor that failed to start, if known.</summary>
    public IActorRef? Actor { get; }
}
