using System.Net;
using DotNext.IO;
using DotNext.IO.Log;
using DotNext.Net.Cluster;
using DotNext.Net.Cluster.Consensus.Raft;

namespace Courier.RaftEngines.DotNext;

/// <summary>
/// Member configuration handed to <see cref="RaftCluster{TMember}"/>. Election timeout bounds are in
/// milliseconds; the heartbeat period is <c>election timeout x HeartbeatThreshold</c> (DotNext's rule).
/// </summary>
internal sealed class NodeConfig : IClusterMemberConfiguration
{
    public double HeartbeatThreshold { get; init; } = 0.5;

    public ElectionTimeout ElectionTimeout { get; init; } = ElectionTimeout.Recommended;

    public bool Standby { get; init; }

    public bool IsLeaderLeaseEnabled { get; init; }
}

/// <summary>
/// One Raft group's in-process "network": the group's nodes by their end point. A member object
/// (the leader's view of a peer) resolves the peer's node here and calls its handler directly.
/// </summary>
internal sealed class InMemoryNetwork
{
    private readonly Dictionary<EndPoint, InMemoryNode> _nodes = [];

    public void Register(InMemoryNode node) => _nodes.Add(node.LocalEndPoint, node);

    public InMemoryNode Resolve(EndPoint endPoint) => _nodes[endPoint];

    public IReadOnlyCollection<InMemoryNode> Nodes => _nodes.Values;

    /// <summary>When set, every RPC first yields to the thread pool, as a network hop would.</summary>
    public bool YieldPerRpc { get; init; } = true;

    /// <summary>RPCs delivered (all kinds), for the idle figures.</summary>
    public long Rpcs;

    /// <summary>InstallSnapshot RPCs delivered (a lagging follower is sent the snapshot, not entries).</summary>
    public long Snapshots;

    /// <summary>The last InstallSnapshot RPC: its snapshot index, the receiver's answer and its committed index before.</summary>
    public string LastSnapshot = "none";
}

/// <summary>
/// A node's view of one member of its group (itself included, as DotNext requires: the member whose
/// <see cref="IsRemote"/> is false is the local one). RPCs to a remote member are direct calls of the
/// peer node's protected handlers (<see cref="InMemoryNode"/> exposes them).
/// </summary>
internal sealed class InMemoryMember : IRaftClusterMember, IDisposable
{
    private readonly InMemoryNode _owner;
    private readonly InMemoryNetwork _network;
    private IRaftClusterMember.ReplicationState _state;

    public InMemoryMember(InMemoryNode owner, InMemoryNetwork network, EndPoint endPoint)
    {
        _owner = owner;
        _network = network;
        EndPoint = endPoint;
        IsRemote = !endPoint.Equals(owner.LocalEndPoint);
    }

    public EndPoint EndPoint { get; }

    public bool IsLeader => ReferenceEquals(_owner.Leader, this);

    public bool IsRemote { get; }

    public ClusterMemberStatus Status => ClusterMemberStatus.Available;

    public event Action<ClusterMemberStatusChangedEventArgs> MemberStatusChanged
    {
        add { }
        remove { }
    }

    ref IRaftClusterMember.ReplicationState IRaftClusterMember.State => ref _state;

    private InMemoryNode Peer => _network.Resolve(EndPoint);

    private ClusterMemberId Sender => _owner.LocalId;

    private int Version => _owner.AuditTrail.Version;

    public ValueTask<IReadOnlyDictionary<string, string>> GetMetadataAsync(bool refresh = false, CancellationToken token = default)
        => ValueTask.FromResult<IReadOnlyDictionary<string, string>>(new Dictionary<string, string>());

    public async Task<bool> ResignAsync(CancellationToken token)
    {
        await HopAsync();
        return await Peer.HandleResignAsync(token);
    }

    public async Task<Result<bool>> VoteAsync(long term, long lastLogIndex, long lastLogTerm, CancellationToken token)
    {
        if (!IsRemote)
        {
            return new() { Term = term, Value = true };
        }

        await HopAsync();
        return await Peer.HandleVoteAsync(Sender, term, lastLogIndex, lastLogTerm, Version, token);
    }

    public async Task<Result<PreVoteResult>> PreVoteAsync(long term, long lastLogIndex, long lastLogTerm, CancellationToken token)
    {
        if (!IsRemote)
        {
            return new() { Term = term, Value = PreVoteResult.Accepted };
        }

        await HopAsync();

        // DotNext's own TCP/HTTP servers pass term + 1 ("next term") to the handler.
        return await Peer.HandlePreVoteAsync(Sender, term + 1L, lastLogIndex, lastLogTerm, Version, token);
    }

    public async Task<Result<ReplicationStatus>> AppendEntriesAsync<TEntry, TList>(long term, TList entries, long prevLogIndex,
        long prevLogTerm, long commitIndex, CancellationToken token)
        where TEntry : IRaftLogEntry
        where TList : IReadOnlyList<TEntry>
    {
        if (!IsRemote)
        {
            return new()
            {
                Term = term,
                Value = new() { LastIndex = prevLogIndex + entries.Count, Result = HeartbeatResult.ReplicatedWithLeaderTerm },
            };
        }

        await HopAsync();
        var producer = new LogEntryProducer<TEntry>(entries);
        return await Peer.HandleAppendEntriesAsync(Sender, term, producer, prevLogIndex, prevLogTerm, commitIndex, Version, token);
    }

