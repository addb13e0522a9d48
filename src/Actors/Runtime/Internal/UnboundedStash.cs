namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// A stash without a bound (Akka's <c>UnboundedStashImpl</c>): envelopes in arrival order; unstashing puts them
/// in front of the mailbox (<see cref="Mailbox.Prepend"/>). Used only on the actor's turn.
/// </summary>
internal sealed class UnboundedStash(ActorCell cell) : IStash
{
    private readonly List<Envelope> _stashed = [];
    private long _lastStashed = -1; // the cell's invocation count when Stash() last ran

    public int Count => _stashed.Count;

    public bool IsEmpty => _stashed.Count == 0;

    public void Stash()
    {
        var current = cell.CurrentEnvelope;
        if (current.Message is null)
        {
            throw new InvalidOperationException("Stash() needs a message being processed.");
        }

        if (_lastStashed == cell.InvocationCount)
        {
            throw new InvalidOperationException($"Cannot stash the same message twice: {current.Message}.");
        }

        _lastStashed = cell.InvocationCount;
        _stashed.Add(current);
    }

    public void Unstash()
    {
        if (_stashed.Count == 0)
        {
            return;
        }

        var oldest = _stashed[0];
        _stashed.RemoveAt(0);
        cell.Mailbox.Prepend([oldest]);
    }

    public void UnstashAll()
    {
        cell.Mailbox.Prepend(_stashed);
        _stashed.Clear();
    }

    public void UnstashAll(Func<object, bool> predicate)
    {
        ArgumentNullException.ThrowIfNull(predicate);
        var selected = _stashed.Where(e => predicate(e.Message)).ToList();
        _stashed.Clear();
        cell.Mailbox.Prepend(selected);
    }

    public IReadOnlyList<object> ClearStash()
    {
        var messages = _stashed.Select(e => e.Message).ToArray();
        _stashed.Clear();
        return messages;
    }
}
