namespace Courier.Actors.Runtime;

/// <summary>
/// Delivered to every watcher of <see cref="ActorRef"/> once it has stopped (after its last message to the
/// watcher), also when the watch started after it had already stopped. An actor that does not handle it
/// fails with <see cref="DeathPactException"/>. Akka.NET <c>Terminated</c>.
/// </summary>
/// <param name="ActorRef">The actor that stopped.</param>
/// <param name="ExistenceConfirmed">False when the watch reached an actor that was already gone.</param>
/// <param name="AddressTerminated">Always false here (no remoting); kept for Akka.NET's shape.</param>
public sealed record Terminated(IActorRef ActorRef, bool ExistenceConfirmed = true, bool AddressTerminated = false)
{
    /// <inheritdoc/>
    public override string ToString() => $"<Terminated>: {ActorRef} - ExistenceConfirmed={ExistenceConfirmed}";
}
