using System.Globalization;
using System.Text;
using Akka.Actor;
using Akka.Event;
using Akka.Persistence;
using Courier.Actors.Connections;
using Courier.Protocols.JetStream;
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

    private readonly InProcessClient _client;
    private readonly InProcessPublisher _out;

    /// <summary>Advisories, on the connection whose publishes the account's streams can store (as nats-server's).</summary>
    private readonly InProcessPublisher _advisories;
    private readonly IStreamStore _store;
    private readonly string _stream;
    private readonly string _name;
    private ConsumerConfig _config; // replaced whole by an update (Protocol.UpdateConfig), never changed in place
    private int _samplePercent; // sample_freq, parsed
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
        _advisories = (context.Echo ?? client).CreatePublisher(); // used outside turns: each advisory goes at once
        _store = store;
        _stream = stream;
        _config = config;
        _samplePercent = ConsumerConfigRules.SamplePercent(config.SampleFrequency).Percent;
        _name = config.DurableName ?? config.Name!;
        _created = created;
        _persistenceId = persistenceId;
        _ackPrefix = AckReply.MakePrefix(stream, _name);

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
        Command<Protocol.UpdateConfig>(update => UpdateConfig(update.Config));
        Command<Protocol.Resume>(_ => OnResume());
        Command<Protocol.Unpin>(unpin => Unpin(unpin.Group, "admin"));
        Command<Protocol.PinExpired>(_ => OnPinExpired());
        Command<Protocol.Reset>(reset => Sender.Tell(ResetTo(reset.Sequence)));
        Command<Protocol.GetInfo>(_ => Sender.Tell(Info("io.nats.jetstream.api.v1.consumer_info_response")));
        Command<Protocol.GetState>(_ => Sender.Tell(TakeSnapshot()));
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
            DeleteState();
            Sender.Tell(Protocol.Deleted.Instance);
            Context.Stop(Self);
        });
    }

    /// <summary>
    /// What CONSUMER.DELETE and an inactivity expiry both do before the actor stops: waiting pull requests
    /// hear 409, and a durable's journal and snapshots go, so a restart does not bring it back.
    /// </summary>
    private void DeleteState()
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

    private bool IsPush => _config.DeliverSubject is not null;

    private void Tick()
    {
        var now = DateTime.UtcNow;
        if (ExpiredForInactivity(now))
        {
            DeleteState();
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

    /// <summary>
    /// Runs with a changed configuration from now on, as nats-server's updateConfig: a push consumer that
    /// delivers elsewhere now sends what is pending again, there (forceExpirePending); a larger
    /// max_ack_pending delivers at once; a pending delivery waits for its ack as long as the new ack_wait
    /// (or backoff) says from when it went out, as nats-server's checkPending measures it. The rest
    /// (max_deliver, request limits, headers_only, inactive_threshold, filters) is read where it is used.
    /// </summary>
    private void UpdateConfig(ConsumerConfig config)
    {
        var previous = _config;
        _config = config;
        _samplePercent = ConsumerConfigRules.SamplePercent(config.SampleFrequency).Percent;
        if (previous.PauseUntil != config.PauseUntil)
        {
            OnPauseChanged(announce: true);
        }

        if (IsPush && !string.Equals(previous.DeliverSubject, config.DeliverSubject, StringComparison.Ordinal))
        {
            foreach (var (seq, _) in _pending)
            {
                _redeliver.Add(seq);
            }
        }

        if (previous.AckWait != config.AckWait || !(previous.Backoff ?? []).SequenceEqual(config.Backoff ?? []))
        {
            foreach (var seq in _pending.Keys())
            {
                var pending = _pending[seq];
                if (pending.DeadlineTicks != 0)
                {
                    var shift = (AckWaitFor(config, pending.Deliveries) - AckWaitFor(previous, pending.Deliveries)) / 100; // ns -> ticks
                    SetPending(seq, pending with { DeadlineTicks = pending.DeadlineTicks + shift });
                }
            }

            _nextDeadlineTicks = 0; // the next tick scans the new deadlines
        }

        _lastActivity = DateTime.UtcNow;
        TickRegularly();
        Deliver();
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
            && (InactiveThreshold is not { } threshold || threshold >= 2 * IdleTickInterval);
        if (idle && !_idleTicking)
        {
            _idleTicking = true;
            Timers.StartPeriodicTimer("tick", Protocol.Tick.Instance, IdleTickInterval);
        }
    }

    /// <summary>
    /// A consumer goes away after inactive_threshold with no pull requests, acks or deliveries, and for push
    /// consumers no subscriber on the deliver subject: an ephemeral always (5 s by default), a durable only
    /// when it has an inactive_threshold, as nats-server 2.9's updateInactiveThreshold and deleteNotActive.
    /// </summary>
    private bool ExpiredForInactivity(DateTime now)
    {
        if (InactiveThreshold is not { } threshold)
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

        return now - _lastActivity > threshold;
    }

    /// <summary>How long the consumer may be inactive; null for a durable without inactive_threshold (it stays).</summary>
    private TimeSpan? InactiveThreshold => _config.InactiveThreshold > 0
        ? TimeSpan.FromTicks(_config.InactiveThreshold / 100) // ns -> ticks
        : _config.DurableName is null ? TimeSpan.FromSeconds(5) : null; // ephemerals: nats-server's JsDeleteWaitTimeDefault

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

    private ConsumerInfoResponse Info(string type)
    {
        var info = NewInfo(type);
        FillPause(info, info.Ts);
        FillPriorityGroups(info);
        return info;
    }

    private ConsumerInfoResponse NewInfo(string type) => new()
    {
        Type = type,
        StreamName = _stream,
        Name = _name,
        Created = _created,
        Config = _config,
        Delivered = new SequenceInfo { ConsumerSeq = _deliveredConsumer, StreamSeq = _deliveredStream },
        AckFloor = new SequenceInfo { ConsumerSeq = _ackFloorConsumer, StreamSeq = _ackFloorStream },
        NumAckPending = _pending.Count,
        NumRedelivered = RedeliveredCount(),
        NumWaiting = _waiting.Count,
        NumPending = NumPending(),
        PushBound = IsPush && _context.HasInterest(_config.DeliverSubject!), // someone subscribes to the deliver subject, as nats-server's o.active
        Ts = DateTime.UtcNow,
    };

    /// <summary>Pending messages delivered more than once (nats-server's <c>len(rdc)</c>).</summary>
    /// <remarks>
    /// A loop over the values' struct enumerator, not LINQ's Count: Count's call through IEnumerable into
    /// the map's values (keyed by ulong) was not in the ReadyToRun image, and a fresh server JIT-compiled
    /// it inside its first consumer create.
    /// </remarks>
    private long RedeliveredCount()
    {
        var count = 0L;
        foreach (var pending in _pending.Values)
        {
            if (pending.Deliveries > 1)
            {
                count++;
            }
        }

        return count;
    }

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

        /// <summary>
        /// Told to the stream: this consumer expired for inactivity, deleted its journal if it had one, and
        /// stopped; the stream forgets it as after CONSUMER.DELETE.
        /// </summary>
        public sealed record Expired(string Name);

        /// <summary>A pull request (CONSUMER.MSG.NEXT).</summary>
        public sealed record Next(string Reply, byte[] Payload);

        /// <summary>A read batch of acknowledgements for this consumer.</summary>
        public sealed record Acks(ArraySegment<AckEntry> Entries);

        /// <summary>A client answered a flow control request (published to its <c>$JS.FC.</c> reply subject).</summary>
        public sealed record FlowControlResponse(string Subject);

        /// <summary>Run with this configuration from now on (a create that changed what may change).</summary>
        public sealed record UpdateConfig(ConsumerConfig Config);

        /// <summary>CONSUMER.RESET: start again from <see cref="Sequence"/> (0: the ack floor); answered with the info after it.</summary>
        public sealed record Reset(ulong Sequence);

        /// <summary>CONSUMER.UNPIN of one of the consumer's priority groups: forget the pinned client.</summary>
        public sealed record Unpin(string Group);

        /// <summary>The pinned client sent no pull request for priority_timeout.</summary>
        public sealed class PinExpired
        {
            public static readonly PinExpired Instance = new();

            private PinExpired()
            {
            }
        }

        /// <summary>The time <c>pause_until</c> named has come.</summary>
        public sealed class Resume
        {
            public static readonly Resume Instance = new();

            private Resume()
            {
            }
        }

        /// <summary>Check deadlines, expiries and heartbeats.</summary>
        public sealed class Tick
        {
            public static readonly Tick Instance = new();

            private Tick()
            {
            }
        }

        /// <summary>Asks for the consumer's whole state (a <see cref="ConsumerSnapshot"/>): a replicated stream's leader replicates it.</summary>
        public sealed class GetState
        {
            public static readonly GetState Instance = new();

            private GetState()
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
/// <param name="Echo">The account's second JetStream connection, for advisories the account's streams may store (null: the consumer's own).</param>
/// <param name="Seed">A replicated stream's new leader: the state the old leader replicated, taken when newer than this node's journal.</param>
/// <param name="Domain">The JetStream domain, for advisories.</param>
internal sealed record ConsumerContext(bool WorkQueue, Func<string, bool> HasInterest, InterestParticipant? Interest = null, ConsumerFeed? Feed = null, InProcessClient? Echo = null, ConsumerSnapshot? Seed = null, string? Domain = null);
