using System.Buffers;
using System.Text;
using Akka.Actor;
using Akka.Event;
using Akka.Persistence;
using Courier.Actors.Connections;
using Courier.Protocols.Mqtt;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Mqtt;

/// <summary>
/// The MQTT session of one client id, an Akka.Persistence actor on the node's journal. It knows
/// which connection holds the session now: a CONNECT with a client id already held takes the
/// session over (the previous connection is closed, as nats-server and mosquitto do).
/// </summary>
/// <remarks>
/// <para>A clean session persists nothing and ends with its connection [MQTT-3.1.2-6]; connecting
/// with a clean session discards a persistent session's state.</para>
/// <para>A persistent session (clean_session=0) journals its subscriptions and keeps every QoS 1/2
/// message for them until the client acknowledges it, across reconnects and restarts [MQTT-3.1.2-4,5].
/// For each QoS 1/2 subscription it holds a capture subscription of its own (through the node's
/// in-process capture client, called on each publisher's thread), whether the client is connected or not, and takes from it only the messages
/// published at QoS 1 or 2 (nats-server's <c>Nmqtt-Pub</c> header): those are journaled, then
/// handed to the connection, which sends them through its in-flight window. The connection's own
/// subscription passes such messages over (<see cref="Routing.Subscription.MqttSessionCaptured"/>)
/// and delivers the rest (QoS 0) directly, so QoS 0 traffic never reaches this actor (DESIGN.md §3).
/// Acknowledgements come back in batches, one message per read batch of the client.</para>
/// </remarks>
internal sealed partial class MqttSessionActor : ReceivePersistentActor, IWithTimers
{
    /// <summary>The close reason of a connection whose client id a newer CONNECT took (nats-server's text).</summary>
    internal const string DuplicateClientId = "Duplicate Client ID";

    internal const int SnapshotEvery = 1000;

    private readonly string _clientId;
    private readonly Func<InProcessClient> _captureClient;
    private readonly MqttCaptureLedger _ledger;
    private readonly MqttWillPublisher _willPublisher;
    private readonly Dictionary<string, MqttSessionSubscription> _subscriptions = new(StringComparer.Ordinal);
    private readonly SortedDictionary<long, MqttStoredMessage> _pending = [];
    private readonly Dictionary<string, List<string>> _captureSids = new(StringComparer.Ordinal);
    private readonly HashSet<ushort> _releasedOut = [];
    private readonly HashSet<ushort> _receivedIn = [];
    private readonly Dictionary<long, ushort> _packetIds = []; // in memory, as nats-server: a restart sends with new ids
    private readonly List<(long Seq, ushort PacketId)> _assigned = [];
    private readonly SessionClient _current = new();
    private IActorRef? _connection;
    private MqttConnection? _client;
    private bool _clean = true;
    private IActorRef? _lastConnection; // the connection before the last Terminated (a late End names it)
    private bool _ended; // emptied by End: kept, empty, until its journal is deleted (then the parent stops it) or a CONNECT comes
    private IActorRef? _endsWith; // MQTT 5.0 Session Expiry Interval 0: the session ends with this connection
    private long _generation; // bumped by Discard: journal-write callbacks of an older generation do not apply
    private int _attaches; // CONNECTs attached to this session, to tell the parent which ones it has seen
    private bool _exists;
    private bool _ready;
    private long _sentUpTo;
    private long _nextSeq = 1;
    private long _appliedSeq;
    private int _eventsSinceSnapshot;

