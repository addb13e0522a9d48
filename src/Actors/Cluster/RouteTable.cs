using System.Text;
using Courier.Actors.Connections;
using Courier.Protocols.Nats;

namespace Courier.Actors.Cluster;

/// <summary>
/// The node's routes and the interest it has told them about (nats-server's <c>s.remotes</c> and the
/// accounts' route maps <c>rm</c>, keyed by account, subject and queue). One lock guards both, so a route that registers gets every
/// local subscription exactly once (RS+ for all, then each later change) and a change reaches every
/// registered route in the order it happened.
/// </summary>
/// <remarks>
/// Not on the message path: publishers find routes through the subject space, where a route's RS+
/// interest is an ordinary subscription whose client is the route link. Called by read pumps when
/// SUB/UNSUB batches are applied (before the routers are asked, so an RS+ is queued on every route
/// ahead of any message the same client publishes next: request/reply across nodes depends on it),
/// and by route links during their handshake. Writes only into route outbounds, never does I/O.
/// </remarks>
internal sealed class RouteTable
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, RouteConnection> _remotes = new(StringComparer.Ordinal);
    private readonly Dictionary<string, Interest> _interest = new(StringComparer.Ordinal);
    private byte[] _scratch = new byte[1024];
    private RouteConnection[] _snapshot = [];
    private volatile string _clusterName;

    public RouteTable(string serverId, string? clusterName)
    {
        ServerId = serverId;
        Dynamic = string.IsNullOrEmpty(clusterName);
        _clusterName = Dynamic ? NewDynamicName() : clusterName!;
    }

    /// <summary>This node's server id.</summary>
    public string ServerId { get; }

    /// <summary>The cluster name in force: configured, generated, or adopted from a peer (nats-server's dynamic names).</summary>
    public string ClusterName => _clusterName;

    /// <summary>The name was generated here, so a configured (or greater) name from a peer replaces it.</summary>
    public bool Dynamic { get; private set; }

    /// <summary>Raised (outside the lock) when the set of registered routes changes.</summary>
    public event Action? Changed;

    /// <summary>The registered routes now.</summary>
    public RouteConnection[] Routes => Volatile.Read(ref _snapshot);

    /// <summary>Whether a route to the server <paramref name="serverId"/> is registered.</summary>
    public bool IsConnected(string serverId)
    {
        lock (_lock)
        {
            return _remotes.ContainsKey(serverId);
        }
    }

    /// <summary>
    /// Takes a peer's cluster name when ours is dynamic and theirs is configured or sorts after ours
    /// (nats-server's processRouteConnect/processRouteInfo). True when <paramref name="remote"/> is
    /// acceptable (equal, or adopted).
    /// </summary>
    public bool AcceptClusterName(string remote, bool remoteDynamic)
    {
        lock (_lock)
        {
            if (remote == _clusterName)
            {
                return true;
            }

            if (Dynamic && (!remoteDynamic || string.CompareOrdinal(_clusterName, remote) < 0))
            {
                _clusterName = remote;
                Dynamic = remoteDynamic;
                return true;
            }

            return false;
        }
    }

    /// <summary>
    /// Registers <paramref name="link"/> as the route to its peer and queues RS+ for every local
    /// interest on it. False when the peer already has a route: the caller closes this one as a
    /// duplicate; when this one was dialled, the kept one inherits its URL (nats-server's addRoute).
    /// </summary>
    public bool TryRegister(RouteConnection link, out int routeCount)
    {
        var route = link.Link;
        lock (_lock)
        {
            if (_remotes.TryGetValue(route.RemoteId!, out var existing))
            {
                var kept = existing.Link;
                if (route.Solicited && !kept.Solicited)
                {
                    kept.Url = route.Url;
                    kept.Solicited = true;
                    kept.Explicit = route.Explicit;
                }

                kept.Retry = true;
                routeCount = _remotes.Count;
                return false;
            }

            _remotes.Add(route.RemoteId!, link);
            route.Registered = true;
            foreach (var interest in _interest.Values)
            {
                WriteInterest(link, interest, add: true);
            }

            link.Outbound.Signal();
            routeCount = _remotes.Count;
            Volatile.Write(ref _snapshot, [.. _remotes.Values]);
        }

        Changed?.Invoke();
        return true;
    }

    /// <summary>Removes a closing link if it is the registered route to its peer.</summary>
    public void Unregister(RouteConnection link)
    {
        var route = link.Link;
        lock (_lock)
        {
            if (!route.Registered || route.RemoteId is not { } id || !_remotes.TryGetValue(id, out var current) || !ReferenceEquals(current, link))
            {
                return;
            }

            _remotes.Remove(id);
            route.Registered = false;
            Volatile.Write(ref _snapshot, [.. _remotes.Values]);
        }

        Changed?.Invoke();
    }

    /// <summary>Sends a new peer's INFO to every other route, so each of them dials it (gossip; nats-server's forwardNewRouteInfoToKnownServers).</summary>
    public void ForwardInfo(RouteInfo info, RouteConnection except)
    {
        var line = ProtocolWriter.Info(info);
        foreach (var route in Routes)
        {
            if (!ReferenceEquals(route, except))
            {
                route.Outbound.Write(line);
                route.Outbound.Signal();
            }
        }
    }

    /// <summary>
    /// Updates the interest told to routes for a batch of local subscription changes: RS+ when a
    /// subject gains its first subscriber or a queue group changes size, RS- when the last one goes.
    /// Route links' own subscriptions and Courier's in-process services' are not told, except
    /// JetStream's: a stream lives on one node and is reached from the others through its interest
    /// (the API subscriptions every node has are not told: requests are forwarded explicitly,
    /// see <see cref="JetStream.JetStreamCluster"/>).
    /// </summary>
    public void OnLocalChanges(IReadOnlyList<SubChange> changes)
    {
        lock (_lock)
        {
            var routes = _remotes.Count;
            foreach (var change in changes)
            {
                var sub = change.Sub;
                // An account's reply subscription (service exports) is told: responses from other nodes reach it.
                if (!sub.Client.TellsRoutes(sub))
                {
                    continue;
                }

                if (change.Add ? !sub.MarkCountedForRoutes() : !sub.UnmarkCountedForRoutes())
                {
                    continue; // counted once, uncounted once (a removal of a never-applied add is ignored)
                }

                var key = sub.Queue is null ? $"{sub.Account.Name} {sub.Subject}" : $"{sub.Account.Name} {sub.Subject} {sub.Queue}";
                if (!_interest.TryGetValue(key, out var interest))
                {
                    if (!change.Add)
                    {
                        continue;
                    }

                    interest = new Interest(sub.Account.NameUtf8, Encoding.UTF8.GetBytes(sub.Subject), sub.Queue is null ? [] : Encoding.UTF8.GetBytes(sub.Queue))
                    {
                        // Interest a leaf link of a named cluster brought: told with that origin (nats-server's lnoc LS+).
                        Origin = sub.Client is LeafConnection { Link.RemoteClusterUtf8: { Length: > 0 } origin } ? origin : [],
                    };
                    _interest.Add(key, interest);
                }

                interest.Count += change.Add ? 1 : -1;
                var tell = interest.Queue.Length > 0 || interest.Count == (change.Add ? 1 : 0);
                if (interest.Count <= 0)
                {
                    _interest.Remove(key);
                }

                if (tell && routes > 0)
                {
                    foreach (var link in _remotes.Values)
                    {
                        WriteInterest(link, interest, add: interest.Count > 0);
                    }
                }
            }

            if (routes > 0)
            {
                foreach (var link in _remotes.Values)
                {
                    link.Outbound.Signal();
                }
            }
        }
    }

    // RS+ <account> <subject>[ <queue> <weight>]\r\n  or  RS- <account> <subject>[ <queue>]\r\n   (caller holds _lock)
    private void WriteInterest(RouteConnection link, Interest interest, bool add)
    {
        var needed = interest.Origin.Length + interest.Account.Length + interest.Subject.Length + interest.Queue.Length + 32;
        if (_scratch.Length < needed)
        {
            _scratch = new byte[needed * 2];
        }

        var n = interest.Origin.Length > 0 && link.Link.Lnoc
            ? add
                ? RouteWriter.WriteOriginSub(_scratch, interest.Origin, interest.Account, interest.Subject, interest.Queue, interest.Count)
                : RouteWriter.WriteOriginUnsub(_scratch, interest.Account, interest.Subject, interest.Queue)
            : add
                ? RouteWriter.WriteSub(_scratch, interest.Account, interest.Subject, interest.Queue, interest.Count)
                : RouteWriter.WriteUnsub(_scratch, interest.Account, interest.Subject, interest.Queue);
        link.Outbound.Write(_scratch.AsSpan(0, n));
    }

    /// <summary>A generated cluster name, as nats-server's (a NUID: 22 base-62 characters).</summary>
    private static string NewDynamicName()
    {
        const string Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        Span<char> name = stackalloc char[22];
        for (var i = 0; i < name.Length; i++)
        {
            name[i] = Alphabet[System.Security.Cryptography.RandomNumberGenerator.GetInt32(Alphabet.Length)];
        }

        return new string(name);
    }

    /// <summary>Local subscriptions on one subject (and queue): how many, as RS+ weights count them.</summary>
    private sealed class Interest(byte[] account, byte[] subject, byte[] queue)
    {
        public byte[] Account { get; } = account;

        public byte[] Subject { get; } = subject;

        public byte[] Queue { get; } = queue;

        /// <summary>The cluster of the leaf link whose subscription made this interest; empty for any other.</summary>
        public byte[] Origin { get; init; } = [];

        public int Count { get; set; }
    }
}
