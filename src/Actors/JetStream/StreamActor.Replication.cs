using System.Buffers.Binary;
using System.Text;
using System.Text.Json;
using Akka.Actor;
using Akka.Event;
using Courier.Actors.Connections;
using Courier.Actors.Raft;
using Courier.Protocols.JetStream;
using Courier.Raft;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>What a replicated stream (num_replicas above 1) needs: its Raft group, its members, the node's Raft host.</summary>
/// <param name="Group">The group's name (and its log's directory under the node's Raft host).</param>
/// <param name="Members">The group's voters: the member ids of the servers holding a replica.</param>
/// <param name="Host">The node's <see cref="RaftHost"/>.</param>
/// <param name="NameOf">A member's server name now (null: not a member up), for STREAM.INFO's cluster block.</param>
/// <param name="ClusterName">The cluster's name, for the same.</param>
/// <param name="CompactEvery">Applied entries between snapshots (the log before a snapshot goes).</param>
/// <param name="Self">This server's member id (0: learnt when it first leads).</param>
/// <param name="Start">How this replica's member begins: with the group's first members, as the group made for a stream's existing messages, or joining a running group.</param>
internal sealed record StreamReplication(string Group, ulong[] Members, IActorRef Host, Func<ulong, string?> NameOf, string? ClusterName, int CompactEvery = StreamReplication.DefaultCompactEvery, ulong Self = 0, ReplicaStart Start = ReplicaStart.Create)
{
    public const int DefaultCompactEvery = 8192;
}

/// <summary>How a replica's Raft member begins (see <see cref="StreamReplication.Start"/>).</summary>
internal enum ReplicaStart
{
    /// <summary>A new stream: every first member bootstraps the group with the same voters.</summary>
    Create,

    /// <summary>An R1 stream whose num_replicas went up: a group of this one member, starting from a snapshot of its store; the leader then adds the others.</summary>
    Adopt,

    /// <summary>A member added to a running group: no bootstrap; the leader sends it the log or its snapshot.</summary>
    Join,
}

/// <summary>
/// A replicated stream: every change goes through its Raft group's log and is applied, in log order, by
/// every replica to its own store. The leader turns each read batch of publishes into one log entry
/// (messages with the leader's timestamps); once the entry is committed (on a quorum of disks, each
/// replica fsyncing its log before it answers) every replica applies it with the same checks
/// (Nats-Msg-Id within the duplicate window measured by the entry's time, expectations, limits), so all
/// stores agree, and the leader sends the PubAcks. Only the leader subscribes to the stream's subjects,
/// runs its consumers and answers its requests; purges, message deletes and configuration updates are
/// log entries too.
/// </summary>
/// <remarks>
/// The log, not the store, is what a replica trusts: its store is written without fsync. Until the first
/// snapshot the store is rebuilt from the log on every start (truncated, then the committed entries
/// applied again); after it, the store is trusted up to the snapshot (synced when it was taken) and the
/// log past it. Compaction and catch-up: StreamActor.Catchup.cs.
/// </remarks>
internal sealed partial class StreamActor
{
    private const byte MessagesEntry = 1;
    private const byte RequestEntry = 2;
    private const byte ConfigEntry = 3;
    private const byte ConsumerEntry = 4;
    private const byte ConsumerDeletedEntry = 5;
    private const byte ConsumerStateEntry = 6;

    /// <summary>A stepdown's handover: once committed, the leader hands leadership to the successor it names.</summary>
    private const byte HandoverEntry = 8;

    /// <summary>How often the leader replicates its durable consumers' states (those that changed).</summary>
    private static readonly TimeSpan ConsumerStateInterval = TimeSpan.FromSeconds(1);

    /// <summary>The file in a durable consumer's directory holding the state its leader last replicated.</summary>
    private const string ReplicaStateFile = "replica-state";

    private readonly Dictionary<string, byte[]> _replicatedStates = new(StringComparer.Ordinal);

    /// <summary>How long a create waits for the new group's first leader before it answers anyway.</summary>
    private static readonly TimeSpan LeaderWait = TimeSpan.FromSeconds(5);

    private readonly StreamReplication? _replication;
    private readonly List<(ReadOnlyMemory<byte> Reply, StoreResult Result, PubAck? Ack)> _appliedAcks = []; // replies: slices of the applied entries
    private readonly List<Protocol.ReplyInfo> _awaitingLeader = [];
    private bool _leading;
    private ulong _leader;
    private long _nextProposal;

    /// <summary>This replica leads its group: it takes publishes and requests and sends their answers.</summary>
    private bool Leading => _replication is null || _leading;

