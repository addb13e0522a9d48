using System.Globalization;
using System.Text;
using System.Text.Json;
using Akka.Actor;
using Akka.Event;
using Courier.Actors.Connections;
using Courier.Actors.Raft;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// Replicated streams (num_replicas 2-5) in a cluster. The leader that places a create picks the
/// members (the reachable servers with the fewest streams) and forwards it to the first
/// (<c>$JSC.&lt;first&gt;.C.&lt;member ids&gt;.&lt;subject&gt;</c>); that one checks it as a single server would,
/// asks the others to start their replicas (<c>M.</c>, the configuration as payload), starts its own,
/// and campaigns once they answer, so the group elects at once. Each replica is a
/// <see cref="StreamActor"/> with its <see cref="StreamReplication"/>; whichever leads announces itself
/// as the stream's owner in the placement map, so requests reach it, and a request that reaches a
/// follower goes on to the leader.
/// </summary>
internal sealed partial class JetStreamApi
{
    /// <summary>The file in a replicated stream's directory naming its group's members (member ids, comma separated).</summary>
    private const string MembersFile = "members";

    /// <summary>How long the first member waits for the others to start their replicas before it campaigns anyway.</summary>
    private static readonly TimeSpan ReplicaStartTimeout = TimeSpan.FromSeconds(2);

    /// <summary>The member id of each replicated stream's leader as its replica here last heard (0: no leader).</summary>
    private readonly Dictionary<string, ulong> _leaders = new(StringComparer.Ordinal);

    /// <summary>
    /// num_replicas: nats-server's answer on a single server (10074); what Courier does not replicate yet
    /// refused rather than kept as one copy (a mirror or sources, interest and work-queue retention,
    /// whose consumers decide what is kept).
    /// </summary>
    private ApiError? CheckReplicas(StreamConfig config)
    {
        if (config.Replicas <= 1)
        {
            return null;
        }

        if (_cluster is null)
        {
            return ApiError.StreamReplicasNotSupported;
        }

        if (config.Mirror is not null || config.Sources is { Count: > 0 } || config.Retention != RetentionPolicy.Limits)
        {
            return ApiError.StreamInvalidConfig("Courier replicates streams of limits retention without a mirror or sources only, for now");
        }

        return null;
    }

    /// <summary>A group's name: the account's and the stream's, hashed (a directory name whatever the account is called).</summary>
    private string GroupName(string stream) =>
        "S-" + JetStreamCluster.MemberToken(JetStreamCluster.MemberIdOf(_account + "\u0000" + stream));

    private static void WriteMembers(string directory, ulong[] members)
    {
        Directory.CreateDirectory(directory);
        StreamActor.WriteDurably(Path.Combine(directory, MembersFile), MetaFiles.WithSum(Encoding.ASCII.GetBytes(string.Join(',', members.Select(JetStreamCluster.MemberToken)))));
    }

    /// <summary>
    /// The group's members as this replica's file names them; null when there is no such file (a stream of one
    /// copy). A file that is there but damaged throws: such a replica must never start as a stream of its own
    /// (it would take publishes beside its group's leader).
    /// </summary>
    /// <exception cref="InvalidDataException">The file is damaged.</exception>
    private static ulong[]? ReadMembers(string directory)
    {
        var file = Path.Combine(directory, MembersFile);
        if (!File.Exists(file))
        {
            return null;
        }

        var text = Encoding.ASCII.GetString(MetaFiles.WithoutSum(File.ReadAllBytes(file), "member list", required: true)).Trim();
        return JetStreamCluster.ParseMembers(text) ?? throw new InvalidDataException($"member list {file} is damaged: '{text}'");
    }

    /// <summary>
    /// <paramref name="count"/> members among the servers up that the placement allows and that are not already
    /// members (<paramref name="exclude"/>), least loaded first; null when there are fewer.
    /// </summary>
    private static List<(string ServerId, ulong Member)>? PickMembers(JetStreamCluster cluster, int count, Func<List<string>, string> leastLoaded, Protocols.JetStream.Placement? placement, IReadOnlyCollection<ulong>? exclude = null)
    {
        var candidates = cluster.CandidateMembers(placement);
        var left = candidates.Where(c => exclude?.Contains(c.Value) != true).Select(c => c.Key).ToList();
        if (left.Count < count)
        {
            return null;
        }

        var picked = new List<(string, ulong)>(count);
        while (picked.Count < count)
        {
            var next = leastLoaded(left);
            left.Remove(next);
            picked.Add((next, candidates[next]));
        }

        return picked;
    }

