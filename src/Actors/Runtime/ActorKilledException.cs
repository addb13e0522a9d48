namespace Courier.Actors.Runtime;

/// <summary>Thrown inside an actor that received <see cref="Kill"/>. The default strategy stops the actor.</summary>
public class ActorKilledException : AkkaException
{
    /// <summary>Creates the exception.</summary>
    public ActorKilledException(string message)
        : base(message)
    {
    }
}