    private void StartReplication(StreamReplication replication)
    {
        _members = replication.Members;
        _selfMember = replication.Self;
        // The host answers with Recovered first (StreamActor.Catchup.cs): the store is rebuilt from the log, or trusted up to the snapshot.
        var start = replication.Start switch
        {
            ReplicaStart.Adopt => new RaftHost.Protocol.StartGroup(replication.Group, [replication.Self], Bootstrap: true, Self, Campaign: true, InitialSnapshot: CurrentImage().Write()),
            ReplicaStart.Join => new RaftHost.Protocol.StartGroup(replication.Group, [], Bootstrap: false, Self),
            _ => new RaftHost.Protocol.StartGroup(replication.Group, replication.Members, Bootstrap: true, Self), // the first member campaigns when told (JetStreamApi.StartReplicas)
        };
        replication.Host.Tell(start);
    }

    /// <summary>The group's voters as this replica knows them: its start's, then each num_replicas change's.</summary>
    private ulong[] _members = [];

    /// <summary>The messages of a replicated stream's group (registered by the constructor).</summary>
    private void ReceiveReplication()
    {
        Receive<RaftHost.Protocol.GroupStarted>(_ => { });
        Receive<RaftHost.Protocol.Recovered>(OnRecovered);
        Receive<Protocol.CatchupRequest>(OnCatchupRequest);
        Receive<Protocol.CatchupReply>(OnCatchupReply);
        Receive<Protocol.CatchupTimeout>(OnCatchupTimeout);
        Receive<RaftHost.Protocol.Applied>(OnApplied);
        Receive<RaftHost.Protocol.LeaderChanged>(OnLeaderChanged);
        Receive<RaftHost.Protocol.Committed>(_ => { }); // its PubAcks went out when it was applied
        Receive<RaftHost.Protocol.Rejected>(_ => { }); // not the leader (any more): the publishers time out, as nats-server's do
        Receive<RaftHost.Protocol.Lost>(_ => { });
        Receive<RaftHost.Protocol.GroupStatus>(OnGroupStatus);
        Receive<Protocol.LeaderWaitOver>(_ => AnswerAwaitingLeader());
        Receive<Protocol.StepDownWith>(OnStepDownWith);
        Receive<Protocol.HandOver>(OnHandOver);
        Receive<Protocol.Elected>(OnElected);
        Receive<Protocol.ReplicateConsumerStates>(_ => ReplicateConsumerStates());
        Receive<Protocol.ConsumerStateTaken>(OnConsumerStateTaken);
    }

