using Akka.Actor;
using Akka.Cluster;
using Courier.Actors.Cluster;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// What a JetStream API needs to know about the cluster (one per clustered node, shared by the
/// accounts' APIs): this node's server id, which peers its routes reach, and the members Akka.Cluster
/// reports, of which the leader places new streams (nats-server's meta leader).
/// </summary>
/// <remarks>
/// Requests travel between nodes on route links only, on subjects of this node's prefix
/// <c>$JSC.&lt;server id&gt;.</c> (see <see cref="ForwardSubject"/>); Akka.Cluster gives membership and
/// Akka.DistributedData the placement map, never a NATS message.
/// </remarks>
internal sealed class JetStreamCluster
{
    /// <summary>The prefix of the subjects JetStream APIs forward requests on: <c>$JSC.&lt;server id&gt;.&lt;kind&gt;.</c>.</summary>
    public const string Prefix = "$JSC.";

    /// <summary>Kind: a request the receiving node answers itself (it owns the stream, or places it there).</summary>
    public const string Local = "L";

    /// <summary>Kind: a STREAM.CREATE for the leader to place.</summary>
    public const string Place = "P";

    /// <summary>Kind: "every stream you own, with its info" (STREAM.LIST and account info gather these).</summary>
    public const string Gather = "G";

    /// <summary>Kind: an answer to one of this node's gathers (<c>R.&lt;number&gt;</c>).</summary>
    public const string Reply = "R";

    private readonly RouteTable _routes;
    private readonly Akka.Cluster.Cluster _cluster;

    /// <summary>Kind: "create this replicated stream as its first member" (<c>C.&lt;member ids&gt;.&lt;subject&gt;</c>).</summary>
    public const string CreateReplicated = "C";

    /// <summary>Kind: "start your replica of this stream" (<c>M.&lt;member ids&gt;.&lt;subject&gt;</c>, the config as payload).</summary>
    public const string StartReplica = "M";

    /// <summary>Kind: "join the running group of this stream with a new replica" (<c>J.&lt;member ids&gt;.&lt;subject&gt;</c>, the config as payload): its num_replicas went up.</summary>
    public const string JoinReplica = "J";

    /// <summary>Kind: "delete your replica of this stream" (<c>D.&lt;subject&gt;</c>).</summary>
    public const string DeleteReplica = "D";

    private readonly IReadOnlyCollection<string> _tags;

    public JetStreamCluster(ActorSystem system, RouteTable routes, string serverName, string? clusterName = null, IReadOnlyCollection<string>? tags = null)
    {
        ClusterName = clusterName;
        _tags = tags ?? [];
        _routes = routes;
        _cluster = Akka.Cluster.Cluster.Get(system);
        ServerName = serverName;
        MemberId = MemberIdOf(serverName);
    }

    /// <summary>The cluster's name (<c>cluster { name }</c>), for STREAM.INFO's cluster block.</summary>
    public string? ClusterName { get; }

    /// <summary>This node's server name (its identity across restarts: replicated streams' members are named by it).</summary>
    public string ServerName { get; }

    /// <summary>This node's member id in every Raft group (<see cref="MemberIdOf"/> of its server name).</summary>
    public ulong MemberId { get; }

    /// <summary>Which account's stream each Raft group hosted here replicates (for /raftz).</summary>
    public System.Collections.Concurrent.ConcurrentDictionary<string, (string Account, string Stream)> Groups { get; } = new(StringComparer.Ordinal);

    /// <summary>The node's Raft host (replicated streams' groups); Nobody until the broker starts it.</summary>
    public IActorRef RaftHost { get; set; } = ActorRefs.Nobody;

    /// <summary>A server's Raft member id: FNV-1a 64 of its server name (never 0, the core's "none"), the same after every restart.</summary>
    public static ulong MemberIdOf(string serverName)
    {
        var hash = 14695981039346656037UL;
        foreach (var b in System.Text.Encoding.UTF8.GetBytes(serverName))
        {
            hash = (hash ^ b) * 1099511628211UL;
        }

        return hash == 0 ? 1 : hash;
    }

