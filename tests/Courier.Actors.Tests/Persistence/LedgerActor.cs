using Courier.Actors.Persistence;
using Courier.Actors.Runtime;
using Courier.Storage.Persistence;

namespace Courier.Actors.Tests.Persistence;

/// <summary>
/// A persistent actor that keeps the items it persisted, in order, and reports its recovery to a probe:
/// <see cref="Offered"/> for a snapshot, <see cref="Replayed"/> per event, <see cref="Recovered"/> at the end.
/// With <c>snapshotEvery</c> it behaves as a JetStream consumer will: a snapshot every N events, and once it is
/// saved, the events up to it and the older snapshots are deleted.
/// </summary>
internal sealed class LedgerActor : ReceivePersistentActor
{
    private readonly string _id;
    private readonly int _snapshotEvery;
    private List<string> _items = [];

    public LedgerActor(string id, IActorRef probe, int snapshotEvery = 0)
    {
        _id = id;
        _snapshotEvery = snapshotEvery;
        Recover<SnapshotOffer>(offer =>
        {
            _items = [.. ((string)offer.Snapshot).Split('|', StringSplitOptions.RemoveEmptyEntries)];
            probe.Tell(new Offered(offer.Metadata.SequenceNr, [.. _items]), Self);
        });
        Recover<string>(item =>
        {
            _items.Add(item);
            probe.Tell(new Replayed(item, LastSequenceNr), Self);
        });
        Recover<RecoveryCompleted>(_ => probe.Tell(new Recovered([.. _items], LastSequenceNr), Self));

        Command<Add>(c => Persist(c.Item, Apply));
        Command<AddAsync>(c => PersistAsync(c.Item, Apply));
        Command<AddAll>(c => PersistAll(c.Items, Apply));
        Command<AddAllAsync>(c => PersistAllAsync(c.Items, Apply));
        Command<Defer>(c => DeferAsync(c.Marker, m => Sender.Tell(new Deferred(m, LastSequenceNr), Self)));
        Command<Get>(_ => Sender.Tell(new State([.. _items], LastSequenceNr), Self));
        Command<TakeSnapshot>(_ => SaveSnapshot(string.Join('|', _items)));
        Command<SaveSnapshotSuccess>(s =>
        {
            if (snapshotEvery > 0)
            {
                // A JetStream consumer's routine: events below the snapshot and older snapshots are no longer needed.
                DeleteMessages(s.Metadata.SequenceNr);
                DeleteSnapshots(new SnapshotSelectionCriteria(s.Metadata.SequenceNr - 1));
            }

            probe.Tell(s, Self);
        });
        Command<Forget>(c => DeleteMessages(c.ToSequenceNr));
        Command<DeleteMessagesSuccess>(d => probe.Tell(d, Self));
        Command<DeleteMessagesFailure>(d => probe.Tell(d, Self));
        Command<Unserializable>(_ => PersistAsync(new object(), _ => probe.Tell("handler of a rejected event ran", Self)));
    }

    public override string PersistenceId => _id;

    private void Apply(string item)
    {
        _items.Add(item);
        Sender.Tell(new Added(item, LastSequenceNr), Self);
        if (_snapshotEvery > 0 && LastSequenceNr % _snapshotEvery == 0)
        {
            SaveSnapshot(string.Join('|', _items)); // a consumer snapshots its state every N events
        }
    }

    public static Props Props(string id, IActorRef probe, int snapshotEvery = 0) => Courier.Actors.Runtime.Props.Create(() => new LedgerActor(id, probe, snapshotEvery));

    public sealed record Add(string Item);

    public sealed record AddAsync(string Item);

    public sealed record AddAll(string[] Items);

    public sealed record AddAllAsync(string[] Items);

    public sealed record Defer(string Marker);

    public sealed record Forget(long ToSequenceNr);

    public sealed record Unserializable;

    public sealed record Get
    {
        public static Get Instance { get; } = new();
    }

    public sealed record TakeSnapshot
    {
        public static TakeSnapshot Instance { get; } = new();
    }

    public sealed record Added(string Item, long SequenceNr);

    public sealed record Deferred(string Marker, long LastSequenceNr);

    public sealed record Replayed(string Item, long SequenceNr);

    public sealed record Offered(long SequenceNr, string[] Items);

    public sealed record Recovered(string[] Items, long LastSequenceNr)
    {
        public override string ToString() => $"Recovered([{string.Join(',', Items)}], {LastSequenceNr})";
    }

    public sealed record State(string[] Items, long LastSequenceNr)
    {
        public override string ToString() => $"State([{string.Join(',', Items)}], {LastSequenceNr})";
    }
}

/// <summary>A parent that restarts its persistent child on any failure, Kill included.</summary>
internal sealed class RestartingParent : ReceiveActor
{
    public RestartingParent(Props child)
    {
        var c = Context.ActorOf(child, "child");
        Receive<string>(s => s == "child?", _ => Sender.Tell(c, Self));
    }

    protected override SupervisorStrategy SupervisorStrategy() => new OneForOneStrategy(_ => Directive.Restart);
}
