using Akka.Actor;
using Akka.Event;
using Akka.Persistence;
using Courier.Actors.Hosting;

namespace Courier.Actors.Mqtt;

/// <summary>
/// Makes the node's retained messages durable (nats-server keeps them in its <c>$MQTT_rmsgs</c>
/// stream): each set, replace or clear is one journal event, a snapshot of them all every
/// <see cref="SnapshotEvery"/> events. On recovery it refills <see cref="MqttRetainedMessages"/>,
/// which publishers update at once and subscribers read; this actor only writes them down.
/// </summary>
/// <remarks>Retained publishes are rare next to ordinary ones: one actor message each is fine (DESIGN.md §3).</remarks>
internal sealed class MqttRetainedStore : ReceivePersistentActor
{
    internal const int SnapshotEvery = 1000;

    private readonly MqttRetainedMessages _retained;
    private readonly List<IActorRef> _awaitingReady = [];
    private int _eventsSinceSnapshot;
    private bool _ready;

    public MqttRetainedStore(MqttRetainedMessages retained)
    {
        _retained = retained;
        Recover<SnapshotOffer>(offer =>
        {
            foreach (var message in ((MqttRetainedSnapshot)offer.Snapshot).Messages)
            {
                _retained.Set(message);
            }
        });
        Recover<MqttRetainedEvent>(Apply);
        Recover<RecoveryCompleted>(_ =>
        {
            _ready = true;
            foreach (var waiting in _awaitingReady)
            {
                waiting.Tell(Readiness.Ready.Instance);
            }

            _awaitingReady.Clear();
        });
        // Ready once the retained messages are recovered.
        Command<Readiness.AwaitReady>(_ =>
        {
            if (_ready)
            {
                Sender.Tell(Readiness.Ready.Instance);
            }
            else
            {
                _awaitingReady.Add(Sender);
            }
        });
        Command<MqttRetainedEvent>(change =>
        {
            var replyTo = Sender;
            Persist(change, stored =>
            {
                replyTo.Tell(Protocol.Stored.Instance);
                if (++_eventsSinceSnapshot >= SnapshotEvery)
                {
                    _eventsSinceSnapshot = 0;
                    var snapshot = new MqttRetainedSnapshot();
                    snapshot.Messages.AddRange(_retained.All());
                    SaveSnapshot(snapshot);
                }
            });
        });
        Command<SaveSnapshotSuccess>(saved =>
        {
            DeleteMessages(saved.Metadata.SequenceNr);
            DeleteSnapshots(new SnapshotSelectionCriteria(saved.Metadata.SequenceNr - 1));
        });
        Command<DeleteMessagesSuccess>(_ => { });
        Command<DeleteSnapshotsSuccess>(_ => { });
        Command<SaveSnapshotFailure>(failed => Context.GetLogger().Warning(failed.Cause, "MQTT retained messages: snapshot not saved"));
        Command<DeleteMessagesFailure>(failed => Context.GetLogger().Warning(failed.Cause, "MQTT retained messages: events not deleted"));
        Command<DeleteSnapshotsFailure>(failed => Context.GetLogger().Warning(failed.Cause, "MQTT retained messages: old snapshots not deleted"));
    }

    public override string PersistenceId => "$MQTT/retained";

    public static Props Props(MqttRetainedMessages retained) => Akka.Actor.Props.Create(() => new MqttRetainedStore(retained));

    private void Apply(MqttRetainedEvent change)
    {
        if (change.Payload.Length == 0)
        {
            _retained.Clear(change.Subject);
        }
        else
        {
            _retained.Set(new MqttRetainedMessage(change.Subject, change.Topic, change.Payload, change.QoS, change.Headers, change.ExpiresAt));
        }
    }

    /// <summary>The messages of the retained store (and <see cref="MqttRetainedEvent"/>, answered with <see cref="Stored"/> once journaled).</summary>
    public static class Protocol
    {
        /// <summary>A change is in the journal.</summary>
        public sealed class Stored
        {
            public static readonly Stored Instance = new();

            private Stored()
            {
            }
        }
    }
}
