namespace Courier.Actors.Runtime;

/// <summary>
/// Reported through <see cref="ActorSystem.Failed"/>: an actor threw. For a failure in message processing
/// or start-up, <see cref="Directive"/> is what its supervisor decided; for an exception in a hook that cannot
/// be supervised (<c>PostStop</c>, <c>PreRestart</c>) it is null and the runtime carried on.
/// </summary>
/// <param name="Actor">The actor that threw.</param>
/// <param name="Cause">The exception.</param>
/// <param name="Directive">The supervisor's decision, or null.</param>
/// <param name="Description">Where it happened, for logs.</param>
public sealed record ActorFailure(IActorRef Actor, Exception Cause, Directive? Directive, string Description)
{
    /// <inheritdoc/>
    public override string ToString() =>
        $"{Actor} failed ({Description}){(Directive is { } d ? $" -> {d}" : "")}: {Cause.GetType().Name}: {Cause.Message}";
}
