using System.Text.Json;
using Akka.Actor;
using Akka.Event;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// The stream's consumers: starting, recovering and restarting their actors, and the consumer API
/// (CREATE, DURABLE.CREATE, INFO, NAMES, LIST, DELETE) and flow control answers routed to them.
/// </summary>
internal sealed partial class StreamActor
{
    private readonly Dictionary<string, ConsumerConfig> _consumerConfigs = new(StringComparer.Ordinal);
    private readonly Dictionary<string, (ConsumerConfig Config, DateTime Created)> _consumerStarts = new(StringComparer.Ordinal);
    private readonly Dictionary<string, int> _consumerFailures = new(StringComparer.Ordinal);
    private long _incarnation;

    private const string ConsumerMetaFileName = "meta.json";

    private string? ConsumersDirectory => _directory is null ? null : Path.Combine(_directory, "obs");

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
            ConsumerMetaFile? meta;
            try
            {
                meta = JsonSerializer.Deserialize(_meta.Read(file, _meta.ConsumerContext(_config.Name, Path.GetFileName(consumerDirectory)), "consumer"), ConsumerJsonContext.Default.ConsumerMetaFile);
            }
            catch (Exception e) when (e is JsonException or InvalidDataException)
            {
                // nats-server logs "Error adding consumer" and goes on without it; a replica copies it from its
                // leader (StreamActor.Catchup.cs: a replica that lost a consumer's definition catches up).
                _log.Warning("Error recreating consumer {0} of stream {1}: {2}", Path.GetFileName(consumerDirectory), _config.Name, e.Message);
                _consumerFilesDamaged = true;
                continue;
            }

            if (meta is not null)
            {
                ConsumerConfigRules.ApplyDefaults(meta.Config); // a file written before ack_wait's default moved here has 0
                StartConsumer(meta.Config, meta.Created, durable: true, ReplicatedConsumerState(consumerDirectory));
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

    private IActorRef StartConsumer(ConsumerConfig config, DateTime created, bool durable, ConsumerSnapshot? seed = null)
    {
        var name = config.DurableName ?? config.Name!;
        var persistenceId = durable ? ConsumerActor.PersistenceIdFor(_config.Name, name, created) : null;
        var context = _consumerContext with { Interest = _interest?.Join(name, ConsumerConfigRules.Filters(config)), Feed = _displaced.Join(name), Seed = seed };
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

    /// <summary>A durable consumer's directory (its meta file) goes with the consumer; ephemerals have none.</summary>
    private void DeleteConsumerDirectory(string name)
    {
        if (ConsumersDirectory is { } dir && Directory.Exists(Path.Combine(dir, name)))
        {
            Directory.Delete(Path.Combine(dir, name), recursive: true);
        }
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
                        Advisories.Consumer(_echoOut, _config.Name, request.Consumer, AdvisoryAction.Delete, _domain);
                        DeleteConsumerDirectory(request.Consumer);
                        ProposeConsumerDeleted(request.Consumer);

                        Reply(request.ReplyTo, new SuccessResponse { Type = "io.nats.jetstream.api.v1.consumer_delete_response", Success = true }, JetStreamJsonContext.Default.SuccessResponse);
                    });
                }
                else
                {
                    ConsumerNotFound(request.ReplyTo, "io.nats.jetstream.api.v1.consumer_delete_response");
                }

                break;
            case "LEADER.STEPDOWN":
                // As nats-server's jsConsumerLeaderStepDownRequest: an unknown consumer, then a body, are errors.
                if (!_consumers.TryGetValue(request.Consumer, out _))
                {
                    ConsumerNotFound(request.ReplyTo, "io.nats.jetstream.api.v1.consumer_leader_stepdown_response");
                }
                else if (!ApiRequests.IsEmpty(request.Payload))
                {
                    Reply(request.ReplyTo, new ErrorResponse { Type = "io.nats.jetstream.api.v1.consumer_leader_stepdown_response", Error = ApiError.BadRequest }, JetStreamJsonContext.Default.ErrorResponse);
                }
                else
                {
                    StepDown(request.ReplyTo, "io.nats.jetstream.api.v1.consumer_leader_stepdown_response");
                }

