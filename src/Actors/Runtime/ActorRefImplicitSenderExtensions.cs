using Courier.Actors.Runtime.Internal;

namespace Courier.Actors.Runtime;

/// <summary>
/// <c>Tell</c> without a sender and <c>Forward</c> (Akka.NET <c>ActorRefImplicitSenderExtensions</c>):
/// inside an actor the sender is that actor's <c>Self</c>; outside one it is <see cref="ActorRefs.NoSender"/>.
/// </summary>
public static class ActorRefImplicitSenderExtensions
{
    /// <summary>Tells <paramref name="message"/> with the current actor (if any) as the sender.</summary>
    public static void Tell(this IActorRef receiver, object message)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        receiver.Tell(message, ActorCell.Current?.Self);
    }

    /// <summary>Tells <paramref name="message"/> keeping the sender of the message being processed.</summary>
    /// <exception cref="InvalidOperationException">Called outside an actor's message processing.</exception>
    public static void Forward(this IActorRef receiver, object message)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        var cell = ActorCell.Current
            ?? throw new InvalidOperationException("Forward can only be used while an actor processes a message.");
        receiver.Tell(message, cell.Sender);
    }
}
