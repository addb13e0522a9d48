using Akka.Actor;
using Akka.Event;
using Akka.Persistence;
using Courier.Actors.Accounts;
using Courier.Actors.Connections;
using Courier.Actors.Hosting;

namespace Courier.Actors.Mqtt;

/// <summary>
/// The node's MQTT sessions: one <see cref="MqttSessionActor"/> child per account and client id (a
/// client id names a session within its client's account, as in nats-server), created on the first
/// CONNECT with that id. Connections talk to it once, at CONNECT; never per message. It
/// journals which client ids have a persistent session, so that after a restart their sessions are
/// recovered (and capture messages for their subscriptions) before the MQTT listener accepts.
/// </summary>
internal sealed class MqttSessions : ReceivePersistentActor
{
    private const int SnapshotEvery = 1000;

    private readonly Func<Account, InProcessClient> _newCaptureClient;
    private readonly Func<string, Account> _accounts;
    private readonly MqttCaptureLedger _ledger;
    private readonly Dictionary<string, IActorRef> _sessions = new(StringComparer.Ordinal);
    private readonly Dictionary<IActorRef, string> _ids = [];
    private readonly Dictionary<IActorRef, int> _attachesSent = [];
    private readonly HashSet<string> _persistent = new(StringComparer.Ordinal);
    private readonly HashSet<string> _recovering = new(StringComparer.Ordinal);
    private readonly List<IActorRef> _awaitingReady = [];
    private readonly Dictionary<string, InProcessClient> _captureClients = new(StringComparer.Ordinal); // by account name
    private readonly Dictionary<string, (InProcessClient Client, MqttWillPublisher Publisher)> _willPublishers = new(StringComparer.Ordinal); // by account name
    private readonly MqttRetainedMessages _retained;
    private readonly IActorRef _retainedStore;
    private bool _recovered;
    private int _eventsSinceSnapshot;
    private long _created;

    /// <param name="newCaptureClient">Makes the capture client of an account (its persistent sessions capture in its subject space).</param>
    /// <param name="ledger">The capture barrier.</param>
    /// <param name="accounts">The account of a given name (a recovered session's).</param>
    /// <param name="retained">The node's retained messages (a retained will recovered after a restart is set there).</param>
    /// <param name="retainedStore">Their journal.</param>
    public MqttSessions(Func<Account, InProcessClient> newCaptureClient, MqttCaptureLedger ledger, Func<string, Account> accounts, MqttRetainedMessages retained, IActorRef retainedStore)
    {
        _newCaptureClient = newCaptureClient;
        _retained = retained;
        _retainedStore = retainedStore;
        _accounts = accounts;
        _ledger = ledger;
        Recover<SnapshotOffer>(offer => _persistent.UnionWith(((MqttSessionIndexSnapshot)offer.Snapshot).ClientIds));
        Recover<MqttSessionIndexEvent>(Apply);
        Recover<RecoveryCompleted>(_ =>
        {
            // Every persistent session comes back now, so it captures messages while its client is away.
            foreach (var id in _persistent)
            {
                _recovering.Add(id);
                SessionFor(id);
            }

            _recovered = true;
            AnswerReadyIfDone();
        });

        // Ready once every persistent session is recovered and capturing.
        Command<Readiness.AwaitReady>(_ =>
        {
            _awaitingReady.Add(Sender);
            AnswerReadyIfDone();
        });
        Command<MqttSessionActor.Protocol.Recovered>(recovered =>
        {
            if (_recovering.Remove(recovered.ClientId))
            {
                AnswerReadyIfDone();
            }
        });
        Command<Protocol.Attach>(attach =>
        {
            var known = _persistent.Contains(attach.Key);
            if (known == !attach.CleanSession)
            {
                SendAttach(attach, Sender);
                return;
            }

            var sender = Sender;
            Persist(new MqttSessionIndexEvent(attach.Key, added: !attach.CleanSession), e =>
            {
                Apply(e);
                Checkpoint();
                SendAttach(attach, sender);
            });
        });
        Command<Protocol.Idle>(idle =>
        {
            // A clean session whose connection ended. It stops only if no CONNECT was sent its way since:
            // one already in its mailbox finds it alive (a session stopping on its own would drop it).
            // An ended persistent session (its expiry ran out, or Session Expiry Interval 0) leaves the index too, so
            // nothing of it is left behind: no actor, no entry recovered after a restart.
            if (_attachesSent.GetValueOrDefault(Sender) == idle.Attaches && _ids.TryGetValue(Sender, out var key))
            {
                Forget(Sender);
                Context.Stop(Sender);
                if (_persistent.Contains(key))
                {
                    Persist(new MqttSessionIndexEvent(key, added: false), e =>
                    {
                        Apply(e);
                        Checkpoint();
                    });
                }
            }
        });
        Command<Protocol.CountSessions>(_ => Sender.Tell(new Protocol.SessionCounts(_sessions.Count, _persistent.Count)));
        Command<Terminated>(terminated => Forget(terminated.ActorRef));
        Command<SaveSnapshotSuccess>(saved =>
        {
            DeleteMessages(saved.Metadata.SequenceNr);
            DeleteSnapshots(new SnapshotSelectionCriteria(saved.Metadata.SequenceNr - 1));
        });
        Command<DeleteMessagesSuccess>(_ => { });
        Command<DeleteSnapshotsSuccess>(_ => { });
        Command<SaveSnapshotFailure>(failed => Context.GetLogger().Warning(failed.Cause, "MQTT session index: snapshot not saved"));
        Command<DeleteMessagesFailure>(failed => Context.GetLogger().Warning(failed.Cause, "MQTT session index: events not deleted"));
        Command<DeleteSnapshotsFailure>(failed => Context.GetLogger().Warning(failed.Cause, "MQTT session index: old snapshots not deleted"));
    }

