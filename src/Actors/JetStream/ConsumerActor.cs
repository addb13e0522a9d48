using System.Globalization;
using System.Text;
using Akka.Actor;
using Akka.Event;
using Akka.Persistence;
using Courier.Actors.Connections;
using Courier.Protocols.JetStream;
using Courier.Protocols.Subjects;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// One JetStream consumer (a child of its <see cref="StreamActor"/>): delivery state (delivered,
/// ack floor, pending acks, redeliveries), pull requests and push delivery. It reads the stream's
/// store directly (the store is thread-safe). A durable consumer of a file stream is a persistent
/// actor: each ack batch, and the deliveries of every tick, become one <see cref="ConsumerDelta"/>
/// event in the FileStore journal (group-committed with every other consumer's), with a snapshot
/// every <see cref="SnapshotEvery"/> events; double acks are confirmed once their event is stored.
/// </summary>
internal sealed partial class ConsumerActor : ReceivePersistentActor, IWithTimers
{
    /// <summary>Events between snapshots (after a snapshot the events below it are deleted).</summary>
    internal const int SnapshotEvery = 1000;

    /// <summary>How often ack deadlines, pull-request expiry and heartbeats are checked.</summary>
    private static readonly TimeSpan TickInterval = TimeSpan.FromMilliseconds(50);

    /// <summary>
    /// How often an idle pull consumer ticks (nothing pending, no waiting request, nothing to store): it
    /// has only its inactivity to check, and each tick wakes a pool thread. A pull request (or +NXT)
    /// puts it back on <see cref="TickInterval"/> at once.
    /// </summary>
    private static readonly TimeSpan IdleTickInterval = TimeSpan.FromSeconds(1);

    private static readonly long DefaultAckWait = TimeSpan.FromSeconds(30).Ticks * 100; // ns, nats-server default

    private readonly InProcessClient _client;
    private readonly InProcessPublisher _out;
    private readonly IStreamStore _store;
    private readonly string _stream;
    private readonly string _name;
    private readonly ConsumerConfig _config;
    private readonly DateTime _created;
    private readonly string? _persistenceId;
    private readonly ConsumerContext _context;
    private readonly byte[] _ackPrefix;
    private DateTime _lastActivity = DateTime.UtcNow;
    private bool _idleTicking; // on IdleTickInterval, not TickInterval
    private readonly PendingMap<Pending> _pending = new();
    private readonly SortedSet<ulong> _redeliver = [];

    // No pending delivery's ack wait (or NAK delay) ends before this: the tick scans _pending only once it
    // has passed, not every 50 ms. Lowered whenever a deadline is set; a stale, earlier value only means
    // one scan too many, which recomputes it.
    private long _nextDeadlineTicks = long.MaxValue;
    private readonly LinkedList<Waiting> _waiting = new();
    private readonly Queue<ulong> _lastPerSubject = new();
    private readonly SortedList<ulong, StoredMessage> _displaced = []; // handed over by the stream as they were removed (DisplacedMessages)
    private readonly List<ulong> _released = []; // acknowledged since the last ReportInterest (interest retention)
    private ulong _nextSeq;
    private ulong _deliveredStream;
    private ulong _deliveredConsumer;
    private ulong _ackFloorStream;
    private ulong _ackFloorConsumer;
    private long _passPending = -1;
    private DateTime _passNow; // read once per Deliver pass, not per message
    private DateTime _lastPushActivity = DateTime.UtcNow;
    private ConsumerDelta _delta = new();
    private bool _positionsChanged;
    private bool _recovered;
    private int _eventsSinceSnapshot;
    private ConsumerInfoResponse? _initialInfo; // the create reply: the state before the first delivery, as nats-server

