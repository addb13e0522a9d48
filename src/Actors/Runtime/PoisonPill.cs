namespace Courier.Actors.Runtime;

/// <summary>
/// Stops the receiving actor once it reaches this message: messages queued before it are processed,
/// later ones go to dead letters (Akka.NET <c>PoisonPill</c>). The actor's behaviour never sees it.
/// </summary>
public sealed class PoisonPill
{
    private PoisonPill()
    {
    }

    /// <summary>The single instance.</summary>
    public static PoisonPill Instance { get; } = new();

    /// <inheritdoc/>
    public override string ToString() => "<PoisonPill>";
}
