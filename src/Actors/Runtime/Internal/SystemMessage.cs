namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// Messages between the runtime's parts (Akka's <c>SystemMessage</c> family). They travel in a mailbox's
/// own queue and are processed before any user message, also while the actor is suspended.
/// </summary>
internal abstract class SystemMessage
{
}

/// <summary>Create the first instance and run <c>PreStart</c>.</summary>
internal sealed class Create : SystemMessage
{
    public static readonly Create Instance = new();
}

/// <summary>Replace the instance after a failure (supervisor said Restart).</summary>
internal sealed class Recreate(Exception cause) : SystemMessage
{
    public Exception Cause { get; } = cause;
}

/// <summary>Stop processing user messages (the parent failed).</summary>
internal sealed class Suspend : SystemMessage
{
    public static readonly Suspend Instance = new();
}

/// <summary>Undo one <see cref="Suspend"/>, or the suspension after a failure (supervisor said Resume).</summary>
internal sealed class Resume(Exception? causedByFailure) : SystemMessage
{
    public Exception? CausedByFailure { get; } = causedByFailure;
}

/// <summary>Stop: children first, then <c>PostStop</c>, then tell the parent and the watchers.</summary>
internal sealed class Terminate : SystemMessage
{
    public static readonly Terminate Instance = new();
}

/// <summary><paramref name="watcher"/> wants a <see cref="Terminated"/> when <paramref name="watchee"/> stops.</summary>
internal sealed class Watch(InternalActorRef watchee, InternalActorRef watcher) : SystemMessage
{
    public InternalActorRef Watchee { get; } = watchee;

    public InternalActorRef Watcher { get; } = watcher;
}

/// <summary>Cancels a <see cref="Watch"/>.</summary>
internal sealed class Unwatch(InternalActorRef watchee, InternalActorRef watcher) : SystemMessage
{
    public InternalActorRef Watchee { get; } = watchee;

    public InternalActorRef Watcher { get; } = watcher;
}

/// <summary>A child failed and is suspended until its parent's strategy decides.</summary>
internal sealed class Failed(LocalActorRef child, Exception cause) : SystemMessage
{
    public LocalActorRef Child { get; } = child;

    public Exception Cause { get; } = cause;
}

/// <summary><paramref name="actor"/> has stopped; sent to its parent and its watchers.</summary>
internal sealed class DeathWatchNotification(IActorRef actor, bool existenceConfirmed) : SystemMessage
{
    public IActorRef Actor { get; } = actor;

    public bool ExistenceConfirmed { get; } = existenceConfirmed;
}

/// <summary>Runs a task continuation of a <c>ReceiveAsync</c> handler inside the actor.</summary>
internal sealed class RunTask(Task task) : SystemMessage
{
    public Task Task { get; } = task;
}
