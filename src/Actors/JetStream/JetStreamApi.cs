using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Courier.Actors.Runtime;
using Courier.Actors.Server;
using Courier.Protocols.JetStream;
using Courier.Protocols.Subjects;
using Courier.Storage;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.JetStream;

/// <summary>
/// Answers <c>$JS.API.*</c> for the node: creates, finds and deletes streams (one
/// <see cref="StreamActor"/> each) and routes stream requests to them. It is a client of the broker
/// through an <see cref="InternalClient"/>; requests arrive one actor message per read batch.
/// </summary>
internal sealed class JetStreamApi : ReceiveActor
{
    private const string ApiPrefix = "$JS.API.";
    private const string MetaFile = "meta.json";

    private readonly Broker _broker;
    private readonly Dictionary<string, StreamEntry> _streams = new(StringComparer.Ordinal);
    private readonly string _streamsDirectory;
    private readonly FileStoreOptions _fileStoreOptions;
    private InternalClient _client = null!;
    private long _apiTotal;
    private long _apiErrors;

    public JetStreamApi(Broker broker)
    {
        _broker = broker;
        _streamsDirectory = Path.Combine(broker.Options.JetStreamAccountDirectory, "streams");
        _fileStoreOptions = new FileStoreOptions { Sync = broker.Options.JetStreamSync };
        ReceiveAsync<Protocol.Requests>(HandleAsync);
        ReceiveAsync<Protocol.AwaitReady>(async _ =>
        {
            // PreStart subscribed to $JS.API.>: once the broker has answered a PING after it, the
            // subscription is in effect and no request can meet "no responders".
            var sender = Sender;
            await _client.FlushAsync().ConfigureAwait(true);
            sender.Tell(Protocol.Ready.Instance);
        });
        Receive<Protocol.GetStream>(get => Sender.Tell(_streams.TryGetValue(get.Name, out var entry) ? entry.Actor : ActorRefs.Nobody));
        Receive<Terminated>(OnStreamTerminated);
        ReceiveAsync<Protocol.GetStats>(async _ =>
        {
            var sender = Sender;
            var stats = new JetStreamStats
            {
                Streams = _streams.Count,
                ApiTotal = _apiTotal,
                ApiErrors = _apiErrors,
                StoreDirectory = Path.Combine(_broker.Options.EffectiveStoreDir, "jetstream"),
                ReservedMemory = Reserved("memory"),
                ReservedStorage = Reserved("file"),
            };
            foreach (var entry in _streams.Values)
            {
                var info = await entry.Actor.Ask<StreamInfoResponse>(StreamActor.Protocol.GetInfo.Instance, TimeSpan.FromSeconds(10)).ConfigureAwait(true);
                var bytes = info.State?.Bytes ?? 0;
                stats.Messages += info.State?.Messages ?? 0;
                stats.Bytes += bytes;
                stats.Consumers += info.State?.ConsumerCount ?? 0;
                if (entry.Config.Storage == "memory")
                {
                    stats.Memory += bytes;
                }
                else
                {
                    stats.Storage += bytes;
                }
            }

            sender.Tell(stats);
        });
    }

    public static Props Props(Broker broker) => Runtime.Props.Create(() => new JetStreamApi(broker));

    protected override void PreStart()
    {
        Directory.CreateDirectory(_streamsDirectory);
        _client = new InternalClient(_broker);
        _client.Start();
        var self = Self;
        _client.Subscribe(ApiPrefix + ">", null, batch => self.Tell(new Protocol.Requests(batch)));
        RecoverStreams();
    }

    protected override void PostStop() => _client.DisposeAsync().AsTask().Wait(TimeSpan.FromSeconds(5));

    /// <summary>A stream that fails (or is killed) restarts and recovers from its store.</summary>
    protected override SupervisorStrategy SupervisorStrategy() =>
        new OneForOneStrategy(10, TimeSpan.FromMinutes(1), _ => Directive.Restart);

    private void RecoverStreams()
    {
        foreach (var directory in Directory.EnumerateDirectories(_streamsDirectory))
        {
            var meta = Path.Combine(directory, MetaFile);
            if (!File.Exists(meta))
            {
                continue;
            }

            var stored = JsonSerializer.Deserialize(File.ReadAllBytes(meta), JetStreamJsonContext.Default.StreamInfoResponse);
            if (stored?.Config is { } config)
            {
                Start(config, stored.Created, OpenStore(config, directory));
            }
        }
    }