    /// <summary>A read batch of publishes, at the leader: one log entry (a follower, which has no subscription, drops a straggler).</summary>
    private void ProposeMessages(RawMessages batch)
    {
        try
        {
            if (!_leading)
            {
                return;
            }

            var size = 1 + 4;
            for (var i = 0; i < batch.Count; i++)
            {
                size += 8 + 2 + batch.Subject(i).Length + 2 + batch.Reply(i).Length + 4 + batch.Headers(i).Length + 4 + batch.Payload(i).Length;
            }

            var entry = new byte[size];
            var span = entry.AsSpan();
            span[0] = MessagesEntry;
            BinaryPrimitives.WriteInt32LittleEndian(span[1..], batch.Count);
            var p = 5;
            var now = (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100;
            for (var i = 0; i < batch.Count; i++)
            {
                BinaryPrimitives.WriteInt64LittleEndian(span[p..], now);
                p += 8;
                p += WriteShort(span[p..], batch.Subject(i).Span);
                p += WriteShort(span[p..], batch.Reply(i));
                p += WriteLong(span[p..], batch.Headers(i).Span);
                p += WriteLong(span[p..], batch.Payload(i).Span);
            }

            Propose(entry);
        }
        finally
        {
            batch.Release();
        }
    }

    /// <summary>PURGE or MSG.DELETE of a replicated stream: a log entry, applied (and answered by the leader) in order.</summary>
    private void ProposeRequest(Protocol.Request request)
    {
        var operation = Encoding.UTF8.GetBytes(request.Operation);
        var reply = Encoding.UTF8.GetBytes(request.ReplyTo ?? "");
        var entry = new byte[1 + 2 + operation.Length + 2 + reply.Length + 4 + request.Payload.Length];
        entry[0] = RequestEntry;
        var p = 1;
        p += WriteShort(entry.AsSpan(p), operation);
        p += WriteShort(entry.AsSpan(p), reply);
        WriteLong(entry.AsSpan(p), request.Payload);
        Propose(entry);
    }

    /// <summary>A configuration update of a replicated stream: a log entry, so that every replica applies it at the same point.</summary>
    private void ProposeUpdate(Protocol.Update update)
    {
        var reply = Encoding.UTF8.GetBytes(update.ReplyTo);
        var type = Encoding.UTF8.GetBytes(update.Type);
        var config = JsonSerializer.SerializeToUtf8Bytes(update.Config, JetStreamJsonContext.Default.StreamConfig);
        var members = update.Members ?? [];
        var entry = new byte[1 + 2 + reply.Length + 2 + type.Length + 4 + config.Length + 4 + (8 * members.Length)];
        entry[0] = ConfigEntry;
        var p = 1;
        p += WriteShort(entry.AsSpan(p), reply);
        p += WriteShort(entry.AsSpan(p), type);
        p += WriteLong(entry.AsSpan(p), config);
        BinaryPrimitives.WriteInt32LittleEndian(entry.AsSpan(p), members.Length); // 0: the members stay
        p += 4;
        foreach (var member in members)
        {
            BinaryPrimitives.WriteUInt64LittleEndian(entry.AsSpan(p), member);
            p += 8;
        }

        Propose(entry);
    }

    private void Propose(byte[] entry) =>
        _replication!.Host.Tell(new RaftHost.Protocol.Propose(_replication.Group, entry, ++_nextProposal));

    /// <summary>Committed entries, in log order: applied to the store; at the leader, answered.</summary>
    private void OnApplied(RaftHost.Protocol.Applied applied)
    {
        if (applied.Snapshot is { } snapshot)
        {
            // The leader's log no longer reaches this replica's: its store is copied from the leader (StreamActor.Catchup.cs).
            _appliedIndex = Math.Max(_appliedIndex, snapshot.Meta.Index);
            _compactedAt = Math.Max(_compactedAt, snapshot.Meta.Index);
            StartCatchup(snapshot.Meta.Index, restart: false);
            applied = applied with { Snapshot = null };
        }

        if (_catchup is { } catchup)
        {
            if (applied.Entries.Length > 0)
            {
                catchup.Held.Add(applied); // applied once the store has caught up
            }

            return;
        }

        var appendedMessages = false;
        try
        {
            foreach (var entry in applied.Entries)
            {
                if (entry.Index <= _appliedIndex || entry.Index <= _skipThrough)
                {
                    _appliedIndex = Math.Max(_appliedIndex, entry.Index);
                    continue; // in the snapshot, or copied by a catch-up
                }

                _appliedIndex = entry.Index;
                if (entry.Type == EntryType.ConfChange && _leading && ConfChange.Decode(entry.Data.Span) is { Kind: ConfChangeKind.Remove } removed)
                {
                    // Out of the group now: its replica can go (JetStreamApi tells its server).
                    Context.Parent.Tell(new JetStreamApi.Protocol.ReplicaRemoved(_config.Name, Self, removed.Node));
                }

                if (entry.Type != EntryType.Normal || entry.Data.IsEmpty)
                {
                    continue; // a membership change, or a new leader's no-op
                }

                var data = entry.Data.Span;
                switch (data[0])
                {
                    case MessagesEntry:
                        ApplyMessages(entry.Data[1..]);
                        appendedMessages = true;
                        break;
                    case RequestEntry:
                        ApplyRequest(data[1..]);
                        break;
                    case ConfigEntry:
                        ApplyUpdate(data[1..]);
                        break;
                    case ConsumerEntry:
                        ApplyConsumer(data[1..]);
                        break;
                    case ConsumerDeletedEntry:
                        ApplyConsumerDeleted(data[1..]);
                        break;
                    case ConsumerStateEntry:
                        ApplyConsumerState(data[1..]);
                        break;
                    case HandoverEntry:
                        ApplyHandover(data[1..]);
                        break;
                    case ExpiredEntry:
                        ApplyExpired(data[1..]);
                        break;
                }
            }
        }
        finally
        {
            _applyClock = null;
        }

        if (appendedMessages)
        {
            AfterAppliedMessages();
        }

        MaybeCompact();
    }

    private void ApplyMessages(ReadOnlyMemory<byte> memory)
    {
        var data = memory.Span;
        var count = BinaryPrimitives.ReadInt32LittleEndian(data);
        var p = 4;
        var plainStream = !_config.Sealed && _republish is null && _ingest is null && !_config.AllowMsgCounter;
        for (var i = 0; i < count; i++)
        {
            var timestamp = BinaryPrimitives.ReadInt64LittleEndian(data[p..]);
            p += 8;
            var subject = ReadShort(data, ref p);
            var replyAt = p + 2;
            var reply = ReadShort(data, ref p);
            var headers = ReadLong(data, ref p);
            var payload = ReadLong(data, ref p);
            StoreResult result;
            PubAck? ack = null;
            if (plainStream && headers.IsEmpty)
            {
                result = _store.Append(subject, default, payload, timestamp);
            }
            else
            {
                _applyClock = FromUnixNanos(timestamp);
                var message = new InternalMessage(Encoding.UTF8.GetString(subject), null, headers.IsEmpty ? null : headers.ToArray(), payload.ToArray());
                ack = AppendChecked(Ingested(message), out result, timestamp);
            }

            if (_leading && !reply.IsEmpty)
            {
                _appliedAcks.Add((memory.Slice(replyAt, reply.Length), result, ack));
            }
        }
    }

    /// <summary>What a batch of applied publishes needs next: the store written, then (leader) consumers told and PubAcks sent.</summary>
    private void AfterAppliedMessages()
    {
        try
        {
            _store.Flush(); // written, not synced: the log on a quorum of disks is what makes them durable
            if (!_leading)
            {
                _republishing.Clear();
                return;
            }

            foreach (var consumer in _consumers.Actors)
            {
                consumer.Tell(ConsumerActor.Protocol.NewMessages.Instance);
            }

            _streams.Notify(_config.Name);
            SendRepublished();
            Span<byte> ackJson = stackalloc byte[_pubAckPrefix.Length + 48];
            foreach (var (reply, result, ack) in _appliedAcks)
            {
                if (ack is null && result.Ok)
                {
                    _out.Publish(reply.Span, FormatPubAck(ackJson, result.Sequence, duplicate: false));
                }
                else if (ack is { Duplicate: true, Error: null } duplicate)
                {
                    _out.Publish(reply.Span, FormatPubAck(ackJson, duplicate.Seq, duplicate: true));
                }
                else if (ack is { Value: { } total, Error: null } counted)
                {
                    _out.Publish(reply.Span, FormatCounterAck(counted.Seq, total));
                }
                else
                {
                    _out.Publish(Encoding.UTF8.GetString(reply.Span), null, default, JsonSerializer.SerializeToUtf8Bytes(ack ?? new PubAck { Error = StoreFailure(result.Error) }, JetStreamJsonContext.Default.PubAck));
                }
            }
        }
        finally
        {
            _appliedAcks.Clear();
            _republishing.Clear();
        }
    }

    private void ApplyRequest(ReadOnlySpan<byte> data)
    {
        var p = 0;
        var operation = Encoding.UTF8.GetString(ReadShort(data, ref p));
        var reply = Encoding.UTF8.GetString(ReadShort(data, ref p));
        var payload = ReadLong(data, ref p).ToArray();
        _applying = true;
        try
        {
            HandleRequest(new Protocol.Request(operation, _leading && reply.Length > 0 ? reply : null, payload));
        }
        finally
        {
            _applying = false;
        }
    }

    private bool _applying;

    private void ApplyUpdate(ReadOnlySpan<byte> data)
    {
        var p = 0;
        var reply = Encoding.UTF8.GetString(ReadShort(data, ref p));
        var type = Encoding.UTF8.GetString(ReadShort(data, ref p));
        var config = JsonSerializer.Deserialize(ReadLong(data, ref p), JetStreamJsonContext.Default.StreamConfig);
        if (config is null)
        {
            return;
        }

        var members = new ulong[p + 4 <= data.Length ? BinaryPrimitives.ReadInt32LittleEndian(data[p..]) : 0];
        p += 4;
        for (var i = 0; i < members.Length; i++, p += 8)
        {
            members[i] = BinaryPrimitives.ReadUInt64LittleEndian(data[p..]);
        }

        ApplyConfig(config);
        if (members.Length > 0)
        {
            // num_replicas changed: every replica records the new voters; whoever leads brings the group to them.
            _members = members;
            Context.Parent.Tell(new JetStreamApi.Protocol.ReplicaMembers(_config.Name, Self, members));
            if (_leading)
            {
                // Its host adds and removes voters; a leader that is not among them hands leadership on first (RaftHost.ChangeMembership).
                _replication!.Host.Tell(new RaftHost.Protocol.SetVoters(_replication.Group, members));
            }
        }

        if (_leading && reply.Length > 0)
        {
            Unsubscribe();
            Subscribe();
            Reply(reply, Info(type), JetStreamJsonContext.Default.StreamInfoResponse);
            Advisories.Stream(_echoOut, _config.Name, AdvisoryAction.Modify, _domain);
        }
    }

    /// <summary>This replica starts or stops leading: it takes over (or gives up) the subjects, the consumers and the answers.</summary>
    private void OnLeaderChanged(RaftHost.Protocol.LeaderChanged changed)
    {
        _leader = changed.Leader;
        if (changed.IsSelf)
        {
            _selfMember = changed.Leader;
        }

        if (changed.IsSelf && _catchup is not null)
        {
            HandLeadershipOn(); // its store is not the group's yet
        }
        else if (changed.IsSelf && !_leading)
        {
            StartLeading();
        }
        else if (!changed.IsSelf && _leading)
        {
            StopLeading();
        }

        Context.Parent.Tell(new JetStreamApi.Protocol.StreamLeader(_config.Name, Self, changed.Leader, changed.IsSelf));
        if (changed.Leader != 0)
        {
            AnswerAwaitingLeader();
        }
    }

    private void StartLeading()
    {
        _leading = true;
        _replication!.Host.Tell(new RaftHost.Protocol.SetVoters(_replication.Group, _members)); // a num_replicas change a previous leader left unfinished
        Subscribe();
        RecoverConsumers();
        _replicatedStates.Clear();
        Timers.StartPeriodicTimer("consumer-states", Protocol.ReplicateConsumerStates.Instance, ConsumerStateInterval);

        // nats-server's leader-elected advisories, with the replicas as this new leader sees them.
        var self = Self;
        _replication.Host.Ask<RaftHost.Protocol.GroupStatus>(new RaftHost.Protocol.GetGroupStatus(_replication.Group), TimeSpan.FromSeconds(5))
            .PipeTo(self, success: status => new Protocol.Elected(status), failure: _ => new Protocol.Elected(null));
    }

    private void OnElected(Protocol.Elected elected)
    {
        if (!_leading || elected.Status is not { } status || _replication!.NameOf(_leader) is not { } leader)
        {
            return;
        }

        // As nats-server 2.9.10's replicas(node): every peer of the group, the leader itself among them.
        var replicas = new List<PeerInfo> { new() { Name = leader, Current = true, Peer = JetStreamCluster.NameHash(leader) } };
        replicas.AddRange(ClusterInfoOf(status).Replicas ?? []);
        Advisories.StreamLeaderElected(_echoOut, _config.Name, leader, replicas, _domain);
        foreach (var consumer in _consumerStarts.Keys)
        {
            Advisories.ConsumerLeaderElected(_echoOut, _config.Name, consumer, leader, replicas, _domain);
        }
    }

    private void StopLeading()
    {
        _leading = false;
        Timers.Cancel("consumer-states");
        Unsubscribe();
        StopConsumers();
    }

    private void StopConsumers()
    {
        foreach (var consumer in _consumers.Actors)
        {
            Context.Stop(consumer);
        }

        _consumers.Clear();
        _displaced.Clear();
        _consumerConfigs.Clear();
        _consumerStarts.Clear();
    }

    /// <summary>A new replicated stream answers its creator once its group has a leader (or after <see cref="LeaderWait"/>).</summary>
    private bool AwaitLeader(Protocol.ReplyInfo request)
    {
        if (_replication is null || _leader != 0)
        {
            return false;
        }

        if (_awaitingLeader.Count == 0)
        {
            Timers.StartSingleTimer("leader-wait", Protocol.LeaderWaitOver.Instance, LeaderWait);
        }

        _awaitingLeader.Add(request);
        return true;
    }

    private void AnswerAwaitingLeader()
    {
        Timers.Cancel("leader-wait");
        var waiting = _awaitingLeader.ToArray();
        _awaitingLeader.Clear();
        foreach (var request in waiting)
        {
            Self.Tell(request);
        }
    }

    /// <summary>STREAM.INFO of a replicated stream: its group's status first (for the <c>cluster</c> block).</summary>
    private void AskGroupStatus(Protocol.Request request)
    {
        _pendingInfos.Enqueue(request);
        _replication!.Host.Tell(new RaftHost.Protocol.GetGroupStatus(_replication.Group));
    }

    private readonly Queue<Protocol.Request> _pendingInfos = new();

    private void OnGroupStatus(RaftHost.Protocol.GroupStatus status)
    {
        if (!_pendingInfos.TryDequeue(out var request))
        {
            return;
        }

        try
        {
            var info = DetailedInfo(request.Payload);
            info.Cluster = ClusterInfoOf(status);
            Reply(request.ReplyTo, info, JetStreamJsonContext.Default.StreamInfoResponse);
        }
        catch (JsonException)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = "io.nats.jetstream.api.v1.stream_info_response", Error = ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
        }
    }

