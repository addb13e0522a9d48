using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Cluster;
using Courier.Actors.Connections;
using Courier.Actors.JetStream;

namespace Courier.Actors.Server;

/// <summary>
/// What monitoring shows of the node (/varz, /connz, /routez, /accountz, /jsz and the system account's
/// answers): snapshots of its connections, routes, accounts and totals, read from the registries.
/// </summary>
internal sealed class MonitoringSnapshots(ClientRegistry registry, AccountRegistry accounts, RouteTable? routes, ServerStats stats, Func<IActorRef?> jetStream)
{
    private readonly ClientRegistry _registry = registry;
    private readonly AccountRegistry _accounts = accounts;
    private readonly RouteTable? _routes = routes;
    private readonly ServerStats _stats = stats;
    private readonly Func<IActorRef?> _jetStream = jetStream;

    /// <summary>Client connections open now (Courier's own in-process connections excluded).</summary>
    public int ConnectionCount
    {
        get
        {
            var n = 0;
            foreach (var c in _registry.Clients)
            {
                n += c.IsInternal || c.IsServerLink ? 0 : 1;
            }

            return n;
        }
    }

    /// <summary>The routes registered now, for /routez, by rid.</summary>
    public IReadOnlyList<RouteSummary> GetRoutes()
    {
        var list = new List<RouteSummary>();
        foreach (var c in _routes?.Routes ?? [])
        {
            var link = c.Link;
            list.Add(new RouteSummary(
                c.Id, link.RemoteId ?? "", link.RemoteInfo?.ServerName ?? "", link.Solicited, link.Explicit, c.RemoteIp, c.RemotePort, c.Started,
                c.LastActivity, c.Outbound.PendingBytes, c.InMsgs, c.Outbound.OutMsgs, c.InBytes, c.Outbound.OutBytes, c.SubscriptionCount));
        }

        list.Sort((a, b) => a.Rid.CompareTo(b.Rid));
        return list;
    }

    /// <summary>
    /// A snapshot of the open and/or recently closed connections for monitoring, by cid; with
    /// <paramref name="account"/> only the open connections of that account (closed ones are filtered by the caller).
    /// </summary>
    public IReadOnlyList<ConnectionInfo> GetConnections(bool open = true, bool closed = false, string? account = null)
    {
        var list = new List<ConnectionInfo>();
        if (closed)
        {
            list.AddRange(_registry.Closed);
        }

        if (open)
        {
            foreach (var c in _registry.Clients)
            {
                if (!c.IsInternal && !c.IsServerLink && (account is null || c.Account.Name == account))
                {
                    list.Add(ClientRegistry.Describe(c, subscriptions: c.SubscriptionsSnapshot(), stop: null));
                }
            }
        }

        list.Sort((a, b) => a.Cid.CompareTo(b.Cid));
        return list;
    }

    /// <summary>The open client connection <paramref name="cid"/>, or null.</summary>
    public ConnectionInfo? GetConnection(ulong cid)
    {
        foreach (var c in _registry.Clients)
        {
            if (c.Id == cid && !c.IsInternal && !c.IsServerLink)
            {
                return ClientRegistry.Describe(c, subscriptions: c.SubscriptionsSnapshot(), stop: null);
            }
        }

        return null;
    }

    /// <summary>Whether the account <paramref name="name"/> exists.</summary>
    public bool AccountExists(string name) => _accounts.Find(name) is not null;

    /// <summary>
    /// The subscriptions of this node's clients and in-process services (not routes'), with
    /// <paramref name="account"/> only those in that account's subject space; by cid, then as each client holds them.
    /// </summary>
    public IReadOnlyList<SubscriptionInfo> GetSubscriptions(string? account)
    {
        var clients = new List<Connection>();
        foreach (var c in _registry.Clients)
        {
            if (!c.IsServerLink)
            {
                clients.Add(c);
            }
        }

        clients.Sort((a, b) => a.Id.CompareTo(b.Id));
        var list = new List<SubscriptionInfo>();
        foreach (var c in clients)
        {
            foreach (var sub in c.SubscriptionsSnapshot())
            {
                if (account is null || sub.Account.Name == account)
                {
                    list.Add(ClientRegistry.DescribeSubscription(c, sub));
                }
            }
        }

        return list;
    }

    /// <summary>Subscriptions held now in <paramref name="account"/>'s subject space; 0 when there is no such account.</summary>
    public int SubscriptionCountOf(string account) => _accounts.Find(account)?.Space.Count ?? 0;

    /// <summary>The accounts for /accountz: their names, the global account's included.</summary>
    public IReadOnlyList<string> GetAccountNames()
    {
        var names = new List<string>();
        foreach (var account in _accounts.All)
        {
            names.Add(account.Name);
        }

        names.Sort(StringComparer.Ordinal);
        return names;
    }

    /// <summary>One account for <c>/accountz?acc=</c>; null when there is no such account.</summary>
    public AccountSummary? GetAccount(string name)
    {
        if (_accounts.Find(name) is not { } account)
        {
            return null;
        }

        var clients = 0;
        foreach (var c in _registry.Clients)
        {
            clients += !c.IsInternal && !c.IsServerLink && ReferenceEquals(c.Account, account) ? 1 : 0;
        }

        var options = account.Options;
        return new AccountSummary(
            account.Name,
            clients,
            account.Space.Count,
            account.JetStream is not null,
            options?.Exports ?? [],
            options?.Imports ?? []);
    }

    /// <summary>JetStream usage for /jsz; null when JetStream is off.</summary>
    public async Task<JetStreamStats?> GetJetStreamStatsAsync()
    {
        if (_jetStream() is not { } jetStream)
        {
            return null;
        }

        return await jetStream.Ask<JetStreamStats>(JetStreamApi.Protocol.GetStats.Instance, TimeSpan.FromSeconds(10)).ConfigureAwait(false);
    }

    /// <summary>Totals over closed and open connections.</summary>
    public (long InMsgs, long InBytes, long OutMsgs, long OutBytes) GetTotals()
    {
        long inMsgs = _stats.InMsgs, inBytes = _stats.InBytes, outMsgs = _stats.OutMsgs, outBytes = _stats.OutBytes;
        foreach (var c in _registry.Clients)
        {
            inMsgs += c.InMsgs;
            inBytes += c.InBytes;
            outMsgs += c.Outbound.OutMsgs;
            outBytes += c.Outbound.OutBytes;
        }

        return (inMsgs, inBytes, outMsgs, outBytes);
    }

    /// <summary>Subscriptions held now, in every account.</summary>
    public int SubscriptionCount
    {
        get
        {
            var n = 0;
            foreach (var account in _accounts.All)
            {
                n += account.Space.Count;
            }

            return n;
        }
    }
}