    private async Task HandleAsync(Protocol.Requests requests)
    {
        foreach (var request in requests.Messages)
        {
            _apiTotal++;
            if (request.ReplyTo is null)
            {
                continue;
            }

            try
            {
                await DispatchAsync(request.Subject[ApiPrefix.Length..], request).ConfigureAwait(true);
            }
            catch (JsonException)
            {
                _apiErrors++;
                Reply(request.ReplyTo, new ErrorResponse { Type = "io.nats.jetstream.api.v1.error", Error = ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
            }
        }
    }

    private async Task DispatchAsync(string api, InternalMessage request)
    {
        var reply = request.ReplyTo!;
        if (api.StartsWith("DIRECT.GET.", StringComparison.Ordinal))
        {
            // Answered by the stream itself (it subscribes when allow_direct is set), or by nobody.
            return;
        }

        if (api == "INFO")
        {
            await AccountInfoAsync(reply).ConfigureAwait(true);
            return;
        }

        if (api == "STREAM.NAMES")
        {
            var filter = request.Payload.Length > 0 ? JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.StreamListRequest)?.Subject : null;
            var names = _streams.Values.Where(s => filter is null || Subjects(s.Config).Any(x => SubjectRules.IsSubsetOf(x, filter) || SubjectRules.IsSubsetOf(filter, x)))
                .Select(s => s.Config.Name).Order(StringComparer.Ordinal).ToList();
            Reply(reply, new StreamNamesResponse { Type = "io.nats.jetstream.api.v1.stream_names_response", Total = names.Count, Limit = 1024, Streams = names }, JetStreamJsonContext.Default.StreamNamesResponse);
            return;
        }

        if (api == "STREAM.LIST")
        {
            var infos = new List<StreamInfoResponse>();
            foreach (var entry in _streams.Values.OrderBy(s => s.Config.Name, StringComparer.Ordinal))
            {
                infos.Add(await entry.Actor.Ask<StreamInfoResponse>(StreamActor.Protocol.GetInfo.Instance, TimeSpan.FromSeconds(10)).ConfigureAwait(true));
            }

            Reply(reply, new StreamListResponse { Type = "io.nats.jetstream.api.v1.stream_list_response", Total = infos.Count, Limit = 256, Streams = infos }, JetStreamJsonContext.Default.StreamListResponse);
            return;
        }

        if (api.StartsWith("CONSUMER.", StringComparison.Ordinal))
        {
            RouteConsumerRequest(api, request);
            return;
        }

        var (operation, name) = SplitStreamApi(api);
        switch (operation)
        {
            case "STREAM.CREATE":
            case "STREAM.UPDATE":
                await CreateAsync(operation, name, request).ConfigureAwait(true);
                return;
            case "STREAM.DELETE":
                await DeleteAsync(name, reply).ConfigureAwait(true);
                return;
            case "STREAM.INFO":
            case "STREAM.PURGE":
            case "STREAM.MSG.GET":
            case "STREAM.MSG.DELETE":
                if (!_streams.TryGetValue(name, out var stream))
                {
                    _apiErrors++;
                    Reply(reply, new ErrorResponse { Type = ResponseType(operation), Error = ApiError.StreamNotFound }, JetStreamJsonContext.Default.ErrorResponse);
                    return;
                }

                stream.Actor.Tell(new StreamActor.Protocol.Request(operation["STREAM.".Length..], reply, request.Payload));
                return;
            default:
                _apiErrors++;
                Reply(reply, new ErrorResponse { Type = "io.nats.jetstream.api.v1.error", Error = new ApiError(400, 10003, $"{api} is not supported by Courier yet") }, JetStreamJsonContext.Default.ErrorResponse);
                return;
        }
    }

    // CONSUMER.CREATE.<stream>[.<consumer>[.<filter>]], CONSUMER.DURABLE.CREATE.<stream>.<durable>,
    // CONSUMER.{INFO,DELETE,MSG.NEXT}.<stream>.<consumer>, CONSUMER.{NAMES,LIST}.<stream>
    private void RouteConsumerRequest(string api, InternalMessage request)
    {
        var tokens = api.Split('.');
        string operation;
        int streamAt;
        if (tokens.Length > 2 && tokens[1] == "DURABLE" && tokens[2] == "CREATE")
        {
            (operation, streamAt) = ("DURABLE.CREATE", 3);
        }
        else if (tokens.Length > 2 && tokens[1] == "MSG" && tokens[2] == "NEXT")
        {
            (operation, streamAt) = ("MSG.NEXT", 3);
        }
        else
        {
            (operation, streamAt) = (tokens[1], 2);
        }

        var stream = tokens.Length > streamAt ? tokens[streamAt] : "";
        var consumer = tokens.Length > streamAt + 1 ? tokens[streamAt + 1] : "";
        var filter = tokens.Length > streamAt + 2 ? string.Join('.', tokens[(streamAt + 2)..]) : null;
        if (!_streams.TryGetValue(stream, out var entry))
        {
            if (operation == "MSG.NEXT")
            {
                return; // nats-server: no reply to a pull request for an unknown stream; the client times out
            }

            Fail(request.ReplyTo!, "io.nats.jetstream.api.v1.consumer_" + operation.ToLowerInvariant().Replace('.', '_') + "_response", ApiError.StreamNotFound);
            return;
        }

        entry.Actor.Tell(new StreamActor.Protocol.ConsumerRequest(operation, consumer, filter, request.ReplyTo, request.Payload));
    }

    private async Task AccountInfoAsync(string reply)
    {
        long memory = 0, storage = 0;
        foreach (var entry in _streams.Values)
        {
            var info = await entry.Actor.Ask<StreamInfoResponse>(StreamActor.Protocol.GetInfo.Instance, TimeSpan.FromSeconds(10)).ConfigureAwait(true);
            var bytes = (long)(info.State?.Bytes ?? 0);
            if (entry.Config.Storage == "memory")
            {
                memory += bytes;
            }
            else
            {
                storage += bytes;
            }
        }

        // Limits: the global account has nats-server's dynamic limits, all -1, whatever max_memory_store
        // and max_file_store say (those are the server's, in /jsz config; nats-server 2.9.10 checked).
        Reply(reply, new AccountInfoResponse
        {
            Type = "io.nats.jetstream.api.v1.account_info_response",
            Memory = memory,
            Storage = storage,
            Streams = _streams.Count,
            Limits = new AccountLimits(),
            Api = new ApiStats { Total = _apiTotal, Errors = _apiErrors },
        }, JetStreamJsonContext.Default.AccountInfoResponse);
    }

    private async Task CreateAsync(string operation, string name, InternalMessage request)
    {
        var type = ResponseType(operation);
        var reply = request.ReplyTo!;
        var config = JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.StreamConfig);
        if (config is null)
        {
            Fail(reply, type, ApiError.InvalidJson);
            return;
        }

        if (config.Name.Length == 0)
        {
            config.Name = name;
        }

        if (config.Name != name)
        {
            Fail(reply, type, ApiError.StreamMismatch);
            return;
        }

        if (Validate(config) is { } invalid)
        {
            Fail(reply, type, invalid);
            return;
        }

        if (_streams.TryGetValue(name, out var existing))
        {
            var same = JsonSerializer.Serialize(existing.Config, JetStreamJsonContext.Default.StreamConfig) == JsonSerializer.Serialize(config, JetStreamJsonContext.Default.StreamConfig);
            if (!same && operation == "STREAM.UPDATE")
            {
                await UpdateAsync(existing, config, reply, type).ConfigureAwait(true);
                return;
            }

            // Creating a stream that exists with the same configuration returns it, as nats-server.
            if (!same)
            {
                Fail(reply, type, ApiError.StreamNameExists);
                return;
            }

            var current = await existing.Actor.Ask<StreamInfoResponse>(StreamActor.Protocol.GetInfo.Instance, TimeSpan.FromSeconds(10)).ConfigureAwait(true);
            current.Type = type;
            Reply(reply, current, JetStreamJsonContext.Default.StreamInfoResponse);
            return;
        }

        if (operation == "STREAM.UPDATE")
        {
            Fail(reply, type, ApiError.StreamNotFound);
            return;
        }

        foreach (var other in _streams.Values)
        {
            if (Subjects(config).Any(a => Subjects(other.Config).Any(b => SubjectRules.IsSubsetOf(a, b) || SubjectRules.IsSubsetOf(b, a))))
            {
                Fail(reply, type, ApiError.SubjectOverlap);
                return;
            }
        }

        if (CheckResources(config, previous: null) is { } insufficient)
        {
            Fail(reply, type, insufficient);
            return;
        }

        var created = DateTime.UtcNow;
        var directory = Path.Combine(_streamsDirectory, name);
        IStreamStore store;
        try
        {
            store = OpenStore(config, directory);
            if (config.Storage != "memory")
            {
                var meta = new StreamInfoResponse { Config = config, Created = created };
                File.WriteAllBytes(Path.Combine(directory, MetaFile), JsonSerializer.SerializeToUtf8Bytes(meta, JetStreamJsonContext.Default.StreamInfoResponse));
            }
        }
        catch (IOException e)
        {
            Fail(reply, type, ApiError.StreamStoreFailed(e.Message));
            return;
        }

        var actor = Start(config, created, store);

        // The stream's SUB must be in effect before the creator hears back: it publishes next.
        var info = await actor.Ask<StreamInfoResponse>(StreamActor.Protocol.GetInfo.Instance, TimeSpan.FromSeconds(10)).ConfigureAwait(true);
        await _client.FlushAsync().ConfigureAwait(true);
        info.Type = type;
        info.DidCreate = true;
        Reply(reply, info, JetStreamJsonContext.Default.StreamInfoResponse);
    }

