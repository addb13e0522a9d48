using System.Text;
using System.Text.Json;
using Akka.Actor;
using Akka.Event;
using Courier.Actors.Connections;
using Courier.Actors.Hosting;
using Courier.Protocols.JetStream;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// One JetStream stream: owns its store, stores what is published to its subjects in batches (one
/// store flush per batch, PubAcks only after it: invariant 4), and answers the API requests that
/// concern it alone.
/// </summary>
internal sealed partial class StreamActor : ReceiveActor, IWithTimers
{
    /// <summary>How often messages past max_age are removed.</summary>
    private static readonly TimeSpan AgeCheckInterval = TimeSpan.FromSeconds(1);

    /// <summary>The account's max_consumers now (-1: none); read at each create, as account limits can change.</summary>
    private readonly Func<int> _accountMaxConsumers;

    /// <summary>Publishes what the account's other streams may store (republished messages, advisories): the account's second JetStream connection.</summary>
    private readonly InProcessPublisher _echoOut;
    private readonly InProcessClient _client;
    private readonly InProcessPublisher _out;
    private readonly IStreamStore _store;
    private readonly byte[] _pubAckPrefix;
    private StreamConfig _config;
    private readonly DateTime _created;
    private readonly List<string> _sids = [];
    private readonly List<string> _directPrefixes = []; // the DIRECT.GET subjects this stream answers, without the subject part
    private readonly string? _directory;
    private readonly MetaFiles _meta;
    private readonly StreamConsumers _consumers;
    private readonly ConsumerContext _consumerContext;
    private readonly ILoggingAdapter _log = Context.GetLogger();
    private readonly InterestLedger? _interest;
    private readonly DisplacedMessages _displaced = new();

    /// <summary>This server's name and cluster, when it is in one (an R1 stream's STREAM.INFO names them).</summary>
    private readonly (string Server, string? Cluster)? _clusterMember;

