namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// The system's dead letters: publishes every message it gets as a <see cref="DeadLetter"/> on the event
/// stream. Messages that are themselves dead letters, and timer ticks of stopped actors, are dropped so a
/// dead subscriber cannot start a loop.
/// </summary>
internal sealed class DeadLetterActorRef : InternalActorRef
{
    private readonly ActorSystem _system;

    public DeadLetterActorRef(ActorSystem system)
    {
        _system = system;
        Path = $"akka://{system.Name}/deadLetters";
    }

    public override string Path { get; }

    public override bool IsTerminated => false;

    public override ActorSystem System => _system;

    public override void Tell(object message, IActorRef? sender)
    {
        ArgumentNullException.ThrowIfNull(message);
        Deliver(message, sender, this);
    }

    /// <summary>Publishes <paramref name="message"/>, which could not reach <paramref name="recipient"/>.</summary>
    public void Deliver(object message, IActorRef? sender, IActorRef recipient)
    {
        if (message is DeadLetter or TimerMsg)
        {
            return;
        }

        _system.EventStream.Publish(new DeadLetter(message, sender ?? this, recipient));
    }

    public override void SendSystemMessage(SystemMessage message) => ReplyToWatchOfDeadActor(message);
}