    public ConsumerActor(InProcessClient client, IStreamStore store, string stream, ConsumerConfig config, DateTime created, string? persistenceId, ConsumerContext context)
    {
        _context = context;
        _client = client;
        _out = client.CreatePublisher();
        _store = store;
        _stream = stream;
        _config = config;
        _name = config.DurableName ?? config.Name!;
        _created = created;
        _persistenceId = persistenceId;
        _ackPrefix = AckReply.MakePrefix(stream, _name);
        if (_config.AckWait <= 0)
        {
            _config.AckWait = DefaultAckWait;
        }

        // A new consumer starts here; a recovered one replaces this with its journal's state.
        _nextSeq = StartSequence();
        _deliveredStream = _nextSeq - 1;
        _ackFloorStream = _deliveredStream;
        if (_config.DeliverPolicy == DeliverPolicy.LastPerSubject)
        {
            // The last message of every matching subject first, then what arrives after.
            var filter = _config.FilterSubject is { Length: > 0 } f ? f : null;
            foreach (var subject in _store.SubjectsState(filter).Values.Select(v => v.Last).Order())
            {
                _lastPerSubject.Enqueue(subject);
            }

            _nextSeq = _store.State().LastSeq + 1;
            _deliveredStream = _lastPerSubject.Count > 0 ? _lastPerSubject.Peek() - 1 : _nextSeq - 1;
            _ackFloorStream = _deliveredStream;
        }

        Recover<SnapshotOffer>(offer => ApplySnapshot((ConsumerSnapshot)offer.Snapshot));
        Recover<ConsumerDelta>(ApplyDelta);
        Recover<RecoveryCompleted>(_ => Started());
        Command<Protocol.NewMessages>(_ => Deliver());
        Command<Protocol.Next>(Next);
        Command<Protocol.Acks>(acks => OnAcks(acks.Entries));
        Command<Protocol.FlowControlResponse>(OnFlowControlResponse);
        Command<Protocol.Tick>(_ => Tick());
        Command<Protocol.GetInfo>(_ => Sender.Tell(Info("io.nats.jetstream.api.v1.consumer_info_response")));
        Command<Protocol.GetCreatedInfo>(_ =>
        {
            Sender.Tell(_initialInfo ?? Info("io.nats.jetstream.api.v1.consumer_info_response"));
            _initialInfo = null;
        });
        Command<SaveSnapshotSuccess>(saved =>
        {
            // The snapshot holds everything up to it: drop the events and the older snapshots below it.
            DeleteMessages(saved.Metadata.SequenceNr);
            DeleteSnapshots(new SnapshotSelectionCriteria(saved.Metadata.SequenceNr - 1));
        });
        Command<DeleteMessagesSuccess>(_ => { });
        Command<DeleteSnapshotsSuccess>(_ => { });

        // A snapshot or cleanup that failed costs a longer replay next time, nothing more: the events
        // below a snapshot are deleted only after it was saved.
        Command<SaveSnapshotFailure>(failed => Log.Warning(failed.Cause, "consumer {0}: snapshot at {1} not saved", _name, failed.Metadata.SequenceNr));
        Command<DeleteMessagesFailure>(failed => Log.Warning(failed.Cause, "consumer {0}: events to {1} not deleted", _name, failed.ToSequenceNr));
        Command<DeleteSnapshotsFailure>(failed => Log.Warning(failed.Cause, "consumer {0}: old snapshots not deleted", _name));
        Command<Protocol.Delete>(_ =>
        {
            foreach (var waiting in _waiting)
            {
                Status(waiting.Reply, "409 Consumer Deleted");
            }

            if (_persistenceId is not null)
            {
                DeleteMessages(long.MaxValue);
                DeleteSnapshots(SnapshotSelectionCriteria.Latest);
            }

            Sender.Tell(Protocol.Deleted.Instance);
            Context.Stop(Self);
        });
    }

    /// <summary>The journal id: stream, consumer and creation time, so a later consumer of the same name starts afresh.</summary>
    public override string PersistenceId => _persistenceId ?? $"$JS/{_stream}/{_name}/transient";

    /// <summary>Only durable consumers of file streams have a journal; the others start fresh.</summary>
    public override Recovery Recovery => _persistenceId is null ? Recovery.None : Recovery.Default;

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    public string Name => _name;

    /// <summary>
    /// What this actor publishes during a turn goes through the publish pipeline as one batch, on this
    /// thread, at the end of the turn (<see cref="InProcessPublisher"/>): no thread-pool hop per reply.
    /// </summary>
    protected override bool AroundReceive(Receive receive, object message)
    {
        _out.BeginTurn();
        try
        {
            return base.AroundReceive(receive, message);
        }
        finally
        {
            _out.EndTurn();
        }
    }

    public static Props Props(InProcessClient client, IStreamStore store, string stream, ConsumerConfig config, DateTime created, string? persistenceId, ConsumerContext context) =>
        Akka.Actor.Props.Create(() => new ConsumerActor(client, store, stream, config, created, persistenceId, context));

