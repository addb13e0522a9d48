namespace Courier.Actors.Runtime;

/// <summary>An actor name is malformed, reserved (starts with <c>$</c>) or already taken by a sibling.</summary>
public class InvalidActorNameException : AkkaException
{
    /// <summary>Creates the exception.</summary>
    public InvalidActorNameException(string message)
        : base(message)
    {
    }
}
