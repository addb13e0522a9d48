using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Akka.Actor;
using Akka.Event;
using Courier.Actors.Connections;
using Courier.Actors.Hosting;
using Courier.Actors.Routing;
using Courier.Protocols.JetStream;
using Courier.Protocols.Subjects;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// Answers <c>$JS.API.*</c> for the node: creates, finds and deletes streams (one
/// <see cref="StreamActor"/> each) and routes stream requests to them. It is a client of the broker
/// through an <see cref="InProcessClient"/>; requests arrive one actor message per read batch.
/// </summary>
/// <remarks>
/// It never waits for a stream inside its own turn: a request about one stream goes to that stream's
/// actor, which answers the client itself, and answers that need every stream (account info,
/// STREAM.LIST, /jsz) are gathered off the actor. So one slow stream (a long purge, an fsync)
/// never holds up API calls for the others.
/// </remarks>
internal sealed partial class JetStreamApi : ReceiveActor, IWithTimers
{
    private const string ApiPrefix = "$JS.API.";

    /// <summary>The account info request, the one an account without JetStream answers.</summary>
    internal const string InfoSubject = ApiPrefix + "INFO";
    private const string MetaFile = "meta.json";

    /// <summary>How long a gathered answer waits for one stream's info.</summary>
    private static readonly TimeSpan InfoTimeout = TimeSpan.FromSeconds(10);

    private readonly JetStreamSettings _settings;
    private readonly Func<InProcessClient> _connect;
    private readonly SubjectSpace _space;
    private readonly ILoggingAdapter _log = Context.GetLogger();
    private readonly Dictionary<string, StreamEntry> _streams = new(StringComparer.Ordinal);
    private readonly Dictionary<string, List<InternalMessage>> _deleting = new(StringComparer.Ordinal);
    private readonly string _streamsDirectory;
    private readonly FileStoreOptions _fileStoreOptions;
    private readonly MetaFiles _meta;
    private InProcessClient _client = null!;
    private InProcessPublisher _out = null!;
    private InProcessClient _echo = null!;
    private InProcessPublisher _echoOut = null!;
    private readonly ApiCounters _counters = new();
    private readonly ConsumerDirectory _consumers = new();
    private readonly LocalStreams _localStreams;
    private readonly JetStreamCluster? _cluster;
    private readonly string _account;
    private long _incarnation;
    private bool _requested;

    public JetStreamApi(JetStreamSettings settings, Func<InProcessClient> connect, SubjectSpace space, LocalStreams? streams, JetStreamCluster? cluster, string account)
    {
        _localStreams = streams ?? new LocalStreams();
        _settings = settings;
        _connect = connect;
        _space = space;
        _cluster = cluster;
        _account = account;
        _streamsDirectory = settings.StreamsDirectory;
        _fileStoreOptions = new FileStoreOptions { Sync = settings.Sync, Encryption = settings.Encryption };
        _meta = new MetaFiles(settings.Encryption, account);
        Receive<Protocol.Requests>(requests => Handle(requests.Messages));
        Receive<Readiness.AwaitReady>(_ =>
        {
            // PreStart subscribed to $JS.API.> and started the recovered streams: once each stream
            // has run its PreStart (it answers Ready after it) and the broker has answered a PING
            // after that, their subscriptions are in effect and no request or publish to a recovered
            // stream can meet "no responders".
            WhenStreamsStartedAsync([.. _streams.Values.Select(s => s.Actor)], _client).PipeTo(Sender, success: () => Readiness.Ready.Instance);
        });
        Receive<Protocol.StreamDeleted>(OnStreamDeleted);
        Receive<Terminated>(OnStreamTerminated);
        Receive<Protocol.GetStats>(_ => GatherStatsAsync(NewStats(), [.. _streams.Values]).PipeTo(Sender));
        Receive<Protocol.GetDetail>(OnGetDetail);
        if (cluster is not null)
        {
            Receive<Protocol.Forwarded>(forwarded =>
            {
                NoteRequest();
                HandleForwarded(cluster, forwarded.Messages);
            });
            Receive<Protocol.Refreshed>(refreshed => OnRefreshed(cluster, refreshed));
            Receive<Protocol.StreamLeader>(OnStreamLeader);
            Receive<Protocol.ReplicaMembers>(OnReplicaMembers);
            Receive<Protocol.ReplicaRemoved>(m => OnReplicaRemoved(cluster, m));
            Receive<Protocol.Adopt>(m => OnAdopt(cluster, m));
            Receive<Protocol.LeaderWaitOver>(m => ReleaseLeaderWaits(cluster, m.Stream, expired: true));
            Receive<Protocol.ReplicaDeleted>(deleted =>
            {
                if (_deleting.Remove(deleted.Name, out var waiting) && waiting.Count > 0)
                {
                    Handle(waiting);
                }
            });
            Receive<Akka.DistributedData.Changed>(OnPlacementChanged);
            Receive<Akka.DistributedData.IUpdateResponse>(_ => { });
        }
    }