    // STREAM.UPDATE: storage and retention are fixed, a sealed stream stays sealed, subjects must
    // not overlap another stream; everything else may change.
    private async Task UpdateAsync(StreamEntry existing, StreamConfig config, string reply, string type)
    {
        var current = existing.Config;
        if (config.Storage != current.Storage)
        {
            Fail(reply, type, ApiError.StreamInvalidConfig("stream configuration update can not change storage type"));
            return;
        }

        if (config.Retention != current.Retention)
        {
            Fail(reply, type, ApiError.StreamInvalidConfig("stream configuration update can not change retention policy"));
            return;
        }

        if (current.Sealed && !config.Sealed)
        {
            Fail(reply, type, ApiError.StreamInvalidConfig("stream configuration update can not unseal a sealed stream"));
            return;
        }

        foreach (var other in _streams.Values.Where(s => s.Config.Name != config.Name))
        {
            if (Subjects(config).Any(a => Subjects(other.Config).Any(b => SubjectRules.IsSubsetOf(a, b) || SubjectRules.IsSubsetOf(b, a))))
            {
                Fail(reply, type, ApiError.SubjectOverlap);
                return;
            }
        }

        if (config.Sealed)
        {
            // As nats-server: nothing gets in or out of a sealed stream any more.
            config.MaxAge = 0;
            config.Discard = "new";
            config.DenyDelete = true;
            config.DenyPurge = true;
            config.AllowRollup = false;
        }

        if (CheckResources(config, current) is { } insufficient)
        {
            Fail(reply, type, insufficient);
            return;
        }

        var info = await existing.Actor.Ask<StreamInfoResponse>(new StreamActor.Protocol.Update(config), TimeSpan.FromSeconds(10)).ConfigureAwait(true);
        _streams[config.Name] = existing with { Config = config };
        if (config.Storage != "memory")
        {
            var meta = new StreamInfoResponse { Config = config, Created = info.Created };
            File.WriteAllBytes(Path.Combine(_streamsDirectory, config.Name, MetaFile), JsonSerializer.SerializeToUtf8Bytes(meta, JetStreamJsonContext.Default.StreamInfoResponse));
        }

        await _client.FlushAsync().ConfigureAwait(true); // new subjects in effect before the reply
        info.Type = type;
        Reply(reply, info, JetStreamJsonContext.Default.StreamInfoResponse);
    }