    /// <summary>Asks the other members to start their replicas, then has this one campaign (at once when they all answered).</summary>
    private void StartReplicas(JetStreamCluster cluster, StreamConfig config, ulong[] members, string group)
    {
        var payload = JsonSerializer.SerializeToUtf8Bytes(config, JetStreamJsonContext.Default.StreamConfig);
        var subject = $"$JS.API.STREAM.CREATE.{config.Name}";
        var asks = new List<Task<byte[]?>>();
        foreach (var member in members)
        {
            if (member == cluster.MemberId)
            {
                continue;
            }

            if (cluster.Member(member) is not { } peer)
            {
                continue; // gone since placement: it starts nothing; the group runs without it until it returns
            }

            var id = Interlocked.Increment(ref _nextGather);
            var answer = new TaskCompletionSource<byte[]>(TaskCreationOptions.RunContinuationsAsynchronously);
            _gathers[id] = answer;
            asks.Add(AwaitAsync(id, answer.Task, ReplicaStartTimeout));
            var reply = $"{JetStreamCluster.Prefix}{cluster.ServerId}.{JetStreamCluster.Reply}.{id.ToString(CultureInfo.InvariantCulture)}";
            _out.Publish(JetStreamCluster.ForwardSubject(peer.ServerId, JetStreamCluster.StartReplica, MembersToken(members) + "." + subject), reply, default, payload);
        }

        var host = cluster.RaftHost;
        Task.WhenAll(asks).ContinueWith(_ => host.Tell(new RaftHost.Protocol.Campaign(group)), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    private async Task<byte[]?> AwaitAsync(long id, Task<byte[]> answer, TimeSpan timeout)
    {
        var done = await Task.WhenAny(answer, Task.Delay(timeout)).ConfigureAwait(false);
        _gathers.TryRemove(id, out _);
        return done == answer ? answer.Result : null;
    }

    private static string MembersToken(ulong[] members) => string.Join(',', members.Select(JetStreamCluster.MemberToken));

    /// <summary>Another member created a replicated stream (or, with <see cref="ReplicaStart.Join"/>, raised its num_replicas): start this node's replica (and say so).</summary>
    private void StartReplica(JetStreamCluster cluster, ulong[] members, InternalMessage request, ReplicaStart start = ReplicaStart.Create)
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

        if (config is null || !members.Contains(cluster.MemberId))
        {
            return;
        }

        if (!_streams.ContainsKey(config.Name))
        {
            var directory = Path.Combine(_streamsDirectory, config.Name);
            var created = DateTime.UtcNow;
            try
            {
                var store = OpenStore(config, directory);
                if (config.Storage != StorageType.Memory)
                {
                    var meta = new StreamInfoResponse { Config = config, Created = created };
                    _meta.WriteDurably(Path.Combine(directory, MetaFile), JsonSerializer.SerializeToUtf8Bytes(meta, JetStreamJsonContext.Default.StreamInfoResponse), _meta.StreamContext(config.Name));
                }

                if (start == ReplicaStart.Join)
                {
                    // A joiner has no bootstrap of its own, after a restart too (it would not be the group's).
                    StreamActor.WriteDurably(Path.Combine(directory, JoinMarker), []);
                }

                WriteMembers(directory, members);
                Start(config, created, store, ReplicationOf(cluster, config.Name, members, start));
            }
            catch (IOException e)
            {
                _log.Error(e, "replica of stream {0} could not be started", config.Name);
                return;
            }
        }

        if (request.ReplyTo is { } reply)
        {
            _out.Publish(reply, null, default, "+OK"u8);
        }
    }

    /// <summary>A replica's leadership changed: remember where the leader is; the new leader announces itself as the owner.</summary>
    private void OnStreamLeader(Protocol.StreamLeader leader)
    {
        if (!_streams.TryGetValue(leader.Name, out var entry) || !entry.Actor.Equals(leader.Actor))
        {
            return; // a deleted or replaced stream's last word
        }

        _leaders[leader.Name] = leader.Leader;
        if (leader.IsSelf)
        {
            Announce(entry.Config);
        }

        if (leader.Leader != 0 && _cluster is { } cluster)
        {
            ReleaseLeaderWaits(cluster, leader.Name, expired: false);
        }
    }

    /// <summary>
    /// A request for a replicated stream that reached a follower: on to the leader, or nats-server's 503
    /// while the group has none. Null when this node should answer it itself.
    /// </summary>
    private bool ToLeader(JetStreamCluster cluster, string operation, InternalMessage request, string stream)
    {
        if (!_streams.TryGetValue(stream, out var entry) || entry.Replication is null)
        {
            return false;
        }

        // Resolved now, not when leadership changed: a restarted leader has a new server id under its old name.
        var leader = _leaders.GetValueOrDefault(stream);
        if (leader == cluster.MemberId)
        {
            return false;
        }

        if (leader != 0 && cluster.Member(leader) is { } where && cluster.Reaches(where.ServerId))
        {
            Forward(where.ServerId, JetStreamCluster.Local, request);
        }
        else if (leader == 0 && _placement.TryGetValue(stream, out var placed) && placed.ServerId != cluster.ServerId && cluster.Reaches(placed.ServerId))
        {
            // This replica has not heard from a leader yet (the stream was just created, or this node just
            // started): the owner the map names, the leader that announced itself, answers or forwards on.
            Forward(placed.ServerId, JetStreamCluster.Local, request);
        }
        else if (leader == 0 && operation != "CONSUMER.MSG.NEXT")
        {
            // This replica has heard of no leader yet (a create answered by its first member a moment ago, a
            // restart, an election): the request waits for one, briefly, rather than fail at once.
            if (!_leaderWaits.TryGetValue(stream, out var waiting))
            {
                _leaderWaits[stream] = waiting = [];
                Timers.StartSingleTimer("leader-wait-" + stream, new Protocol.LeaderWaitOver(stream), LeaderWaitTimeout);
            }

            waiting.Add(request);
        }
        else if (operation != "CONSUMER.MSG.NEXT")
        {
            Fail(request.ReplyTo!, OperationType(operation), ApiError.ClusterNotAvailable);
        }

        return true;
    }

    /// <summary>How long a request for a replicated stream waits at a replica that knows no leader.</summary>
    private static readonly TimeSpan LeaderWaitTimeout = TimeSpan.FromSeconds(3);

    /// <summary>Requests for replicated streams whose replica here knows no leader yet, by stream.</summary>
    private readonly Dictionary<string, List<InternalMessage>> _leaderWaits = new(StringComparer.Ordinal);

    /// <summary>A leader is known, or the wait is over: the waiting requests are routed again (or answered 503).</summary>
    private void ReleaseLeaderWaits(JetStreamCluster cluster, string stream, bool expired)
    {
        if (!_leaderWaits.Remove(stream, out var waiting))
        {
            return;
        }

        Timers.Cancel("leader-wait-" + stream);

        foreach (var request in waiting)
        {
            var api = ApiName(request.Subject);
            if (expired && StreamOf(api) is var (operation, _))
            {
                Fail(request.ReplyTo!, OperationType(operation), ApiError.ClusterNotAvailable);
            }
            else
            {
                Route(cluster, api, request);
            }
        }
    }

    /// <summary>A replicated stream deleted through its leader: every other member deletes its replica.</summary>
    private void DeleteReplicas(StreamEntry entry)
    {
        if (entry.Replication is not { } replication || _cluster is not { } cluster)
        {
            return;
        }

        _leaders.Remove(entry.Config.Name);
        foreach (var member in replication.Members)
        {
            if (member != cluster.MemberId && cluster.Member(member) is { } peer)
            {
                _out.Publish(JetStreamCluster.ForwardSubject(peer.ServerId, JetStreamCluster.DeleteReplica, $"$JS.API.STREAM.DELETE.{entry.Config.Name}"), null, default, default);
            }
        }
    }

    /// <summary>Another member deleted a replicated stream: this node's replica goes too (answered to nobody).</summary>
    private void DeleteReplica(string name)
    {
        if (!_streams.TryGetValue(name, out var entry) || entry.Replication is null)
        {
            return;
        }

        // A member removed from a running group (the stream goes on elsewhere): if the map still names this node
        // the owner (it led once), requests go to the leader it last knew until the leader's announcement arrives.
        if (_cluster is { } cluster && _leaders.GetValueOrDefault(name) is var leader and not 0 && leader != cluster.MemberId &&
            cluster.Member(leader) is { } where && _placement.TryGetValue(name, out var placed) && placed.ServerId == cluster.ServerId)
        {
            _placement[name] = placed with { ServerId = where.ServerId };
        }

        _leaders.Remove(name);
        _streams.Remove(name);
        _deleting[name] = [];
        _consumers.Close(name);
        var self = Self;
        entry.Actor.Ask<StreamActor.Protocol.Deleted>(StreamActor.Protocol.Delete.Instance, TimeSpan.FromSeconds(30))
            .PipeTo(self, success: _ => new Protocol.ReplicaDeleted(name), failure: _ => new Protocol.ReplicaDeleted(name));
    }

    /// <summary>A replicated create placed here as the first member: checked and created as on a single server (a name in use answers as there).</summary>
    private void CreateAsFirstMember(string api, InternalMessage request, ulong[] members)
    {
        var name = SplitStreamApi(api).Name;
        if (_deleting.TryGetValue(name, out var waiting))
        {
            waiting.Add(request);
            return;
        }

        Create("STREAM.CREATE", name, request, members);
    }

    private StreamReplication ReplicationOf(JetStreamCluster cluster, string stream, ulong[] members, ReplicaStart start = ReplicaStart.Create)
    {
        var group = GroupName(stream);
        cluster.Groups[group] = (_account, stream);
        return new(group, members, cluster.RaftHost, member => cluster.Member(member)?.Name, cluster.ClusterName, CompactEvery, cluster.MemberId, start);
    }

    /// <summary>A marker in a replica's directory: it joined a running group (no bootstrap at a restart either).</summary>
    internal const string JoinMarker = "join";

    /// <summary>
    /// A marker in a stream's directory while its store becomes a replicated group's (num_replicas up from 1):
    /// a restart before the group exists makes it again from the store, never rebuilds the store from an empty log.
    /// The stream actor removes it once its group starts from the store's snapshot.
    /// </summary>
    internal const string AdoptMarker = "adopt";

    /// <summary>How a recovered replica's member begins, by the markers in its directory.</summary>
    private static ReplicaStart StartOf(string directory) =>
        File.Exists(Path.Combine(directory, AdoptMarker)) ? ReplicaStart.Adopt
        : File.Exists(Path.Combine(directory, JoinMarker)) ? ReplicaStart.Join
        : ReplicaStart.Create;

    /// <summary>
    /// STREAM.UPDATE changing num_replicas, where the stream is answered (its R1 owner, or its group's leader).
    /// Up from 1: this node's stream stops, its store becomes a group of this member alone (a snapshot of it), the
    /// others join empty, and the leader adds them one at a time; each copies the store from the leader.
    /// Otherwise the change goes through the group's log with the new member set; the leader adds (the new members
    /// join) or removes voters one at a time, and a removed member's replica is deleted once its removal commits.
    /// </summary>
    private void ChangeReplicas(StreamEntry existing, StreamConfig config, string reply, string type)
    {
        if (_cluster is not { } cluster)
        {
            Fail(reply, type, ApiError.StreamReplicasNotSupported);
            return;
        }

        var name = config.Name;
        var current = existing.Replication?.Members ?? [cluster.MemberId];
        ulong[] next;
        List<(string ServerId, ulong Member)> added = [];
        if (config.Replicas <= current.Length)
        {
            next = [cluster.MemberId, .. current.Where(m => m != cluster.MemberId).Take(config.Replicas - 1)];
        }
        else if (PickMembers(cluster, config.Replicas - current.Length, LeastLoaded, config.Placement, current) is { } picked)
        {
            added = picked;
            next = [.. current, .. added.Select(a => a.Member)];
        }
        else
        {
            Fail(reply, type, new ApiError(503, 10023, "insufficient resources")); // nats-server's answer when an update asks for more replicas than it has peers
            return;
        }

        if (existing.Replication is null)
        {
            // Up from 1: requests for it wait while its actor stops (Dispatch queues them as for a delete).
            _streams.Remove(name);
            _deleting[name] = [];
            _consumers.Close(name);
            var self = Self;
            var previous = existing.Config;
            existing.Actor.GracefulStop(TimeSpan.FromSeconds(10)).PipeTo(
                self,
                success: stopped => new Protocol.Adopt(config, previous, existing.Created, next, added, reply, type, stopped),
                failure: _ => new Protocol.Adopt(config, previous, existing.Created, next, added, reply, type, false));
            return;
        }

        ChangeMembers(cluster, existing, config, next, added, reply, type);
        Announce(config);
    }

    /// <summary>
    /// A replicated stream's new member set, at its leader: the added servers start their replicas, and the set goes
    /// through the group's log with <paramref name="config"/> (every replica records it; the leader's host changes the voters).
    /// An empty <paramref name="reply"/>: nobody to answer when it is applied.
    /// </summary>
    private void ChangeMembers(JetStreamCluster cluster, StreamEntry entry, StreamConfig config, ulong[] next, List<(string ServerId, ulong Member)> added, string reply, string type)
    {
        SendJoins(cluster, config, next, added);
        _streams[config.Name] = entry with { Config = config, Replication = entry.Replication! with { Members = next } };
        entry.Actor.Tell(new StreamActor.Protocol.Update(config, reply, type, next));
    }

    /// <summary>
    /// <c>$JS.API.STREAM.PEER.REMOVE.&lt;stream&gt;</c> <c>{"peer": "&lt;server name&gt;"}</c>, at the stream's leader, as
    /// nats-server's jsStreamRemovePeerRequest: the peer leaves the group and a server outside it takes its place
    /// (it joins empty and copies the store); with none up, nats-server 2.9's "peer remap failed". Removing the
    /// leader itself hands leadership on first (the next leader finishes the change).
    /// </summary>
    private void RemovePeer(string name, string reply, byte[] payload)
    {
        const string Type = "io.nats.jetstream.api.v1.stream_remove_peer_response";
        if (payload.Length == 0)
        {
            Fail(reply, Type, ApiError.BadRequest);
            return;
        }

        var peer = JsonSerializer.Deserialize(payload, JetStreamJsonContext.Default.StreamRemovePeerRequest)?.Peer;
        if (string.IsNullOrEmpty(peer))
        {
            Fail(reply, Type, ApiError.BadRequest);
            return;
        }

        if (!_streams.TryGetValue(name, out var entry))
        {
            Fail(reply, Type, ApiError.StreamNotFound);
            return;
        }

        var member = JetStreamCluster.MemberIdOf(peer);
        if (_cluster is not { } cluster || entry.Replication is not { } replication || !replication.Members.Contains(member))
        {
            Fail(reply, Type, new ApiError(400, 10040, "peer not a member")); // nats-server's JSClusterPeerNotMemberErr
            return;
        }

        if (PickMembers(cluster, 1, LeastLoaded, entry.Config.Placement, replication.Members) is not { } added)
        {
            Fail(reply, Type, new ApiError(503, 10075, "peer remap failed")); // nats-server 2.9's JSPeerRemapErr: nobody to take its place
            return;
        }

        ChangeMembers(cluster, entry, entry.Config, [.. replication.Members.Where(m => m != member), .. added.Select(a => a.Member)], added, "", ""); // answered here, not when applied
        Reply(reply, new SuccessResponse { Type = Type, Success = true }, JetStreamJsonContext.Default.SuccessResponse);
    }

    /// <summary>The new members of a group start their replicas empty and wait for its leader.</summary>
    private void SendJoins(JetStreamCluster cluster, StreamConfig config, ulong[] members, List<(string ServerId, ulong Member)> added)
    {
        var payload = JsonSerializer.SerializeToUtf8Bytes(config, JetStreamJsonContext.Default.StreamConfig);
        foreach (var (serverId, _) in added)
        {
            var reply = $"{JetStreamCluster.Prefix}{cluster.ServerId}.{JetStreamCluster.Reply}.0"; // nobody waits for this answer
            _out.Publish(JetStreamCluster.ForwardSubject(serverId, JetStreamCluster.JoinReplica, MembersToken(members) + $".$JS.API.STREAM.CREATE.{config.Name}"), reply, default, payload);
        }
    }

    /// <summary>The R1 stream's actor stopped: its store becomes the new group's, this node its first leader.</summary>
    private void OnAdopt(JetStreamCluster cluster, Protocol.Adopt m)
    {
        var name = m.Config.Name;
        var directory = Path.Combine(_streamsDirectory, name);
        try
        {
            if (!m.Stopped)
            {
                throw new IOException("the stream did not stop in time");
            }

            StreamActor.WriteDurably(Path.Combine(directory, AdoptMarker), []);
            var meta = new StreamInfoResponse { Config = m.Config, Created = m.Created };
            _meta.WriteDurably(Path.Combine(directory, MetaFile), JsonSerializer.SerializeToUtf8Bytes(meta, JetStreamJsonContext.Default.StreamInfoResponse), _meta.StreamContext(name));
            WriteMembers(directory, m.Members);
            var store = OpenStore(m.Config, directory);
            var actor = Start(m.Config, m.Created, store, ReplicationOf(cluster, name, m.Members, ReplicaStart.Adopt));
            SendJoins(cluster, m.Config, m.Members, m.Added);
            Announce(m.Config, () => actor.Tell(new StreamActor.Protocol.ReplyInfo(m.ReplyTo, m.Type, DidCreate: false)));
        }
        catch (IOException e)
        {
            _log.Error(e, "stream {0}: num_replicas could not go up to {1}; it stays as it was", name, m.Config.Replicas);
            Fail(m.ReplyTo, m.Type, ApiError.StreamStoreFailed(e.Message));
            if (!_streams.ContainsKey(name) && m.Stopped)
            {
                File.Delete(Path.Combine(directory, AdoptMarker));
                File.Delete(Path.Combine(directory, MembersFile));
                var meta = new StreamInfoResponse { Config = m.Previous, Created = m.Created };
                StreamActor.WriteDurably(Path.Combine(directory, MetaFile), JsonSerializer.SerializeToUtf8Bytes(meta, JetStreamJsonContext.Default.StreamInfoResponse));
                Start(m.Previous, m.Created, OpenStore(m.Previous, directory));
            }
        }

        if (_deleting.Remove(name, out var waiting) && waiting.Count > 0)
        {
            Handle(waiting);
        }
    }

    /// <summary>A replica applied a num_replicas change: its members file and entry follow.</summary>
    private void OnReplicaMembers(Protocol.ReplicaMembers m)
    {
        if (!_streams.TryGetValue(m.Name, out var entry) || !entry.Actor.Equals(m.Actor) || entry.Replication is not { } replication)
        {
            return;
        }

        _streams[m.Name] = entry with { Replication = replication with { Members = m.Members } };
        if (entry.Config.Storage != StorageType.Memory)
        {
            WriteMembers(Path.Combine(_streamsDirectory, m.Name), m.Members);
        }
    }

    /// <summary>The leader applied a member's removal: that server deletes its replica.</summary>
    private void OnReplicaRemoved(JetStreamCluster cluster, Protocol.ReplicaRemoved m)
    {
        if (m.Member != cluster.MemberId && cluster.Member(m.Member) is { } peer)
        {
            _out.Publish(JetStreamCluster.ForwardSubject(peer.ServerId, JetStreamCluster.DeleteReplica, $"$JS.API.STREAM.DELETE.{m.Name}"), null, default, default);
        }

        if (_streams.TryGetValue(m.Name, out var entry) && entry.Actor.Equals(m.Actor))
        {
            Announce(entry.Config); // the owner again, newer than whatever a removed member, once leader, announced
        }
    }

    /// <summary>
    /// Applied entries between a replicated stream's snapshots: <see cref="StreamReplication.DefaultCompactEvery"/>, or
    /// the environment's <c>COURIER_RAFT_COMPACT_EVERY</c> (tests make snapshots and catch-ups happen after a few entries).
    /// </summary>
    private static readonly int CompactEvery =
        int.TryParse(Environment.GetEnvironmentVariable("COURIER_RAFT_COMPACT_EVERY"), out var every) && every > 0 ? every : StreamReplication.DefaultCompactEvery;
}