    public MqttSessionActor(string clientId, Func<InProcessClient> captureClient, MqttCaptureLedger ledger, MqttWillPublisher willPublisher)
    {
        _clientId = clientId;
        _captureClient = captureClient;
        _ledger = ledger;
        _willPublisher = willPublisher;
        Recover<SnapshotOffer>(offer =>
        {
            var snapshot = (MqttSessionSnapshot)offer.Snapshot;
            _exists = true;
            _nextSeq = snapshot.NextSeq;
            _appliedSeq = snapshot.NextSeq - 1;
            foreach (var subscription in snapshot.Subscriptions)
            {
                _subscriptions[subscription.Filter] = subscription;
            }

            foreach (var message in snapshot.Pending)
            {
                _pending[message.Seq] = message;
            }

            _releasedOut.UnionWith(snapshot.Released);
            _receivedIn.UnionWith(snapshot.InReceived);
            _expiry = snapshot.ExpiryInterval;
            _journaledWill = snapshot.Will;
        });
        Recover<MqttSessionEvent>(Apply);
        Recover<RecoveryCompleted>(_ =>
        {
            if (_exists)
            {
                _clean = false;
                foreach (var (filter, subscription) in _subscriptions)
                {
                    UpdateCapture(filter, subscription.QoS);
                }

                StartExpiry(); // no connection after a restart: its Session Expiry Interval runs from now
                ResumeWill(); // a will that was waiting for its delay when the server stopped
            }

            Context.Parent.Tell(new Protocol.Recovered(_clientId));
            if (!_exists)
            {
                BecomeIdle(); // an index entry with no session behind it (ended before a restart): it goes too
            }
        });

        Command<MqttSessions.Protocol.Attach>(OnAttach);
        ReceiveExpiryAndWill();
        Command<Protocol.Ready>(ready =>
        {
            if (!ready.Connection.Equals(_connection))
            {
                return;
            }

            _ready = true;
            var late = new List<MqttStoredMessage>();
            foreach (var message in _pending.Values)
            {
                if (message.Seq > _sentUpTo)
                {
                    late.Add(message);
                }
            }

            Send(late);
        });
        Command<Protocol.Subscribe>(subscribe =>
        {
            var change = new MqttSessionEvent(MqttSessionEventKind.Subscribed);
            change.Subscriptions.AddRange(subscribe.Subscriptions);
            PersistThenFlush(change, Sender);
        });
        Command<Protocol.Unsubscribe>(unsubscribe =>
        {
            var change = new MqttSessionEvent(MqttSessionEventKind.Unsubscribed);
            change.Filters.AddRange(unsubscribe.Filters);
            PersistThenFlush(change, Sender);
        });
        Command<Protocol.Captured>(OnCaptured);
        Command<Protocol.Qos2In>(qos2 =>
        {
            var replyTo = Sender;
            if (_clean)
            {
                replyTo.Tell(Protocol.Qos2InStored.Instance);
                return;
            }

            var change = new MqttSessionEvent(MqttSessionEventKind.Qos2In);
            (qos2.Received ? change.InReceived : change.InReleased).Add(qos2.PacketId);
            var generation = _generation;
            PersistAsync(change, e =>
            {
                if (generation == _generation)
                {
                    Apply(e);
                    Checkpoint();
                }

                replyTo.Tell(Protocol.Qos2InStored.Instance);
            });
        });
        Command<Protocol.Acked>(acked =>
        {
            if (_clean)
            {
                return;
            }

            foreach (var (seq, packetId) in acked.Assigned)
            {
                if (_pending.ContainsKey(seq))
                {
                    _packetIds[seq] = packetId;
                }
            }

            foreach (var seq in acked.Seqs)
            {
                _packetIds.Remove(seq);
            }

            var change = new MqttSessionEvent(MqttSessionEventKind.Acked);
            foreach (var seq in acked.Seqs)
            {
                if (_pending.ContainsKey(seq))
                {
                    change.Acked.Add(seq);
                }
            }

            change.Released.AddRange(acked.Released);
            change.Completed.AddRange(acked.Completed);
            if (change.Acked.Count > 0 || change.Released.Count > 0 || change.Completed.Count > 0)
            {
                var generation = _generation;
                PersistAsync(change, e =>
                {
                    if (generation == _generation)
                    {
                        Apply(e);
                        Checkpoint();
                    }
                });
            }
        });
        Command<Protocol.End>(end =>
        {
            if (end.Connection.Equals(_connection))
            {
                _endsWith = _connection; // ends at its Terminated, or when another connection takes it over
            }
            else if (_connection is null && end.Connection.Equals(_lastConnection))
            {
                EndNow(); // its Terminated came first
                BecomeIdle();
            }
        });
        Command<Terminated>(terminated =>
        {
            if (!terminated.ActorRef.Equals(_connection))
            {
                return;
            }

            _lastConnection = _connection;
            if (_endsWith is not null && _endsWith.Equals(_connection))
            {
                EndNow();
            }

            _connection = null;
            _client = null;
            _current.Client = null;
            _ready = false;
            if (!_clean)
            {
                UpdateSharedCaptures(); // offline: the session itself is the group member now
                StartExpiry();
            }

            if (_clean)
            {
                // [MQTT-3.1.2-6]: a clean session lasts as long as its connection (and an ended one is over).
                // The parent stops it, unless a CONNECT for this client id is already on its way here.
                BecomeIdle();
            }
        });
        Command<SaveSnapshotSuccess>(saved =>
        {
            DeleteMessages(saved.Metadata.SequenceNr);
            DeleteSnapshots(new SnapshotSelectionCriteria(saved.Metadata.SequenceNr - 1));
        });
        Command<DeleteMessagesSuccess>(deleted => DeletionAnswered(deleted.ToSequenceNr >= _discardedTo));
        Command<DeleteSnapshotsSuccess>(deleted => DeletionAnswered(deleted.Criteria.MaxSequenceNr == long.MaxValue));
        Command<SaveSnapshotFailure>(failed => Context.GetLogger().Warning(failed.Cause, "MQTT session {0}: snapshot not saved", _clientId));
        Command<DeleteMessagesFailure>(failed =>
        {
            Context.GetLogger().Warning(failed.Cause, "MQTT session {0}: events not deleted", _clientId);
            DeletionAnswered(failed.ToSequenceNr >= _discardedTo);
        });
        Command<DeleteSnapshotsFailure>(failed =>
        {
            Context.GetLogger().Warning(failed.Cause, "MQTT session {0}: old snapshots not deleted", _clientId);
            DeletionAnswered(failed.Criteria.MaxSequenceNr == long.MaxValue);
        });
    }