    private async Task DeleteAsync(string name, string reply)
    {
        const string Type = "io.nats.jetstream.api.v1.stream_delete_response";
        if (!_streams.Remove(name, out var entry))
        {
            Fail(reply, Type, ApiError.StreamNotFound);
            return;
        }

        await entry.Actor.Ask<StreamActor.Protocol.Deleted>(StreamActor.Protocol.Delete.Instance, TimeSpan.FromSeconds(30)).ConfigureAwait(true);
        Reply(reply, new SuccessResponse { Type = Type, Success = true }, JetStreamJsonContext.Default.SuccessResponse);
    }

    private IActorRef Start(StreamConfig config, DateTime created, IStreamStore store)
    {
        var directory = config.Storage == "memory" ? null : Path.Combine(_streamsDirectory, config.Name);
        var actor = Context.ActorOf(StreamActor.Props(_client, config, created, store, directory, HasInterest), "stream-" + Uri.EscapeDataString(config.Name));
        Context.Watch(actor);
        _streams[config.Name] = new StreamEntry(config, actor, created);
        return actor;
    }

    /// <summary>
    /// A stream actor that stopped without being deleted (it failed more often than its supervisor
    /// allows) is started again from its store, so one broken stream never leaves requests to it
    /// waiting for an actor that is gone.
    /// </summary>
    private void OnStreamTerminated(Terminated terminated)
    {
        var dead = _streams.FirstOrDefault(s => s.Value.Actor.Equals(terminated.ActorRef));
        if (dead.Value is not { } entry)
        {
            return; // deleted through the API
        }

        _broker.Logger.LogError("stream {Stream} stopped after repeated failures; starting it again from its store", entry.Config.Name);
        _streams.Remove(entry.Config.Name);
        try
        {
            // A file stream continues from its files; a memory stream starts empty.
            Start(entry.Config, entry.Created, OpenStore(entry.Config, Path.Combine(_streamsDirectory, entry.Config.Name)));
        }
        catch (IOException e)
        {
            _broker.Logger.LogError(e, "stream {Stream} could not be reopened", entry.Config.Name);
        }
    }