    /// <summary>The journal id of a durable consumer created at <paramref name="created"/>.</summary>
    public static string PersistenceIdFor(string stream, string consumer, DateTime created) =>
        $"$JS/{stream}/{consumer}/{created.ToUniversalTime().Ticks.ToString(CultureInfo.InvariantCulture)}";

    protected override void PreStart() => Timers.StartPeriodicTimer("tick", Protocol.Tick.Instance, TickInterval);

    /// <summary>Recovery is over (or there was none): continue from the recovered state and start delivering.</summary>
    private void Started()
    {
        if (_recovered)
        {
            foreach (var seq in _pending.Keys())
            {
                // Delivered before the restart and never acknowledged: redeliver.
                _redeliver.Add(seq);
            }

            // A snapshot may be newer than the events replayed over it: never restart below a pending delivery.
            if (_pending.Count > 0)
            {
                _deliveredStream = Math.Max(_deliveredStream, _pending.MaxKey());
                _deliveredConsumer = Math.Max(_deliveredConsumer, _pending.Values.Max(p => p.ConsumerSeq));
            }

            _nextSeq = _deliveredStream + 1;
            AdvanceAckFloor();
        }

        StartFlowControl();
        _context.Interest?.Begin(_ackFloorStream, _deliveredStream, _pending.ContainsKey);
        if (!_recovered)
        {
            // A new durable stores where it starts (its deliver policy is evaluated once, now).
            _positionsChanged = true;
            Checkpoint(null);

            // A push consumer delivers at once (below), before its create reply goes out. The reply
            // shows the state before that, as nats-server's does: clients read num_pending in it as
            // "messages to come" (NATS.Net's KV GetKeysAsync lists nothing when it is 0).
            _initialInfo = Info("io.nats.jetstream.api.v1.consumer_info_response");
        }

        Deliver();
    }

    private void ApplySnapshot(ConsumerSnapshot snapshot)
    {
        Reset();
        _deliveredStream = snapshot.DeliveredStream;
        _deliveredConsumer = snapshot.DeliveredConsumer;
        _ackFloorStream = snapshot.AckFloorStream;
        _ackFloorConsumer = snapshot.AckFloorConsumer;
        foreach (var p in snapshot.Pending)
        {
            _pending[p.StreamSeq] = new Pending(p.ConsumerSeq, p.Deliveries, 0);
        }
    }

    private void ApplyDelta(ConsumerDelta delta)
    {
        if (!_recovered)
        {
            Reset();
        }

        _deliveredStream = delta.DeliveredStream;
        _deliveredConsumer = delta.DeliveredConsumer;
        _ackFloorStream = delta.AckFloorStream;
        _ackFloorConsumer = delta.AckFloorConsumer;
        foreach (var p in delta.Delivered)
        {
            _pending[p.StreamSeq] = new Pending(p.ConsumerSeq, p.Deliveries, 0);
        }

        foreach (var seq in delta.Removed)
        {
            _pending.Remove(seq);
        }

        _eventsSinceSnapshot++;
    }

    // The first recovered snapshot or event replaces the state the constructor set up for a new consumer.
    private void Reset()
    {
        _recovered = true;
        _lastPerSubject.Clear();
        _pending.Clear();
        _eventsSinceSnapshot = 0;
    }

    /// <summary>
    /// Persists what changed since the last checkpoint as one event; <paramref name="confirmations"/>
    /// (double-ack replies) go out once it is stored. Consumers without a journal confirm at once.
    /// </summary>
    private void Checkpoint(List<string>? confirmations)
    {
        if (_persistenceId is null || (_delta.IsEmpty && !_positionsChanged))
        {
            Confirm(confirmations);
            return;
        }

        var delta = _delta;
        _delta = new ConsumerDelta();
        _positionsChanged = false;
        delta.DeliveredStream = _deliveredStream;
        delta.DeliveredConsumer = _deliveredConsumer;
        delta.AckFloorStream = _ackFloorStream;
        delta.AckFloorConsumer = _ackFloorConsumer;
        PersistAsync(delta, _ =>
        {
            Confirm(confirmations);
            if (++_eventsSinceSnapshot >= SnapshotEvery)
            {
                _eventsSinceSnapshot = 0;
                SaveSnapshot(TakeSnapshot());
            }
        });
    }

    private void Confirm(List<string>? confirmations)
    {
        foreach (var reply in confirmations ?? [])
        {
            _out.Publish(reply, null, default, default);
        }
    }