    // The session's key (MqttAccountScope): the client id alone in the global account, as before accounts.
    public override string PersistenceId => MqttAccountScope.SessionPersistenceId(_clientId);

    public static Props Props(string clientId, Func<InProcessClient> captureClient, MqttCaptureLedger ledger, MqttWillPublisher willPublisher) =>
        Akka.Actor.Props.Create(() => new MqttSessionActor(clientId, captureClient, ledger, willPublisher));

    // Forgets the kept state (journal, subscriptions and their captures, stored messages, packet ids).
    private void Discard()
    {
        // Callbacks of journal writes issued before this (PersistAsync) must not bring the state back: an
        // acknowledgement journaled just before a Session Expiry Interval 0 ended the session set it alive again,
        // and the next CONNECT found a session (about 1 in 3 runs of the resume test under load).
        _generation++;
        if (!_exists)
        {
            return;
        }

        // Up to the last sequence number given out, journal writes still in flight (PersistAsync) included, and only
        // once those are written: a journal deletes what it holds when the delete arrives, so an acknowledgement
        // written just after it outlived the deletion, and the next actor of this client id (the index stops this
        // one once it has ended) replayed it into a session that existed again (CI: a resumed session present
        // after its Session Expiry Interval 0 ended it).
        var upTo = LastSequenceNr;
        _discardedTo = upTo;
        DeferAsync(upTo, to =>
        {
            DeleteMessages(to);
            DeleteSnapshots(SnapshotSelectionCriteria.Latest);
        });
        _deletesInFlight += 2; // the parent stops this actor only after both: a new one must not replay what goes
        foreach (var filter in _captureSids.Keys.ToList())
        {
            UpdateCapture(filter, 0);
        }

        _subscriptions.Clear();
        _pending.Clear();
        _packetIds.Clear();
        _releasedOut.Clear();
        _receivedIn.Clear();
        _expiry = uint.MaxValue;
        _journaledWill = null;
        _exists = false;
    }

    // MQTT 5.0 Session Expiry Interval 0 or its expiry: the session ended [MQTT-3.1.2-11], [MQTT-3.1.2-23]. The
    // state goes; the actor stays, empty, until the journal's deletion is answered (a new actor could replay
    // what is being deleted), so that a CONNECT meanwhile finds no session; then, with no connection, the
    // parent stops it and drops its index entry (BecomeIdle).
    private void EndNow()
    {
        PublishPendingWill(ending: true); // the session's end publishes a will still waiting for its delay [MQTT-3.1.3.2.2]
        Discard();
        _clean = true;
        _ended = true;
        _endsWith = null;
    }