    private bool HasInterest(string subject) => !_broker.Space.Match(System.Text.Encoding.UTF8.GetBytes(subject)).IsEmpty;

    /// <summary>The store's part of a stream configuration.</summary>
    internal static StoreConfig ToStoreConfig(StreamConfig config) => new()
    {
        Name = config.Name,
        MaxMsgs = config.MaxMsgs,
        MaxBytes = config.MaxBytes,
        MaxAge = TimeSpan.FromTicks(config.MaxAge / 100),
        MaxMsgsPerSubject = config.MaxMsgsPerSubject,
        MaxMsgSize = config.MaxMsgSize,
        Discard = config.Discard == "new" ? DiscardPolicy.New : DiscardPolicy.Old,
        DiscardNewPerSubject = config.DiscardNewPerSubject,
        FirstSeq = config.FirstSeq,
    };

    /// <summary>
    /// max_memory_store / max_file_store as nats-server checks them on STREAM.CREATE and UPDATE
    /// (jetStream.checkBytesLimits): the streams' max_bytes are reserved, and a stream fits if the
    /// reservations of its storage type plus its own max_bytes (1 byte without one; on update only
    /// the growth) stay within the limit. Usage is not checked here. Null when it fits or -1 (no limit).
    /// </summary>
    private ApiError? CheckResources(StreamConfig config, StreamConfig? previous)
    {
        var memory = config.Storage == "memory";
        var limit = memory ? _broker.Options.MaxMemoryStore : _broker.Options.MaxFileStore;
        if (limit < 0)
        {
            return null;
        }

        var adding = previous is null ? (config.MaxBytes <= 0 ? 1 : config.MaxBytes) : Math.Max(0, config.MaxBytes - previous.MaxBytes);
        if (Reserved(config.Storage) + adding <= limit)
        {
            return null;
        }

        return memory ? ApiError.MemoryResourcesExceeded : ApiError.StorageResourcesExceeded;
    }

    /// <summary>The max_bytes reserved by streams of <paramref name="storage"/> ("file" or "memory"); streams without max_bytes reserve nothing.</summary>
    private long Reserved(string storage)
    {
        long reserved = 0;
        foreach (var entry in _streams.Values)
        {
            if (entry.Config.Storage == storage && entry.Config.MaxBytes > 0)
            {
                reserved += entry.Config.MaxBytes;
            }
        }

        return reserved;
    }

    private IStreamStore OpenStore(StreamConfig config, string directory)
    {
        var storeConfig = ToStoreConfig(config);
        if (config.Storage == "memory")
        {
            return StreamStores.CreateMemory(storeConfig);
        }

        Directory.CreateDirectory(directory);
        return StreamStores.OpenFile(directory, storeConfig, _fileStoreOptions);
    }