    private ConsumerSnapshot TakeSnapshot()
    {
        var snapshot = new ConsumerSnapshot
        {
            DeliveredStream = _deliveredStream,
            DeliveredConsumer = _deliveredConsumer,
            AckFloorStream = _ackFloorStream,
            AckFloorConsumer = _ackFloorConsumer,
        };
        foreach (var (seq, p) in _pending)
        {
            snapshot.Pending.Add(new PendingRecord(seq, p.ConsumerSeq, p.Deliveries));
        }

        return snapshot;
    }

    private bool IsPush => _config.DeliverSubject is not null;

    private ulong StartSequence()
    {
        var state = _store.State();
        return _config.DeliverPolicy switch
        {
            DeliverPolicy.Last => Math.Max(LastFilteredSequence(state.LastSeq), 1),
            DeliverPolicy.New => state.LastSeq + 1,
            DeliverPolicy.ByStartSequence => Math.Max(_config.OptStartSeq, 1),
            DeliverPolicy.ByStartTime when _config.OptStartTime is { } time =>
                Math.Max(_store.GetSequenceFromTime((time.ToUniversalTime() - DateTime.UnixEpoch).Ticks * 100), 1),
            _ => Math.Max(state.FirstSeq, 1),
        };
    }

    /// <summary>deliver_policy last: the stream's last message, or with filters the last one they match (nats-server's FilteredState.Last).</summary>
    private ulong LastFilteredSequence(ulong streamLast)
    {
        var filters = ConsumerConfigRules.Filters(_config);
        if (filters.Count == 0)
        {
            return streamLast;
        }

        ulong last = 0;
        foreach (var filter in filters)
        {
            last = Math.Max(last, _store.FilteredState(1, filter).Last);
        }

        return last;
    }

    /// <summary>Delivers redeliveries first, then new messages, while someone waits and the ack window allows.</summary>
    private void Deliver()
    {
        _passPending = -1;
        _passNow = DateTime.UtcNow;
        _deliveryPass++;
        var maxAckPending = _config.MaxAckPending > 0 ? _config.MaxAckPending : long.MaxValue;
        var atAckLimit = false;

        // A push consumer delivers only while someone subscribes to its deliver subject, as nats-server:
        // messages wait in the stream meanwhile (the tick looks again).
        var pushReady = IsPush && _context.HasInterest(_config.DeliverSubject!);
        while (IsPush ? pushReady && !FlowControlStalled : _waiting.Count > 0)
        {
            if (_config.AckPolicy != AckPolicy.None && _pending.Count >= maxAckPending && _redeliver.Count == 0)
            {
                atAckLimit = true;
                break;
            }

            StoredMessage? message = null;
            var redelivery = false;
            while (_redeliver.Count > 0 && message is null)
            {
                var seq = _redeliver.Min;
                _redeliver.Remove(seq);
                if (_config.MaxDeliver > 0 && _pending.TryGetValue(seq, out var exhausted) && exhausted.Deliveries >= _config.MaxDeliver)
                {
                    DeliveriesExhausted(seq, exhausted);
                    continue;
                }

                if (_pending.ContainsKey(seq) && _store.LoadMessage(seq) is { Found: true, Message: { } m })
                {
                    message = m;
                    redelivery = true;
                }
                else if (_pending.Remove(seq) && _persistenceId is not null)
                {
                    _delta.Removed.Add(seq); // gone from the stream meanwhile
                }
            }

            if (message is null && _config.AckPolicy != AckPolicy.None && _pending.Count >= maxAckPending)
            {
                atAckLimit = true;
                break;
            }

            var lastPerSubject = false;
            message ??= LoadNext(out lastPerSubject);
            if (message is null)
            {
                break;
            }

            if (!Send(message, redelivery, lastPerSubject))
            {
                // No pull request could take it (max_bytes ended them): it goes first next time.
                if (redelivery)
                {
                    _redeliver.Add(message.Sequence);
                }
                else if (!lastPerSubject)
                {
                    _nextSeq = message.Sequence;
                }

                break;
            }
        }

        if (!IsPush && !atAckLimit)
        {
            EndNoWaitRequests();
        }

        AdvanceAckFloor();
        ReportInterest();
        _context.Feed?.Publish(_nextSeq, IsPush ? pushReady : _waiting.Count > 0);
    }

