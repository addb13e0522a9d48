using Courier.Actors.Connections;
using Courier.Actors.Runtime;
using Courier.Actors.Server;

namespace Courier.Actors.Routing;

/// <summary>
/// The single writer of one SubList shard. Applies batches of SUB/UNSUB changes, publishes the
/// new immutable snapshot to the <see cref="SubjectSpace"/>, then acknowledges the batch, so a
/// client's SUB is in effect before its next command is processed (invariant 2).
/// </summary>
/// <remarks>
/// On (re)start it rebuilds its shard from the subscriptions the connections hold, so a crashed
/// shard comes back complete. Changes are idempotent (adding a present subscription or removing
/// an absent one does nothing), so a change that races the rebuild is harmless.
/// </remarks>
internal sealed class SubjectRouter : ReceiveActor
{
    private readonly Broker _broker;
    private readonly int _shard;
    private SubList _list = SubList.Empty;

    public SubjectRouter(Broker broker, int shard)
    {
        _broker = broker;
        _shard = shard;
        Receive<Protocol.Apply>(Apply);
        Receive<Protocol.Acknowledge>(ack => ack.Completion.TrySetResult());
    }

    public static Props Props(Broker broker, int shard) => Runtime.Props.Create(() => new SubjectRouter(broker, shard));

    protected override void PreStart()
    {
        var subs = new List<Subscription>();
        foreach (var client in _broker.Clients)
        {
            if (!client.IsClosed)
            {
                client.CollectSubscriptions(_shard, subs);
            }
        }

        var list = SubList.Empty;
        foreach (var sub in subs)
        {
            list = list.Insert(sub);
        }

        _list = list;
        _broker.Space.Publish(_shard, _list);
    }

    protected override void PreRestart(Exception reason, object? message)
    {
        // The batch that failed is not lost: its subscriptions are in the connections' registrations,
        // which the new instance rebuilds from. Its sender is acknowledged after the rebuild.
        if (message is Protocol.Apply { Completion: { } completion })
        {
            Self.Tell(new Protocol.Acknowledge(completion));
        }

        base.PreRestart(reason, message);
    }

    private void Apply(Protocol.Apply apply)
    {
        var list = _list;
        foreach (var change in apply.Changes)
        {
            if (change.Sub.Shard != _shard)
            {
                continue;
            }

            // A closed client's subscription is never (re-)added.
            list = change.Add && !change.Sub.Client.IsClosed ? list.Insert(change.Sub) : list.Remove(change.Sub);
        }

        if (!ReferenceEquals(list, _list))
        {
            _list = list;
            _broker.Space.Publish(_shard, list);
        }

        apply.Completion?.TrySetResult();
    }

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>A batch of changes for this shard; <see cref="Completion"/> completes when they are in effect.</summary>
        public sealed class Apply
        {
            public Apply(IReadOnlyList<SubChange> changes, TaskCompletionSource? completion)
            {
                ArgumentNullException.ThrowIfNull(changes);
                Changes = changes;
                Completion = completion;
            }

            public IReadOnlyList<SubChange> Changes { get; }

            public TaskCompletionSource? Completion { get; }

            public override string ToString() => $"Apply({Changes.Count} changes)";
        }

        /// <summary>Completes a batch's acknowledgement after a restart rebuilt the shard.</summary>
        public sealed class Acknowledge
        {
            public Acknowledge(TaskCompletionSource completion)
            {
                Completion = completion;
            }

            public TaskCompletionSource Completion { get; }
        }
    }
}