                break;
            case "PAUSE":
                PauseConsumer(request);
                break;
            case "RESET":
                ResetConsumer(request);
                break;
            case "UNPIN":
                UnpinConsumer(request);
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
        var create = StrictRequests.ReadCreateConsumer(request.Payload, out var unreadable);
        if (create?.Config is not { } config)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = unreadable ?? ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
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
        config.PauseUntil = ConsumerConfigRules.PauseTime(config.PauseUntil);
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
            // nats-server (addConsumerWithAssignment): a consumer that exists is answered with; with another
            // configuration, "create" refuses it, no action or "update" changes it (updateConfig) or refuses.
            if (_consumerConfigs.TryGetValue(name, out var current))
            {
                // A durable's config.name is set by CONSUMER.CREATE and not by DURABLE.CREATE (nats-server sets it
                // on both): no difference. pause_until stays as it is: only CONSUMER.PAUSE changes it (nats-server).
                config.Name = current.Name;
                config.PauseUntil = current.PauseUntil;
                if (!ConsumerConfigRules.SameConfig(config, current))
                {
                    var unchangeable = create.Action == ConsumerAction.Create
                        ? ApiError.ConsumerAlreadyExists
                        : ConsumerConfigRules.CheckUpdate(current, config, _consumerContext.HasInterest, _interest is not null);
                    if (unchangeable is not null)
                    {
                        Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = unchangeable }, JetStreamJsonContext.Default.ErrorResponse);
                        return;
                    }

                    UpdateConsumer(name, existing, config);
                }
            }

            // After the update in the consumer's mailbox: the answer shows the new configuration.
            ReplyConsumerInfoLater(existing, ConsumerActor.Protocol.GetInfo.Instance, request.ReplyTo, Type);
            return;
        }

        if (create.Action == ConsumerAction.Update)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = ApiError.ConsumerDoesNotExist }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        // nats-server (addConsumerWithAssignment): the stream's max_consumers, or the account's when the stream
        // has none or the account's is lower, counts every consumer the stream has.
        var maxConsumers = _config.MaxConsumers;
        var accountMax = _accountMaxConsumers();
        if (maxConsumers <= 0 || (accountMax > 0 && accountMax < maxConsumers))
        {
            maxConsumers = accountMax;
        }

        if (maxConsumers > 0 && _consumers.Count >= maxConsumers)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = ApiError.MaximumConsumersReached }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        if (_config.Retention == RetentionPolicy.WorkQueue && ConsumerConfigRules.CheckWorkQueue(config, _consumerConfigs.Values) is { } refused)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = refused }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        var createdAt = DateTime.UtcNow;
        // mem_storage: the consumer's state stays in memory, and (as in nats-server 2.9.10) it does not
        // come back after a restart: no meta file, no journal.
        var persisted = durable && ConsumersDirectory is not null && !config.MemoryStorage;
        if (_replication is not null && !persisted && config.Replicas > 1)
        {
            // Only a file-backed durable's state goes through the stream's log; nats-server would replicate this one too.
            Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = new ApiError(500, 10012, "Courier replicates durable file-backed consumers only: an ephemeral or memory-storage consumer takes num_replicas 1") }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        if (persisted && _replication is not null)
        {
            ProposeConsumer(name, createdAt, config, request.ReplyTo); // created on every replica (and started here) when committed
            return;
        }

        if (persisted)
        {
            // The definition is durable before the consumer exists (write, fsync, rename).
            var consumerDirectory = Path.Combine(ConsumersDirectory!, name);
            Directory.CreateDirectory(consumerDirectory);
            var meta = new ConsumerMetaFile { Name = name, Created = createdAt, Config = config };
            _meta.WriteDurably(Path.Combine(consumerDirectory, ConsumerMetaFileName), JsonSerializer.SerializeToUtf8Bytes(meta, ConsumerJsonContext.Default.ConsumerMetaFile), _meta.ConsumerContext(_config.Name, name));
        }

        var actor = StartConsumer(config, createdAt, persisted);
        Advisories.Consumer(_echoOut, _config.Name, name, AdvisoryAction.Create, _domain);
        ReplyConsumerInfoLater(actor, ConsumerActor.Protocol.GetCreatedInfo.Instance, request.ReplyTo, Type);
    }

    /// <summary>
    /// A running consumer takes a changed configuration (<see cref="ConsumerConfigRules.CheckUpdate"/> allowed
    /// it, or CONSUMER.PAUSE); a durable's meta file is rewritten first, so a restart starts it with the new
    /// one, and on a replicated stream the new definition goes through the log too, so every replica's meta
    /// file has it (a new leader starts the consumer with it).
    /// </summary>
    private void UpdateConsumer(string name, IActorRef consumer, ConsumerConfig config)
    {
        if (_consumerStarts.TryGetValue(name, out var start))
        {
            if (ConsumersDirectory is { } directory)
            {
                var meta = new ConsumerMetaFile { Name = name, Created = start.Created, Config = config };
                _meta.WriteDurably(Path.Combine(directory, name, ConsumerMetaFileName), JsonSerializer.SerializeToUtf8Bytes(meta, ConsumerJsonContext.Default.ConsumerMetaFile), _meta.ConsumerContext(_config.Name, name));
            }

            _consumerStarts[name] = (config, start.Created);
            if (_replication is not null)
            {
                ProposeConsumer(name, start.Created, config, replyTo: null);
            }
        }

        _consumerConfigs[name] = config;
        consumer.Tell(new ConsumerActor.Protocol.UpdateConfig(config));
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
}