    private static async Task WhenStreamsStartedAsync(IReadOnlyList<IActorRef> streams, InProcessClient client)
    {
        await Task.WhenAll(streams.Select(s => s.Ask<Readiness.Ready>(Readiness.AwaitReady.Instance, InfoTimeout))).ConfigureAwait(false);
        await client.FlushAsync().ConfigureAwait(false);
    }

    /// <param name="settings">The account's JetStream settings.</param>
    /// <param name="connect">Makes the API's in-process client.</param>
    /// <param name="space">The account's subject space (interest checks).</param>
    /// <param name="streams">The account's streams as other streams' sources see them; null: a registry of its own.</param>
    /// <param name="cluster">The node's cluster view when it has a <c>cluster { }</c>; null: every stream is local.</param>
    /// <param name="account">The account's name (its streams' entries in the cluster's placement map).</param>
    public static Props Props(JetStreamSettings settings, Func<InProcessClient> connect, SubjectSpace space, LocalStreams? streams = null, JetStreamCluster? cluster = null, string account = "$G") =>
        Akka.Actor.Props.Create(() => new JetStreamApi(settings, connect, space, streams, cluster, account));

    protected override void PreStart()
    {
        Directory.CreateDirectory(_streamsDirectory);
        _client = _connect();
        _out = _client.CreatePublisher();
        // A second connection for what other streams of the account must be able to store (republished
        // messages, advisories): the first one's own subscriptions (every stream's) never see its publishes.
        _echo = _connect();
        _echoOut = _echo.CreatePublisher();
        var self = Self;
        _client.Subscribe(ApiPrefix + ">", null, new ApiRequestSink(ApiPrefix, _consumers, batch => self.Tell(new Protocol.Requests(batch))));
        if (_settings.Domain is { } domain)
        {
            // jetstream { domain: D }: nats-server maps $JS.D.API.> onto $JS.API.> for the account.
            var prefix = $"$JS.{domain}.API.";
            _client.Subscribe(prefix + ">", null, new ApiRequestSink(prefix, _consumers, batch => self.Tell(new Protocol.Requests(batch))));
        }

        if (_cluster is { } cluster)
        {
            StartCluster(cluster);
        }

        RecoverStreams();
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

    protected override void PostStop()
    {
        _ = _client.DisposeAsync().AsTask();
        _ = _echo.DisposeAsync().AsTask();
    }

    /// <summary>A stream that fails (or is killed) restarts and recovers from its store.</summary>
    protected override SupervisorStrategy SupervisorStrategy() =>
        new OneForOneStrategy(10, TimeSpan.FromMinutes(1), _ => Directive.Restart);

    public ITimerScheduler Timers { get; set; } = null!;

    private void RecoverStreams()
    {
        foreach (var directory in Directory.EnumerateDirectories(_streamsDirectory))
        {
            var meta = Path.Combine(directory, MetaFile);
            if (!File.Exists(meta))
            {
                continue;
            }

            try
            {
                var stored = JsonSerializer.Deserialize(_meta.Read(meta, _meta.StreamContext(Path.GetFileName(directory)), "stream"), JetStreamJsonContext.Default.StreamInfoResponse);
                if (stored?.Config is { } config)
                {
                    ulong[]? members;
                    try
                    {
                        members = ReadMembers(directory);
                    }
                    catch (InvalidDataException e) when (_cluster is not null && config.Replicas > 1)
                    {
                        // Never a stream of one copy beside its group: the replica rejoins, its member list from the group's log.
                        _log.Warning("Stream {0}: {1}; the replica rejoins its group from its Raft log", config.Name, e.Message);
                        Start(config, stored.Created, OpenStore(config, directory), ReplicationOf(_cluster, config.Name, [], ReplicaStart.Join));
                        continue;
                    }

                    if (members is not null && _cluster is { } cluster)
                    {
                        // A replica rejoins its group from its own files; its leader (this one or another) announces it.
                        Start(config, stored.Created, OpenStore(config, directory), ReplicationOf(cluster, config.Name, members, StartOf(directory)));
                        continue;
                    }

                    Start(config, stored.Created, OpenStore(config, directory));
                    Announce(config); // a restarted node takes its streams back in the placement map
                }
            }
            catch (Exception e) when (e is JsonException or IOException or UnauthorizedAccessException or InvalidDataException)
            {
                // nats-server logs "Error recreating stream" and starts without it; its files stay as they are.
                _log.Warning("Error recreating stream in {0}: {1}", directory, e.Message);
            }
        }
    }

    /// <summary>The account's first API request (its own or one another node forwarded) starts the broker's warm-up.</summary>
    private void NoteRequest()
    {
        if (!_requested)
        {
            _requested = true;
            _settings.FirstRequest?.Invoke();
        }
    }

    private void Handle(IReadOnlyList<InternalMessage> requests)
    {
        NoteRequest();
        foreach (var request in requests)
        {
            if (request.ReplyTo is null)
            {
                continue;
            }

            try
            {
                if (_cluster is { } cluster)
                {
                    Route(cluster, ApiName(request.Subject), request);
                }
                else
                {
                    Dispatch(ApiName(request.Subject), request);
                }
            }
            catch (JsonException)
            {
                Reply(request.ReplyTo, new ErrorResponse { Type = "io.nats.jetstream.api.v1.error", Error = ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
            }
        }
    }

    private void Dispatch(string api, InternalMessage request)
    {
        var reply = request.ReplyTo!;
        if (api.StartsWith("DIRECT.GET.", StringComparison.Ordinal))
        {
            // Answered by the stream itself (it subscribes when allow_direct is set), or by nobody.
            return;
        }

        if (api == "INFO")
        {
            _ = AccountInfoAsync(reply, [.. _streams.Values], _counters.Total, _counters.Errors);
            return;
        }

        if (api is "STREAM.NAMES" or "STREAM.LIST")
        {
            var paging = request.Payload.Length > 0 ? JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.StreamListRequest) : null;
            var filter = string.IsNullOrEmpty(paging?.Subject) ? null : paging.Subject;
            var matching = _streams.Values
                .Where(s => filter is null || Subjects(s.Config).Any(x => SubjectRules.Collide(x, filter)))
                .OrderBy(s => s.Config.Name, StringComparer.Ordinal).ToList();
            var limit = api == "STREAM.NAMES" ? ApiPaging.NamesLimit : ApiPaging.ListLimit;
            var (offset, count) = ApiPaging.Page(matching.Count, paging?.Offset ?? 0, limit);
            var page = matching.GetRange(offset, count);
            if (api == "STREAM.NAMES")
            {
                Reply(reply, new StreamNamesResponse
                {
                    Type = "io.nats.jetstream.api.v1.stream_names_response",
                    Total = matching.Count,
                    Offset = offset,
                    Limit = limit,
                    Streams = page.ConvertAll(s => s.Config.Name),
                }, JetStreamJsonContext.Default.StreamNamesResponse);
            }
            else
            {
                _ = ListStreamsAsync(reply, page, matching.Count, offset, limit);
            }

            return;
        }

        if (AnswerUnbuilt(api, reply))
        {
            return;
        }

        if (api.StartsWith("CONSUMER.", StringComparison.Ordinal))
        {
            RouteConsumerRequest(api, request);
            return;
        }

        var (operation, name) = SplitStreamApi(api);
        if (_deleting.TryGetValue(name, out var waiting))
        {
            // That stream's delete is still under way: this request is handled once it is gone.
            waiting.Add(request);
            return;
        }

        switch (operation)
        {
            case "STREAM.CREATE":
            case "STREAM.UPDATE":
                Create(operation, name, request);
                return;
            case "STREAM.DELETE":
                Delete(name, reply);
                return;
            case "STREAM.LEADER.STEPDOWN":
                if (!ApiRequests.IsEmpty(request.Payload))
                {
                    Reply(reply, new ErrorResponse { Type = ResponseType(operation), Error = ApiError.BadRequest }, JetStreamJsonContext.Default.ErrorResponse);
                    return;
                }

                if (!_streams.TryGetValue(name, out var leading))
                {
                    Reply(reply, new ErrorResponse { Type = ResponseType(operation), Error = ApiError.StreamNotFound }, JetStreamJsonContext.Default.ErrorResponse);
                    return;
                }

                leading.Actor.Tell(new StreamActor.Protocol.Request("LEADER.STEPDOWN", reply, request.Payload));
                return;
            case "STREAM.PEER.REMOVE":
                RemovePeer(name, reply, request.Payload); // JetStreamApi.Replicas.cs
                return;
            case "STREAM.INFO":
            case "STREAM.PURGE":
            case "STREAM.MSG.GET":
            case "STREAM.MSG.DELETE":
                if (operation is "STREAM.MSG.GET" or "STREAM.MSG.DELETE" && request.Payload.Length == 0)
                {
                    // nats-server checks for a body before it looks for the stream.
                    Reply(reply, new ErrorResponse { Type = ResponseType(operation), Error = ApiError.BadRequest }, JetStreamJsonContext.Default.ErrorResponse);
                    return;
                }

                if (!_streams.TryGetValue(name, out var stream))
                {
                    Reply(reply, new ErrorResponse { Type = ResponseType(operation), Error = ApiError.StreamNotFound }, JetStreamJsonContext.Default.ErrorResponse);
                    return;
                }

                stream.Actor.Tell(new StreamActor.Protocol.Request(operation["STREAM.".Length..], reply, request.Payload));
                return;
            default:
                Reply(reply, new ErrorResponse { Type = "io.nats.jetstream.api.v1.error", Error = new ApiError(400, 10003, $"{api} is not supported by Courier yet") }, JetStreamJsonContext.Default.ErrorResponse);
                return;
        }
    }

    /// <summary>
    /// The <c>$JS.API</c> subjects nats-server serves and Courier has not built, answered with nats-server's
    /// own error rather than left to time out: the leader stepdowns of a server that is not clustered
    /// (JSClusterRequiredErr, as jsStreamLeaderStepDownRequest / jsConsumerLeaderStepDownRequest answer).
    /// </summary>
    private bool AnswerUnbuilt(string api, string reply)
    {
        var (type, error) = api switch
        {
            _ when _cluster is null && api.StartsWith("CONSUMER.LEADER.STEPDOWN.", StringComparison.Ordinal) => ("io.nats.jetstream.api.v1.consumer_leader_stepdown_response", ApiError.ClusterRequired),
            _ when _cluster is null && api.StartsWith("STREAM.LEADER.STEPDOWN.", StringComparison.Ordinal) => ("io.nats.jetstream.api.v1.stream_leader_stepdown_response", ApiError.ClusterRequired),
            _ => (null, null),
        };
        if (type is null || error is null)
        {
            return false;
        }

        Fail(reply, type, error);
        return true;
    }

    // CONSUMER.CREATE.<stream>[.<consumer>[.<filter>]], CONSUMER.DURABLE.CREATE.<stream>.<durable>,
    // CONSUMER.{INFO,DELETE,MSG.NEXT}.<stream>.<consumer>, CONSUMER.{NAMES,LIST}.<stream>
    private void RouteConsumerRequest(string api, InternalMessage request)
    {
        var (operation, stream, consumer, filter) = ConsumerTarget(api);
        if (operation == "UNPIN" && ConsumerConfigRules.ReadUnpin(request.Payload, out _) is { } unreadable)
        {
            // nats-server's jsConsumerUnpinRequest reads the body before it looks for the stream.
            Fail(request.ReplyTo!, "io.nats.jetstream.api.v1.consumer_unpin_response", unreadable);
            return;
        }

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

    private static (string Operation, string Stream, string Consumer, string? Filter) ConsumerTarget(string api)
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
        else if (tokens.Length > 2 && tokens[1] == "LEADER" && tokens[2] == "STEPDOWN")
        {
            (operation, streamAt) = ("LEADER.STEPDOWN", 3);
        }
        else
        {
            (operation, streamAt) = (tokens[1], 2);
        }

        var stream = tokens.Length > streamAt ? tokens[streamAt] : "";
        var consumer = tokens.Length > streamAt + 1 ? tokens[streamAt + 1] : "";
        var filter = tokens.Length > streamAt + 2 ? string.Join('.', tokens[(streamAt + 2)..]) : null;
        return (operation, stream, consumer, filter);
    }

    /// <summary>$JS.API.INFO, gathered off the actor from every stream's info.</summary>
    private async Task AccountInfoAsync(string reply, StreamEntry[] streams, long apiTotal, long apiErrors)
    {
        long memory = 0, storage = 0;
        foreach (var (entry, info) in await GatherInfosAsync(streams).ConfigureAwait(false))
        {
            var bytes = (long)(info?.State?.Bytes ?? 0);
            if (entry.Config.Storage == StorageType.Memory)
            {
                memory += bytes;
            }
            else
            {
                storage += bytes;
            }
        }

        Reply(reply, AccountInfo(memory, storage, streams.Length, apiTotal, apiErrors), JetStreamJsonContext.Default.AccountInfoResponse);
    }

    // Limits: the global account has nats-server's dynamic limits, all -1, whatever max_memory_store
    // and max_file_store say (those are the server's, in /jsz config; nats-server 2.9.10 checked).
    private AccountInfoResponse AccountInfo(long memory, long storage, int streams, long apiTotal, long apiErrors) =>
        new()
        {
            Type = "io.nats.jetstream.api.v1.account_info_response",
            Memory = memory,
            Storage = storage,
            Streams = streams,
            Limits = _settings.Limits is { } limits
                ? new AccountLimits { MaxMemory = limits.MaxMemory, MaxStorage = limits.MaxFile, MaxStreams = limits.MaxStreams, MaxConsumers = limits.MaxConsumers, MaxBytesRequired = limits.MaxBytesRequired }
                : new AccountLimits(),
            Api = new ApiStats { Total = apiTotal, Errors = apiErrors },
            Domain = _settings.Domain,
        };

    /// <summary>STREAM.LIST's page, gathered off the actor; a stream that does not answer in time is listed as missing.</summary>
    private async Task ListStreamsAsync(string reply, List<StreamEntry> page, int total, int offset, int limit)
    {
        var response = new StreamListResponse { Type = "io.nats.jetstream.api.v1.stream_list_response", Total = total, Offset = offset, Limit = limit };
        foreach (var (entry, info) in await GatherInfosAsync([.. page]).ConfigureAwait(false))
        {
            if (info is null)
            {
                (response.Missing ??= []).Add(entry.Config.Name);
            }
            else
            {
                response.Streams.Add(info);
            }
        }

        Reply(reply, response, JetStreamJsonContext.Default.StreamListResponse);
    }

    private static async Task<JetStreamStats> GatherStatsAsync(JetStreamStats stats, StreamEntry[] streams)
    {
        foreach (var (entry, info) in await GatherInfosAsync(streams).ConfigureAwait(false))
        {
            Count(stats, entry.Config.Storage, info);
        }

        return stats;
    }

    /// <summary>Every stream's info, asked of all at once; null for a stream that did not answer in time.</summary>
    private static async Task<(StreamEntry Entry, StreamInfoResponse? Info)[]> GatherInfosAsync(StreamEntry[] streams)
    {
        var asks = new Task<StreamInfoResponse>[streams.Length];
        for (var i = 0; i < streams.Length; i++)
        {
            asks[i] = streams[i].Actor.Ask<StreamInfoResponse>(StreamActor.Protocol.GetInfo.Instance, InfoTimeout);
        }

        var results = new (StreamEntry, StreamInfoResponse?)[streams.Length];
        for (var i = 0; i < streams.Length; i++)
        {
            try
            {
                results[i] = (streams[i], await asks[i].ConfigureAwait(false));
            }
            catch (Exception e) when (e is AskTimeoutException or TaskCanceledException)
            {
                results[i] = (streams[i], null);
            }
        }

        return results;
    }

    private void Create(string operation, string name, InternalMessage request, ulong[]? members = null)
    {
        var type = ResponseType(operation);
        var reply = request.ReplyTo!;
        var config = StrictRequests.ReadStreamConfig(request.Payload, out var unreadable);
        if (config is null)
        {
            Fail(reply, type, unreadable ?? ApiError.InvalidJson);
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

        if (config.Name.IndexOfAny(['/', '\\']) >= 0)
        {
            Fail(reply, type, new ApiError(400, 10128, "Stream name can not contain path separators"));
            return;
        }

        if (operation == "STREAM.CREATE" && StreamConfigRules.CheckCreate(config) is { } refused)
        {
            Fail(reply, type, refused);
            return;
        }

        if (StreamConfigRules.CheckImplemented(config) is { } unimplemented)
        {
            Fail(reply, type, unimplemented);
            return;
        }

        if (CheckReplicas(config) is { } replicas)
        {
            Fail(reply, type, replicas);
            return;
        }

        if (StreamConfigRules.ApplyDefaultsAndCheck(config, other => other != name && _streams.TryGetValue(other, out var entry) ? entry.Config : null) is { } invalid)
        {
            Fail(reply, type, invalid);
            return;
        }

        if (_streams.TryGetValue(name, out var existing))
        {
            var same = JsonSerializer.Serialize(existing.Config, JetStreamJsonContext.Default.StreamConfig) == JsonSerializer.Serialize(config, JetStreamJsonContext.Default.StreamConfig);
            if (!same && operation == "STREAM.UPDATE")
            {
                Update(existing, config, reply, type);
                return;
            }

            // Creating a stream that exists with the same configuration returns it, as nats-server.
            if (!same)
            {
                Fail(reply, type, ApiError.StreamNameExists);
                return;
            }

            // nats-server 2.9.10 says did_create: true here too (it sets it after addStream, which returned the existing stream).
            existing.Actor.Tell(new StreamActor.Protocol.ReplyInfo(reply, type, DidCreate: operation == "STREAM.CREATE"));
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

        if (_settings.Limits is { MaxStreams: > 0 } limits && _streams.Count >= limits.MaxStreams)
        {
            Fail(reply, type, ApiError.MaximumStreamsReached);
            return;
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
            if (config.Storage != StorageType.Memory)
            {
                var meta = new StreamInfoResponse { Config = config, Created = created };
                // Durably: lazyfs power cuts (load/powerloss.sh --strict) left an empty meta.json behind
                // a plain write, and the restart failed on it.
                _meta.WriteDurably(Path.Combine(directory, MetaFile), JsonSerializer.SerializeToUtf8Bytes(meta, JetStreamJsonContext.Default.StreamInfoResponse), _meta.StreamContext(name));
            }
        }
        catch (IOException e)
        {
            Fail(reply, type, ApiError.StreamStoreFailed(e.Message));
            return;
        }

        if (members is not null && _cluster is { } cluster)
        {
            WriteMembers(directory, members);
            var group = GroupName(name);
            var replicaActor = Start(config, created, store, ReplicationOf(cluster, name, members));
            StartReplicas(cluster, config, members, group);
            // Answered once the group has a leader (this member campaigns as soon as the others have their replicas).
            Announce(config, () => replicaActor.Tell(new StreamActor.Protocol.ReplyInfo(reply, type, DidCreate: true)));
            return;
        }

        // The new stream answers the creator once its SUB is in effect (the creator publishes next)
        // and, in a cluster, once every member knows where it is (the creator may ask any node next).
        var actor = Start(config, created, store);
        Announce(config, () => actor.Tell(new StreamActor.Protocol.ReplyInfo(reply, type, DidCreate: true)));
    }

    // STREAM.UPDATE: storage and retention are fixed, a sealed stream stays sealed, subjects must
    // not overlap another stream; everything else may change. The stream applies it and answers.
    private void Update(StreamEntry existing, StreamConfig config, string reply, string type)
    {
        var current = existing.Config;
        if (config.MaxConsumers != current.MaxConsumers)
        {
            Fail(reply, type, ApiError.StreamInvalidConfig("stream configuration update can not change MaxConsumers"));
            return;
        }

        if (_cluster is not null && JsonSerializer.Serialize(config.Placement, JetStreamJsonContext.Default.Placement) != JsonSerializer.Serialize(current.Placement, JetStreamJsonContext.Default.Placement))
        {
            // nats-server moves the stream to servers of the new placement; Courier does not move streams yet.
            Fail(reply, type, ApiError.StreamInvalidConfig("Courier can not move a stream to another placement yet"));
            return;
        }

        var replicasChange = config.Replicas != current.Replicas;
        if (replicasChange && config.Storage == StorageType.Memory)
        {
            Fail(reply, type, ApiError.StreamInvalidConfig("Courier can not change a memory stream's num_replicas yet"));
            return;
        }

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

        if (JsonSerializer.Serialize(config.Mirror, JetStreamJsonContext.Default.StreamSource) != JsonSerializer.Serialize(current.Mirror, JetStreamJsonContext.Default.StreamSource))
        {
            Fail(reply, type, new ApiError(400, 10055, "stream mirror configuration can not be updated"));
            return;
        }

        if (JsonSerializer.Serialize(config.RePublish, JetStreamJsonContext.Default.RePublish) != JsonSerializer.Serialize(current.RePublish, JetStreamJsonContext.Default.RePublish))
        {
            Fail(reply, type, ApiError.StreamInvalidConfig("stream configuration update can not change RePublish"));
            return;
        }

        if (current.Sealed && !config.Sealed)
        {
            Fail(reply, type, ApiError.StreamInvalidConfig("stream configuration update can not unseal a sealed stream"));
            return;
        }

        // nats-server's configUpdateCheck: deny_delete and deny_purge, once on, stay on.
        if (current.DenyDelete && !config.DenyDelete)
        {
            Fail(reply, type, ApiError.StreamInvalidConfig("stream configuration update can not cancel deny message deletes"));
            return;
        }

        if (current.AllowMsgTtl && !config.AllowMsgTtl)
        {
            Fail(reply, type, ApiError.StreamInvalidConfig("message TTL status can not be disabled"));
            return;
        }

        if (current.AllowMsgCounter != config.AllowMsgCounter)
        {
            Fail(reply, type, ApiError.StreamInvalidConfig("stream configuration update can not change message counter setting"));
            return;
        }

        if (current.DenyPurge && !config.DenyPurge)
        {
            Fail(reply, type, ApiError.StreamInvalidConfig("stream configuration update can not cancel deny purge"));
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
            config.Discard = DiscardPolicy.New;
            config.DenyDelete = true;
            config.DenyPurge = true;
            config.AllowRollup = false;
        }

        if (CheckResources(config, current) is { } insufficient)
        {
            Fail(reply, type, insufficient);
            return;
        }

        if (replicasChange)
        {
            ChangeReplicas(existing, config, reply, type); // JetStreamApi.Replicas.cs
            return;
        }

        _streams[config.Name] = existing with { Config = config };
        existing.Actor.Tell(new StreamActor.Protocol.Update(config, reply, type));
        Announce(config); // its subjects may have changed
    }

    private void Delete(string name, string reply)
    {
        const string Type = "io.nats.jetstream.api.v1.stream_delete_response";
        if (!_streams.Remove(name, out var entry))
        {
            Fail(reply, Type, ApiError.StreamNotFound);
            return;
        }

        // Requests for this name wait until its files are gone (a create right after must not meet them).
        _deleting[name] = [];
        DeleteReplicas(entry);
        _consumers.Close(name);
        Unannounce(name);
        var self = Self;
        entry.Actor.Ask<StreamActor.Protocol.Deleted>(StreamActor.Protocol.Delete.Instance, TimeSpan.FromSeconds(30))
            .PipeTo(self, success: _ => new Protocol.StreamDeleted(name, reply, Ok: true), failure: _ => new Protocol.StreamDeleted(name, reply, Ok: false));
    }

    private void OnStreamDeleted(Protocol.StreamDeleted deleted)
    {
        const string Type = "io.nats.jetstream.api.v1.stream_delete_response";
        if (deleted.Ok)
        {
            Reply(deleted.ReplyTo, new SuccessResponse { Type = Type, Success = true }, JetStreamJsonContext.Default.SuccessResponse);
            Advisories.Stream(_echoOut, deleted.Name, AdvisoryAction.Delete, _settings.Domain);
        }
        else
        {
            Fail(deleted.ReplyTo, Type, ApiError.StreamStoreFailed("stream delete did not complete"));
        }

        if (_deleting.Remove(deleted.Name, out var waiting) && waiting.Count > 0)
        {
            Handle(waiting);
        }
    }

    private IActorRef Start(StreamConfig config, DateTime created, IStreamStore store, StreamReplication? replication = null)
    {
        var directory = config.Storage == StorageType.Memory ? null : Path.Combine(_streamsDirectory, config.Name);
        // A unique child name: a deleted stream's actor may still be stopping when its name is reused.
        var consumers = _consumers.Open(config.Name);
        var actor = Context.ActorOf(StreamActor.Props(_client, config, created, store, directory, HasInterest, _settings.Domain, _counters, _localStreams, consumers, () => _settings.Limits?.MaxConsumers ?? -1, _echo, replication, _cluster is { } cluster ? (cluster.ServerName, cluster.ClusterName) : null, _meta), $"stream-{Uri.EscapeDataString(config.Name)}-{++_incarnation}");
        Context.Watch(actor);
        _streams[config.Name] = new StreamEntry(config, actor, created, replication);
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

        _log.Error("stream {0} stopped after repeated failures; starting it again from its store", entry.Config.Name);
        _streams.Remove(entry.Config.Name);
        _consumers.Close(entry.Config.Name); // its consumers stopped with it; Start lists the new ones
        try
        {
            // A file stream continues from its files; a memory stream starts empty.
            Start(entry.Config, entry.Created, OpenStore(entry.Config, Path.Combine(_streamsDirectory, entry.Config.Name)), entry.Replication);
        }
        catch (IOException e)
        {
            _log.Error(e, "stream {0} could not be reopened", entry.Config.Name);
        }
    }

    private bool HasInterest(string subject) => !_space.Match(System.Text.Encoding.UTF8.GetBytes(subject)).IsEmpty;

    /// <summary>The store's part of a stream configuration.</summary>
    internal static StoreConfig ToStoreConfig(StreamConfig config) => new()
    {
        Name = config.Name,
        MaxMsgs = config.MaxMsgs,
        MaxBytes = config.MaxBytes,
        MaxAge = TimeSpan.FromTicks(config.MaxAge / 100),
        MaxMsgsPerSubject = config.MaxMsgsPerSubject,
        MaxMsgSize = config.MaxMsgSize,
        Discard = config.Discard,
        DiscardNewPerSubject = config.DiscardNewPerSubject,
        FirstSeq = config.FirstSeq,
        AllowMsgTtl = config.AllowMsgTtl,
    };

    /// <summary>
    /// max_memory_store / max_file_store as nats-server checks them on STREAM.CREATE and UPDATE
    /// (jetStream.checkBytesLimits): the streams' max_bytes are reserved, and a stream fits if the
    /// reservations of its storage type plus its own max_bytes (1 byte without one; on update only
    /// the growth) stay within the limit. Usage is not checked here. Null when it fits or -1 (no limit).
    /// </summary>
    private ApiError? CheckResources(StreamConfig config, StreamConfig? previous)
    {
        var memory = config.Storage == StorageType.Memory;
        if (_settings.Limits is { } account)
        {
            // nats-server's checkLimits: a stream may not allow more consumers than the account (an update cannot change it).
            if (previous is null && config.MaxConsumers > 0 && account.MaxConsumers > 0 && config.MaxConsumers > account.MaxConsumers)
            {
                return ApiError.MaximumConsumersReached;
            }

            // The account's limits first (nats-server's checkBytesLimits with the account's tier), then the server's.
            if (account.MaxBytesRequired && config.MaxBytes <= 0)
            {
                return ApiError.StreamMaxBytesRequired;
            }

            if (Exceeds(config, previous, memory ? account.MaxMemory : account.MaxFile))
            {
                return memory ? ApiError.MemoryResourcesExceeded : ApiError.StorageResourcesExceeded;
            }
        }

        return Exceeds(config, previous, memory ? _settings.MaxMemoryStore : _settings.MaxFileStore)
            ? memory ? ApiError.MemoryResourcesExceeded : ApiError.StorageResourcesExceeded
            : null;
    }

    // Whether the stream's max_bytes (1 byte without one; on update only the growth) does not fit under limit (-1: none).
    private bool Exceeds(StreamConfig config, StreamConfig? previous, long limit)
    {
        if (limit < 0)
        {
            return false;
        }

        var adding = previous is null ? (config.MaxBytes <= 0 ? 1 : config.MaxBytes) : Math.Max(0, config.MaxBytes - previous.MaxBytes);
        return Reserved(config.Storage) + adding > limit;
    }

    /// <summary>The max_bytes reserved by streams of <paramref name="storage"/>; streams without max_bytes reserve nothing.</summary>
    private long Reserved(StorageType storage)
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
        if (config.Storage == StorageType.Memory)
        {
            return StreamStores.CreateMemory(storeConfig);
        }

        Directory.CreateDirectory(directory);
        // A replica's log is synced before anything is acknowledged, and its store is rebuilt from the log
        // at a start, or synced when a snapshot says what it holds: its own writes need no fsync of their own.
        var options = _fileStoreOptions with { EncryptionContext = _meta.StreamContext(config.Name) };
        return StreamStores.OpenFile(directory, storeConfig, config.Replicas > 1 ? options with { Sync = SyncPolicy.Interval(ReplicaSyncInterval) } : options);
    }

    private static IEnumerable<string> Subjects(StreamConfig config) =>
        config.Subjects is { Count: > 0 } s ? s : StreamActor.IsCopying(config) ? [] : [config.Name];

    /// <summary>The request's subject after <c>$JS.API.</c> or <c>$JS.&lt;domain&gt;.API.</c>.</summary>
    private string ApiName(string subject) =>
        subject.StartsWith(ApiPrefix, StringComparison.Ordinal) || _settings.Domain is not { } domain
            ? subject[ApiPrefix.Length..]
            : subject[("$JS.".Length + domain.Length + ".API.".Length)..];

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
        "STREAM.LEADER.STEPDOWN" => "io.nats.jetstream.api.v1.stream_leader_stepdown_response",
        "STREAM.PEER.REMOVE" => "io.nats.jetstream.api.v1.stream_remove_peer_response",
        _ => "io.nats.jetstream.api.v1.error",
    };

    private void Fail(string reply, string type, ApiError error)
    {
        Reply(reply, new ErrorResponse { Type = type, Error = error }, JetStreamJsonContext.Default.ErrorResponse);
    }

    private void Reply<T>(string reply, T response, JsonTypeInfo<T> typeInfo)
        where T : notnull
    {
        _counters.Count(response);
        _out.Publish(reply, null, default, JsonSerializer.SerializeToUtf8Bytes(response, typeInfo));
    }

    /// <summary>How often a replica's store is synced (not for safety: the log is; to bound a restart's rebuild work later).</summary>
    private static readonly TimeSpan ReplicaSyncInterval = TimeSpan.FromMinutes(2);

    private sealed record StreamEntry(StreamConfig Config, IActorRef Actor, DateTime Created, StreamReplication? Replication = null);

    /// <summary>The messages this actor understands.</summary>
    public static partial class Protocol
    {
        /// <summary>Asks for <see cref="JetStreamStats"/> (/jsz).</summary>
        public sealed class GetStats
        {
            public static readonly GetStats Instance = new();

            private GetStats()
            {
            }
        }

        /// <summary>A stream's delete finished (or failed): answer the client, then the requests that waited for it.</summary>
        public sealed record StreamDeleted(string Name, string ReplyTo, bool Ok);

        /// <summary>A replicated stream's replica here heard who leads its group (null: nobody now).</summary>
        public sealed record StreamLeader(string Name, IActorRef Actor, ulong Leader, bool IsSelf);

        /// <summary>This node's replica of a stream deleted through another member is gone.</summary>
        public sealed record ReplicaDeleted(string Name);

        /// <summary>Requests waiting at a replica for its stream's leader have waited long enough.</summary>
        public sealed record LeaderWaitOver(string Stream);

        /// <summary>An R1 stream's actor stopped for its num_replicas to go up: its store becomes a replicated group's.</summary>
        public sealed record Adopt(StreamConfig Config, StreamConfig Previous, DateTime Created, ulong[] Members, List<(string ServerId, ulong Member)> Added, string ReplyTo, string Type, bool Stopped);

        /// <summary>A replica applied a num_replicas change: its group's voters are now <paramref name="Members"/>.</summary>
        public sealed record ReplicaMembers(string Name, IActorRef Actor, ulong[] Members);

        /// <summary>The leader applied the removal of <paramref name="Member"/> from the group: that server's replica goes.</summary>
        public sealed record ReplicaRemoved(string Name, IActorRef Actor, ulong Member);

        /// <summary>One read batch of requests other nodes forwarded to this one (<see cref="JetStreamCluster"/>).</summary>
        public sealed class Forwarded(IReadOnlyList<InternalMessage> messages)
        {
            public IReadOnlyList<InternalMessage> Messages { get; } = messages;

            public override string ToString() => $"Forwarded({Messages.Count})";
        }

        /// <summary>A request put off until the replicator's placement map was read (<paramref name="Map"/> null: it was not).</summary>
        public sealed record Refreshed(string Api, InternalMessage Request, Akka.DistributedData.LWWDictionary<string, string>? Map);

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
