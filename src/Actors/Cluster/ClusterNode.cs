using Akka.Actor;
using Akka.Cluster;
using Courier.Actors.Server;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Cluster;

/// <summary>
/// One per node (<c>/user/cluster-node</c>), with a <c>cluster { }</c>: the node's Akka.Cluster
/// membership. Joins the cluster with seeds taken from the Courier peers its routes reached (each
/// says its Akka address in its route INFO), logs membership changes as nats-server logs route
/// changes, and turns them into route links: a member that comes up is dialled on the route URL
/// it carries in its roles; a member removed (left, or downed by the split-brain resolver) has its
/// route link closed. Go nats-server peers are not members: their links stay driven by
/// <c>cluster.routes</c> and gossip. No NATS message ever travels through Akka.Remote.
/// </summary>
internal sealed partial class ClusterNode : ReceiveActor, IWithTimers
{
    /// <summary>Role prefix carrying the member's server id.</summary>
    public const string ServerRole = "courier-server=";

    /// <summary>Role prefix carrying the member's route URL (<c>nats-route://host:port</c>).</summary>
    public const string RouteRole = "courier-route=";

    /// <summary>Role prefix carrying the member's server name.</summary>
    public const string NameRole = "courier-name=";

    /// <summary>A role per <c>server_tags</c> tag (placement reads them).</summary>
    public const string TagRole = "courier-tag=";

    // Routes settle (full mesh, duplicates dropped) before the seeds are chosen: joining on the first
    // peer seen could make two nodes that each see only a third one form clusters of their own.
    private static readonly TimeSpan SettleDelay = TimeSpan.FromSeconds(2);

    private readonly ClusterView _view;
    private readonly ILogger _log;
    private readonly Akka.Cluster.Cluster _cluster;
    private readonly HashSet<Address> _peers = [];
    private bool _joined;

    public ClusterNode(ClusterView view, ILogger logger)
    {
        _view = view;
        _log = logger;
        _cluster = Akka.Cluster.Cluster.Get(Context.System);
        Receive<Protocol.PeersChanged>(changed =>
        {
            foreach (var address in changed.AkkaAddresses)
            {
                if (AddressFromUriString(address) is { } parsed && !parsed.Equals(_cluster.SelfAddress))
                {
                    _peers.Add(parsed);
                }
            }

            if (!_joined && _peers.Count > 0)
            {
                Timers.StartSingleTimer("join", Protocol.Join.Instance, SettleDelay);
            }
        });
        Receive<Protocol.Join>(_ => Join());
        Receive<ClusterEvent.MemberUp>(up => OnMemberUp(up.Member));
        Receive<ClusterEvent.MemberRemoved>(removed => OnMemberRemoved(removed.Member, removed.PreviousStatus));
        Receive<ClusterEvent.UnreachableMember>(unreachable => Log.Unreachable(_log, unreachable.Member.Address.ToString(), Name(unreachable.Member)));
        Receive<ClusterEvent.ReachableMember>(reachable => Log.Reachable(_log, reachable.Member.Address.ToString(), Name(reachable.Member)));
        Receive<ClusterEvent.IMemberEvent>(_ => { });
        Receive<ClusterEvent.CurrentClusterState>(_ => { });
    }

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    /// <param name="view">The node's view of its cluster: the route manager to tell, where membership is reported.</param>
    /// <param name="logger">The node's logger.</param>
    public static Props Props(ClusterView view, ILogger logger) => Akka.Actor.Props.Create(() => new ClusterNode(view, logger));

    protected override void PreStart() =>
        _cluster.Subscribe(Self, ClusterEvent.InitialStateAsEvents, typeof(ClusterEvent.IMemberEvent), typeof(ClusterEvent.IReachabilityEvent));

    protected override void PostStop() => _cluster.Unsubscribe(Self);

    /// <summary>
    /// Joins with every Courier peer known now and this node as seeds, lowest address first (Akka's
    /// first seed forms the cluster when no other seed answers; the others join whoever is up).
    /// </summary>
    private void Join()
    {
        if (_joined)
        {
            return;
        }

        _joined = true;
        var seeds = new List<Address>(_peers) { _cluster.SelfAddress };
        seeds.Sort((a, b) => string.CompareOrdinal(a.ToString(), b.ToString()));
        Log.Joining(_log, string.Join(", ", seeds));
        _cluster.JoinSeedNodes(seeds);
    }

    private void OnMemberUp(Member member)
    {
        Log.MemberUp(_log, member.Address.ToString(), Name(member));
        if (member.Address.Equals(_cluster.SelfAddress))
        {
            _view.OnMembershipChanged(true);
            return;
        }

        if (Role(member, ServerRole) is { } serverId && Role(member, RouteRole) is { } route && Uri.TryCreate(route, UriKind.Absolute, out var url))
        {
            _view.RouteManager.Tell(new RouteManager.Protocol.MemberUp(serverId, url));
        }
    }

    private void OnMemberRemoved(Member member, MemberStatus previous)
    {
        Log.MemberRemoved(_log, member.Address.ToString(), Name(member), previous.ToString());
        if (member.Address.Equals(_cluster.SelfAddress))
        {
            _view.OnMembershipChanged(false);
            return;
        }

        if (Role(member, ServerRole) is { } serverId)
        {
            _view.RouteManager.Tell(new RouteManager.Protocol.MemberRemoved(serverId));
        }
    }

    private static string Name(Member member) => Role(member, NameRole) ?? member.Address.ToString();

    private static string? Role(Member member, string prefix)
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

    private static Address? AddressFromUriString(string text)
    {
        try
        {
            return Address.Parse(text);
        }
        catch (UriFormatException)
        {
            return null;
        }
        catch (ArgumentException)
        {
            return null;
        }
    }

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Information, Message = "Joining the cluster with seed nodes {Seeds}")]
        public static partial void Joining(ILogger logger, string seeds);

        [LoggerMessage(Level = LogLevel.Information, Message = "Cluster member up: {Address} ({Name})")]
        public static partial void MemberUp(ILogger logger, string address, string name);

        [LoggerMessage(Level = LogLevel.Information, Message = "Cluster member removed: {Address} ({Name}, was {Previous})")]
        public static partial void MemberRemoved(ILogger logger, string address, string name, string previous);

        [LoggerMessage(Level = LogLevel.Warning, Message = "Cluster member unreachable: {Address} ({Name})")]
        public static partial void Unreachable(ILogger logger, string address, string name);

        [LoggerMessage(Level = LogLevel.Information, Message = "Cluster member reachable again: {Address} ({Name})")]
        public static partial void Reachable(ILogger logger, string address, string name);
    }

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>The Akka addresses of the Courier peers the routes reach now.</summary>
        public sealed class PeersChanged(IReadOnlyList<string> akkaAddresses)
        {
            public IReadOnlyList<string> AkkaAddresses { get; } = akkaAddresses;

            public override string ToString() => $"PeersChanged({AkkaAddresses.Count})";
        }

        /// <summary>The routes have settled: join with the peers known.</summary>
        public sealed class Join
        {
            public static readonly Join Instance = new();

            private Join()
            {
            }

            public override string ToString() => "Join";
        }
    }
}
