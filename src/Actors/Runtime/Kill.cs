namespace Courier.Actors.Runtime;

/// <summary>
/// Makes the receiving actor throw <see cref="ActorKilledException"/> when it reaches this message, so its
/// supervisor decides (the default strategy stops it). Akka.NET <c>Kill</c>.
/// </summary>
public sealed class Kill
{
    private Kill()
    {
    }

    /// <summary>The single instance.</summary>
    public static Kill Instance { get; } = new();

    /// <inheritdoc/>
    public override string ToString() => "<Kill>";
}