    /// <summary>nats-server's ClusterInfo: the leader's name and, for each other replica, whether it is current, when it was last heard, and its lag.</summary>
    private ClusterInfo ClusterInfoOf(RaftHost.Protocol.GroupStatus status)
    {
        var replication = _replication!;
        var info = new ClusterInfo { Name = replication.ClusterName, Leader = _leader == 0 ? null : replication.NameOf(_leader) };
        if (status.Status is not { } raft)
        {
            return info;
        }

        var peers = raft.Peers.ToDictionary(peer => peer.Id);
        info.Replicas = [];
        foreach (var member in _members)
        {
            if (member == _leader)
            {
                continue;
            }

            var known = replication.NameOf(member);
            var heard = status.SinceHeard.TryGetValue(member, out var since) ? since : (TimeSpan?)null;
            var lag = peers.TryGetValue(member, out var peer) ? raft.LastIndex - Math.Min(raft.LastIndex, peer.Match) : 0;
            info.Replicas.Add(new PeerInfo
            {
                Name = known ?? JetStreamCluster.MemberToken(member),
                Current = raft.Role == RaftRole.Leader && peers.ContainsKey(member) && lag == 0 && peers[member].RecentActive,
                Offline = known is null,
                Active = heard is { } h ? (long)(h.TotalMilliseconds * 1_000_000) : 0,
                Lag = lag,
                Peer = known is { } k ? JetStreamCluster.NameHash(k) : JetStreamCluster.MemberToken(member),
            });
        }

        return info;
    }

