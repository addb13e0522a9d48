namespace Courier.Actors.Runtime;

/// <summary>
/// An actor whose behaviour is a list of typed handlers declared in its constructor (Akka.NET
/// <c>ReceiveActor</c>). The first handler whose type (and predicate) matches handles the message; if none does,
/// <see cref="ActorBase.Unhandled"/> runs. <see cref="Become(Action)"/> swaps in another list.
/// </summary>
/// <example>
/// <code>
/// public Counter()
/// {
///     Receive&lt;Increment&gt;(_ =&gt; _count++);
///     Receive&lt;GetCount&gt;(_ =&gt; Sender.Tell(_count));
/// }
/// </code>
/// </example>
public abstract class ReceiveActor : ActorBase
{
    private List<Receive>? _configuring = [];
    private Receive[] _initialHandlers = [];

    /// <summary>Handles messages of type <typeparamref name="T"/>.</summary>
    protected void Receive<T>(Action<T> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        AddHandler(message =>
        {
            if (message is not T typed)
            {
                return false;
            }

            handler(typed);
            return true;
        });
    }

    /// <summary>Handles messages of type <typeparamref name="T"/> for which <paramref name="shouldHandle"/> is true.</summary>
    protected void Receive<T>(Predicate<T> shouldHandle, Action<T> handler)
    {
        ArgumentNullException.ThrowIfNull(shouldHandle);
        ArgumentNullException.ThrowIfNull(handler);
        AddHandler(message =>
        {
            if (message is not T typed || !shouldHandle(typed))
            {
                return false;
            }

            handler(typed);
            return true;
        });
    }

    /// <summary>Handles messages of type <typeparamref name="T"/> for which <paramref name="shouldHandle"/> is true (Akka.NET's argument order).</summary>
    protected void Receive<T>(Action<T> handler, Predicate<T>? shouldHandle)
    {
        if (shouldHandle is null)
        {
            Receive(handler);
        }
        else
        {
            Receive(shouldHandle, handler);
        }
    }

    /// <summary>Offers messages of type <typeparamref name="T"/> to <paramref name="handler"/>, which returns whether it handled them.</summary>
    protected void Receive<T>(Func<T, bool> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        AddHandler(message => message is T typed && handler(typed));
    }

    /// <summary>Handles any message (put it last: handlers after it are never reached).</summary>
    protected void ReceiveAny(Action<object> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        AddHandler(message =>
        {
            handler(message);
            return true;
        });
    }

    /// <summary>
    /// Handles messages of type <typeparamref name="T"/> asynchronously: no other user message is processed
    /// until the returned task completes; code after each <c>await</c> runs on the actor's turn with the same
    /// <c>Sender</c>. A faulted task fails the actor like a throwing handler.
    /// </summary>
    protected void ReceiveAsync<T>(Func<T, Task> handler, Predicate<T>? shouldHandle = null)
    {
        ArgumentNullException.ThrowIfNull(handler);
        AddHandler(message =>
        {
            if (message is not T typed || (shouldHandle is not null && !shouldHandle(typed)))
            {
                return false;
            }

            Cell.RunTask(() => handler(typed));
            return true;
        });
    }

    /// <summary>As <see cref="ReceiveAsync{T}(Func{T, Task}, Predicate{T})"/>, with the predicate first.</summary>
    protected void ReceiveAsync<T>(Predicate<T> shouldHandle, Func<T, Task> handler)
    {
        ArgumentNullException.ThrowIfNull(shouldHandle);
        ReceiveAsync(handler, shouldHandle);
    }

    /// <summary>Handles any message asynchronously (see <see cref="ReceiveAsync{T}(Func{T, Task}, Predicate{T})"/>).</summary>
    protected void ReceiveAnyAsync(Func<object, Task> handler)
    {
        ArgumentNullException.ThrowIfNull(handler);
        AddHandler(message =>
        {
            Cell.RunTask(() => handler(message));
            return true;
        });
    }

    /// <summary>Replaces the behaviour with the handlers that <paramref name="configure"/> declares.</summary>
    protected void Become(Action configure) => Become(Build(configure));

    /// <summary>Pushes the handlers that <paramref name="configure"/> declares; <see cref="ActorBase.UnbecomeStacked"/> pops them.</summary>
    protected void BecomeStacked(Action configure) => BecomeStacked(Build(configure));

    /// <inheritdoc/>
    protected sealed override bool Receive(object message) => Dispatch(_initialHandlers, message);

    internal override void CompleteConstruction()
    {
        _initialHandlers = [.. _configuring!];
        _configuring = null;
    }

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

    private Receive Build(Action configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        var saved = _configuring;
        _configuring = [];
        try
        {
            configure();
            Receive[] handlers = [.. _configuring];
            return message => Dispatch(handlers, message);
        }
        finally
        {
            _configuring = saved;
        }
    }

    private void AddHandler(Receive handler)
    {
        if (_configuring is null)
        {
            throw new InvalidOperationException(
                "Receive handlers can be declared only in the constructor or inside Become(configure)/BecomeStacked(configure).");
        }

        _configuring.Add(handler);
    }
}
