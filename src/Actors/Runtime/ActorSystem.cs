using Courier.Actors.Runtime.Internal;

namespace Courier.Actors.Runtime;

/// <summary>
/// A hierarchy of actors under one user guardian, with dead letters and an event stream (Akka.NET
/// <c>ActorSystem</c>). Actors run on the .NET thread pool; there is no configuration.
/// </summary>
public sealed class ActorSystem
{
    private readonly ActorCell _guardian;
    private readonly TaskCompletionSource _whenTerminated = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _nextTempNumber;

    private ActorSystem(string name)
    {
        Name = name;
        EventStream = new EventStream();
        DeadLetterRef = new DeadLetterActorRef(this);
        _guardian = new ActorCell(
            this,
            Props.Create(static () => new GuardianActor()),
            parent: null,
            name: "user",
            path: $"akka://{name}/user");
        _guardian.Self.SendSystemMessage(Internal.Create.Instance);
    }

    /// <summary>
    /// Reports every actor failure with its supervisor's decision, and exceptions from hooks that cannot be
    /// supervised (<c>PostStop</c>, <c>PreRestart</c>). Raised on the thread of the actor that decided; keep the
    /// handler short and non-blocking. Exceptions it throws are swallowed.
    /// </summary>
    public event Action<ActorFailure>? Failed;

    /// <summary>The system's name, the authority of its actors' paths (<c>akka://NAME/user/...</c>).</summary>
    public string Name { get; }

    /// <summary>Where undeliverable messages go; each is published on <see cref="EventStream"/> as a <see cref="DeadLetter"/>.</summary>
    public IActorRef DeadLetters => DeadLetterRef;

    /// <summary>Publish/subscribe for system events (<see cref="DeadLetter"/>, <see cref="UnhandledMessage"/>) and your own.</summary>
    public EventStream EventStream { get; }

    /// <summary>Completes once every actor has stopped after <see cref="Terminate"/>.</summary>
    public Task WhenTerminated => _whenTerminated.Task;

    internal DeadLetterActorRef DeadLetterRef { get; }

    /// <summary>Creates a system.</summary>
    /// <param name="name">ASCII letters, digits, '-' and '_', starting with a letter or digit (as Akka).</param>
    public static ActorSystem Create(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        if (!char.IsAsciiLetterOrDigit(name[0]) || !name.All(static c => char.IsAsciiLetterOrDigit(c) || c is '-' or '_'))
        {
            throw new ArgumentException($"Invalid actor system name [{name}]: use ASCII letters, digits, '-' and '_'.", nameof(name));
        }

        return new ActorSystem(name);
    }

    /// <summary>Creates a top-level actor, supervised by the user guardian with the default strategy.</summary>
    /// <param name="props">How to create it.</param>
    /// <param name="name">Unique among top-level actors; null for a generated <c>$</c>-name.</param>
    /// <exception cref="InvalidActorNameException">The name is malformed or taken.</exception>
    /// <exception cref="InvalidOperationException">The system is terminating.</exception>
    public IActorRef ActorOf(Props props, string? name = null) => _guardian.ActorOf(props, name);

    /// <summary>Stops <paramref name="actor"/> asynchronously (see <see cref="IActorContext.Stop"/>).</summary>
    public void Stop(IActorRef actor)
    {
        ArgumentNullException.ThrowIfNull(actor);
        InternalActorRef.From(actor, nameof(actor)).SendSystemMessage(Internal.Terminate.Instance);
    }

    /// <summary>
    /// Stops every actor (children before parents, each running <c>PostStop</c>) and returns
    /// <see cref="WhenTerminated"/>. Calling it again is harmless.
    /// </summary>
    public Task Terminate()
    {
        _guardian.Self.SendSystemMessage(Internal.Terminate.Instance);
        return WhenTerminated;
    }

    /// <inheritdoc/>
    public override string ToString() => $"akka://{Name}";

    internal string NextTempPath() => $"akka://{Name}/temp/{ActorNames.Generated(Interlocked.Increment(ref _nextTempNumber))}";

    internal void ReportFailure(IActorRef actor, Exception cause, Directive? directive, string description)
    {
        var handler = Failed;
        if (handler is null)
        {
            return;
        }

        try
        {
            handler(new ActorFailure(actor, cause, directive, description));
        }
        catch (Exception)
        {
            // A logging hook must not take the runtime down.
        }
    }

    internal void OnGuardianTerminated() => _whenTerminated.TrySetResult();
}