    /// <summary>
    /// The next message for this consumer: the last-per-subject list first (left in place until
    /// it is sent: <paramref name="lastPerSubject"/>), then the stream from <c>_nextSeq</c> on, with
    /// the messages a later append removed before this consumer read them put back in their place.
    /// </summary>
    private StoredMessage? LoadNext(out bool lastPerSubject)
    {
        lastPerSubject = false;
        while (_lastPerSubject.TryPeek(out var seq))
        {
            if (_store.LoadMessage(seq) is { Found: true, Message: { } last })
            {
                lastPerSubject = true;
                return last;
            }

            _lastPerSubject.Dequeue();
        }

        var filters = _config.FilterSubjects is { Count: > 0 } many ? many : _config.FilterSubject is { Length: > 0 } one ? [one] : null;
        while (true)
        {
            // The store first, then the hand-over: a message removed after the read is still in the read.
            var result = _store.LoadNextMessage(filters is { Count: 1 } ? filters[0] : null, _nextSeq);
            var found = result.Found ? result.Message : null;
            if (TakeDisplaced(found?.Sequence ?? ulong.MaxValue, filters) is { } displaced)
            {
                _nextSeq = displaced.Sequence + 1;
                return displaced;
            }

            if (found is not { } m)
            {
                return null;
            }

            _nextSeq = m.Sequence + 1;
            if (filters is null || filters.Count == 1 || filters.Any(f => SubjectRules.Matches(m.Subject, f)))
            {
                return m;
            }
        }
    }

    /// <summary>
    /// The first message handed over by the stream as it was removed (<see cref="DisplacedMessages"/>)
    /// that this consumer has not passed and its filters match, if it comes before <paramref name="before"/>.
    /// It stays listed until <c>_nextSeq</c> passes it, so a send that fails finds it again.
    /// </summary>
    private StoredMessage? TakeDisplaced(ulong before, List<string>? filters)
    {
        if (_context.Feed is not { } feed || (feed.IsEmpty && _displaced.Count == 0))
        {
            return null;
        }

        while (feed.TryTake(out var message))
        {
            if (message.Sequence >= _nextSeq && (filters is null || filters.Any(f => SubjectRules.Matches(message.Subject, f))))
            {
                _displaced[message.Sequence] = message;
            }
        }

        while (_displaced.Count > 0 && _displaced.Keys[0] < _nextSeq)
        {
            _displaced.RemoveAt(0);
        }

        return _displaced.Count > 0 && _displaced.Keys[0] < before ? _displaced.Values[0] : null;
    }

    /// <summary>
    /// Sends one message to the deliver subject (push) or the first pull request that can take it.
    /// False, with nothing changed, when no pull request can.
    /// </summary>
    private bool Send(StoredMessage message, bool redelivery, bool lastPerSubject)
    {
        var deliveries = redelivery ? _pending[message.Sequence].Deliveries + 1 : 1;
        var consumerSeq = _deliveredConsumer + 1;

        // Counted once per Deliver pass (the store counts by scanning), then kept up to date here.
        var pendingCount = _passPending < 0 ? (long)NumPending() - (lastPerSubject ? 1 : 0)
            : !redelivery && _passPending > 0 ? _passPending - 1
            : _passPending;
        var ackReply = new AckReply(_ackPrefix, deliveries, message.Sequence, consumerSeq, message.Timestamp, pendingCount);
        var headers = _config.HeadersOnly
            ? Protocols.Nats.NatsHeaders.Set(message.Headers.Span, "Nats-Msg-Size", message.Payload.Length.ToString(CultureInfo.InvariantCulture))
            : message.Headers.Span;
        var payload = _config.HeadersOnly ? default : message.Payload.Span;

        string target;
        if (IsPush)
        {
            target = _config.DeliverSubject!;
            _lastPushActivity = _passNow;
        }
        else
        {
            // What a pull request's max_bytes counts, as nats-server: subject, ack reply, headers, payload.
            var size = message.Subject.Length + ackReply.Length + headers.Length + payload.Length;
            if (TakeWaiting(size) is not { } waiting)
            {
                return false;
            }

            target = waiting.Reply;
        }

        if (lastPerSubject)
        {
            _lastPerSubject.Dequeue();
        }

        _deliveredConsumer = consumerSeq;
        _passPending = pendingCount;
        if (!redelivery)
        {
            _deliveredStream = message.Sequence;
        }

        if (_config.AckPolicy != AckPolicy.None)
        {
            SetPending(message.Sequence, new Pending(_deliveredConsumer, deliveries, _passNow.AddTicks(AckWaitFor(deliveries) / 100).Ticks));
            if (_persistenceId is not null)
            {
                _delta.Delivered.Add(new PendingRecord(message.Sequence, _deliveredConsumer, deliveries));
            }
        }

        _out.Deliver(target, message.Subject, ackReply, headers, payload);
        if (IsPush)
        {
            CountFlowControl(target.Length + ackReply.Length + headers.Length + payload.Length);
        }

        _positionsChanged = true;
        return true;
    }

