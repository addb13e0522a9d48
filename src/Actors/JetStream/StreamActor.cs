using System.Buffers;
using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Akka.Actor;
using Akka.Event;
using Courier.Actors.Connections;
using Courier.Actors.Hosting;
using Courier.Protocols.JetStream;
using Courier.Protocols.Nats;
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

    private readonly InProcessClient _client;
    private readonly InProcessPublisher _out;
    private readonly IStreamStore _store;
    private readonly byte[] _pubAckPrefix;
    private StreamConfig _config;
    private readonly DateTime _created;
    private readonly List<string> _sids = [];
    private readonly List<string> _directPrefixes = []; // the DIRECT.GET subjects this stream answers, without the subject part
    private readonly string? _directory;
    private readonly StreamConsumers _consumers;
    private readonly ConsumerContext _consumerContext;
    private readonly Dictionary<string, ConsumerConfig> _consumerConfigs = new(StringComparer.Ordinal);
    private readonly Dictionary<string, (ConsumerConfig Config, DateTime Created)> _consumerStarts = new(StringComparer.Ordinal);
    private readonly Dictionary<string, int> _consumerFailures = new(StringComparer.Ordinal);
    private readonly ILoggingAdapter _log = Context.GetLogger();
    private readonly InterestLedger? _interest;
    private readonly DisplacedMessages _displaced = new();
    private readonly Dictionary<string, (ulong Sequence, DateTime Time)> _duplicates = new(StringComparer.Ordinal);
    private readonly Queue<string> _duplicateOrder = new();
    private string? _lastMsgId;
    private long _incarnation;
    private readonly List<UnflushedBatch> _unflushed = [];
    private StoreMessage[] _storeScratch = []; // a batch's messages as the store takes them; reused, cleared after each batch
    private bool _flushQueued;

    public StreamActor(InProcessClient client, StreamConfig config, DateTime created, IStreamStore store, string? directory, Func<string, bool> hasInterest, string? domain, ApiCounters counters, LocalStreams streams, StreamConsumers consumers)
    {
        _streams = streams;
        _consumers = consumers;
        _domain = domain;
        _counters = counters;
        _consumerContext = new ConsumerContext(config.Retention == RetentionPolicy.WorkQueue, hasInterest);
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
            // Subjects, limits and flags may change; the store applies the new limits at once.
            _config = update.Config;
            _ingest = IngestTransform(update.Config);
            _store.UpdateConfig(JetStreamApi.ToStoreConfig(update.Config));
            if (_directory is not null)
            {
                var meta = new StreamInfoResponse { Config = update.Config, Created = _created };
                WriteDurably(Path.Combine(_directory, "meta.json"), JsonSerializer.SerializeToUtf8Bytes(meta, JetStreamJsonContext.Default.StreamInfoResponse));
            }

            Unsubscribe();
            Subscribe();
            StartOrigins(fromStore: false); // sources may have changed (a mirror may not)
            await _client.FlushAsync().ConfigureAwait(true); // new subjects in effect before the reply
            Reply(update.ReplyTo, Info(update.Type), JetStreamJsonContext.Default.StreamInfoResponse);
        });
        ReceiveAsync<Protocol.ReplyInfo>(async request =>
        {
            if (request.DidCreate)
            {
                await _client.FlushAsync().ConfigureAwait(true); // the stream's SUB in effect before the creator hears back
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
        });
        Receive<Protocol.ExpireByAge>(_ => _store.ExpireByAge((DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100));
        Receive<Protocol.SyncStore>(_ => _store.Sync());

        Receive<Readiness.AwaitReady>(_ => Sender.Tell(Readiness.Ready.Instance)); // after PreStart: the stream has subscribed to its subjects
        Receive<Protocol.OriginAdvanced>(_ => QueueCopy());
        Receive<Protocol.CopyFromOrigins>(_ => CopyFromOrigins());
        Receive<Protocol.Append>(Append);
        Receive<Protocol.FlushAppends>(_ => FlushAppends());
        Receive<Protocol.GetInfo>(_ => Sender.Tell(Info("")));
        Receive<Protocol.GetDetail>(_ => OnGetDetail());
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
    public static Props Props(InProcessClient client, StreamConfig config, DateTime created, IStreamStore store, string? directory, Func<string, bool> hasInterest, string? domain = null, ApiCounters? counters = null, LocalStreams? streams = null, StreamConsumers? consumers = null)
    {
        counters ??= new ApiCounters();
        streams ??= new LocalStreams();
        consumers ??= new StreamConsumers();
        var props = Akka.Actor.Props.Create(() => new StreamActor(client, config, created, store, directory, hasInterest, domain, counters, streams, consumers));
        return props.WithDispatcher(store.Type == StorageType.Memory ? CallerRunsExecutorConfigurator.DispatcherId : IoDispatcher);
    }

    /// <summary>The dispatcher for actors that block on disk (reference.conf: courier.io-dispatcher).</summary>
    internal const string IoDispatcher = "courier.io-dispatcher";

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    private const string ConsumerMetaFileName = "meta.json";

    private string? ConsumersDirectory => _directory is null ? null : Path.Combine(_directory, "obs");

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
        try
        {
            return base.AroundReceive(receive, message);
        }
        finally
        {
            _out.EndTurn();
        }
    }

    protected override void PreStart()
    {
        LogNewDamage();
        Subscribe();
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
            // One actor message per read batch of the internal client, never one per NATS message.
            // Served by calls on the publisher's thread: no MSG frame formatted and parsed again per message.
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

    private void RecoverConsumers()
    {
        if (ConsumersDirectory is not { } directory || !Directory.Exists(directory))
        {
            return;
        }

        foreach (var consumerDirectory in Directory.EnumerateDirectories(directory))
        {
            var file = Path.Combine(consumerDirectory, ConsumerMetaFileName);
            if (!File.Exists(file))
            {
                continue;
            }

            // The definition from its meta file; the consumer recovers its progress from the journal.
            var meta = JsonSerializer.Deserialize(File.ReadAllBytes(file), ConsumerJsonContext.Default.ConsumerMetaFile);
            if (meta is not null)
            {
                StartConsumer(meta.Config, meta.Created, durable: true);
            }
        }
    }

    /// <summary>
    /// A durable consumer that stopped on its own (Akka stops a persistent actor whose journal write
    /// failed, or whose recovery failed) is started again from its journal after a pause that doubles
    /// per failure (up to <see cref="MaxConsumerRestartDelay"/>), as Akka's backoff supervision would.
    /// A deleted or expired consumer is no longer in <see cref="_consumers"/> and stays gone.
    /// </summary>
    private void OnConsumerTerminated(Terminated terminated)
    {
        foreach (var (name, actor) in _consumers.Entries())
        {
            if (!actor.Equals(terminated.ActorRef) || !_consumerStarts.TryGetValue(name, out var start))
            {
                continue;
            }

            var failures = _consumerFailures.GetValueOrDefault(name) + 1;
            _consumerFailures[name] = failures;
            var delay = TimeSpan.FromMilliseconds(Math.Min(MinConsumerRestartDelay.TotalMilliseconds * Math.Pow(2, Math.Min(failures - 1, 16)), MaxConsumerRestartDelay.TotalMilliseconds));
            _log.Warning("consumer {0} of stream {1} stopped; starting it again from its journal in {2} ms", name, _config.Name, (long)delay.TotalMilliseconds);
            _consumers.Remove(name);
            Timers.StartSingleTimer("restart-" + name, new Protocol.RestartConsumer(name, start.Config, start.Created), delay);
            return;
        }
    }

    private static readonly TimeSpan MinConsumerRestartDelay = TimeSpan.FromMilliseconds(100);
    private static readonly TimeSpan MaxConsumerRestartDelay = TimeSpan.FromSeconds(10);

    private IActorRef StartConsumer(ConsumerConfig config, DateTime created, bool durable)
    {
        var name = config.DurableName ?? config.Name!;
        var persistenceId = durable ? ConsumerActor.PersistenceIdFor(_config.Name, name, created) : null;
        var context = _consumerContext with { Interest = _interest?.Join(name, ConsumerConfigRules.Filters(config)), Feed = _displaced.Join(name) };
        // A unique child name: a deleted consumer's actor may still be stopping when its name is reused.
        var actor = Context.ActorOf(ConsumerActor.Props(_client, _store, _config.Name, config, created, persistenceId, context), $"consumer-{Uri.EscapeDataString(name)}-{++_incarnation}");
        _consumers[name] = actor;
        _consumerConfigs[name] = config;
        if (durable)
        {
            _consumerStarts[name] = (config, created);
            Context.Watch(actor);
        }

        return actor;
    }

    /// <summary>A consumer is gone (deleted or expired): interest retention drops what only it still needed.</summary>
    private void ForgetConsumer(string name)
    {
        _consumerConfigs.Remove(name);
        _consumerStarts.Remove(name);
        _consumerFailures.Remove(name);
        Timers.Cancel("restart-" + name);
        _interest?.Leave(name);
        _displaced.Leave(name);
    }

    // $JS.FC.<stream>.<consumer>.<id>: answers to push consumers' flow control requests (one per MiB or so pushed).
    private void OnFlowControl(Protocol.FlowControlBatch batch)
    {
        foreach (var response in batch.Messages)
        {
            var tokens = response.Subject.Split('.');
            if (tokens.Length > 4 && _consumers.TryGetValue(tokens[3], out var consumer))
            {
                consumer.Tell(new ConsumerActor.Protocol.FlowControlResponse(response.Subject));
            }
        }
    }

    /// <summary>Runs on the publisher's thread (the ack sink's completion): one actor message per run of acks to the same consumer in a read batch (usually the whole batch).</summary>
    private static void DispatchAcks(StreamConsumers consumers, AckEntry[] acks)
    {
        var start = 0;
        for (var i = 1; i <= acks.Length; i++)
        {
            if (i < acks.Length && string.Equals(acks[i].Consumer, acks[start].Consumer, StringComparison.Ordinal))
            {
                continue;
            }

            if (consumers.TryGetValue(acks[start].Consumer, out var consumer))
            {
                consumer.Tell(new ConsumerActor.Protocol.Acks(new ArraySegment<AckEntry>(acks, start, i - start)));
            }

            start = i;
        }
    }

    private void HandleConsumerRequest(Protocol.ConsumerRequest request)
    {
        try
        {
            HandleConsumerRequestCore(request);
        }
        catch (JsonException)
        {
            // A malformed request is the client's error, never the stream's: answer it, keep going.
            var type = "io.nats.jetstream.api.v1.consumer_" + request.Operation.ToLowerInvariant().Replace('.', '_') + "_response";
            Reply(request.ReplyTo, new ErrorResponse { Type = type, Error = ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
        }
    }

    private void HandleConsumerRequestCore(Protocol.ConsumerRequest request)
    {
        switch (request.Operation)
        {
            case "CREATE":
            case "DURABLE.CREATE":
                CreateConsumer(request);
                break;
            case "INFO":
                if (_consumers.TryGetValue(request.Consumer, out var known))
                {
                    ReplyConsumerInfoLater(known, ConsumerActor.Protocol.GetInfo.Instance, request.ReplyTo, "io.nats.jetstream.api.v1.consumer_info_response");
                }
                else
                {
                    ConsumerNotFound(request.ReplyTo, "io.nats.jetstream.api.v1.consumer_info_response");
                }

                break;
            case "NAMES":
                {
                    var names = _consumers.Names.Order(StringComparer.Ordinal).ToList();
                    var (offset, count) = ApiPaging.Page(names.Count, RequestedOffset(request.Payload), ApiPaging.NamesLimit);
                    Reply(request.ReplyTo, new ConsumerNamesResponse
                    {
                        Type = "io.nats.jetstream.api.v1.consumer_names_response",
                        Total = names.Count,
                        Offset = offset,
                        Limit = ApiPaging.NamesLimit,
                        Consumers = names.GetRange(offset, count),
                    }, ConsumerJsonContext.Default.ConsumerNamesResponse);
                    break;
                }

            case "LIST":
                {
                    var names = _consumers.Names.Order(StringComparer.Ordinal).ToList();
                    var (offset, count) = ApiPaging.Page(names.Count, RequestedOffset(request.Payload), ApiPaging.ListLimit);
                    var page = new List<IActorRef>(count);
                    foreach (var name in names.GetRange(offset, count))
                    {
                        if (_consumers.TryGetValue(name, out var listed))
                        {
                            page.Add(listed);
                        }
                    }

                    ReplyConsumerListLater([.. page], names.Count, offset, request.ReplyTo);
                    break;
                }
            case "DELETE":
                if (_consumers.Remove(request.Consumer, out var doomed))
                {
                    // The one wait left in a turn: nothing else (a create of the same name) may run until
                    // the consumer has deleted its state and its directory is gone (Akka suspends the mailbox).
                    RunTask(async () =>
                    {
                        await doomed.Ask<ConsumerActor.Protocol.Deleted>(ConsumerActor.Protocol.Delete.Instance, TimeSpan.FromSeconds(10)).ConfigureAwait(true);
                        ForgetConsumer(request.Consumer);
                        if (ConsumersDirectory is { } dir && Directory.Exists(Path.Combine(dir, request.Consumer)))
                        {
                            Directory.Delete(Path.Combine(dir, request.Consumer), recursive: true);
                        }

                        Reply(request.ReplyTo, new SuccessResponse { Type = "io.nats.jetstream.api.v1.consumer_delete_response", Success = true }, JetStreamJsonContext.Default.SuccessResponse);
                    });
                }
                else
                {
                    ConsumerNotFound(request.ReplyTo, "io.nats.jetstream.api.v1.consumer_delete_response");
                }

                break;
            case "MSG.NEXT":
                if (_consumers.TryGetValue(request.Consumer, out var consumer) && request.ReplyTo is { } inbox)
                {
                    consumer.Tell(new ConsumerActor.Protocol.Next(inbox, request.Payload));
                }
                else if (request.ReplyTo is { } missing)
                {
                    _out.Publish(missing, null, "NATS/1.0 404 Consumer Not Found\r\n\r\n"u8, default);
                }

                break;
        }
    }

    /// <summary>The <c>offset</c> of a CONSUMER.NAMES / LIST request (0 without a body).</summary>
    private static int RequestedOffset(byte[] payload) =>
        payload.Length == 0 ? 0 : JsonSerializer.Deserialize(payload, JetStreamJsonContext.Default.StreamListRequest)?.Offset ?? 0;

    private void CreateConsumer(Protocol.ConsumerRequest request)
    {
        const string Type = "io.nats.jetstream.api.v1.consumer_create_response";
        var create = JsonSerializer.Deserialize(request.Payload, ConsumerJsonContext.Default.CreateConsumerRequest);
        if (create?.Config is not { } config)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        // Clients send empty strings for "no name".
        config.Name = string.IsNullOrEmpty(config.Name) ? null : config.Name;
        config.DurableName = string.IsNullOrEmpty(config.DurableName) ? null : config.DurableName;
        // nats-server's rules for the three subject forms (jsConsumerCreateRequest).
        var misnamed = request.Operation switch
        {
            "DURABLE.CREATE" when config.DurableName is null => new ApiError(400, 10018, "consumer expected to be durable but a durable name was not set"),
            "DURABLE.CREATE" when config.DurableName != request.Consumer => ApiError.ConsumerDurableNameMismatch,
            _ when request.Consumer.Length > 0 && config.DurableName is { } named && named != request.Consumer => ApiError.ConsumerDurableNameMismatch,
            _ when request.Consumer.Length == 0 && config.DurableName is not null => new ApiError(400, 10020, "consumer expected to be ephemeral but a durable name was set in request"),
            _ => null,
        };
        if (misnamed is not null)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = misnamed }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        if (request.Operation != "DURABLE.CREATE" && request.Consumer.Length > 0)
        {
            config.Name ??= request.Consumer;
        }

        if (request.Filter is { Length: > 0 } filter && config.FilterSubject is null && config.FilterSubjects is null)
        {
            config.FilterSubject = filter;
        }

        ConsumerConfigRules.ApplyDefaults(config);
        if (ConsumerConfigRules.Check(config, _config) is { } invalid)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = invalid }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        var durable = config.DurableName is not null;
        var name = config.DurableName ?? config.Name ?? NewConsumerName();
        if (config.DurableName is null)
        {
            config.Name = name;
        }

        if (_consumers.TryGetValue(name, out var existing))
        {
            ReplyConsumerInfoLater(existing, ConsumerActor.Protocol.GetInfo.Instance, request.ReplyTo, Type);
            return;
        }

        if (_config.Retention == RetentionPolicy.WorkQueue && ConsumerConfigRules.CheckWorkQueue(config, _consumerConfigs.Values) is { } refused)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = refused }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        var createdAt = DateTime.UtcNow;
        var persisted = durable && ConsumersDirectory is not null;
        if (persisted)
        {
            // The definition is durable before the consumer exists (write, fsync, rename).
            var consumerDirectory = Path.Combine(ConsumersDirectory!, name);
            Directory.CreateDirectory(consumerDirectory);
            var meta = new ConsumerMetaFile { Name = name, Created = createdAt, Config = config };
            WriteDurably(Path.Combine(consumerDirectory, ConsumerMetaFileName), JsonSerializer.SerializeToUtf8Bytes(meta, ConsumerJsonContext.Default.ConsumerMetaFile));
        }

        var actor = StartConsumer(config, createdAt, persisted);
        ReplyConsumerInfoLater(actor, ConsumerActor.Protocol.GetCreatedInfo.Instance, request.ReplyTo, Type);
    }

    private static string NewConsumerName()
    {
        const string Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        Span<char> name = stackalloc char[8];
        for (var i = 0; i < name.Length; i++)
        {
            name[i] = Alphabet[Random.Shared.Next(Alphabet.Length)];
        }

        return new string(name);
    }

    private void ConsumerNotFound(string? replyTo, string type) =>
        Reply(replyTo, new ErrorResponse { Type = type, Error = new ApiError(404, 10014, "consumer not found") }, JetStreamJsonContext.Default.ErrorResponse);

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

    /// <summary>
    /// Stores a read batch (buffered in the store, not yet written) and queues one flush behind whatever
    /// else is already in the mailbox: batches queued meanwhile are stored before it, so one write and one
    /// fsync cover them all (group commit sized by what is queued). Their PubAcks go out after it.
    /// </summary>
    private void Append(Protocol.Append append)
    {
        var batch = append.Messages;
        try
        {
            var (results, acks) = StoreBatch(batch);
            _unflushed.Add(new UnflushedBatch(batch, results, acks));
        }
        catch
        {
            batch.Release();
            throw;
        }

        if (!_flushQueued)
        {
            _flushQueued = true;
            Self.Tell(Protocol.FlushAppends.Instance);
        }
    }

    /// <summary>Makes every stored batch durable with one flush, then sends their PubAcks (invariant 4).</summary>
    private void FlushAppends()
    {
        _flushQueued = false;
        if (_unflushed.Count == 0)
        {
            return;
        }

        try
        {
            _store.Flush(); // durable before any PubAck goes out
            foreach (var consumer in _consumers.Actors)
            {
                consumer.Tell(ConsumerActor.Protocol.NewMessages.Instance);
            }

            _streams.Notify(_config.Name); // mirrors and sources of this stream copy it

            SendRepublished();
            foreach (var unflushed in _unflushed)
            {
                SendPubAcks(unflushed.Batch, unflushed.Results, unflushed.Acks);
            }
        }
        finally
        {
            ReleaseUnflushed();
        }
    }

    /// <summary>Returns the buffers of stored batches; those not flushed get no PubAck (their clients time out).</summary>
    private void ReleaseUnflushed()
    {
        foreach (var unflushed in _unflushed)
        {
            unflushed.Batch.Release();
            ArrayPool<StoreResult>.Shared.Return(unflushed.Results);
            ArrayPool<PubAck?>.Shared.Return(unflushed.Acks, clearArray: true);
        }

        _unflushed.Clear();
        _republishing.Clear();
    }

    /// <summary>Stores a batch; the results and acks are rented (at least the batch's length) and go back in <see cref="ReleaseUnflushed"/>.</summary>
    private (StoreResult[] Results, PubAck?[] Acks) StoreBatch(RawMessages batch)
    {
        var results = ArrayPool<StoreResult>.Shared.Rent(batch.Count);
        var acks = ArrayPool<PubAck?>.Shared.Rent(batch.Count); // returned cleared: every entry starts null
        var plain = !_config.Sealed && _republish is null && _ingest is null;
        for (var i = 0; i < batch.Count && plain; i++)
        {
            plain = batch[i].HeadersLength == 0;
        }

        if (plain)
        {
            // Fast path: no headers, so no dedupe or expectations: one batch append, straight from the read buffer.
            if (_storeScratch.Length < batch.Count)
            {
                _storeScratch = new StoreMessage[Math.Max(batch.Count, _storeScratch.Length * 2)];
            }

            var messages = _storeScratch.AsSpan(0, batch.Count);
            for (var i = 0; i < batch.Count; i++)
            {
                messages[i] = new StoreMessage(batch.Subject(i), ReadOnlyMemory<byte>.Empty, batch.Payload(i));
            }

            try
            {
                _store.AppendBatch(messages, results.AsSpan(0, batch.Count));
            }
            finally
            {
                messages.Clear(); // no reference kept to the batch's buffer once it goes back to its pool
            }
        }
        else
        {
            for (var i = 0; i < batch.Count; i++)
            {
                acks[i] = AppendChecked(Ingested(batch.ToMessage(i)), out results[i]);
            }
        }

        if (_interest is not null)
        {
            DropUninteresting(batch, results);
        }

        return (results, acks);
    }

    private void SendPubAcks(RawMessages batch, StoreResult[] results, PubAck?[] acks)
    {
        Span<byte> ackJson = stackalloc byte[_pubAckPrefix.Length + 48];
        for (var i = 0; i < batch.Count; i++)
        {
            var reply = batch.Reply(i);
            if (reply.IsEmpty)
            {
                continue;
            }

            if (acks[i] is null && results[i].Ok)
            {
                _out.Publish(reply, FormatPubAck(ackJson, results[i].Sequence, duplicate: false));
                continue;
            }

            if (acks[i] is { Duplicate: true, Error: null } duplicate)
            {
                _out.Publish(reply, FormatPubAck(ackJson, duplicate.Seq, duplicate: true));
                continue;
            }

            var ack = acks[i] ?? new PubAck { Error = StoreFailure(results[i].Error) };
            _out.Publish(reply, JsonSerializer.SerializeToUtf8Bytes(ack, JetStreamJsonContext.Default.PubAck));
        }
    }

    /// <summary>A read batch stored but not yet flushed, with what its PubAcks will say.</summary>
    private readonly record struct UnflushedBatch(RawMessages Batch, StoreResult[] Results, PubAck?[] Acks);

    /// <summary>
    /// nats-server's PubAck bytes, formatted from a per-stream prefix as it does:
    /// <c>{"stream":"S", "seq":5}</c>, or <c>{"stream":"S", "seq":5,"duplicate": true}</c>.
    /// </summary>
    private ReadOnlySpan<byte> FormatPubAck(Span<byte> into, ulong seq, bool duplicate)
    {
        _pubAckPrefix.CopyTo(into);
        var p = _pubAckPrefix.Length;
        Utf8Formatter.TryFormat(seq, into[p..], out var written);
        p += written;
        if (duplicate)
        {
            ",\"duplicate\": true"u8.CopyTo(into[p..]);
            p += ",\"duplicate\": true"u8.Length;
        }

        into[p++] = (byte)'}';
        return into[..p];
    }

    /// <summary>
    /// Interest retention: a message that no consumer's filter matches is not kept, though it takes
    /// its sequence and gets its PubAck (nats-server skips it: SkipMsg). The store has no skip, so
    /// it is appended and removed before the flush: both are durable together, but the limits count
    /// it for that moment (at max_msgs with discard old it pushes out the oldest, as a kept one would).
    /// </summary>
    private void DropUninteresting(RawMessages batch, StoreResult[] results)
    {
        Span<char> subject = stackalloc char[256];
        for (var i = 0; i < batch.Count; i++)
        {
            var bytes = batch.Subject(i).Span;
            var chars = bytes.Length <= subject.Length ? subject[..Encoding.UTF8.GetChars(bytes, subject)] : Encoding.UTF8.GetString(bytes).AsSpan();
            if (results[i].Ok && !_interest!.IsInteresting(chars))
            {
                _store.RemoveMessage(results[i].Sequence);
            }
        }
    }

    /// <summary>
    /// Stores one message after nats-server's header checks: Nats-Msg-Id dedupe within the duplicate
    /// window, Nats-Expected-* expectations, Nats-Rollup. Returns the PubAck when it is not a plain success.
    /// </summary>
    private PubAck? AppendChecked(InternalMessage m, out StoreResult result)
    {
        result = default;
        if (_config.Sealed)
        {
            return new PubAck { Error = new ApiError(400, 10109, "invalid operation on sealed stream") };
        }

        var headers = m.Headers;
        var msgId = headers is null ? null : NatsHeaders.Get(headers, "Nats-Msg-Id");
        PruneDuplicates();
        if (msgId is not null && _duplicates.TryGetValue(msgId, out var original))
        {
            return new PubAck { Stream = _config.Name, Seq = original.Sequence, Duplicate = true };
        }

        if (headers is not null)
        {
            if (NatsHeaders.Get(headers, "Nats-Expected-Stream") is { } expectedStream && expectedStream != _config.Name)
            {
                return new PubAck { Error = new ApiError(400, 10060, "expected stream does not match") };
            }

            var last = _store.State().LastSeq;
            if (NatsHeaders.Get(headers, "Nats-Expected-Last-Sequence") is { } expectedLast &&
                ulong.TryParse(expectedLast, System.Globalization.CultureInfo.InvariantCulture, out var expected) && expected != last)
            {
                return new PubAck { Error = new ApiError(400, 10071, $"wrong last sequence: {last}") };
            }

            if (NatsHeaders.Get(headers, "Nats-Expected-Last-Subject-Sequence") is { } expectedSubjectLast &&
                ulong.TryParse(expectedSubjectLast, System.Globalization.CultureInfo.InvariantCulture, out var expectedSubject))
            {
                var lastForSubject = _store.LoadLastMessage(m.Subject) is { Found: true, Message: { } lm } ? lm.Sequence : 0;
                if (lastForSubject != expectedSubject)
                {
                    return new PubAck { Error = new ApiError(400, 10071, $"wrong last sequence: {lastForSubject}") };
                }
            }

            if (NatsHeaders.Get(headers, "Nats-Expected-Last-Msg-Id") is { } expectedId && expectedId != (_lastMsgId ?? ""))
            {
                return new PubAck { Error = new ApiError(400, 10070, $"wrong last msg ID: {_lastMsgId}") };
            }
        }

        var rollup = headers is null ? null : NatsHeaders.Get(headers, "Nats-Rollup");
        if (rollup is not null && !_config.AllowRollup)
        {
            return new PubAck { Error = new ApiError(500, 10111, "rollup not permitted") };
        }

        var (republishTo, subjectLastSequence) = RepublishTarget(m.Subject);
        result = _store.Append(Encoding.UTF8.GetBytes(m.Subject), headers ?? default, m.Payload);
        if (!result.Ok)
        {
            return new PubAck { Error = StoreFailure(result.Error) };
        }

        if (republishTo is not null)
        {
            QueueRepublish(republishTo, m, result.Sequence, subjectLastSequence);
        }

        if (rollup == "sub")
        {
            _store.Purge(m.Subject, 0, 1);
        }
        else if (rollup == "all")
        {
            _store.Purge(null, 0, 1);
        }

        if (msgId is not null)
        {
            _duplicates[msgId] = (result.Sequence, DateTime.UtcNow);
            _duplicateOrder.Enqueue(msgId);
            _lastMsgId = msgId;
        }

        return null;
    }

    private void PruneDuplicates()
    {
        var window = _config.DuplicateWindow > 0 ? TimeSpan.FromTicks(_config.DuplicateWindow / 100) : TimeSpan.FromMinutes(2);
        var cutoff = DateTime.UtcNow - window;
        while (_duplicateOrder.TryPeek(out var oldest) && (!_duplicates.TryGetValue(oldest, out var entry) || entry.Time < cutoff))
        {
            _duplicateOrder.Dequeue();
            if (_duplicates.TryGetValue(oldest, out var e) && e.Time < cutoff)
            {
                _duplicates.Remove(oldest);
            }
        }
    }

    private static ApiError StoreFailure(StoreError error) => error switch
    {
        StoreError.MessageTooLarge => new ApiError(400, 10054, "message size exceeds maximum allowed"),
        StoreError.MaxMsgs or StoreError.MaxBytes or StoreError.MaxMsgsPerSubject => new ApiError(503, 10077, error.Describe()),
        _ => ApiError.StreamStoreFailed(error.Describe()),
    };

    // $JS.API.DIRECT.GET.<stream> with {seq | last_by_subj | next_by_subj}, or
    // $JS.API.DIRECT.GET.<stream>.<subject>: the stored message itself, with Nats-Stream,
    // Nats-Subject, Nats-Sequence and Nats-Time-Stamp headers; 404 when there is none.
    private void DirectGet(IReadOnlyList<InternalMessage> requests)
    {
        foreach (var request in requests)
        {
            if (request.ReplyTo is not { } reply)
            {
                continue;
            }

            // The stream's own prefix, or its origin's when it is a mirror that answers for it (mirror_direct).
            var prefix = "";
            foreach (var candidate in _directPrefixes)
            {
                if (request.Subject.StartsWith(candidate, StringComparison.Ordinal) && (request.Subject.Length == candidate.Length || request.Subject[candidate.Length] == '.'))
                {
                    prefix = candidate;
                    break;
                }
            }

            if (prefix.Length == 0)
            {
                continue; // queued before the stream stopped answering these
            }

            LoadResult result;
            if (request.Subject.Length > prefix.Length + 1)
            {
                result = _store.LoadLastMessage(request.Subject[(prefix.Length + 1)..]);
            }
            else
            {
                MsgGetRequest? get = null;
                try
                {
                    get = JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.MsgGetRequest);
                }
                catch (JsonException)
                {
                }

                result = get is null ? default
                    : get.NextBySubject is { } next ? _store.LoadNextMessage(next, get.Seq)
                    : get.LastBySubject is { } last ? _store.LoadLastMessage(last)
                    : _store.LoadMessage(get.Seq);
            }

            if (!result.Found || result.Message is not { } m)
            {
                _out.Publish(reply, null, "NATS/1.0 404 Message Not Found\r\n\r\n"u8, default);
                continue;
            }

            var headers = NatsHeaders.Set(m.Headers.Span, "Nats-Stream", _config.Name);
            headers = NatsHeaders.Set(headers, "Nats-Subject", m.Subject);
            headers = NatsHeaders.Set(headers, "Nats-Sequence", m.Sequence.ToString(System.Globalization.CultureInfo.InvariantCulture));
            headers = NatsHeaders.Set(headers, "Nats-Time-Stamp", FromUnixNanos(m.Timestamp).ToString("yyyy-MM-ddTHH:mm:ss.fffffffZ", System.Globalization.CultureInfo.InvariantCulture));
            _out.Publish(reply, null, headers, m.Payload.Span);
        }
    }

    private void HandleRequest(Protocol.Request request)
    {
        try
        {
            HandleRequestCore(request);
        }
        catch (JsonException)
        {
            // A malformed request is the client's error, never the stream's: answer it, keep going.
            var type = "io.nats.jetstream.api.v1.stream_" + request.Operation.ToLowerInvariant().Replace('.', '_') + "_response";
            Reply(request.ReplyTo, new ErrorResponse { Type = type, Error = ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
        }
    }

    private void HandleRequestCore(Protocol.Request request)
    {
        switch (request.Operation)
        {
            case "INFO":
                Reply(request.ReplyTo, DetailedInfo(request.Payload), JetStreamJsonContext.Default.StreamInfoResponse);
                break;
            case "PURGE":
                Purge(request);
                break;
            case "MSG.GET":
                GetMessage(request);
                break;
            case "MSG.DELETE":
                DeleteMessage(request);
                break;
        }
    }

    private void Purge(Protocol.Request request)
    {
        const string Type = "io.nats.jetstream.api.v1.stream_purge_response";
        if (_config.Sealed)
        {
            Reply(request.ReplyTo, new StreamPurgeResponse { Type = Type, Error = ApiError.StreamSealed }, JetStreamJsonContext.Default.StreamPurgeResponse);
            return;
        }

        if (_config.DenyPurge)
        {
            Reply(request.ReplyTo, new StreamPurgeResponse { Type = Type, Error = new ApiError(500, 10110, "stream purge not permitted") }, JetStreamJsonContext.Default.StreamPurgeResponse);
            return;
        }

        var purge = request.Payload.Length == 0
            ? new StreamPurgeRequest()
            : JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.StreamPurgeRequest) ?? new StreamPurgeRequest();
        var purged = purge.Filter is null && purge.Seq == 0 && purge.Keep == 0
            ? _store.Purge()
            : _store.Purge(purge.Filter, purge.Seq, purge.Keep);
        Reply(request.ReplyTo, new StreamPurgeResponse { Type = Type, Success = true, Purged = purged }, JetStreamJsonContext.Default.StreamPurgeResponse);
    }

    private void GetMessage(Protocol.Request request)
    {
        const string Type = "io.nats.jetstream.api.v1.stream_msg_get_response";
        MsgGetRequest? get;
        try
        {
            get = JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.MsgGetRequest);
        }
        catch (JsonException)
        {
            get = null;
        }

        if (get is null || (get.Seq == 0 && get.LastBySubject is null && get.NextBySubject is null))
        {
            Reply(request.ReplyTo, new MsgGetResponse { Type = Type, Error = ApiError.BadRequest }, JetStreamJsonContext.Default.MsgGetResponse);
            return;
        }

        var result = get.LastBySubject is { } last
            ? _store.LoadLastMessage(last)
            : get.NextBySubject is { } next
                ? _store.LoadNextMessage(next, get.Seq)
                : _store.LoadMessage(get.Seq);
        if (!result.Found || result.Message is not { } m)
        {
            Reply(request.ReplyTo, new MsgGetResponse { Type = Type, Error = ApiError.NoMessageFound }, JetStreamJsonContext.Default.MsgGetResponse);
            return;
        }

        var message = new StoredMessageInfo
        {
            Subject = m.Subject,
            Seq = m.Sequence,
            Headers = m.Headers.IsEmpty ? null : m.Headers.ToArray(),
            Data = m.Payload.IsEmpty ? null : m.Payload.ToArray(),
            Time = FromUnixNanos(m.Timestamp),
        };
        Reply(request.ReplyTo, new MsgGetResponse { Type = Type, Message = message }, JetStreamJsonContext.Default.MsgGetResponse);
    }

    private void DeleteMessage(Protocol.Request request)
    {
        const string Type = "io.nats.jetstream.api.v1.stream_msg_delete_response";
        if (_config.Sealed)
        {
            Reply(request.ReplyTo, new SuccessResponse { Type = Type, Error = ApiError.StreamSealed }, JetStreamJsonContext.Default.SuccessResponse);
            return;
        }

        if (_config.DenyDelete)
        {
            Reply(request.ReplyTo, new SuccessResponse { Type = Type, Error = new ApiError(500, 10057, "message delete not permitted") }, JetStreamJsonContext.Default.SuccessResponse);
            return;
        }

        var delete = JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.MsgDeleteRequest);
        var removed = delete is not null && (delete.NoErase ? _store.RemoveMessage(delete.Seq) : _store.EraseMessage(delete.Seq));
        Reply(
            request.ReplyTo,
            removed ? new SuccessResponse { Type = Type, Success = true } : new SuccessResponse { Type = Type, Error = new ApiError(500, 10057, "no message found") },
            JetStreamJsonContext.Default.SuccessResponse);
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
        public sealed record Update(StreamConfig Config, string ReplyTo, string Type);

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