    private static ApiError? Validate(StreamConfig config)
    {
        if (config.Name.IndexOfAny([' ', '\t', '.', '*', '>', '/', '\\']) >= 0)
        {
            return ApiError.StreamInvalidConfig("invalid stream name");
        }

        if (config.Storage is not ("file" or "memory"))
        {
            return ApiError.StreamInvalidConfig("invalid storage type");
        }

        if (config.Retention is not ("limits" or "interest" or "workqueue") || config.Discard is not ("old" or "new"))
        {
            return ApiError.StreamInvalidConfig("invalid retention or discard policy");
        }

        foreach (var subject in Subjects(config))
        {
            if (!SubjectRules.IsValidSubject(subject))
            {
                return ApiError.StreamInvalidConfig($"invalid subject: {subject}");
            }
        }

        return null;
    }

    private static IEnumerable<string> Subjects(StreamConfig config) => config.Subjects is { Count: > 0 } s ? s : [config.Name];

    private static (string Operation, string Name) SplitStreamApi(string api)
    {
        // STREAM.CREATE.<name>, STREAM.MSG.GET.<name>, ...
        var dot = api.LastIndexOf('.');
        return dot < 0 ? (api, "") : (api[..dot], api[(dot + 1)..]);
    }

    private static string ResponseType(string operation) => operation switch
    {
        "STREAM.CREATE" => "io.nats.jetstream.api.v1.stream_create_response",
        "STREAM.UPDATE" => "io.nats.jetstream.api.v1.stream_update_response",
        "STREAM.INFO" => "io.nats.jetstream.api.v1.stream_info_response",
        "STREAM.PURGE" => "io.nats.jetstream.api.v1.stream_purge_response",
        "STREAM.MSG.GET" => "io.nats.jetstream.api.v1.stream_msg_get_response",
        "STREAM.MSG.DELETE" => "io.nats.jetstream.api.v1.stream_msg_delete_response",
        _ => "io.nats.jetstream.api.v1.error",
    };

    private void Fail(string reply, string type, ApiError error)
    {
        _apiErrors++;
        Reply(reply, new ErrorResponse { Type = type, Error = error }, JetStreamJsonContext.Default.ErrorResponse);
    }

    private void Reply<T>(string reply, T response, JsonTypeInfo<T> typeInfo) =>
        _client.Publish(reply, null, default, JsonSerializer.SerializeToUtf8Bytes(response, typeInfo));

    private sealed record StreamEntry(StreamConfig Config, IActorRef Actor, DateTime Created);

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>Asks for a stream's actor (<see cref="ActorRefs.Nobody"/> when there is none); for fault-injection tests.</summary>
        public sealed record GetStream(string Name);

        /// <summary>Asks for <see cref="Ready"/> once the API subscription is in effect.</summary>
        public sealed class AwaitReady
        {
            public static readonly AwaitReady Instance = new();

            private AwaitReady()
            {
            }
        }

        /// <summary>The API answers requests.</summary>
        public sealed class Ready
        {
            public static readonly Ready Instance = new();

            private Ready()
            {
            }
        }

        /// <summary>Asks for <see cref="JetStreamStats"/> (/jsz).</summary>
        public sealed class GetStats
        {
            public static readonly GetStats Instance = new();

            private GetStats()
            {
            }
        }

        /// <summary>One read batch of API requests.</summary>
        public sealed class Requests
        {
            public Requests(IReadOnlyList<InternalMessage> messages)
            {
                ArgumentNullException.ThrowIfNull(messages);
                Messages = messages;
            }

            public IReadOnlyList<InternalMessage> Messages { get; }

            public override string ToString() => $"Requests({Messages.Count})";
        }
    }
}

/// <summary>JetStream usage for /jsz.</summary>
public sealed class JetStreamStats
{
    public int Streams { get; set; }

    public int Consumers { get; set; }

    public ulong Messages { get; set; }

    public ulong Bytes { get; set; }

    public ulong Memory { get; set; }

    public ulong Storage { get; set; }

    public long ApiTotal { get; set; }

    public long ApiErrors { get; set; }

    public string StoreDirectory { get; set; } = "";

    /// <summary>Bytes reserved by memory streams' max_bytes (checked against max_memory_store on create).</summary>
    public long ReservedMemory { get; set; }

    /// <summary>Bytes reserved by file streams' max_bytes (checked against max_file_store on create).</summary>
    public long ReservedStorage { get; set; }
}
