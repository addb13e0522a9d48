namespace Courier.Actors.Runtime;

/// <summary>
/// Messages an actor set aside to handle later (Akka.NET <c>IStash</c>). <see cref="Stash"/> keeps the message
/// being processed; the unstash calls put kept messages back in front of the mailbox, oldest first, with their
/// original senders. Use only on the actor's own turn.
/// </summary>
public interface IStash
{
    /// <summary>Keeps the message being processed (and its sender) for later.</summary>
    /// <exception cref="InvalidOperationException">No message is being processed, or it was already stashed.</exception>
    void Stash();

    /// <summary>Puts the oldest stashed message in front of the mailbox.</summary>
    void Unstash();

    /// <summary>Puts every stashed message, in order, in front of the mailbox; the stash is empty after it.</summary>
    void UnstashAll();

    /// <summary>Puts the stashed messages that <paramref name="predicate"/> selects, in order, in front of the
    /// mailbox and drops the rest; the stash is empty after it.</summary>
    void UnstashAll(Func<object, bool> predicate);

    /// <summary>Empties the stash and returns its messages, oldest first (they are not delivered).</summary>
    IReadOnlyList<object> ClearStash();

    /// <summary>How many messages are stashed.</summary>
    int Count { get; }

    /// <summary>True when nothing is stashed.</summary>
    bool IsEmpty { get; }
}
