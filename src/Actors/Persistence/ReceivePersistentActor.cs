using Courier.Actors.Runtime;

namespace Courier.Actors.Persistence;

/// <summary>
/// A persistent actor whose recovery and command handlers are typed lists declared in its constructor
/// (Akka.Persistence <c>ReceivePersistentActor</c>): <see cref="Recover{T}(Action{T})"/> for replayed events,
/// <see cref="SnapshotOffer"/> and <see cref="RecoveryCompleted"/>; <see cref="Command{T}(Action{T})"/> for
/// commands. <see cref="Become(Action)"/> swaps in other command handlers.
/// </summary>
/// <example>
/// <code>
/// public Counter(string id)
/// {
///     _id = id;
///     Recover&lt;int&gt;(n =&gt; _total += n);
///     Recover&lt;SnapshotOffer&gt;(offer =&gt; _total = (int)offer.Snapshot);
///     Command&lt;int&gt;(n =&gt; Persist(n, e =&gt; { _total += e; Sender.Tell(_total); }));
/// }
/// public override string PersistenceId =&gt; _id;
/// </code>
/// </example>
public abstract class ReceivePersistentActor : Eventsourced
{
    private List<Receive>? _configuringRecover = [];
    private List<Receive>? _configuringCommands = [];
    private Receive[] _recover = [];
    private Receive[] _commands = [];

    /// <summary>Handles replayed events (and <see cref="SnapshotOffer"/>, <see cref="RecoveryCompleted"/>) of type <typeparamref name="T"/>.</summary>
    protected void Recover<T>(Action<T> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        Add(_configuringRecover, Typed(handler, null));
    }

    /// <summary>As <see cref="Recover{T}(Action{T})"/>, for those <paramref name="shouldHandle"/> accepts.</summary>
    protected void Recover<T>(Predicate<T> shouldHandle, Action<T> handler)
    {
        ArgumentNullException.ThrowIfNull(shouldHandle);
        ArgumentNullException.ThrowIfNull(handler);
        Add(_configuringRecover, Typed(handler, shouldHandle));
    }

    /// <summary>Offers recovery messages of type <typeparamref name="T"/> to <paramref name="handler"/>, which returns whether it handled them.</summary>
    protected void Recover<T>(Func<T, bool> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        Add(_configuringRecover, message => message is T typed && handler(typed));
    }

    /// <summary>Handles any recovery message (put it last).</summary>
    protected void RecoverAny(Action<object> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        Add(_configuringRecover, message =>
        {
            handler(message);
            return true;
        });
    }

    /// <summary>Handles commands of type <typeparamref name="T"/>.</summary>
    protected void Command<T>(Action<T> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        Add(_configuringCommands, Typed(handler, null));
    }

    /// <summary>Handles commands of type <typeparamref name="T"/> that <paramref name="shouldHandle"/> accepts.</summary>
    protected void Command<T>(Predicate<T> shouldHandle, Action<T> handler)
    {
        ArgumentNullException.ThrowIfNull(shouldHandle);
        ArgumentNullException.ThrowIfNull(handler);
        Add(_configuringCommands, Typed(handler, shouldHandle));
    }

    /// <summary>Offers commands of type <typeparamref name="T"/> to <paramref name="handler"/>, which returns whether it handled them.</summary>
    protected void Command<T>(Func<T, bool> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        Add(_configuringCommands, message => message is T typed && handler(typed));
    }

    /// <summary>Handles any command (put it last).</summary>
    protected void CommandAny(Action<object> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        Add(_configuringCommands, message =>
        {
            handler(message);
            return true;
        });
    }

    /// <summary>Replaces the command handlers with those <paramref name="configure"/> declares (recovery handlers stay).</summary>
    protected void Become(Action configure) => Become(Build(configure));

    /// <summary>Pushes the command handlers <paramref name="configure"/> declares; <c>UnbecomeStacked</c> pops them.</summary>
    protected void BecomeStacked(Action configure) => BecomeStacked(Build(configure));

    /// <inheritdoc/>
    protected sealed override bool ReceiveRecover(object message) => Dispatch(_recover, message);

    /// <inheritdoc/>
    protected sealed override bool ReceiveCommand(object message) => Dispatch(_commands, message);

    internal override void CompleteConstruction()
    {
        _recover = [.. _configuringRecover!];
        _commands = [.. _configuringCommands!];
        _configuringRecover = null;
        _configuringCommands = null;
    }

    private static Receive Typed<T>(Action<T> handler, Predicate<T>? shouldHandle) => message =>
    {
        if (message is not T typed || (shouldHandle is not null && !shouldHandle(typed)))
        {
            return false;
        }

        handler(typed);
        return true;
    };

    private static bool Dispatch(Receive[] handlers, object message)
    {
        foreach (var handler in handlers)
        {
            if (handler(message))
            {
                return true;
            }
        }

        return false;
    }

    private static void Add(List<Receive>? handlers, Receive handler)
    {
        if (handlers is null)
        {
            throw new InvalidOperationException(
                "Recover and Command handlers can be declared only in the constructor (Command also inside Become(configure)/BecomeStacked(configure)).");
        }

        handlers.Add(handler);
    }

    private Receive Build(Action configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        var saved = _configuringCommands;
        _configuringCommands = [];
        try
        {
            configure();
            Receive[] handlers = [.. _configuringCommands];
            return message => Dispatch(handlers, message);
        }
        finally
        {
            _configuringCommands = saved;
        }
    }
}
