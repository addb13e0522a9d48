namespace Courier.Actors.Runtime;

/// <summary>Base of the runtime's exceptions (Akka.NET <c>AkkaException</c>).</summary>
public class AkkaException : Exception
{
    /// <summary>Creates the exception.</summary>
    public AkkaException(string message, Exception? cause = null)
        : base(message, cause)
    {
    }
}
