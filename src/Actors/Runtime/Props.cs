namespace Courier.Actors.Runtime;

/// <summary>
/// How to create an actor: a factory called for the first instance and again on every restart, plus an
/// optional supervisor strategy for the actor's children. Immutable. Akka.NET <c>Props</c>.
/// </summary>
public sealed class Props
{
    private Props(Func<ActorBase> factory, Type actorType, SupervisorStrategy? supervisorStrategy)
    {
        Factory = factory;
        ActorType = actorType;
        SupervisorStrategy = supervisorStrategy;
    }

    /// <summary>The type the factory creates.</summary>
    public Type ActorType { get; }

    /// <summary>
    /// Overrides the actor's <c>SupervisorStrategy()</c> for its children when set.
    /// </summary>
    public SupervisorStrategy? SupervisorStrategy { get; }

    internal Func<ActorBase> Factory { get; }

    /// <summary>
    /// Props whose instances come from <paramref name="factory"/>; it must return a new instance on each
    /// call (it runs again on every restart), e.g. <c>Props.Create(() =&gt; new Shard(id))</c>.
    /// </summary>
    public static Props Create<TActor>(Func<TActor> factory)
        where TActor : ActorBase
    {
        ArgumentNullException.ThrowIfNull(factory);
        return new Props(factory, typeof(TActor), null);
    }

    /// <summary>Props whose instances come from <typeparamref name="TActor"/>'s parameterless constructor.</summary>
    public static Props Create<TActor>()
        where TActor : ActorBase, new()
        => new(static () => new TActor(), typeof(TActor), null);

    /// <summary>A copy that supervises the actor's children with <paramref name="strategy"/>.</summary>
    public Props WithSupervisorStrategy(SupervisorStrategy strategy)
    {
        ArgumentNullException.ThrowIfNull(strategy);
        return new Props(Factory, ActorType, strategy);
    }

    /// <inheritdoc/>
    public override string ToString() => $"Props({ActorType.Name})";
}