    public override string PersistenceId => "$MQTT/sessions";

    public static Props Props(Func<Account, InProcessClient> newCaptureClient, MqttCaptureLedger ledger, Func<string, Account> accounts, MqttRetainedMessages retained, IActorRef retainedStore) =>
        Akka.Actor.Props.Create(() => new MqttSessions(newCaptureClient, ledger, accounts, retained, retainedStore));

    protected override void PostStop()
    {
        foreach (var client in _captureClients.Values)
        {
            _ = client.DisposeAsync().AsTask();
        }

        foreach (var (client, _) in _willPublishers.Values)
        {
            _ = client.DisposeAsync().AsTask();
        }

        base.PostStop();
    }

    // The in-process NATS client an account's persistent sessions capture messages through, made on first use.
    private InProcessClient CaptureClient(string? accountName)
    {
        var account = accountName is null ? null : _accounts(accountName);
        var name = account?.Name ?? Account.GlobalName;
        if (!_captureClients.TryGetValue(name, out var client))
        {
            client = _newCaptureClient(account ?? _accounts(Account.GlobalName));
            _captureClients.Add(name, client);
            _ledger.Attach(client);
        }

        return client;
    }

    // The account's publisher of wills recovered from the journal, made on first use (on this actor's thread,
    // as the capture client): an in-process client of its own, which the capture client hears.
    private MqttWillPublisher WillPublisher(string? accountName)
    {
        var account = accountName is null ? _accounts(Account.GlobalName) : _accounts(accountName);
        if (!_willPublishers.TryGetValue(account.Name, out var entry))
        {
            var client = _newCaptureClient(account);
            entry = (client, new MqttWillPublisher(client, account, _retained, _retainedStore));
            _willPublishers.Add(account.Name, entry);
        }

        return entry.Publisher;
    }

    private void SendAttach(Protocol.Attach attach, IActorRef sender)
    {
        var session = SessionFor(attach.Key);
        _attachesSent[session] = _attachesSent.GetValueOrDefault(session) + 1;
        session.Tell(attach, sender);
    }

    private void Forget(IActorRef session)
    {
        _attachesSent.Remove(session);
        if (_ids.Remove(session, out var id) && _sessions.TryGetValue(id, out var current) && current.Equals(session))
        {
            _sessions.Remove(id);
        }
    }

    // The session of `key` (MqttAccountScope: account and client id).
    private IActorRef SessionFor(string key)
    {
        if (!_sessions.TryGetValue(key, out var session))
        {
            // Client ids are any UTF-8: actor names are a counter, the map holds the key.
            // The account's capture client is made here, on this actor's thread: the session actors run on
            // others, and two of them making it at once corrupted the map (a null client in a readiness flush).
            var accountName = MqttAccountScope.Split(key).Account;
            var client = CaptureClient(accountName);
            session = Context.ActorOf(MqttSessionActor.Props(key, () => client, _ledger, WillPublisher(accountName)), $"session-{++_created}");
            Context.Watch(session);
            _sessions.Add(key, session);
            _ids.Add(session, key);
        }

        return session;
    }

