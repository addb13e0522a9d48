using System.Collections.Concurrent;
using System.Globalization;
using System.Text.Json;
using Akka.Actor;
using Akka.DistributedData;
using Courier.Actors.Connections;
using Courier.Protocols.JetStream;
using Courier.Protocols.Subjects;

namespace Courier.Actors.JetStream;

/// <summary>
/// The API in a cluster (R1 streams, as nats-server 2.9): each stream lives on one node, recorded in
/// a replicated map (Akka.DistributedData, one <c>LWWDictionary</c> per account: stream name to
/// <c>"&lt;server id&gt; &lt;subject&gt;..."</c>) that every node reads locally. A request for a stream
/// this node does not hold is forwarded over the route links to its owner on
/// <c>$JSC.&lt;owner&gt;.L.&lt;original subject&gt;</c> with the client's reply subject, so the owner answers
/// the client directly; STREAM.CREATE goes to the cluster leader (<c>P.</c>), which places the stream
/// on the reachable member with the fewest streams and forwards it there; account info and
/// STREAM.LIST gather every owner's streams (<c>G.</c>, answers on <c>R.&lt;n&gt;</c>); STREAM.NAMES is
/// answered from the map. A stream whose owner is unreachable gets nats-server's 503 (STREAM.INFO:
/// "stream is offline") at once. A stream a node has not heard of even after reading its replica
/// goes to the leader, which placed it, as nats-server's meta leader answers for unknown streams.
/// </summary>
/// <remarks>
/// Why Distributed Data and not Sharding: a stream's files are on its node, and Sharding would move
/// the entity (rebalance, or a restart elsewhere) away from them. The map only says where a stream
/// is; a node writes its own streams' entries (on create, update and recovery from disk) and removes
/// them on delete. Placement decisions are serialized by the leader, so two creates of one name
/// racing on two nodes meet at one place: the second is forwarded to the first's owner, which
/// answers it as a single server does (the same stream, or "stream name already in use").
/// </remarks>
internal sealed partial class JetStreamApi
{
    /// <summary>How long STREAM.LIST and account info wait for another node's streams.</summary>
    private static readonly TimeSpan GatherTimeout = TimeSpan.FromSeconds(2);

    /// <summary>How long a create waits for its placement to reach every member before answering.</summary>
    private static readonly TimeSpan PlacementWriteTimeout = TimeSpan.FromSeconds(3);

    private readonly Dictionary<string, Placement> _placement = new(StringComparer.Ordinal);
    private readonly Dictionary<string, string> _pending = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<long, TaskCompletionSource<byte[]>> _gathers = new();
    private LWWDictionaryKey<string, string> _placementKey = null!;
    private IActorRef _replicator = ActorRefs.Nobody;
    private long _nextGather;

    private void StartCluster(JetStreamCluster cluster)
    {
        _placementKey = new LWWDictionaryKey<string, string>("courier-jetstream-" + _account);
        _replicator = DistributedData.Get(Context.System).Replicator;
        _replicator.Tell(Dsl.Subscribe(_placementKey, Self));
        var self = Self;
        var prefix = JetStreamCluster.Prefix + cluster.ServerId + ".";
        foreach (var kind in new[] { JetStreamCluster.Local, JetStreamCluster.Place, JetStreamCluster.Gather, JetStreamCluster.CreateReplicated, JetStreamCluster.StartReplica, JetStreamCluster.JoinReplica, JetStreamCluster.DeleteReplica })
        {
            _client.Subscribe(prefix + kind + ".>", null, batch => self.Tell(new Protocol.Forwarded(batch)));
        }

        _client.Subscribe(prefix + JetStreamCluster.Reply + ".>", null, OnGatherReplies);
    }

