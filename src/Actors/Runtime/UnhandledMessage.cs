namespace Courier.Actors.Runtime;

/// <summary>
/// Published on <see cref="ActorSystem.EventStream"/> when an actor's behaviour does not handle a message
/// (Akka.NET <c>UnhandledMessage</c>).
/// </summary>
/// <param name="Message">The message.</param>
/// <param name="Sender">Its sender (dead letters when there was none).</param>
/// <param name="Recipient">The actor that did not handle it.</param>
public sealed record UnhandledMessage(object Message, IActorRef Sender, IActorRef Recipient)
{
    /// <inheritdoc/>
    public override string ToString() => $"Unhandled message from {Sender} to {Recipient}: <{Message}>";
}