    private static int WriteShort(Span<byte> into, ReadOnlySpan<byte> value)
    {
        BinaryPrimitives.WriteUInt16LittleEndian(into, checked((ushort)value.Length));
        value.CopyTo(into[2..]);
        return 2 + value.Length;
    }

    private static int WriteLong(Span<byte> into, ReadOnlySpan<byte> value)
    {
        BinaryPrimitives.WriteInt32LittleEndian(into, value.Length);
        value.CopyTo(into[4..]);
        return 4 + value.Length;
    }

    private static ReadOnlySpan<byte> ReadShort(ReadOnlySpan<byte> data, ref int p)
    {
        var length = BinaryPrimitives.ReadUInt16LittleEndian(data[p..]);
        var value = data.Slice(p + 2, length);
        p += 2 + length;
        return value;
    }

    private static ReadOnlySpan<byte> ReadLong(ReadOnlySpan<byte> data, ref int p)
    {
        var length = BinaryPrimitives.ReadInt32LittleEndian(data[p..]);
        var value = data.Slice(p + 4, length);
        p += 4 + length;
        return value;
    }

    /// <summary>
    /// STREAM.LEADER.STEPDOWN: the leader hands leadership to the most caught-up replica heard from
    /// lately (Raft's leadership transfer) and answers success, as nats-server; an R1 stream's single
    /// member stays its leader, as nats-server's one-member group re-elects itself.
    /// CONSUMER.LEADER.STEPDOWN comes here too: a replicated stream's consumers live on its leader
    /// (their state goes through the stream's log), so the consumer's leader moves with the stream's.
    /// </summary>
    private void StepDown(string? replyTo, string type)
    {
        if (_replication is not { } replication)
        {
            Reply(replyTo, new SuccessResponse { Type = type, Success = true }, JetStreamJsonContext.Default.SuccessResponse);
            return;
        }

        var self = Self;
        replication.Host.Ask<RaftHost.Protocol.GroupStatus>(new RaftHost.Protocol.GetGroupStatus(replication.Group), TimeSpan.FromSeconds(5))
            .PipeTo(self, success: status => new Protocol.StepDownWith(replyTo, type, status), failure: _ => new Protocol.StepDownWith(replyTo, type, null));
    }