    /// <summary>The member id as a subject token and in files: 16 hex digits.</summary>
    public static string MemberToken(ulong id) => id.ToString("x16", System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>Parses <see cref="MemberToken"/>s joined by commas; null when one is malformed.</summary>
    public static ulong[]? ParseMembers(string tokens)
    {
        var parts = tokens.Split(',');
        var ids = new ulong[parts.Length];
        for (var i = 0; i < parts.Length; i++)
        {
            if (!ulong.TryParse(parts[i], System.Globalization.NumberStyles.AllowHexSpecifier, System.Globalization.CultureInfo.InvariantCulture, out ids[i]))
            {
                return null;
            }
        }

        return ids;
    }

    /// <summary>The server id and name of the member with Raft id <paramref name="memberId"/> now (this node included); null when it is not a member up.</summary>
    public (string ServerId, string Name)? Member(ulong memberId)
    {
        if (memberId == MemberId)
        {
            return (ServerId, ServerName);
        }

        // A restarted server is a new member with the same name while the old incarnation may still be
        // listed (and the new one not yet up): the route this node has to that name is the live one.
        foreach (var route in _routes.Routes)
        {
            if (route.Link.RemoteInfo?.ServerName is { Length: > 0 } routed && MemberIdOf(routed) == memberId && route.Link.RemoteId is { } routedId && route.Link.Registered)
            {
                return (routedId, routed);
            }
        }

        (string, string)? found = null;
        foreach (var member in _cluster.State.Members)
        {
            if (RoleOf(member, ClusterNode.NameRole) is { } name && MemberIdOf(name) == memberId && ServerIdOf(member) is { } id)
            {
                if (_routes.IsConnected(id))
                {
                    return (id, name);
                }

                found ??= (id, name);
            }
        }

        return found;
    }

    /// <summary>The member ids of the candidates (<see cref="Candidates"/>): where a replicated stream may go.</summary>
    public Dictionary<string, ulong> CandidateMembers(Placement? placement = null)
    {
        var ids = new Dictionary<string, ulong>(StringComparer.Ordinal);
        if (!InCluster(placement))
        {
            return ids;
        }

        if (HasTags(_tags, placement))
        {
            ids[ServerId] = MemberId;
        }

        var state = _cluster.State;
        foreach (var member in state.Members)
        {
            if (member.Status == MemberStatus.Up && !state.Unreachable.Contains(member) && ServerIdOf(member) is { } id && id != ServerId && _routes.IsConnected(id) && RoleOf(member, ClusterNode.NameRole) is { } name
                && HasTags(TagsOf(member), placement))
            {
                ids[id] = MemberIdOf(name);
            }
        }

        return ids;
    }

    /// <summary>This node's server id.</summary>
    public string ServerId => _routes.ServerId;

    /// <summary>This member's unique address (the placement map's writer).</summary>
    public UniqueAddress SelfUniqueAddress => _cluster.SelfUniqueAddress;

    /// <summary>
    /// Whether a JetStream API subscription stays on this node: every node has <c>$JS.API.&gt;</c>
    /// (and <c>$JS.&lt;domain&gt;.API.&gt;</c>), so telling routes would have each request answered by
    /// every node. A request reaches another node only when the API forwards it.
    /// </summary>
    public static bool IsNodeLocal(string subject) =>
        subject.StartsWith("$JS.", StringComparison.Ordinal) && subject.EndsWith(".API.>", StringComparison.Ordinal);

    /// <summary>The subject a request of <paramref name="kind"/> for node <paramref name="serverId"/> travels on.</summary>
    public static string ForwardSubject(string serverId, string kind, string subject) =>
        $"{Prefix}{serverId}.{kind}.{subject}";

    /// <summary>Whether this node can reach <paramref name="serverId"/> now: itself, or a peer with a route up.</summary>
    public bool Reaches(string serverId) => serverId == ServerId || _routes.IsConnected(serverId);

    /// <summary>
    /// The server id of the cluster's leader (Akka.Cluster's: the lowest-addressed member up), the
    /// node that places new streams; this node's own when it is alone or not yet a member.
    /// </summary>
    public string LeaderServerId()
    {
        var state = _cluster.State;
        if (state.Leader is { } leader)
        {
            foreach (var member in state.Members)
            {
                if (member.Address.Equals(leader) && ServerIdOf(member) is { } id)
                {
                    return id;
                }
            }
        }

        return ServerId;
    }

    /// <summary>The server ids of the members up and reachable from here (this node included): where a new stream may go.</summary>
    public List<string> Candidates(Placement? placement = null)
    {
        var state = _cluster.State;
        var ids = new List<string>();
        if (!InCluster(placement))
        {
            return ids;
        }

        if (HasTags(_tags, placement))
        {
            ids.Add(ServerId);
        }

        foreach (var member in state.Members)
        {
            if (member.Status == MemberStatus.Up && !state.Unreachable.Contains(member) && ServerIdOf(member) is { } id && id != ServerId && _routes.IsConnected(id) && HasTags(TagsOf(member), placement))
            {
                ids.Add(id);
            }
        }

        ids.Sort(StringComparer.Ordinal);
        return ids;
    }

    /// <summary>
    /// /jsz's <c>meta_cluster</c>: the leader's server name (the node that places streams, as
    /// nats-server's meta leader) and how many members the cluster has; null before this node is one.
    /// </summary>
    public (string Leader, int Size, List<(string Name, bool Up)> Others)? MetaView()
    {
        var state = _cluster.State;
        if (state.Leader is not { } leader)
        {
            return null;
        }

        string? name = null;
        var others = new List<(string, bool)>();
        foreach (var member in state.Members)
        {
            if (RoleOf(member, ClusterNode.NameRole) is not { } memberName)
            {
                continue;
            }

            if (member.Address.Equals(leader))
            {
                name = memberName;
            }
            else
            {
                others.Add((memberName, member.Status == MemberStatus.Up && !state.Unreachable.Contains(member)));
            }
        }

        return name is null ? null : (name, state.Members.Count, others);
    }

    /// <summary>nats-server's getHash: the first 8 bytes of a name's SHA-256, each as a base-62 digit (a peer's id in /jsz).</summary>
    public static string NameHash(string name)
    {
        const string Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        const int Length = 8; // nats-server's sysHashLen
        var sha = System.Security.Cryptography.SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(name));
        Span<char> hash = stackalloc char[Length];
        for (var i = 0; i < Length; i++)
        {
            hash[i] = Digits[sha[i] % Digits.Length];
        }

        return new string(hash);
    }

    private static string? ServerIdOf(Member member) => RoleOf(member, ClusterNode.ServerRole);

    /// <summary>A stream's <c>placement.cluster</c>, when set, must name this cluster (Courier has no gateways to others).</summary>
    private bool InCluster(Placement? placement) =>
        string.IsNullOrEmpty(placement?.Cluster) || string.Equals(placement.Cluster, ClusterName, StringComparison.Ordinal);

    /// <summary>A server may hold a replica when it has every tag of the placement (compared lowercased, as nats-server's tag lists).</summary>
    private static bool HasTags(IReadOnlyCollection<string> tags, Placement? placement) =>
        placement?.Tags is not { Count: > 0 } wanted || wanted.All(t => tags.Contains(t.Trim().ToLowerInvariant()));

    private static List<string> TagsOf(Member member) =>
        [.. member.Roles.Where(r => r.StartsWith(ClusterNode.TagRole, StringComparison.Ordinal)).Select(r => r[ClusterNode.TagRole.Length..])];

    private static string? RoleOf(Member member, string prefix)
    {
        foreach (var role in member.Roles)
        {
            if (role.StartsWith(prefix, StringComparison.Ordinal))
            {
                return role[prefix.Length..];
            }
        }

        return null;
    }
}