    public async Task<Result<HeartbeatResult>> InstallSnapshotAsync(long term, IRaftLogEntry snapshot, long snapshotIndex,
        IDataTransferObject configuration, long configurationVersion, CancellationToken token)
    {
        if (!IsRemote)
        {
            return new() { Term = term, Value = HeartbeatResult.ReplicatedWithLeaderTerm };
        }

        await HopAsync();
        Interlocked.Increment(ref _network.Snapshots);
        var peer = Peer;
        await peer.HandleInstallConfigurationAsync(term, configuration, configurationVersion, token);
        var committedBefore = ((IAuditTrail)peer.AuditTrail).LastCommittedEntryIndex;
        var result = await peer.HandleInstallSnapshotAsync(Sender, term, snapshot, snapshotIndex, Version, token);
        _network.LastSnapshot = $"snapshot index {snapshotIndex}, answer {result.Value}, receiver committed index before {committedBefore}";
        return result;
    }

    public async Task<long?> SynchronizeAsync(long commitIndex, CancellationToken token)
    {
        if (!IsRemote)
        {
            return null;
        }

        await HopAsync();
        return await Peer.HandleSynchronizeAsync(commitIndex, token);
    }

    public ValueTask CancelPendingRequestsAsync() => ValueTask.CompletedTask;

    public void Dispose()
    {
    }

    private ValueTask HopAsync()
    {
        Interlocked.Increment(ref _network.Rpcs);
        return _network.YieldPerRpc ? YieldAsync() : ValueTask.CompletedTask;

        static async ValueTask YieldAsync() => await Task.Yield();
    }
}

/// <summary>
/// One Raft node of one group: DotNext's transport-independent <see cref="RaftCluster{TMember}"/> with
/// members that call each other in-process. Its protected message handlers are re-exposed for
/// <see cref="InMemoryMember"/>.
/// </summary>
internal sealed class InMemoryNode : RaftCluster<InMemoryMember>
{
    private readonly InMemoryNetwork _network;
    private readonly EndPoint[] _groupMembers;

    public InMemoryNode(NodeConfig config, InMemoryNetwork network, EndPoint localEndPoint, EndPoint[] groupMembers)
        : base(config)
    {
        _network = network;
        _groupMembers = groupMembers;
        LocalEndPoint = localEndPoint;
        LocalId = ClusterMemberId.FromEndPoint(localEndPoint);
        network.Register(this);
    }

    public EndPoint LocalEndPoint { get; }

    public ClusterMemberId LocalId { get; }

    /// <summary>Adds the whole (static) membership, then starts: what DotNext's RaftCluster does for TCP.</summary>
    public override async Task StartAsync(CancellationToken token = default)
    {
        var scope = await ChangeConfigurationAsync(token);
        try
        {
            foreach (var endPoint in _groupMembers)
            {
                scope.MarkAsAdded(new InMemoryMember(this, _network, endPoint));
            }
        }
        finally
        {
            await scope.DisposeAsync();
        }

        await base.StartAsync(token);
        StartFollowing();
    }

    public ValueTask<Result<bool>> HandleVoteAsync(ClusterMemberId sender, long term, long lastLogIndex, long lastLogTerm, int version, CancellationToken token)
        => VoteAsync(sender, term, lastLogIndex, lastLogTerm, version, token);

    public ValueTask<Result<PreVoteResult>> HandlePreVoteAsync(ClusterMemberId sender, long nextTerm, long lastLogIndex, long lastLogTerm, int version, CancellationToken token)
        => PreVoteAsync(sender, nextTerm, lastLogIndex, lastLogTerm, version, token);

    public ValueTask<Result<ReplicationStatus>> HandleAppendEntriesAsync<TEntry>(ClusterMemberId sender, long term, ILogEntryProducer<TEntry> entries,
        long prevLogIndex, long prevLogTerm, long commitIndex, int version, CancellationToken token)
        where TEntry : IRaftLogEntry
        => AppendEntriesAsync(sender, term, entries, prevLogIndex, prevLogTerm, commitIndex, version, token);

    public ValueTask<Result<HeartbeatResult>> HandleInstallSnapshotAsync(ClusterMemberId sender, long term, IRaftLogEntry snapshot, long snapshotIndex, int version, CancellationToken token)
        => InstallSnapshotAsync(sender, term, snapshot, snapshotIndex, version, token);

    public ValueTask<bool> HandleInstallConfigurationAsync(long term, IDataTransferObject configuration, long configurationVersion, CancellationToken token)
        => InstallConfigurationAsync(term, configuration, configurationVersion, token);

    public ValueTask<long?> HandleSynchronizeAsync(long commitIndex, CancellationToken token) => SynchronizeAsync(commitIndex, token);

    public ValueTask<bool> HandleResignAsync(CancellationToken token) => ResignAsync(token);
}