    /// <summary>
    /// A request that arrived on this node's own <c>$JS.API</c>: answered here, forwarded, or gathered.
    /// One that lists streams, or names a stream this node has not heard of, first reads the
    /// replicator's current map (<paramref name="fresh"/>): the subscription's change notices lag it,
    /// and a client that created a stream through another node may ask here right after.
    /// </summary>
    private void Route(JetStreamCluster cluster, string api, InternalMessage request, bool fresh = false)
    {
        var reply = request.ReplyTo!;
        var listing = api is "INFO" or "STREAM.NAMES" or "STREAM.LIST";
        if (!fresh && (listing || (!api.StartsWith("STREAM.CREATE.", StringComparison.Ordinal) && !api.StartsWith("DIRECT.GET.", StringComparison.Ordinal) && !Known(StreamOf(api).Stream))))
        {
            var self = Self;
            var key = _placementKey;
            _replicator.Ask<IGetResponse>(Dsl.Get(key, ReadLocal.Instance), PlacementWriteTimeout).PipeTo(
                self,
                success: response => new Protocol.Refreshed(api, request, response is GetSuccess found ? found.Get(key) : null),
                failure: _ => new Protocol.Refreshed(api, request, null));
            return;
        }

        if (api == "INFO")
        {
            _ = ClusterAccountInfoAsync(reply, Gather(cluster), Names(filter: null).Count, _counters.Total, _counters.Errors);
            return;
        }

        if (api is "STREAM.NAMES" or "STREAM.LIST")
        {
            var paging = request.Payload.Length > 0 ? JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.StreamListRequest) : null;
            var names = Names(string.IsNullOrEmpty(paging?.Subject) ? null : paging.Subject);
            var limit = api == "STREAM.NAMES" ? ApiPaging.NamesLimit : ApiPaging.ListLimit;
            var (offset, count) = ApiPaging.Page(names.Count, paging?.Offset ?? 0, limit);
            var page = names.GetRange(offset, count);
            if (api == "STREAM.NAMES")
            {
                Reply(reply, new StreamNamesResponse { Type = "io.nats.jetstream.api.v1.stream_names_response", Total = names.Count, Offset = offset, Limit = limit, Streams = page }, JetStreamJsonContext.Default.StreamNamesResponse);
            }
            else
            {
                _ = ClusterListAsync(reply, Gather(cluster), page, names.Count, offset, limit);
            }

            return;
        }

        if (api.StartsWith("DIRECT.GET.", StringComparison.Ordinal))
        {
            return; // the stream's own subscription answers, on whichever node it is
        }

        if (api.StartsWith("STREAM.CREATE.", StringComparison.Ordinal))
        {
            var leader = cluster.LeaderServerId();
            if (leader == cluster.ServerId)
            {
                PlaceCreate(cluster, api, request);
            }
            else if (cluster.Reaches(leader))
            {
                Forward(leader, JetStreamCluster.Place, request);
            }
            else
            {
                Fail(reply, ResponseType("STREAM.CREATE"), ApiError.ClusterNotAvailable);
            }

            return;
        }

        var (operation, stream) = StreamOf(api);
        if (!Known(stream) && cluster.LeaderServerId() is var placer && placer != cluster.ServerId && cluster.Reaches(placer))
        {
            // Not in this node's replica of the map even now: a create made through another node may not
            // have reached it yet (a member that has just joined). The leader placed it, so the leader
            // answers, as nats-server's meta leader does for a stream it has no assignment of.
            Forward(placer, JetStreamCluster.Place, request);
            return;
        }

