namespace Courier.Actors.Runtime;

/// <summary>An <see cref="Futures.Ask{T}(IActorRef, object, TimeSpan)"/> got no reply in time.</summary>
public class AskTimeoutException : AkkaException
{
    /// <summary>Creates the exception.</summary>
    public AskTimeoutException(string message)
        : base(message)
    {
    }
}