    private void OnAttach(MqttSessions.Protocol.Attach attach)
    {
        _attaches++;
        _idle = false;
        var droppedWill = CancelExpiryAndWill(); // connected again in time: the session stays and its will is not sent [MQTT-3.1.3-9]
        if (_endsWith is not null && _endsWith.Equals(_connection) && !_endsWith.Equals(attach.Connection))
        {
            EndNow(); // taken over: the old connection's session ends with it, so the new one does not resume it
        }

        _ended = false;
        _endsWith = null;
        if (_connection is not null && !_connection.Equals(attach.Connection))
        {
            Context.Unwatch(_connection);
            _connection.Tell(new ConnectionActor.Protocol.Close(DuplicateClientId));
        }

        _connection = attach.Connection;
        _client = attach.Client;
        _current.Client = attach.Client;
        _ready = false;
        Context.Watch(_connection);
        UpdateSharedCaptures(); // connected: the connection's subscription is the group member
        var replyTo = Sender;
        if (attach.CleanSession)
        {
            // [MQTT-3.1.2-6]: a clean session discards any previous session's state.
            Discard();
            _clean = true;
            replyTo.Tell(new MqttSessions.Protocol.Attached(_clientId, false, [], []) { Session = Self });
            return;
        }

        _clean = false;
        if (droppedWill)
        {
            PersistAsync(new MqttSessionEvent(MqttSessionEventKind.Will), _ => Checkpoint()); // a restart does not bring it back
        }

        if (!_exists)
        {
            Persist(new MqttSessionEvent(MqttSessionEventKind.Created), e =>
            {
                Apply(e);
                replyTo.Tell(new MqttSessions.Protocol.Attached(_clientId, false, [], []) { Session = Self });
            });
            return;
        }

        // [MQTT-3.2.2-2]: session present, with what the connection restores and sends again [MQTT-4.4.0-1],
        // once the acknowledgements journaled before this CONNECT (PersistAsync) have been applied.
        DeferAsync(attach, _ =>
        {
            var pending = Unexpired(_pending.Values.ToList());
            _sentUpTo = _appliedSeq; // stored after this (journal writes in flight included) goes out at Ready
            replyTo.Tell(new MqttSessions.Protocol.Attached(
                _clientId, true, [.. _subscriptions.Values], pending)
            {
                Session = Self,
                PacketIds = new Dictionary<long, ushort>(_packetIds),
                Released = [.. _releasedOut],
                Qos2Received = [.. _receivedIn],
            });
        });
    }

    private void PersistThenFlush(MqttSessionEvent change, IActorRef replyTo)
    {
        if (_clean)
        {
            replyTo.Tell(Protocol.SubscriptionsDone.Instance);
            return;
        }

        Persist(change, e =>
        {
            Apply(e);
            foreach (var (filter, qos, _, _, _) in e.Subscriptions)
            {
                UpdateCapture(filter, qos);
            }

            foreach (var filter in e.Filters)
            {
                UpdateCapture(filter, 0);
            }

            Checkpoint();

            // SUBACK once the capture subscriptions are in effect: a QoS 1 publish right after it is kept.
            _captureClient().FlushAsync().PipeTo(replyTo, success: () => Protocol.SubscriptionsDone.Instance);
        });
    }

    private void OnCaptured(Protocol.Captured captured)
    {
        if (_clean || !_subscriptions.TryGetValue(captured.Filter, out var subscription) || subscription.QoS == 0)
        {
            _ledger.Resolve(captured.Numbers); // not kept: nothing for a PUBACK to wait for
            return;
        }

        var change = new MqttSessionEvent(MqttSessionEventKind.Stored);
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        foreach (var message in captured.Messages)
        {
            var qos = Math.Min(PublishedQoS(message.Headers), subscription.QoS);
            if (qos == 0)
            {
                continue; // QoS 0 reached the client through its own subscription, or not at all when offline.
            }

            var topic = new byte[MqttTopics.MaxSubjectLength(Encoding.UTF8.GetByteCount(message.Subject))];
            var length = MqttTopics.SubjectToTopic(Encoding.UTF8.GetBytes(message.Subject), topic);
            var headers = message.Headers ?? [];
            var expiresAt = MqttNatsHeaders.TryGetMessageExpiry(headers, out var seconds) ? now + (seconds * 1000L) : 0; // [MQTT-3.3.2-5]
            change.Messages.Add(new MqttStoredMessage(
                _nextSeq++, topic[..length], message.Payload, (byte)qos, headers, expiresAt, subscription.SubscriptionId, message.Retained && subscription.RetainAsPublished)); // [MQTT-3.3.1-12]
        }

        if (change.Messages.Count == 0)
        {
            _ledger.Resolve(captured.Numbers);
            return;
        }

        var generation = _generation;
        PersistAsync(change, e =>
        {
            _ledger.Resolve(captured.Numbers); // journaled: the publishers' PUBACKs may go
            if (generation != _generation)
            {
                return; // the session was discarded meanwhile: this belongs to the state that went
            }

            Apply(e);
            Checkpoint();
            if (_ready)
            {
                Send(e.Messages);
            }
        });
    }