    private long AckWaitFor(long deliveries)
    {
        if (_config.Backoff is { Count: > 0 } backoff)
        {
            return backoff[(int)Math.Min(deliveries - 1, backoff.Count - 1)];
        }

        return _config.AckWait;
    }

    // Acks decoded by the stream's AckSink from $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<...> and the body.
    private void OnAcks(ArraySegment<AckEntry> acks)
    {
        _lastActivity = DateTime.UtcNow;
        List<string>? confirmations = null;
        foreach (var ack in acks)
        {
            var seq = ack.StreamSeq;
            switch (ack.Kind)
            {
                case AckKind.Ack:
                    Acknowledge(seq);
                    break;
                case AckKind.Nak:
                    if (_pending.TryGetValue(seq, out var nakked))
                    {
                        if (ack.DelayNanos > 0)
                        {
                            SetPending(seq, nakked with { DeadlineTicks = DateTime.UtcNow.AddTicks(ack.DelayNanos / 100).Ticks });
                        }
                        else
                        {
                            _redeliver.Add(seq);
                        }
                    }

                    break;
                case AckKind.Progress:
                    if (_pending.TryGetValue(seq, out var working))
                    {
                        SetPending(seq, working with { DeadlineTicks = DateTime.UtcNow.AddTicks(_config.AckWait / 100).Ticks });
                    }

                    break;
                case AckKind.Term:
                    Acknowledge(seq); // as nats-server: no redelivery, and retention counts it as acknowledged
                    break;
                case AckKind.Next:
                    Acknowledge(seq);
                    if (ack.Reply is { } reply)
                    {
                        _waiting.AddLast(new Waiting(reply, 1, false, DateTime.MaxValue, TimeSpan.Zero) { LastActivity = DateTime.UtcNow });
                        TickRegularly();
                    }

                    continue; // the reply is the next message, not an empty acknowledgement
            }

            if (ack.Reply is { } ackReply)
            {
                confirmations ??= [];
                confirmations.Add(ackReply);
            }
        }

        AdvanceAckFloor();
        ReportInterest();

        // Double-ack confirmations go out only once the acks' event is stored (it survives kill -9).
        _positionsChanged = true;
        Checkpoint(confirmations);
        Deliver();
    }

    private void SetPending(ulong seq, Pending pending)
    {
        _pending[seq] = pending;
        if (pending.DeadlineTicks != 0 && pending.DeadlineTicks < _nextDeadlineTicks)
        {
            _nextDeadlineTicks = pending.DeadlineTicks;
        }
    }

    private void Acknowledge(ulong seq)
    {
        if (_config.AckPolicy != AckPolicy.All)
        {
            Acknowledged(seq);
            return;
        }

        // _pending is in sequence order: the acknowledged ones are its head.
        foreach (var s in _pending.KeysUpTo(seq))
        {
            Acknowledged(s);
        }
    }

    private void Acknowledged(ulong seq)
    {
        if (!_pending.Remove(seq))
        {
            return;
        }

        _redeliver.Remove(seq);
        if (_persistenceId is not null)
        {
            _delta.Removed.Add(seq);
        }

        if (_context.WorkQueue)
        {
            // Work-queue retention: a message is gone once its consumer has acknowledged it.
            _store.RemoveMessage(seq);
        }
        else if (_context.Interest is not null)
        {
            _released.Add(seq);
        }
    }

