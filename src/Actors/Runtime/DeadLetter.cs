namespace Courier.Actors.Runtime;

/// <summary>
/// Published on <see cref="ActorSystem.EventStream"/> for a message that could not be delivered: its
/// recipient had stopped, or it was sent to <see cref="ActorSystem.DeadLetters"/>. Akka.NET <c>DeadLetter</c>.
/// </summary>
/// <param name="Message">The undelivered message.</param>
/// <param name="Sender">Its sender (dead letters when there was none).</param>
/// <param name="Recipient">The ref it was sent to.</param>
public sealed record DeadLetter(object Message, IActorRef Sender, IActorRef Recipient)
{
    /// <inheritdoc/>
    public override string ToString() => $"DeadLetter from {Sender} to {Recipient}: <{Message}>";
}
