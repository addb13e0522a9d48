using Courier.Actors.Runtime.Internal;

namespace Courier.Actors.Runtime;

/// <summary>
/// Decides what happens to a child that threw (Akka.NET <c>SupervisorStrategy</c>). A parent applies its
/// strategy, in its own thread of processing, to each child's failure.
/// </summary>
public abstract class SupervisorStrategy
{
    private protected SupervisorStrategy()
    {
    }

    /// <summary>
    /// Akka's default decider: <see cref="ActorInitializationException"/>, <see cref="ActorKilledException"/>
    /// and <see cref="DeathPactException"/> stop the child; any other exception restarts it.
    /// </summary>
    public static Func<Exception, Directive> DefaultDecider { get; } = static cause => cause switch
    {
        ActorInitializationException => Directive.Stop,
        ActorKilledException => Directive.Stop,
        DeathPactException => Directive.Stop,
        _ => Directive.Restart,
    };

    /// <summary>One-for-one with <see cref="DefaultDecider"/> and no retry limit (Akka's default).</summary>
    public static SupervisorStrategy DefaultStrategy { get; } = new OneForOneStrategy(DefaultDecider);

    /// <summary>One-for-one that stops the failing child whatever the exception.</summary>
    public static SupervisorStrategy StoppingStrategy { get; } = new OneForOneStrategy(static _ => Directive.Stop);

    /// <summary>The directive for <paramref name="cause"/>.</summary>
    public abstract Directive Decide(Exception cause);

    /// <summary>
    /// Whether one more restart is allowed for the child whose record is <paramref name="stats"/>; false turns
    /// a Restart into a Stop.
    /// </summary>
    internal abstract bool RequestRestartPermission(ChildRestartStats stats);
}