    /// <summary>
    /// Interest retention: tells the stream's ledger what this consumer acknowledged and where its
    /// ack floor is now; messages no other consumer needs go. Once per ack batch or delivery pass.
    /// </summary>
    /// <summary>
    /// A message delivered max_deliver times is not delivered again (a NAK or an expired ack wait
    /// brought it here): nats-server publishes its max_deliver advisory and drops it from pending, so
    /// the ack floor moves on. On an interest or work-queue stream that would release the message
    /// from the stream, which nats-server does not do: there it stays pending, never redelivered.
    /// </summary>
    private void DeliveriesExhausted(ulong seq, Pending pending)
    {
        if (pending.DeadlineTicks == long.MaxValue)
        {
            return; // already reported
        }

        var advisory = new MaxDeliveriesAdvisory
        {
            Id = Guid.NewGuid().ToString("N"),
            Timestamp = DateTime.UtcNow,
            Stream = _stream,
            Consumer = _name,
            StreamSeq = seq,
            Deliveries = pending.Deliveries,
        };
        _out.Publish($"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{_stream}.{_name}", null, default, System.Text.Json.JsonSerializer.SerializeToUtf8Bytes(advisory, ConsumerJsonContext.Default.MaxDeliveriesAdvisory));
        if (_context.Interest is null)
        {
            _pending.Remove(seq);
            if (_persistenceId is not null)
            {
                _delta.Removed.Add(seq);
            }
        }
        else
        {
            _pending[seq] = pending with { DeadlineTicks = long.MaxValue };
        }
    }

    private void ReportInterest()
    {
        if (_context.Interest is { } interest)
        {
            interest.Release(_released, _ackFloorStream);
            _released.Clear();
        }
    }

    private void AdvanceAckFloor()
    {
        if (_config.AckPolicy == AckPolicy.None)
        {
            _ackFloorStream = _deliveredStream;
            _ackFloorConsumer = _deliveredConsumer;
            return;
        }

        if (!_pending.TryGetFirst(out var firstSeq, out var first))
        {
            _ackFloorStream = _deliveredStream;
            _ackFloorConsumer = _deliveredConsumer;
            return;
        }

        _ackFloorStream = firstSeq - 1;
        _ackFloorConsumer = first.ConsumerSeq - 1;
    }

    private void Tick()
    {
        var now = DateTime.UtcNow;
        if (ExpiredForInactivity(now))
        {
            Context.Parent.Tell(new Protocol.Expired(_name));
            Context.Stop(Self);
            return;
        }

        if (now.Ticks >= _nextDeadlineTicks)
        {
            var next = long.MaxValue;
            foreach (var (seq, p) in _pending)
            {
                if (p.DeadlineTicks == 0)
                {
                    continue;
                }

                if (p.DeadlineTicks <= now.Ticks)
                {
                    _redeliver.Add(seq); // a no-op when already queued
                }
                else if (p.DeadlineTicks < next)
                {
                    next = p.DeadlineTicks;
                }
            }

            _nextDeadlineTicks = next;
        }

        ProcessWaiting(now);

        if (IsPush && _config.IdleHeartbeat > 0 && now - _lastPushActivity >= TimeSpan.FromTicks(_config.IdleHeartbeat / 100))
        {
            // Push consumers with idle_heartbeat: tell the client we are alive while there is nothing to send.
            _lastPushActivity = now;
            SendIdleHeartbeat(_config.DeliverSubject!);
        }

        if (_redeliver.Count > 0 || _waiting.Count > 0 || IsPush)
        {
            Deliver();
        }

        // Deliveries since the last ack batch are stored once per tick, as one event.
        Checkpoint(null);
        TickSlowlyWhenIdle();
    }

    /// <summary>Back to the regular tick: a pull request is waiting.</summary>
    private void TickRegularly()
    {
        if (_idleTicking)
        {
            _idleTicking = false;
            Timers.StartPeriodicTimer("tick", Protocol.Tick.Instance, TickInterval);
        }
    }

    private void TickSlowlyWhenIdle()
    {
        var idle = !IsPush && _pending.Count == 0 && _waiting.Count == 0 && _redeliver.Count == 0
            && (_persistenceId is null || (_delta.IsEmpty && !_positionsChanged))
            && (_config.DurableName is not null || InactiveThreshold >= 2 * IdleTickInterval);
        if (idle && !_idleTicking)
        {
            _idleTicking = true;
            Timers.StartPeriodicTimer("tick", Protocol.Tick.Instance, IdleTickInterval);
        }
    }

    /// <summary>
    /// An ephemeral consumer goes away after inactive_threshold (5 s by default, as nats-server) with
    /// no pull requests, acks or deliveries, and for push consumers no subscriber on the deliver subject.
    /// </summary>
    private bool ExpiredForInactivity(DateTime now)
    {
        if (_config.DurableName is not null)
        {
            return false;
        }

        if (IsPush && _context.HasInterest(_config.DeliverSubject!))
        {
            _lastActivity = now;
            return false;
        }

        if (_waiting.Count > 0)
        {
            return false;
        }

        return now - _lastActivity > InactiveThreshold;
    }

