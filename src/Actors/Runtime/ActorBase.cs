using Courier.Actors.Runtime.Internal;

namespace Courier.Actors.Runtime;

/// <summary>
/// An actor (Akka.NET <c>ActorBase</c>/<c>UntypedActor</c>): state plus a behaviour that handles one message at
/// a time. The runtime never runs an actor on two threads at once and orders its turns, so its fields need no
/// locks. Create one only through <see cref="Props"/> and <c>ActorOf</c>.
/// </summary>
public abstract class ActorBase
{
    /// <summary>Binds the new instance to the actor being created.</summary>
    /// <exception cref="ActorInitializationException">Constructed outside a Props factory run by the runtime.</exception>
    protected ActorBase()
    {
        var cell = ActorCell.Current;
        if (cell is null || !cell.TryBindConstructedActor(this))
        {
            throw new ActorInitializationException(
                null,
                $"{GetType().Name} was constructed directly; actors are created by the runtime: ActorOf(Props.Create(() => new {GetType().Name}(...))).");
        }

        Cell = cell;
        DefaultBehavior = Receive;
        cell.Become(DefaultBehavior); // bottom of the stack; a Become in the derived constructor replaces it
    }

    /// <summary>This actor's context: its ref, sender, children, watches and behaviour stack.</summary>
    protected IActorContext Context => Cell;

    /// <summary>This actor's ref (the same across restarts).</summary>
    protected IActorRef Self => Cell.Self;

    /// <summary>The sender of the message being processed; dead letters when it had none.</summary>
    protected IActorRef Sender => Cell.Sender;

    internal ActorCell Cell { get; }

    internal Receive DefaultBehavior { get; }

    /// <summary>Handles <paramref name="message"/>; returns false if it did not (then <see cref="Unhandled"/> runs).</summary>
    protected abstract bool Receive(object message);

    /// <summary>
    /// A message no behaviour handled. Default: an unhandled <see cref="Terminated"/> throws
    /// <see cref="DeathPactException"/>; anything else is published as <see cref="UnhandledMessage"/>.
    /// </summary>
    protected virtual void Unhandled(object message)
    {
        if (message is Terminated terminated)
        {
            throw new DeathPactException(terminated.ActorRef);
        }

        Cell.System.EventStream.Publish(new UnhandledMessage(message, Sender, Self));
    }

    /// <summary>Runs after the instance is created, before its first message (also, by default, after a restart).</summary>
    protected virtual void PreStart()
    {
    }

    /// <summary>Runs once the actor has stopped and its children are gone; timers are already cancelled.</summary>
    protected virtual void PostStop()
    {
    }

    /// <summary>
    /// Runs on the failed instance before it is replaced. Default: unwatch and stop every child, then
    /// <see cref="PostStop"/>. Timers are already cancelled.
    /// </summary>
    /// <param name="reason">The exception that caused the restart.</param>
    /// <param name="message">The message being processed when it failed, if any (it is not redelivered).</param>
    protected virtual void PreRestart(Exception reason, object? message)
    {
        foreach (var child in Context.GetChildren())
        {
            Context.Unwatch(child);
            Context.Stop(child);
        }

        PostStop();
    }

    /// <summary>Runs on the fresh instance after a restart. Default: <see cref="PreStart"/>.</summary>
    protected virtual void PostRestart(Exception reason) => PreStart();

    /// <summary>
    /// How this actor supervises its children; asked once per instance, unless
    /// <see cref="Props.WithSupervisorStrategy"/> overrides it. Default: <see cref="Runtime.SupervisorStrategy.DefaultStrategy"/>.
    /// </summary>
    protected virtual SupervisorStrategy SupervisorStrategy() => global::Courier.Actors.Runtime.SupervisorStrategy.DefaultStrategy;

    /// <summary>Replaces the current behaviour.</summary>
    protected void Become(Receive receive) => Cell.Become(receive);

    /// <summary>Pushes a behaviour on the stack.</summary>
    protected void BecomeStacked(Receive receive) => Cell.BecomeStacked(receive);

    /// <summary>Pops the behaviour stack.</summary>
    protected void UnbecomeStacked() => Cell.UnbecomeStacked();

    /// <summary>Called by the runtime once the constructor has returned.</summary>
    internal virtual void CompleteConstruction()
    {
    }

    internal void InvokeUnhandled(object message) => Unhandled(message);

    /// <summary>
    /// Runs <paramref name="receive"/> (the top of the behaviour stack) for a user message (Akka's
    /// <c>AroundReceive</c>). A runtime module that wraps actors (persistence) overrides it to see every
    /// message first, whatever behaviour the actor has become.
    /// </summary>
    internal virtual bool AroundReceive(Receive receive, object message) => receive(message);

    /// <summary>Akka's <c>AroundPreStart</c>: <see cref="PreStart"/>, unless a runtime module wraps it.</summary>
    internal virtual void AroundPreStart() => PreStart();

    /// <summary>Akka's <c>AroundPostStop</c>: stashed messages go back to the mailbox (and from there to dead
    /// letters), then <see cref="PostStop"/>.</summary>
    internal virtual void AroundPostStop()
    {
        try
        {
            (this as IWithUnboundedStash)?.Stash?.UnstashAll();
        }
        finally
        {
            PostStop();
        }
    }

    /// <summary>Akka's <c>AroundPreRestart</c>: stashed messages go back to the front of the mailbox, for the
    /// next instance, then <see cref="PreRestart"/>.</summary>
    internal virtual void AroundPreRestart(Exception reason, object? message)
    {
        try
        {
            (this as IWithUnboundedStash)?.Stash?.UnstashAll();
        }
        finally
        {
            PreRestart(reason, message);
        }
    }

    /// <summary>Akka's <c>AroundPostRestart</c>: <see cref="PostRestart"/>, unless a runtime module wraps it.</summary>
    internal virtual void AroundPostRestart(Exception reason) => PostRestart(reason);

    /// <summary>True when more user messages wait in this actor's mailbox (for group commits: act on the
    /// last message of a burst). Only on the actor's own turn.</summary>
    internal bool HasQueuedUserMessages => Cell.Mailbox.HasUserMessages;

    internal SupervisorStrategy InvokeSupervisorStrategy() => SupervisorStrategy();
}