    public StreamActor(InProcessClient client, StreamConfig config, DateTime created, IStreamStore store, string? directory, Func<string, bool> hasInterest, string? domain, ApiCounters counters, LocalStreams streams, StreamConsumers consumers, Func<int>? accountMaxConsumers = null, InProcessClient? echo = null, StreamReplication? replication = null, (string Server, string? Cluster)? clusterMember = null, MetaFiles? metaFiles = null)
    {
        _meta = metaFiles ?? MetaFiles.Plain;
        _replication = replication;
        _clusterMember = clusterMember;
        _accountMaxConsumers = accountMaxConsumers ?? (() => -1);
        _echoOut = (echo ?? client).CreatePublisher();
        _streams = streams;
        _consumers = consumers;
        _domain = domain;
        _counters = counters;
        _consumerContext = new ConsumerContext(config.Retention == RetentionPolicy.WorkQueue, hasInterest, Echo: echo, Domain: domain);
        _interest = config.Retention == RetentionPolicy.Interest ? new InterestLedger(store) : null;
        _client = client;
        _out = client.CreatePublisher();
        _config = config;
        // nats-server's PubAck prefix: {"stream":"S", "seq": or, in a domain, {"stream":"S", "domain":"D", "seq":
        _pubAckPrefix = Encoding.UTF8.GetBytes(domain is null
            ? $"{{\"stream\":\"{JsonEncodedText.Encode(config.Name)}\", \"seq\":"
            : $"{{\"stream\":\"{JsonEncodedText.Encode(config.Name)}\", \"domain\":\"{JsonEncodedText.Encode(domain)}\", \"seq\":");
        _republish = RePublisher(config);
        _ingest = IngestTransform(config);
        _created = created;
        _store = store;
        _store.DisplacementObserver = _displaced;
        _directory = directory;
        Receive<Protocol.ConsumerRequest>(HandleConsumerRequest);
        Receive<ConsumerInfoAnswer>(OnConsumerInfoAnswer);
        Receive<ConsumerListAnswer>(OnConsumerListAnswer);
        Receive<ConsumerUnanswered>(OnConsumerUnanswered);
        Receive<Protocol.FlowControlBatch>(OnFlowControl);
        ReceiveAsync<Protocol.Update>(async update =>
        {
            if (_replication is not null)
            {
                ProposeUpdate(update); // applied (and answered) when committed
                return;
            }

            ApplyConfig(update.Config);
            Unsubscribe();
            Subscribe();
            StartOrigins(fromStore: false); // sources may have changed (a mirror may not)
            await _client.FlushAsync().ConfigureAwait(true); // new subjects in effect before the reply
            Reply(update.ReplyTo, Info(update.Type), JetStreamJsonContext.Default.StreamInfoResponse);
            Advisories.Stream(_echoOut, _config.Name, AdvisoryAction.Modify, _domain);
        });
        ReceiveAsync<Protocol.ReplyInfo>(async request =>
        {
            if (AwaitLeader(request))
            {
                return;
            }

            if (request.DidCreate)
            {
                await _client.FlushAsync().ConfigureAwait(true); // the stream's SUB in effect before the creator hears back
                // Now, as nats-server: a stream capturing $JS.EVENT.ADVISORY.STREAM.> stores its own creation too.
                Advisories.Stream(_echoOut, _config.Name, AdvisoryAction.Create, _domain);
            }

            var info = Info(request.Type);
            info.DidCreate = request.DidCreate;
            Reply(request.ReplyTo, info, JetStreamJsonContext.Default.StreamInfoResponse);
        });
        Receive<Protocol.DirectGets>(gets => DirectGet(gets.Messages));
        Receive<Terminated>(OnConsumerTerminated);
        Receive<Protocol.RestartConsumer>(restart =>
        {
            // Unless it was deleted meanwhile (its start is forgotten then).
            if (!_consumers.ContainsKey(restart.Name) && _consumerStarts.ContainsKey(restart.Name))
            {
                StartConsumer(restart.Config, restart.Created, durable: true);
            }
        });
        Receive<ConsumerActor.Protocol.Expired>(expired =>
        {
            _consumers.Remove(expired.Name);
            ForgetConsumer(expired.Name);
            Advisories.Consumer(_echoOut, _config.Name, expired.Name, AdvisoryAction.Delete, _domain);
            DeleteConsumerDirectory(expired.Name); // a durable's definition: gone, so a restart does not recreate it
        });
        Receive<Protocol.ExpireByAge>(_ =>
        {
            if (_config.SubjectDeleteMarkerTtl <= 0)
            {
                _store.ExpireByAge((DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100);
            }

            // With delete markers the TTL tick expires by age too (a subject's last message leaves a marker).
        });
        Receive<Protocol.ExpireByTtl>(_ => ExpireByTtl());
        Receive<Protocol.SyncStore>(_ => _store.Sync());
        if (replication is not null)
        {
            ReceiveReplication();
        }

        Receive<Readiness.AwaitReady>(_ => Sender.Tell(Readiness.Ready.Instance)); // after PreStart: the stream has subscribed to its subjects
        Receive<Protocol.OriginAdvanced>(_ => QueueCopy());
        Receive<Protocol.CopyFromOrigins>(_ => CopyFromOrigins());
        Receive<Protocol.Append>(Append);
        Receive<Protocol.FlushAppends>(_ => FlushAppends());
        Receive<Protocol.GetInfo>(_ => Sender.Tell(Info("")));
        Receive<Protocol.GetDetail>(_ => OnGetDetail());
        Receive<Protocol.DetailWithStatus>(OnDetailWithStatus);
        Receive<Protocol.Request>(HandleRequest);
        Receive<Protocol.Delete>(_ =>
        {
            foreach (var consumer in _consumers.Actors)
            {
                Context.Stop(consumer);
            }

            _consumers.Clear();
            Unsubscribe();
            StopOrigins();
            FlushAppends(); // what was stored before the delete is acknowledged, as it was stored
            if (_replication is { } replication)
            {
                replication.Host.Tell(new Raft.RaftHost.Protocol.RemoveGroup(replication.Group, DeleteFiles: true));
            }

            _streams.Close(_config.Name, _store);
            _store.Delete();
            Sender.Tell(Protocol.Deleted.Instance);
            Context.Stop(Self);
        });
    }

    /// <summary>
    /// The stream's props. A file stream runs on the I/O dispatcher, since its appends fsync before their
    /// PubAcks; a memory stream never blocks, so its appends run on the publisher's read pump (the
    /// caller-runs dispatcher), saving a hand-over to a pool thread on each publish-to-PubAck round trip.
    /// </summary>
    /// <remarks>
    /// <c>consumers</c> is the stream's entry in its account's <see cref="ConsumerDirectory"/> (null: a list
    /// of its own), through which pull requests and acks reach the consumers without this actor.
    /// </remarks>
    public static Props Props(InProcessClient client, StreamConfig config, DateTime created, IStreamStore store, string? directory, Func<string, bool> hasInterest, string? domain = null, ApiCounters? counters = null, LocalStreams? streams = null, StreamConsumers? consumers = null, Func<int>? accountMaxConsumers = null, InProcessClient? echo = null, StreamReplication? replication = null, (string Server, string? Cluster)? clusterMember = null, MetaFiles? metaFiles = null)
    {
        counters ??= new ApiCounters();
        streams ??= new LocalStreams();
        consumers ??= new StreamConsumers();
        var props = Akka.Actor.Props.Create(() => new StreamActor(client, config, created, store, directory, hasInterest, domain, counters, streams, consumers, accountMaxConsumers, echo, replication, clusterMember, metaFiles));
        return props.WithDispatcher(store.Type == StorageType.Memory ? CallerRunsExecutorConfigurator.DispatcherId : IoDispatcher);
    }

    /// <summary>The dispatcher for actors that block on disk (reference.conf: courier.io-dispatcher).</summary>
    internal const string IoDispatcher = "courier.io-dispatcher";

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    /// <summary>Writes a meta file so that a power cut leaves the old or the new one whole, never an empty or torn one.</summary>
    internal static void WriteDurably(string path, byte[] bytes)
    {
        var temp = path + ".tmp";
        using (var file = new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            file.Write(bytes);
            file.Flush(flushToDisk: true);
        }

        File.Move(temp, path, overwrite: true);
    }

    /// <summary>
    /// What this actor publishes during a turn goes through the publish pipeline as one batch, on this
    /// thread, at the end of the turn (<see cref="InProcessPublisher"/>): no thread-pool hop per reply.
    /// </summary>
    protected override bool AroundReceive(Receive receive, object message)
    {
        _out.BeginTurn();
        _echoOut.BeginTurn();
        try
        {
            return base.AroundReceive(receive, message);
        }
        finally
        {
            _echoOut.EndTurn();
            _out.EndTurn();
        }
    }

    /// <summary>Subjects, limits and flags of an update: the store applies the new limits at once; a file stream's meta file is rewritten.</summary>
    private void ApplyConfig(StreamConfig config)
    {
        _config = config;
        _ingest = IngestTransform(config);
        _store.UpdateConfig(JetStreamApi.ToStoreConfig(config));
        ScheduleTtlExpiry();
        if (_directory is not null)
        {
            var meta = new StreamInfoResponse { Config = config, Created = _created };
            _meta.WriteDurably(Path.Combine(_directory, "meta.json"), JsonSerializer.SerializeToUtf8Bytes(meta, JetStreamJsonContext.Default.StreamInfoResponse), _meta.StreamContext(config.Name));
        }
    }

    protected override void PreStart()
    {
        LogNewDamage();
        if (_replication is { } replication)
        {
            // A replica subscribes, runs consumers and answers only while it leads (StreamActor.Replication.cs).
            StartReplication(replication);
            ScheduleTtlExpiry(); // the tick does nothing unless this replica leads
            _streams.Open(_config.Name, _store);
            return;
        }

        Subscribe();
        ScheduleTtlExpiry();
        if (_config.MaxAge > 0)
        {
            Timers.StartPeriodicTimer("max_age", Protocol.ExpireByAge.Instance, AgeCheckInterval);
        }

        if (_store.SyncPolicy is { IsAlways: false } sync)
        {
            // sync_interval: a Flush only writes (safe from kill -9); fsync on this timer (nats-server's syncBlocks).
            Timers.StartPeriodicTimer("sync", Protocol.SyncStore.Instance, sync.Period);
        }

        RecoverConsumers();
        _streams.Open(_config.Name, _store);
        StartOrigins(fromStore: true);
    }

    private void Subscribe()
    {
        var self = Self;
        // A mirror, or a sources stream without subjects of its own, takes no publishes.
        var subjects = _config.Subjects is { Count: > 0 } s ? s : IsCopying(_config) ? [] : [_config.Name];
        foreach (var subject in subjects)
        {
            // Served by calls on the publisher's thread, one actor message per publisher batch, never one per NATS message.
            _sids.Add(_client.Subscribe(subject, null, new RawMessageSink(batch => self.Tell(new Protocol.Append(batch)))));
        }

        // Acks go from the publisher's thread straight to their consumers (ConsumerDirectory), not through this actor.
        var consumers = _consumers;
        _sids.Add(_client.Subscribe($"$JS.ACK.{_config.Name}.>", null, new AckSink(batch => DispatchAcks(consumers, batch))));
        _sids.Add(_client.Subscribe($"$JS.FC.{_config.Name}.>", null, batch => self.Tell(new Protocol.FlowControlBatch(batch))));

        if (_config.AllowDirect)
        {
            SubscribeDirectGets(_config.Name);
        }

        if (_replication is { } replication)
        {
            // The leader serves replicas catching up (StreamActor.Catchup.cs).
            _sids.Add(_client.Subscribe($"$JSC.CU.{replication.Group}", null, batch => self.Tell(new Protocol.CatchupRequest(batch))));
        }
    }

    /// <summary>Answers <c>$JS.API.DIRECT.GET.&lt;stream&gt;[.&lt;subject&gt;]</c> (and its domain form) in the <c>_dg</c> queue group, from this stream's store.</summary>
    private void SubscribeDirectGets(string stream)
    {
        var self = Self;
        foreach (var prefix in (string?[])[$"$JS.API.DIRECT.GET.{stream}", _domain is null ? null : $"$JS.{_domain}.API.DIRECT.GET.{stream}"])
        {
            if (prefix is null)
            {
                continue;
            }

            _directPrefixes.Add(prefix);
            _sids.Add(_client.Subscribe(prefix, "_dg", batch => self.Tell(new Protocol.DirectGets(batch))));
            _sids.Add(_client.Subscribe(prefix + ".>", "_dg", batch => self.Tell(new Protocol.DirectGets(batch))));
        }
    }

    /// <summary>
    /// A restart keeps the store open (the new instance recovers from it) and lets the consumers
    /// stop; the new instance re-subscribes and recovers durable consumers from their state files.
    /// </summary>
    protected override void PreRestart(Exception reason, object message)
    {
        foreach (var consumer in _consumers.Actors)
        {
            Context.Stop(consumer);
        }

        _consumers.Clear();
        _displaced.Clear();
        _consumerConfigs.Clear();
        _consumerStarts.Clear();
        ReleaseUnflushed();
        Unsubscribe();
        StopOrigins();
        if (_replication is { } replication)
        {
            // The new instance starts the group again from its files and rebuilds the store from the log.
            replication.Host.Tell(new Raft.RaftHost.Protocol.RemoveGroup(replication.Group, DeleteFiles: false));
        }
    }

    /// <summary>A consumer that fails restarts from its state file.</summary>
    protected override SupervisorStrategy SupervisorStrategy() =>
        new OneForOneStrategy(10, TimeSpan.FromMinutes(1), _ => Directive.Restart);

    protected override void PostStop()
    {
        ReleaseUnflushed();
        Unsubscribe();
        StopOrigins();
        _streams.Close(_config.Name, _store);
        _store.Stop();
    }

    private void Unsubscribe()
    {
        foreach (var sid in _sids)
        {
            _client.Unsubscribe(sid);
        }

        _sids.Clear();
        _directPrefixes.Clear();
    }

    private StreamInfoResponse Info(string type)
    {
        var state = _store.State();
        var info = new StreamInfoResponse
        {
            Type = type,
            Config = _config,
            Created = _created,
            Ts = DateTime.UtcNow,
            Domain = _domain,
            State = new StreamStateInfo
            {
                Messages = state.Msgs,
                Bytes = state.Bytes,
                FirstSeq = state.FirstSeq,
                FirstTs = FromUnixNanos(state.FirstTime),
                LastSeq = state.LastSeq,
                LastTs = FromUnixNanos(state.LastTime),
                NumDeleted = state.NumDeleted,
                NumSubjects = state.NumSubjects,
                Lost = LostInfo(state),
                ConsumerCount = _consumers.Count,
            },
        };
        if (_replication is { } replication)
        {
            // The leader's name; STREAM.INFO adds the replicas (ClusterInfoOf).
            info.Cluster = new ClusterInfo { Name = replication.ClusterName, Leader = _leader == 0 ? null : replication.NameOf(_leader) };
        }
        else if (_clusterMember is { } member)
        {
            // An R1 stream in a cluster, as nats-server: the cluster's name and this server as its leader.
            info.Cluster = new ClusterInfo { Name = member.Cluster, Leader = member.Server };
        }

        AddOriginInfo(info);
        return info;
    }

    private void Reply<T>(string? replyTo, T response, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> typeInfo)
        where T : notnull
    {
        _counters.Count(response);
        if (replyTo is not null)
        {
            _out.Publish(replyTo, null, default, JsonSerializer.SerializeToUtf8Bytes(response, typeInfo));
        }
    }

    internal static DateTime FromUnixNanos(long nanos) =>
        nanos <= 0 ? DateTime.MinValue.ToUniversalTime() : DateTime.UnixEpoch.AddTicks(nanos / 100);

    /// <summary>The messages this actor understands.</summary>
    public static partial class Protocol
    {
        /// <summary>A read batch of messages published to the stream's subjects.</summary>
        public sealed class Append
        {
            public Append(RawMessages messages)
            {
                ArgumentNullException.ThrowIfNull(messages);
                Messages = messages;
            }

            /// <summary>The batch; the stream releases its buffers once it has appended them.</summary>
            public RawMessages Messages { get; }

            public override string ToString() => $"Append({Messages.Count})";
        }

        /// <summary>Flush what was stored since the last flush and send its PubAcks (queued by the first batch after a flush).</summary>
        public sealed class FlushAppends
        {
            public static readonly FlushAppends Instance = new();

            private FlushAppends()
            {
            }
        }

        /// <summary>An API request for this stream: <c>INFO</c>, <c>PURGE</c>, <c>MSG.GET</c>, <c>MSG.DELETE</c>.</summary>
        public sealed class Request
        {
            public Request(string operation, string? replyTo, byte[] payload)
            {
                Operation = operation;
                ReplyTo = replyTo;
                Payload = payload;
            }

            public string Operation { get; }

            public string? ReplyTo { get; }

            public byte[] Payload { get; }
        }

        /// <summary>Apply an updated configuration (validated by the API actor) and answer <paramref name="ReplyTo"/> with the stream info.</summary>
        /// <remarks><paramref name="Members"/>: a replicated stream's new member ids when num_replicas changes (StreamActor.Replication.cs).</remarks>
        public sealed record Update(StreamConfig Config, string ReplyTo, string Type, ulong[]? Members = null);

        /// <summary>Answer <paramref name="ReplyTo"/> with the stream info of response type <paramref name="Type"/>; for a new stream, once its subscriptions are in effect.</summary>
        public sealed record ReplyInfo(string ReplyTo, string Type, bool DidCreate);

        /// <summary>An origin of this mirror or sources stream flushed new messages (or the 1 s check): copy what is new.</summary>
        public sealed class OriginAdvanced
        {
            public static readonly OriginAdvanced Instance = new();

            private OriginAdvanced()
            {
            }
        }

        /// <summary>Copy a batch from each origin (queued once, however many origins advanced).</summary>
        public sealed class CopyFromOrigins
        {
            public static readonly CopyFromOrigins Instance = new();

            private CopyFromOrigins()
            {
            }
        }

        /// <summary>The leader's timer: replicate its durable consumers' states.</summary>
        public sealed class ReplicateConsumerStates
        {
            public static readonly ReplicateConsumerStates Instance = new();

            private ReplicateConsumerStates()
            {
            }
        }

        /// <summary>A durable consumer's state, taken for replication (null: it did not answer).</summary>
        public sealed record ConsumerStateTaken(string Name, ConsumerSnapshot? State);

        /// <summary>Replicas catching up ask the leader for messages (StreamActor.Catchup.cs).</summary>
        public sealed record CatchupRequest(IReadOnlyList<InternalMessage> Messages);

        /// <summary>The leader's batches, to the replica catching up.</summary>
        public sealed record CatchupReply(IReadOnlyList<InternalMessage> Messages);

        public sealed record CatchupTimeout(ulong RequestId);

        /// <summary>A leader stepdown with its group's status, to pick the successor.</summary>
        public sealed record StepDownWith(string? ReplyTo, string Type, Raft.RaftHost.Protocol.GroupStatus? Status);

        /// <summary>This replica leads now: its group's status, for the leader-elected advisories.</summary>
        public sealed record Elected(Raft.RaftHost.Protocol.GroupStatus? Status);

        /// <summary>A stepdown's successor, with the durable consumers' states taken to replicate before the handover.</summary>
        public sealed record HandOver(ulong Successor, ConsumerStateTaken[] States);

        /// <summary>A new replicated stream's wait for its first leader is over: answer its creator anyway.</summary>
        public sealed class LeaderWaitOver
        {
            public static readonly LeaderWaitOver Instance = new();

            private LeaderWaitOver()
            {
            }
        }

        /// <summary>Remove (or mark) messages whose Nats-TTL has run out (StreamActor.Ttl.cs).</summary>
        public sealed class ExpireByTtl
        {
            public static readonly ExpireByTtl Instance = new();

            private ExpireByTtl()
            {
            }
        }

        /// <summary>Remove messages older than max_age.</summary>
        public sealed class ExpireByAge
        {
            public static readonly ExpireByAge Instance = new();

            private ExpireByAge()
            {
            }
        }

        /// <summary>fsync what the store has written (under a sync_interval policy).</summary>
        public sealed class SyncStore
        {
            public static readonly SyncStore Instance = new();

            private SyncStore()
            {
            }
        }

        /// <summary>Start a durable consumer again from its journal after it stopped on a failure.</summary>
        public sealed record RestartConsumer(string Name, ConsumerConfig Config, DateTime Created);

        /// <summary>A read batch of direct get requests.</summary>
        public sealed record DirectGets(IReadOnlyList<InternalMessage> Messages);

        /// <summary>A read batch of answers to push consumers' flow control requests.</summary>
        public sealed record FlowControlBatch(IReadOnlyList<InternalMessage> Messages);

        /// <summary>
        /// A consumer API request: <c>CREATE</c>, <c>DURABLE.CREATE</c>, <c>INFO</c>, <c>NAMES</c>,
        /// <c>LIST</c>, <c>DELETE</c>, <c>MSG.NEXT</c>.
        /// </summary>
        public sealed record ConsumerRequest(string Operation, string Consumer, string? Filter, string? ReplyTo, byte[] Payload);

        /// <summary>Asks for a <see cref="StreamInfoResponse"/> (for STREAM.LIST).</summary>
        public sealed class GetInfo
        {
            public static readonly GetInfo Instance = new();

            private GetInfo()
            {
            }
        }

        /// <summary>Delete the stream and its data, then stop.</summary>
        public sealed class Delete
        {
            public static readonly Delete Instance = new();

            private Delete()
            {
            }
        }

        /// <summary>The stream is deleted.</summary>
        public sealed class Deleted
        {
            public static readonly Deleted Instance = new();

            private Deleted()
            {
            }
        }
    }
}