    private TimeSpan InactiveThreshold => _config.InactiveThreshold > 0 ? TimeSpan.FromTicks(_config.InactiveThreshold / 100) : TimeSpan.FromSeconds(5);

    private void Status(string inbox, string status) =>
        _out.Publish(inbox, null, Encoding.ASCII.GetBytes($"NATS/1.0 {status}\r\n\r\n"), default);

    private ulong NumPending()
    {
        var pending = (ulong)_lastPerSubject.Count;
        if (_config.FilterSubjects is { Count: > 0 } filters)
        {
            // The filters do not overlap (checked at creation): their counts add up.
            foreach (var filter in filters)
            {
                pending += _store.NumPending(_nextSeq, filter, lastPerSubject: false).Total;
            }

            return pending;
        }

        var one = _config.FilterSubject is { Length: > 0 } f ? f : null;
        return pending + _store.NumPending(_nextSeq, one, lastPerSubject: false).Total;
    }

    private ConsumerInfoResponse Info(string type) => new()
    {
        Type = type,
        StreamName = _stream,
        Name = _name,
        Created = _created,
        Config = _config,
        Delivered = new SequenceInfo { ConsumerSeq = _deliveredConsumer, StreamSeq = _deliveredStream },
        AckFloor = new SequenceInfo { ConsumerSeq = _ackFloorConsumer, StreamSeq = _ackFloorStream },
        NumAckPending = _pending.Count,
        NumRedelivered = _pending.Values.Count(p => p.Deliveries > 1), // nats-server: pending messages delivered more than once (len(rdc))
        NumWaiting = _waiting.Count,
        NumPending = NumPending(),
        PushBound = IsPush && _context.HasInterest(_config.DeliverSubject!), // someone subscribes to the deliver subject, as nats-server's o.active
        Ts = DateTime.UtcNow,
    };

    private sealed record Pending(ulong ConsumerSeq, long Deliveries, long DeadlineTicks);

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>The stream stored new messages (one per append batch).</summary>
        public sealed class NewMessages
        {
            public static readonly NewMessages Instance = new();

            private NewMessages()
            {
            }
        }

        /// <summary>Told to the stream: this ephemeral consumer expired and stopped.</summary>
        public sealed record Expired(string Name);

        /// <summary>A pull request (CONSUMER.MSG.NEXT).</summary>
        public sealed record Next(string Reply, byte[] Payload);

        /// <summary>A read batch of acknowledgements for this consumer.</summary>
        public sealed record Acks(ArraySegment<AckEntry> Entries);

        /// <summary>A client answered a flow control request (published to its <c>$JS.FC.</c> reply subject).</summary>
        public sealed record FlowControlResponse(string Subject);

        /// <summary>Check deadlines, expiries and heartbeats.</summary>
        public sealed class Tick
        {
            public static readonly Tick Instance = new();

            private Tick()
            {
            }
        }

        /// <summary>Asks for a <see cref="ConsumerInfoResponse"/>.</summary>
        public sealed class GetInfo
        {
            public static readonly GetInfo Instance = new();

            private GetInfo()
            {
            }
        }

        /// <summary>Asks for the <see cref="ConsumerInfoResponse"/> of the create reply: the state before the first delivery.</summary>
        public sealed class GetCreatedInfo
        {
            public static readonly GetCreatedInfo Instance = new();

            private GetCreatedInfo()
            {
            }
        }

        /// <summary>Delete the consumer and its state, then stop.</summary>
        public sealed class Delete
        {
            public static readonly Delete Instance = new();

            private Delete()
            {
            }
        }

        /// <summary>The consumer is deleted.</summary>
        public sealed class Deleted
        {
            public static readonly Deleted Instance = new();

            private Deleted()
            {
            }
        }
    }
}

/// <summary>What a consumer needs from its stream and node.</summary>
/// <param name="WorkQueue">The stream has work-queue retention: acknowledged messages are removed.</param>
/// <param name="HasInterest">Whether anyone subscribes to a subject (a push consumer's deliver subject).</param>
/// <param name="Interest">This consumer's part in the stream's interest retention; null unless the stream has it.</param>
/// <param name="Feed">The messages the stream removed before this consumer read them (<see cref="DisplacedMessages"/>).</param>
internal sealed record ConsumerContext(bool WorkQueue, Func<string, bool> HasInterest, InterestParticipant? Interest = null, ConsumerFeed? Feed = null);