        ToOwner(cluster, api, operation, stream, _placement.TryGetValue(stream, out var placed) ? placed.ServerId : null, request);
    }

    /// <summary>
    /// Answers a request about <paramref name="stream"/> here when it is ours or its owner is not known
    /// (as a single server: "stream not found"), forwards it to a reachable owner, and otherwise says
    /// the owner is down: nats-server's meta leader answers STREAM.INFO of an offline stream so, the rest 503.
    /// </summary>
    private void ToOwner(JetStreamCluster cluster, string api, string operation, string stream, string? owner, InternalMessage request)
    {
        if (ToLeader(cluster, operation, request, stream))
        {
            return;
        }

        if (owner is null || owner == cluster.ServerId || _streams.ContainsKey(stream) || _deleting.ContainsKey(stream))
        {
            Dispatch(api, request);
        }
        else if (cluster.Reaches(owner))
        {
            Forward(owner, JetStreamCluster.Local, request);
        }
        else if (operation != "CONSUMER.MSG.NEXT")
        {
            Fail(request.ReplyTo!, OperationType(operation), operation == "STREAM.INFO" ? ApiError.StreamOffline : ApiError.ClusterNotAvailable);
        }
    }

    private bool Known(string stream) => _streams.ContainsKey(stream) || _deleting.ContainsKey(stream) || _placement.ContainsKey(stream);

    private void OnRefreshed(JetStreamCluster cluster, Protocol.Refreshed refreshed)
    {
        if (refreshed.Map is { } map)
        {
            ApplyPlacement(map);
        }

        try
        {
            Route(cluster, refreshed.Api, refreshed.Request, fresh: true);
        }
        catch (JsonException)
        {
            Reply(refreshed.Request.ReplyTo!, new ErrorResponse { Type = "io.nats.jetstream.api.v1.error", Error = ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
        }
    }

    /// <summary>The leader places a new stream (or sends the create to where the name already is).</summary>
    private void PlaceCreate(JetStreamCluster cluster, string api, InternalMessage request)
    {
        var name = SplitStreamApi(api).Name;
        if (_streams.ContainsKey(name) || _deleting.ContainsKey(name))
        {
            Dispatch(api, request);
            return;
        }

        var owner = _pending.TryGetValue(name, out var pending) ? pending : _placement.TryGetValue(name, out var placed) ? placed.ServerId : null;
        if (owner is null)
        {
            StreamConfig? config;
            try
            {
                config = JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.StreamConfig);
            }
            catch (JsonException)
            {
                config = null;
            }

            if (config is not null)
            {
                if (config.Name.Length == 0)
                {
                    config.Name = name;
                }

                // Subjects must not overlap another node's stream (this node's are checked by Create).
                foreach (var (other, where) in _placement)
                {
                    if (other != name && !_streams.ContainsKey(other) && Subjects(config).Any(a => where.Subjects.Any(b => SubjectRules.IsSubsetOf(a, b) || SubjectRules.IsSubsetOf(b, a))))
                    {
                        Fail(request.ReplyTo!, ResponseType("STREAM.CREATE"), ApiError.SubjectOverlap);
                        return;
                    }
                }
            }

            if (config is { Replicas: > 1 and <= StreamConfigRules.MaxReplicas })
            {
                if (PickMembers(cluster, config.Replicas, LeastLoaded, config.Placement) is not { } members)
                {
                    Fail(request.ReplyTo!, ResponseType("STREAM.CREATE"), new ApiError(400, 10005, "no suitable peers for placement"));
                    return;
                }

                _pending[name] = members[0].ServerId;
                var ids = members.Select(m => m.Member).ToArray();
                if (members[0].ServerId == cluster.ServerId)
                {
                    Create("STREAM.CREATE", name, request, ids);
                }
                else
                {
                    _out.Publish(JetStreamCluster.ForwardSubject(members[0].ServerId, JetStreamCluster.CreateReplicated, MembersToken(ids) + "." + request.Subject), request.ReplyTo, request.Headers, request.Payload);
                }

                return;
            }

            if (cluster.Candidates(config?.Placement) is not { Count: > 0 } candidates)
            {
                // placement.tags no server up has, or another cluster's name: nats-server's answer.
                Fail(request.ReplyTo!, ResponseType("STREAM.CREATE"), new ApiError(400, 10005, "no suitable peers for placement"));
                return;
            }

            owner = LeastLoaded(candidates);
            _pending[name] = owner;
        }

        if (owner == cluster.ServerId)
        {
            Dispatch(api, request);
        }
        else if (cluster.Reaches(owner))
        {
            Forward(owner, JetStreamCluster.Local, request);
        }
        else
        {
            Fail(request.ReplyTo!, ResponseType("STREAM.CREATE"), ApiError.ClusterNotAvailable);
        }
    }

    // The candidate owning the fewest streams (placed or being placed); the first in order on a tie.
    private string LeastLoaded(List<string> candidates)
    {
        var load = candidates.ToDictionary(c => c, _ => 0, StringComparer.Ordinal);
        foreach (var owner in _placement.Values.Select(p => p.ServerId).Concat(_pending.Values))
        {
            if (load.TryGetValue(owner, out var n))
            {
                load[owner] = n + 1;
            }
        }

        return candidates.OrderBy(c => load[c]).First();
    }

    /// <summary>
    /// At the leader: a request about a stream the asking node has not heard of goes to the owner the
    /// leader placed it on (or knows of); one unknown here too is answered here ("stream not found").
    /// </summary>
    private void AnswerAsLeader(JetStreamCluster cluster, string api, InternalMessage request)
    {
        var (operation, stream) = StreamOf(api);
        var owner = _pending.TryGetValue(stream, out var pending) ? pending : _placement.TryGetValue(stream, out var placed) ? placed.ServerId : null;
        ToOwner(cluster, api, operation, stream, owner, request);
    }

    private void HandleForwarded(JetStreamCluster cluster, IReadOnlyList<InternalMessage> messages)
    {
        var prefixLength = JetStreamCluster.Prefix.Length + cluster.ServerId.Length + 1;
        foreach (var message in messages)
        {
            if (message.Subject.Length < prefixLength + 2)
            {
                continue;
            }

            var kind = message.Subject.Substring(prefixLength, 1);
            var original = message with { Subject = message.Subject[(prefixLength + 2)..] };
            if (kind == JetStreamCluster.DeleteReplica)
            {
                DeleteReplica(SplitStreamApi(ApiName(original.Subject)).Name);
                continue;
            }

            if (message.ReplyTo is null)
            {
                continue;
            }

            try
            {
                switch (kind)
                {
                    case JetStreamCluster.Local when StreamOf(ApiName(original.Subject)) is var (operation, stream) && !ToLeader(cluster, operation, original, stream):
                        Dispatch(ApiName(original.Subject), original);
                        break;
                    case JetStreamCluster.Local:
                        break; // gone on to the stream's leader
                    case JetStreamCluster.CreateReplicated or JetStreamCluster.StartReplica or JetStreamCluster.JoinReplica:
                        var dot = original.Subject.IndexOf('.', StringComparison.Ordinal);
                        if (dot > 0 && JetStreamCluster.ParseMembers(original.Subject[..dot]) is { } members)
                        {
                            var inner = original with { Subject = original.Subject[(dot + 1)..] };
                            if (kind != JetStreamCluster.CreateReplicated)
                            {
                                StartReplica(cluster, members, inner, kind == JetStreamCluster.JoinReplica ? ReplicaStart.Join : ReplicaStart.Create);
                            }
                            else
                            {
                                CreateAsFirstMember(ApiName(inner.Subject), inner, members);
                            }
                        }

                        break;
                    case JetStreamCluster.Place when ApiName(original.Subject) is var api && api.StartsWith("STREAM.CREATE.", StringComparison.Ordinal):
                        PlaceCreate(cluster, api, original);
                        break;
                    case JetStreamCluster.Place:
                        AnswerAsLeader(cluster, ApiName(original.Subject), original);
                        break;
                    case JetStreamCluster.Gather:
                        _ = AnswerGatherAsync(message.ReplyTo, OwnedStreams(cluster));
                        break;
                }
            }
            catch (JsonException)
            {
                Reply(message.ReplyTo, new ErrorResponse { Type = "io.nats.jetstream.api.v1.error", Error = ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
            }
        }
    }

    private void Forward(string serverId, string kind, InternalMessage request) =>
        _out.Publish(JetStreamCluster.ForwardSubject(serverId, kind, request.Subject), request.ReplyTo, request.Headers, request.Payload);

    /// <summary>Records that this node owns <paramref name="config"/>'s stream; <paramref name="then"/> runs once every member has it (or after a timeout).</summary>
    private void Announce(StreamConfig config, Action? then = null)
    {
        if (_cluster is not { } cluster)
        {
            then?.Invoke();
            return;
        }

        var name = config.Name;
        var value = string.Join(' ', Subjects(config).Prepend(cluster.ServerId));
        _placement[name] = Placement.Parse(value);
        var node = cluster.SelfUniqueAddress;
        IWriteConsistency write = then is null ? WriteLocal.Instance : new WriteAll(PlacementWriteTimeout);
        var update = Dsl.Update(_placementKey, LWWDictionary<string, string>.Empty, write, map => map.SetItem(node, name, value));
        if (then is null)
        {
            _replicator.Tell(update);
            return;
        }

        _replicator.Ask<IUpdateResponse>(update, PlacementWriteTimeout + TimeSpan.FromSeconds(1))
            .ContinueWith(_ => then(), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    /// <summary>Removes this node's entry for a deleted stream.</summary>
    private void Unannounce(string name)
    {
        if (_cluster is not { } cluster || !_placement.TryGetValue(name, out var placed) || placed.ServerId != cluster.ServerId)
        {
            return;
        }

        _placement.Remove(name);
        _pending.Remove(name);
        var node = cluster.SelfUniqueAddress;
        _replicator.Tell(Dsl.Update(_placementKey, LWWDictionary<string, string>.Empty, new WriteAll(PlacementWriteTimeout), map => map.Remove(node, name)));
    }

    private void OnPlacementChanged(Changed changed)
    {
        if (!changed.Key.Equals(_placementKey))
        {
            return;
        }

        ApplyPlacement(changed.Get(_placementKey));
    }

    private void ApplyPlacement(LWWDictionary<string, string> map)
    {
        _placement.Clear();
        foreach (var (name, value) in map)
        {
            _placement[name] = Placement.Parse(value);
            _pending.Remove(name);
        }

        // A stream of ours missing from the map (its entry lost to a concurrent remove) is told again
        // (a replicated one by its leader).
        foreach (var entry in _streams.Values)
        {
            if (!_placement.ContainsKey(entry.Config.Name) && (entry.Replication is null || (_cluster is { } cluster && _leaders.GetValueOrDefault(entry.Config.Name) == cluster.MemberId)))
            {
                Announce(entry.Config);
            }
        }
    }

    /// <summary>Every stream name known in the cluster (ours and the map's), sorted, matching <paramref name="filter"/>.</summary>
    private List<string> Names(string? filter)
    {
        var names = new SortedSet<string>(StringComparer.Ordinal);
        foreach (var entry in _streams.Values)
        {
            if (filter is null || Subjects(entry.Config).Any(x => SubjectRules.Collide(x, filter)))
            {
                names.Add(entry.Config.Name);
            }
        }

        foreach (var (name, placed) in _placement)
        {
            if (filter is null || placed.Subjects.Any(x => SubjectRules.Collide(x, filter)))
            {
                names.Add(name);
            }
        }

        return [.. names];
    }

    /// <summary>Starts asking every other owner for its streams' infos; completes with this node's and theirs.</summary>
    private Task<List<StreamInfoResponse>> Gather(JetStreamCluster cluster)
    {
        var peers = _placement.Values.Select(p => p.ServerId).Where(id => id != cluster.ServerId && cluster.Reaches(id)).Distinct().ToList();
        var asks = new List<Task<byte[]?>>(peers.Count);
        foreach (var peer in peers)
        {
            var id = Interlocked.Increment(ref _nextGather);
            var answer = new TaskCompletionSource<byte[]>(TaskCreationOptions.RunContinuationsAsynchronously);
            _gathers[id] = answer;
            asks.Add(AwaitGatherAsync(id, answer.Task));
            var reply = $"{JetStreamCluster.Prefix}{cluster.ServerId}.{JetStreamCluster.Reply}.{id.ToString(CultureInfo.InvariantCulture)}";
            _out.Publish(JetStreamCluster.ForwardSubject(peer, JetStreamCluster.Gather, "streams"), reply, default, default);
        }

        return CollectAsync(OwnedStreams(cluster), asks);
    }

    private async Task<byte[]?> AwaitGatherAsync(long id, Task<byte[]> answer)
    {
        var done = await Task.WhenAny(answer, Task.Delay(GatherTimeout)).ConfigureAwait(false);
        _gathers.TryRemove(id, out _);
        return done == answer ? answer.Result : null;
    }

    private static async Task<List<StreamInfoResponse>> CollectAsync(StreamEntry[] local, List<Task<byte[]?>> remote)
    {
        var infos = new List<StreamInfoResponse>();
        foreach (var (_, info) in await GatherInfosAsync(local).ConfigureAwait(false))
        {
            if (info is not null)
            {
                infos.Add(info);
            }
        }

        foreach (var ask in remote)
        {
            if (await ask.ConfigureAwait(false) is { } payload && JsonSerializer.Deserialize(payload, JetStreamJsonContext.Default.StreamListResponse) is { } list)
            {
                infos.AddRange(list.Streams);
            }
        }

        return infos;
    }

    private void OnGatherReplies(IReadOnlyList<InternalMessage> replies)
    {
        foreach (var reply in replies)
        {
            var dot = reply.Subject.LastIndexOf('.');
            if (long.TryParse(reply.Subject.AsSpan(dot + 1), NumberStyles.None, CultureInfo.InvariantCulture, out var id) && _gathers.TryRemove(id, out var answer))
            {
                answer.TrySetResult(reply.Payload);
            }
        }
    }

    /// <summary>Another node's gather: every stream of this node with its info (not counted as an API call).</summary>
    private async Task AnswerGatherAsync(string reply, StreamEntry[] streams)
    {
        var response = new StreamListResponse { Type = "io.nats.jetstream.api.v1.stream_list_response" };
        foreach (var (_, info) in await GatherInfosAsync(streams).ConfigureAwait(false))
        {
            if (info is not null)
            {
                response.Streams.Add(info);
            }
        }

        response.Total = response.Streams.Count;
        _out.Publish(reply, null, default, JsonSerializer.SerializeToUtf8Bytes(response, JetStreamJsonContext.Default.StreamListResponse));
    }

    private async Task ClusterListAsync(string reply, Task<List<StreamInfoResponse>> gathered, List<string> page, int total, int offset, int limit)
    {
        var infos = (await gathered.ConfigureAwait(false)).Where(i => i.Config is not null).GroupBy(i => i.Config!.Name, StringComparer.Ordinal).ToDictionary(g => g.Key, g => g.First(), StringComparer.Ordinal);
        var response = new StreamListResponse { Type = "io.nats.jetstream.api.v1.stream_list_response", Total = total, Offset = offset, Limit = limit };
        foreach (var name in page)
        {
            if (infos.TryGetValue(name, out var info))
            {
                response.Streams.Add(info);
            }
            else
            {
                (response.Missing ??= []).Add(name);
            }
        }

        Reply(reply, response, JetStreamJsonContext.Default.StreamListResponse);
    }

    private async Task ClusterAccountInfoAsync(string reply, Task<List<StreamInfoResponse>> gathered, int streams, long apiTotal, long apiErrors)
    {
        long memory = 0, storage = 0;
        foreach (var info in await gathered.ConfigureAwait(false))
        {
            var bytes = (long)(info.State?.Bytes ?? 0);
            if (info.Config?.Storage == StorageType.Memory)
            {
                memory += bytes;
            }
            else
            {
                storage += bytes;
            }
        }

        Reply(reply, AccountInfo(memory, storage, streams, apiTotal, apiErrors), JetStreamJsonContext.Default.AccountInfoResponse);
    }

    // The operation and stream a stream or consumer request is about: STREAM.INFO.<stream>, CONSUMER.INFO.<stream>.<consumer>, ...
    private static (string Operation, string Stream) StreamOf(string api)
    {
        if (api.StartsWith("CONSUMER.", StringComparison.Ordinal))
        {
            var target = ConsumerTarget(api);
            return ("CONSUMER." + target.Operation, target.Stream);
        }

        return SplitStreamApi(api);
    }

    private static string OperationType(string operation) =>
        operation.StartsWith("CONSUMER.", StringComparison.Ordinal)
            ? "io.nats.jetstream.api.v1.consumer_" + operation["CONSUMER.".Length..].ToLowerInvariant().Replace('.', '_') + "_response"
            : ResponseType(operation);

    /// <summary>Where a stream is: its owner's server id and its subjects (for STREAM.NAMES' filter and overlap checks).</summary>
    private sealed record Placement(string ServerId, string[] Subjects)
    {
        public static Placement Parse(string value)
        {
            var parts = value.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            return new Placement(parts.Length > 0 ? parts[0] : "", parts.Length > 1 ? parts[1..] : []);
        }
    }

    /// <summary>The streams this node answers for in lists and account totals: its own, and the replicated ones it leads.</summary>
    private StreamEntry[] OwnedStreams(JetStreamCluster cluster) =>
        [.. _streams.Values.Where(e => e.Replication is null || _leaders.GetValueOrDefault(e.Config.Name) == cluster.MemberId)];
}