    private void OnStepDownWith(Protocol.StepDownWith m)
    {
        // One of the most caught-up voters heard from lately, chosen at random (nats-server picks at random too).
        var candidates = m.Status?.Status is { Role: RaftRole.Leader } raft
            ? raft.Peers.Where(p => p.Id != raft.Id && p.RecentActive && !p.IsLearner).ToList()
            : [];
        var best = candidates.Count == 0 ? 0 : candidates.Max(p => p.Match);
        candidates.RemoveAll(p => p.Match != best);
        var successor = candidates.Count == 0 ? null : candidates[Random.Shared.Next(candidates.Count)];
        if (successor is null)
        {
            // Not leading now, or nobody to take over: nats-server's "JetStream system temporarily unavailable".
            Reply(m.ReplyTo, new ErrorResponse { Type = m.Type, Error = ApiError.ClusterNotAvailable }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        Reply(m.ReplyTo, new SuccessResponse { Type = m.Type, Success = true }, JetStreamJsonContext.Default.SuccessResponse);
        if (_consumerStarts.Count == 0)
        {
            _replication!.Host.Tell(new RaftHost.Protocol.TransferLeadership(_replication.Group, successor.Id));
            return;
        }

        // The durable consumers' states go through the log first (the timer replicates them only every second),
        // so the successor's consumers go on from every ack made here: a handover redelivers nothing acknowledged.
        _ = TakeStatesForHandoverAsync(Self, successor.Id, [.. _consumerStarts.Keys.Select(name => (name, _consumers.TryGetValue(name, out var actor) ? actor : null))]);
    }

    private static async Task TakeStatesForHandoverAsync(IActorRef self, ulong successor, (string Name, IActorRef? Actor)[] consumers)
    {
        var states = new Protocol.ConsumerStateTaken[consumers.Length];
        for (var i = 0; i < consumers.Length; i++)
        {
            ConsumerSnapshot? state = null;
            if (consumers[i].Actor is { } actor)
            {
                try
                {
                    state = await actor.Ask<ConsumerSnapshot>(ConsumerActor.Protocol.GetState.Instance, TimeSpan.FromSeconds(5)).ConfigureAwait(false);
                }
                catch (Exception e) when (e is AskTimeoutException or TaskCanceledException)
                {
                    // handed over with the state last replicated for it
                }
            }

            states[i] = new Protocol.ConsumerStateTaken(consumers[i].Name, state);
        }

        self.Tell(new Protocol.HandOver(successor, states));
    }

    private void OnHandOver(Protocol.HandOver handOver)
    {
        if (!_leading)
        {
            return; // leadership moved on meanwhile
        }

        foreach (var taken in handOver.States)
        {
            ProposeConsumerState(taken, force: true);
        }

        var entry = new byte[1 + 8];
        entry[0] = HandoverEntry;
        BinaryPrimitives.WriteUInt64LittleEndian(entry.AsSpan(1), handOver.Successor);
        Propose(entry);
    }

    // Committed after the states proposed before it: the successor has them in its log and hears of their commit
    // (a commit is broadcast at once) before the leadership transfer reaches it, so it applies them before it leads.
    private void ApplyHandover(ReadOnlySpan<byte> data)
    {
        if (_leading)
        {
            _replication!.Host.Tell(new RaftHost.Protocol.TransferLeadership(_replication.Group, BinaryPrimitives.ReadUInt64LittleEndian(data)));
        }
    }

    /// <summary>A durable consumer of a replicated stream: its definition goes through the log, so every replica knows it.</summary>
    private void ProposeConsumer(string name, DateTime created, ConsumerConfig config, string? replyTo)
    {
        var meta = JsonSerializer.SerializeToUtf8Bytes(new ConsumerMetaFile { Name = name, Created = created, Config = config }, ConsumerJsonContext.Default.ConsumerMetaFile);
        var reply = Encoding.UTF8.GetBytes(replyTo ?? "");
        var entry = new byte[1 + 2 + reply.Length + 4 + meta.Length];
        entry[0] = ConsumerEntry;
        var p = 1;
        p += WriteShort(entry.AsSpan(p), reply);
        WriteLong(entry.AsSpan(p), meta);
        Propose(entry);
    }

    private void ProposeConsumerDeleted(string name)
    {
        if (_replication is null)
        {
            return;
        }

        var bytes = Encoding.UTF8.GetBytes(name);
        var entry = new byte[1 + 2 + bytes.Length];
        entry[0] = ConsumerDeletedEntry;
        WriteShort(entry.AsSpan(1), bytes);
        Propose(entry);
    }

    private void ApplyConsumer(ReadOnlySpan<byte> data)
    {
        const string Type = "io.nats.jetstream.api.v1.consumer_create_response";
        var p = 0;
        var reply = Encoding.UTF8.GetString(ReadShort(data, ref p));
        var meta = JsonSerializer.Deserialize(ReadLong(data, ref p), ConsumerJsonContext.Default.ConsumerMetaFile);
        if (meta is null || ConsumersDirectory is not { } consumers)
        {
            return;
        }

        var directory = Path.Combine(consumers, meta.Name);
        var file = Path.Combine(directory, ConsumerMetaFileName);
        if (!_leading || !File.Exists(file))
        {
            // A create, or on a follower also an update (pause_until, a changed configuration): the last entry's
            // definition is what this replica starts the consumer with if it comes to lead. The leader wrote its
            // own when it took the update, and later entries of its may already be applied there.
            Directory.CreateDirectory(directory);
            _meta.WriteDurably(file, JsonSerializer.SerializeToUtf8Bytes(meta, ConsumerJsonContext.Default.ConsumerMetaFile), _meta.ConsumerContext(_config.Name, meta.Name));
        }

        if (!_leading)
        {
            return;
        }

        if (_consumers.TryGetValue(meta.Name, out var existing))
        {
            if (reply.Length == 0)
            {
                return; // an update the leader already runs with (UpdateConsumer)
            }

            ReplyConsumerInfoLater(existing, ConsumerActor.Protocol.GetInfo.Instance, reply.Length > 0 ? reply : null, Type);
            return;
        }

        var actor = StartConsumer(meta.Config, meta.Created, durable: true);
        Advisories.Consumer(_echoOut, _config.Name, meta.Name, AdvisoryAction.Create, _domain);
        ReplyConsumerInfoLater(actor, ConsumerActor.Protocol.GetCreatedInfo.Instance, reply.Length > 0 ? reply : null, Type);
    }

    private void ApplyConsumerDeleted(ReadOnlySpan<byte> data)
    {
        var p = 0;
        var name = Encoding.UTF8.GetString(ReadShort(data, ref p));
        if (!_leading)
        {
            DeleteConsumerDirectory(name); // the leader deleted its own when it proposed this
        }
    }

    /// <summary>A follower keeps the last state its leader replicated for a durable consumer: the start of that consumer if it comes to lead.</summary>
    private void ApplyConsumerState(ReadOnlySpan<byte> data)
    {
        var p = 0;
        var name = Encoding.UTF8.GetString(ReadShort(data, ref p));
        var state = ReadLong(data, ref p);
        if (_leading || ConsumersDirectory is not { } consumers || !Directory.Exists(Path.Combine(consumers, name)))
        {
            return;
        }

        // Written, not synced: a replica that loses it restarts the consumer from an older state (redelivery, never loss).
        _meta.Write(Path.Combine(consumers, name, ReplicaStateFile), state.ToArray(), _meta.ConsumerContext(_config.Name, name) + ":state");
    }

    /// <summary>The state its leader last replicated for the durable consumer in <paramref name="directory"/>, if this replica has one.</summary>
    private ConsumerSnapshot? ReplicatedConsumerState(string directory)
    {
        var file = Path.Combine(directory, ReplicaStateFile);
        if (_replication is null || !File.Exists(file))
        {
            return null;
        }

        try
        {
            var serializer = (Akka.Serialization.SerializerWithStringManifest)Context.System.Serialization.FindSerializerForType(typeof(ConsumerSnapshot));
            return serializer.FromBinary(_meta.Read(file, _meta.ConsumerContext(_config.Name, Path.GetFileName(directory)) + ":state", "consumer"), ConsumerJournalSerializer.SnapshotManifest) as ConsumerSnapshot;
        }
        catch (Exception e) when (e is IOException or System.Runtime.Serialization.SerializationException or InvalidDataException or ArgumentException)
        {
            _log.Warning("stream {0}: the replicated state in {1} is unreadable: {2}", _config.Name, directory, e.Message);
            return null;
        }
    }

    /// <summary>The leader's timer: each durable consumer's state, asked for; replicated when it changed.</summary>
    private void ReplicateConsumerStates()
    {
        if (!_leading)
        {
            return;
        }

        var self = Self;
        foreach (var (name, _) in _consumerStarts)
        {
            if (_consumers.TryGetValue(name, out var actor))
            {
                actor.Ask<ConsumerSnapshot>(ConsumerActor.Protocol.GetState.Instance, TimeSpan.FromSeconds(5))
                    .PipeTo(self, success: state => new Protocol.ConsumerStateTaken(name, state), failure: _ => new Protocol.ConsumerStateTaken(name, null));
            }
        }
    }

    private void OnConsumerStateTaken(Protocol.ConsumerStateTaken taken) => ProposeConsumerState(taken, force: false);

    // A durable consumer's state, into the log when it changed since last proposed (or always, when forced).
    private void ProposeConsumerState(Protocol.ConsumerStateTaken taken, bool force)
    {
        if (!_leading || taken.State is null || !_consumerStarts.ContainsKey(taken.Name))
        {
            return;
        }

        var serializer = (Akka.Serialization.SerializerWithStringManifest)Context.System.Serialization.FindSerializerForType(typeof(ConsumerSnapshot));
        var state = serializer.ToBinary(taken.State);
        if (!force && _replicatedStates.TryGetValue(taken.Name, out var last) && last.AsSpan().SequenceEqual(state))
        {
            return;
        }

        _replicatedStates[taken.Name] = state;
        var name = Encoding.UTF8.GetBytes(taken.Name);
        var entry = new byte[1 + 2 + name.Length + 4 + state.Length];
        entry[0] = ConsumerStateEntry;
        var p = 1;
        p += WriteShort(entry.AsSpan(p), name);
        WriteLong(entry.AsSpan(p), state);
        Propose(entry);
    }
}
