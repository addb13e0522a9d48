using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Connections;
using Courier.Actors.Server;

namespace Courier.Actors.Routing;

/// <summary>
/// The single writer of one SubList shard of one account's space. Applies batches of SUB/UNSUB changes, publishes the
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
    private readonly Account _account;
    private readonly SubjectSpace _space;
    private readonly ClientRegistry _registry;
    private readonly int _shard;
    private SubList _list = SubList.Empty;

    public SubjectRouter(Account account, ClientRegistry registry, int shard)
    {
        _account = account;
        _space = account.Space;
        _registry = registry;
        _shard = shard;
        Receive<Protocol.Apply>(Apply);
        Receive<Protocol.Acknowledge>(ack => ack.ReplyTo.Tell(Protocol.Applied.Instance));
    }

    public static Props Props(Account account, ClientRegistry registry, int shard) =>
        Akka.Actor.Props.Create(() => new SubjectRouter(account, registry, shard));

    protected override void PreStart()
    {
        var subs = new List<Subscription>();
        foreach (var client in _registry.Clients)
        {
            if (!client.IsClosed)
            {
                client.CollectSubscriptions(_account, _shard, subs);
            }
        }

        var list = SubList.Empty;
        foreach (var sub in subs)
        {
            list = list.Insert(sub);
        }

        _list = list;
        _space.Publish(_shard, _list);
    }

    protected override void PreRestart(Exception reason, object message)
    {
        // The batch that failed is not lost: its subscriptions are in the connections' registrations,
        // which the new instance rebuilds from. Its sender is acknowledged after the rebuild.
        if (message is Protocol.Apply { ReplyTo: { } replyTo })
        {
            Self.Tell(new Protocol.Acknowledge(replyTo));
        }

        base.PreRestart(reason, message);
    }

    private void Apply(Protocol.Apply apply)
    {
        var list = _list;
        foreach (var change in apply.Changes)
        {
            if (change.Sub.Shard != _shard || !ReferenceEquals(change.Sub.Account, _account))
            {
                continue;
            }

            // A closed client's subscription is never (re-)added.
            list = change.Add && !change.Sub.Client.IsClosed ? list.Insert(change.Sub) : list.Remove(change.Sub);
        }

        if (!ReferenceEquals(list, _list))
        {
            _list = list;
            _space.Publish(_shard, list);
        }

        apply.ReplyTo?.Tell(Protocol.Applied.Instance);
    }

    /// <summary>The messages this actor understands.</summary>
    /// <remarks>
    /// Node-local by design: a change carries the subscription itself (its client's outbound buffer is
    /// what a publisher writes to). Interest crosses nodes through route links, not through these.
    /// </remarks>
    public static class Protocol
    {
        /// <summary>A batch of changes for this shard; <see cref="ReplyTo"/> (if any) hears <see cref="Applied"/> once they are in effect.</summary>
        public sealed class Apply
        {
            public Apply(IReadOnlyList<SubChange> changes, IActorRef? replyTo)
            {
                ArgumentNullException.ThrowIfNull(changes);
                Changes = changes;
                ReplyTo = replyTo;
            }

            public IReadOnlyList<SubChange> Changes { get; }

            public IActorRef? ReplyTo { get; }

            public override string ToString() => $"Apply({Changes.Count} changes)";
        }

        /// <summary>A batch's changes are in effect (the shard's new snapshot is published).</summary>
        public sealed class Applied
        {
            public static readonly Applied Instance = new();

            private Applied()
            {
            }

            public override string ToString() => "Applied";
        }

        /// <summary>Acknowledges a batch after a restart rebuilt the shard.</summary>
        public sealed class Acknowledge
        {
            public Acknowledge(IActorRef replyTo)
            {
                ArgumentNullException.ThrowIfNull(replyTo);
                ReplyTo = replyTo;
            }

            public IActorRef ReplyTo { get; }
        }
    }
}