    private void Apply(MqttSessionIndexEvent e)
    {
        if (e.Added)
        {
            _persistent.Add(e.ClientId);
        }
        else
        {
            _persistent.Remove(e.ClientId);
        }
    }

    private void Checkpoint()
    {
        if (++_eventsSinceSnapshot < SnapshotEvery)
        {
            return;
        }

        _eventsSinceSnapshot = 0;
        var snapshot = new MqttSessionIndexSnapshot();
        snapshot.ClientIds.AddRange(_persistent);
        SaveSnapshot(snapshot);
    }

    private void AnswerReadyIfDone()
    {
        if (!_recovered || _recovering.Count > 0 || _awaitingReady.Count == 0)
        {
            return;
        }

        // The capture subscriptions the sessions asked for are in effect once the client's PING comes back.
        var flushed = Task.WhenAll(_captureClients.Values.Select(client => client.FlushAsync()));
        foreach (var waiting in _awaitingReady)
        {
            flushed.PipeTo(waiting, success: () => Readiness.Ready.Instance);
        }

        _awaitingReady.Clear();
    }

    /// <summary>The messages of the session actors.</summary>
    public static class Protocol
    {
        /// <summary>A connection's CONNECT for <see cref="ClientId"/> was accepted: it now holds the session.</summary>
        public sealed class Attach
        {
            public Attach(string clientId, bool cleanSession, IActorRef connection, MqttConnection client, Account account)
            {
                ArgumentNullException.ThrowIfNull(clientId);
                ArgumentNullException.ThrowIfNull(connection);
                ArgumentNullException.ThrowIfNull(client);
                ArgumentNullException.ThrowIfNull(account);
                ClientId = clientId;
                Key = MqttAccountScope.Key(account, clientId);
                CleanSession = cleanSession;
                Connection = connection;
                Client = client;
            }

            public string ClientId { get; }

            /// <summary>The session's key: the client id within the account its client logged into.</summary>
            public string Key { get; }

            public bool CleanSession { get; }

            /// <summary>The connection's actor: closed if another CONNECT takes the session over.</summary>
            public IActorRef Connection { get; }

            /// <summary>The connection itself: a persistent session hands it stored messages to send.</summary>
            public MqttConnection Client { get; }

            public override string ToString() => $"Attach({Key.Replace('\0', '/')}, clean={CleanSession})";
        }

        /// <summary>
        /// The reply to <see cref="Attach"/>: the CONNACK's session present flag, the subscriptions to
        /// restore and the stored messages to send again (a persistent session that existed).
        /// </summary>
        public sealed record Attached(string ClientId, bool SessionPresent, IReadOnlyList<MqttSessionSubscription> Subscriptions, IReadOnlyList<MqttStoredMessage> Pending)
        {
            /// <summary>The session actor (the sender of this reply).</summary>
            public IActorRef Session { get; init; } = ActorRefs.Nobody;

            /// <summary>QoS 2 deliveries past PUBREC: their PUBREL goes again with the same packet id. [MQTT-4.4.0-1]</summary>
            public IReadOnlyList<ushort> Released { get; init; } = [];

            /// <summary>The packet ids <see cref="Pending"/> messages were sent with, by session sequence: sent again with them. [MQTT-4.4.0-1]</summary>
            public IReadOnlyDictionary<long, ushort> PacketIds { get; init; } = new Dictionary<long, ushort>();

            /// <summary>Inbound QoS 2 packet ids routed and not yet released: a re-sent PUBLISH is not routed again.</summary>
            public IReadOnlyList<ushort> Qos2Received { get; init; } = [];
        }

        /// <summary>
        /// From a session with nothing left to keep and no connection (a clean session whose connection ended,
        /// a session that ended or expired, once its journal is deleted), after <see cref="Attaches"/> attaches:
        /// it is stopped, and leaves the index, unless another attach was sent to it since.
        /// </summary>
        public sealed record Idle(int Attaches);

        /// <summary>Asks for <see cref="SessionCounts"/> (monitoring and tests).</summary>
        public sealed class CountSessions
        {
            public static readonly CountSessions Instance = new();

            private CountSessions()
            {
            }
        }

        /// <summary>The session actors alive, and the client ids the index keeps as persistent (recovered at a restart).</summary>
        public sealed record SessionCounts(int Actors, int Persistent);
    }
}