    // MQTT 5.0 Message Expiry Interval: a stored message past its expiry that was never sent is deleted
    // instead of delivered [MQTT-3.3.2-5] (one sent before goes again: its delivery had started). The
    // deletion is journaled as an acknowledgement, so it does not come back after a restart.
    private List<MqttStoredMessage> Unexpired(List<MqttStoredMessage> messages)
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        MqttSessionEvent? expired = null;
        var live = new List<MqttStoredMessage>(messages.Count);
        foreach (var message in messages)
        {
            if (message.ExpiresAt != 0 && now >= message.ExpiresAt && !_packetIds.ContainsKey(message.Seq))
            {
                (expired ??= new MqttSessionEvent(MqttSessionEventKind.Acked)).Acked.Add(message.Seq);
                _pending.Remove(message.Seq);
                continue;
            }

            live.Add(message);
        }

        if (expired is not null && !_clean)
        {
            var generation = _generation;
            PersistAsync(expired, e =>
            {
                if (generation == _generation)
                {
                    Apply(e);
                    Checkpoint();
                }
            });
        }

        return live;
    }

    private void Send(List<MqttStoredMessage> messages)
    {
        messages = Unexpired(messages);
        if (_client is { } client && messages.Count > 0)
        {
            client.DeliverFromMqttSession(messages);
            _sentUpTo = Math.Max(_sentUpTo, messages[^1].Seq);
            client.DrainMqttAssignedIds(_assigned);
            foreach (var (seq, packetId) in _assigned)
            {
                _packetIds[seq] = packetId;
            }

            _assigned.Clear();
        }
    }

    private void Apply(MqttSessionEvent e)
    {
        _exists = true;
        switch (e.Kind)
        {
            case MqttSessionEventKind.Subscribed:
                foreach (var subscription in e.Subscriptions)
                {
                    _subscriptions[subscription.Filter] = subscription;
                }

                break;
            case MqttSessionEventKind.Unsubscribed:
                foreach (var filter in e.Filters)
                {
                    _subscriptions.Remove(filter);
                }

                break;
            case MqttSessionEventKind.Stored:
                foreach (var message in e.Messages)
                {
                    _pending[message.Seq] = message;
                    _nextSeq = Math.Max(_nextSeq, message.Seq + 1);
                    _appliedSeq = Math.Max(_appliedSeq, message.Seq);
                }

                break;
            case MqttSessionEventKind.Acked:
                foreach (var seq in e.Acked)
                {
                    _pending.Remove(seq);
                }

                _releasedOut.UnionWith(e.Released);
                _releasedOut.ExceptWith(e.Completed);
                break;
            case MqttSessionEventKind.Qos2In:
                _receivedIn.UnionWith(e.InReceived);
                _receivedIn.ExceptWith(e.InReleased);
                break;
            case MqttSessionEventKind.Expiry:
                _expiry = e.ExpiryInterval;
                break;
            case MqttSessionEventKind.Will:
                _journaledWill = e.Will;
                break;
        }
    }

    private void Checkpoint()
    {
        if (++_eventsSinceSnapshot < SnapshotEvery)
        {
            return;
        }

        _eventsSinceSnapshot = 0;
        var snapshot = new MqttSessionSnapshot { NextSeq = _nextSeq };
        snapshot.Subscriptions.AddRange(_subscriptions.Values);
        snapshot.Pending.AddRange(_pending.Values);
        snapshot.Released.AddRange(_releasedOut);
        snapshot.InReceived.AddRange(_receivedIn);
        snapshot.ExpiryInterval = _expiry;
        snapshot.Will = _journaledWill;
        SaveSnapshot(snapshot);
    }

    // The capture subscription(s) of one filter: present for QoS 1/2, absent for QoS 0 or removed. A shared
    // subscription ("$share/{group}/{filter}") is captured in its queue group, and only while no connection
    // holds the session: connected, the connection's own subscription is the member (it is not captured),
    // so the group never counts this session twice. [MQTT-4.8.2]
    private void UpdateCapture(string filter, byte qos)
    {
        if (_captureSids.Remove(filter, out var sids))
        {
            foreach (var sid in sids)
            {
                _captureClient().Unsubscribe(sid);
            }
        }

        if (qos == 0 || (_connection is not null && MqttTopics.IsSharedFilter(Encoding.UTF8.GetBytes(filter))))
        {
            return;
        }

        var subjects = FilterSubjects(filter, out var group);
        if (subjects.Count == 0)
        {
            return;
        }

        var self = Self;
        var client = _captureClient();
        var noLocal = _subscriptions.TryGetValue(filter, out var subscription) && subscription.NoLocal ? _current : null;
        sids = [];
        foreach (var subject in subjects)
        {
            sids.Add(client.Subscribe(subject, group, new CaptureSink(self, filter, _ledger, noLocal)));
        }

        _captureSids[filter] = sids;
    }

    // Shared subscriptions are captured only while the session has no connection (see UpdateCapture).
    private void UpdateSharedCaptures()
    {
        foreach (var (filter, subscription) in _subscriptions)
        {
            if (MqttTopics.IsSharedFilter(Encoding.UTF8.GetBytes(filter)))
            {
                UpdateCapture(filter, subscription.QoS);
            }
        }
    }

    /// <summary>
    /// The NATS subjects an MQTT filter subscribes to: one, or two for "x/#" ("x.>" and "x"), as nats-server;
    /// for a shared subscription those of its filter, and its group as <paramref name="group"/>.
    /// </summary>
    internal static List<string> FilterSubjects(string filter, out string? group)
    {
        group = null;
        ReadOnlySpan<byte> filterBytes = Encoding.UTF8.GetBytes(filter);
        if (MqttTopics.IsSharedFilter(filterBytes))
        {
            if (!MqttTopics.TrySplitSharedFilter(filterBytes, out var shareName, out filterBytes))
            {
                return [];
            }

            group = Encoding.UTF8.GetString(shareName);
        }

        var buffer = new byte[MqttTopics.MaxSubjectLength(filterBytes.Length)];
        if (MqttTopics.TryFilterToSubject(filterBytes, buffer, out var length) != MqttTopicError.None
            || !SubjectRules.IsValidSubject(buffer.AsSpan(0, length)))
        {
            return [];
        }

        var subject = buffer.AsSpan(0, length);
        List<string> subjects = [Encoding.UTF8.GetString(subject)];
        if (MqttTopics.NeedsParentLevelSubscription(subject))
        {
            subjects.Add(Encoding.UTF8.GetString(MqttTopics.ParentLevel(subject)));
        }

        return subjects;
    }

    // "NATS/1.0\r\nNmqtt-Pub:1\r\n\r\n": the QoS an MQTT publisher sent with; 0 for NATS publishers.
    private static int PublishedQoS(ReadOnlySpan<byte> headers)
    {
        var at = headers.IndexOf("Nmqtt-Pub:"u8);
        if (at < 0)
        {
            return 0;
        }

        at += "Nmqtt-Pub:".Length;
        while (at < headers.Length && headers[at] == (byte)' ')
        {
            at++;
        }

        return at < headers.Length && headers[at] is >= (byte)'0' and <= (byte)'2' ? headers[at] - '0' : 0;
    }

    /// <summary>The connection holding the session now, as publishers' threads read it (a No Local capture compares it).</summary>
    private sealed class SessionClient
    {
        private volatile MqttConnection? _client;

        public MqttConnection? Client
        {
            get => _client;
            set => _client = value;
        }
    }

    /// <summary>
    /// The capture subscription's sink, called on each publisher's thread: it copies only the
    /// messages published at QoS 1/2 (QoS 0 ones, most of the traffic, cost nothing here) and hands
    /// them to the session once per read batch. For a No Local subscription (<paramref name="noLocal"/>
    /// set) it passes over what the session's own connection published. [MQTT-3.8.3-3]
    /// </summary>
    private sealed class CaptureSink(IActorRef session, string filter, MqttCaptureLedger ledger, SessionClient? noLocal) : DeliverySink
    {
        private List<InternalMessage>? _batch;
        private List<long>? _numbers;

        public override void Add(in InProcessMessage frame)
        {
            if (frame.HeaderSize <= 0)
            {
                return; // no headers: a NATS publish, QoS 0
            }

            if (noLocal is not null && frame.Source is { } source && ReferenceEquals(source, noLocal.Client))
            {
                return; // its own publish, to a No Local subscription
            }

            var headers = frame.Payload.Slice(0, frame.HeaderSize);
            if (PublishedQoS(headers.IsSingleSegment ? headers.FirstSpan : headers.ToArray()) == 0)
            {
                return; // QoS 0: the client's own subscription delivers it, or nobody when it is away
            }

            var all = frame.Payload.ToArray();
            (_batch ??= []).Add(new InternalMessage(Encoding.UTF8.GetString(frame.Subject), null, all[..frame.HeaderSize], all[frame.HeaderSize..]) { Retained = frame.Retained });
            (_numbers ??= []).Add(ledger.Capture()); // numbered as it is read: before the PONG of any later barrier
        }

        public override void Complete()
        {
            if (_batch is { Count: > 0 } batch)
            {
                var numbers = _numbers!;
                _batch = null;
                _numbers = null;
                session.Tell(new Protocol.Captured(filter, batch, numbers));
            }
        }
    }

    /// <summary>The messages between a session and its connection (and <see cref="MqttSessions.Protocol.Attach"/>).</summary>
    public static partial class Protocol
    {
        /// <summary>
        /// MQTT 5.0: the session of <paramref name="Connection"/> ends with that connection (Session Expiry
        /// Interval 0, at CONNECT or at DISCONNECT): its state is discarded when the connection ends or
        /// another one takes the session over. Ignored when another connection already took it. [MQTT-3.1.2-11]
        /// </summary>
        public sealed record End(IActorRef Connection);

        /// <summary>The connection sent CONNACK and the messages it was given: send it the ones stored since.</summary>
        public sealed record Ready(IActorRef Connection);

        /// <summary>SUBSCRIBE of a persistent session (journaled, then <see cref="SubscriptionsDone"/>).</summary>
        public sealed record Subscribe(IReadOnlyList<MqttSessionSubscription> Subscriptions);

        /// <summary>UNSUBSCRIBE of a persistent session (journaled, then <see cref="SubscriptionsDone"/>).</summary>
        public sealed record Unsubscribe(IReadOnlyList<string> Filters);

        /// <summary>The subscription change is journaled and its capture subscriptions are in effect.</summary>
        public sealed class SubscriptionsDone
        {
            public static readonly SubscriptionsDone Instance = new();

            private SubscriptionsDone()
            {
            }
        }

        /// <summary>
        /// Messages the client acknowledged, by session sequence, and the packet ids of QoS 2
        /// deliveries released (PUBREC) or completed (PUBCOMP): one message per read batch.
        /// </summary>
        /// <param name="Seqs">Session sequences of deliveries acknowledged (PUBACK, or PUBREC for QoS 2).</param>
        /// <param name="Released">Packet ids of QoS 2 deliveries released (PUBREC).</param>
        /// <param name="Completed">Packet ids of QoS 2 deliveries completed (PUBCOMP).</param>
        /// <param name="Assigned">The packet ids the connection gave to the session's deliveries, by session sequence.</param>
        public sealed record Acked(IReadOnlyList<long> Seqs, IReadOnlyList<ushort> Released, IReadOnlyList<ushort> Completed, IReadOnlyList<(long Seq, ushort PacketId)> Assigned);

        /// <summary>An inbound QoS 2 packet id was routed (<see cref="Received"/>) or released by PUBREL: journaled, then <see cref="Qos2InStored"/>.</summary>
        public sealed record Qos2In(ushort PacketId, bool Received);

        /// <summary>The <see cref="Qos2In"/> change is in the journal: PUBREC / PUBCOMP may go.</summary>
        public sealed class Qos2InStored
        {
            public static readonly Qos2InStored Instance = new();

            private Qos2InStored()
            {
            }
        }

        /// <summary>One read batch of the capture subscription of <see cref="Filter"/>, with the messages' <see cref="MqttCaptureLedger"/> numbers.</summary>
        public sealed record Captured(string Filter, IReadOnlyList<InternalMessage> Messages, IReadOnlyList<long> Numbers);

        /// <summary>To the parent: recovery is over and the capture subscriptions are requested.</summary>
        public sealed record Recovered(string ClientId);
    }
}
