using Courier.Actors.Connections;
using Courier.Actors.Gateway;
using Courier.Actors.Server;
using Courier.Protocols;

namespace Courier.Gateway.Monitoring;

/// <summary>/gatewayz and the <c>gateway</c> part of /varz, as nats-server 2.9's Gatewayz and GatewayOptsVarz.</summary>
internal sealed partial class MonitoringPages
{
    // nats-server's gatewayMaxRUnsubBeforeSwitch: the RS- count that switches an optimistic account; reported as is.
    private const int InterestOnlyThreshold = 1000;

    /// <summary>
    /// The node's gateway links: outbound by remote gateway name, inbound by remote gateway name (a list each),
    /// as nats-server's Gatewayz: <see cref="GatewayzQuery.Name"/> keeps that remote's links only (no outbound
    /// link to it is a null map), <see cref="GatewayzQuery.Accounts"/> adds each link's accounts.
    /// </summary>
    public Gatewayz Gatewayz(GatewayzQuery query = default)
    {
        var table = _broker.Gateways;
        var options = _broker.Options.Gateway;
        if (table is null)
        {
            return new Gatewayz { ServerId = _broker.ServerId, Now = DateTime.UtcNow };
        }

        var now = DateTime.UtcNow;
        var target = string.IsNullOrEmpty(query.Name) ? null : query.Name;
        Dictionary<string, RemoteGatewayz>? outbound = new(StringComparer.Ordinal);
        foreach (var c in table.Outbound)
        {
            var name = c.Link.Name ?? "";
            if (target is null || target == name)
            {
                outbound[name] = new RemoteGatewayz
                {
                    Configured = c.Link.Remote is not null,
                    Connection = GatewayConnection(c, now),
                    Accounts = query.Accounts ? OutboundAccounts(c, query.AccountName) : null,
                };
            }
        }

        if (target is not null && outbound.Count == 0)
        {
            outbound = null; // nats-server's createOutboundsRemoteGatewayz: no link to the gateway asked for
        }

        var inbound = new Dictionary<string, List<RemoteGatewayz>>(StringComparer.Ordinal);
        foreach (var c in table.Inbound)
        {
            var name = c.Link.Name ?? "";
            if (target is not null && target != name)
            {
                continue;
            }

            if (!inbound.TryGetValue(name, out var list))
            {
                inbound[name] = list = [];
            }

            // nats-server never marks an inbound link configured
            list.Add(new RemoteGatewayz { Connection = GatewayConnection(c, now), Accounts = query.Accounts ? InboundAccounts(table, c, query.AccountName) : null });
        }

        return new Gatewayz
        {
            ServerId = _broker.ServerId,
            Now = now,
            Name = table.Name,
            Host = options.Host,
            Port = table.ListenPort,
            OutboundGateways = outbound,
            InboundGateways = inbound,
        };
    }

    // An outbound link's accounts: those the remote has told interest in, with its subscription counts.
    private static List<AccountGatewayz>? OutboundAccounts(GatewayConnection c, string? only)
    {
        var counts = new SortedDictionary<string, (int Subs, int Queues)>(StringComparer.Ordinal);
        foreach (var sub in c.SubscriptionsSnapshot())
        {
            var name = sub.Account.Name;
            if (!string.IsNullOrEmpty(only) && name != only)
            {
                continue;
            }

            counts.TryGetValue(name, out var count);
            counts[name] = (count.Subs + 1, count.Queues + (sub.Queue is null ? 0 : 1));
        }

        if (counts.Count == 0)
        {
            return null; // nats-server's "accounts" is omitempty
        }

        var accounts = new List<AccountGatewayz>(counts.Count);
        foreach (var (name, count) in counts)
        {
            accounts.Add(new AccountGatewayz
            {
                Name = name,
                InterestMode = "Interest-Only",
                InterestOnlyThreshold = InterestOnlyThreshold,
                TotalSubscriptions = count.Subs,
                NumQueueSubscriptions = count.Queues,
            });
        }

        return accounts;
    }

    // An inbound link's accounts: those switched to interest-only mode on it (this side sends all their interest).
    private static List<AccountGatewayz>? InboundAccounts(GatewayTable table, GatewayConnection c, string? only)
    {
        var accounts = new List<AccountGatewayz>();
        foreach (var name in table.SwitchedAccounts(c))
        {
            if (string.IsNullOrEmpty(only) || name == only)
            {
                accounts.Add(new AccountGatewayz { Name = name, InterestMode = "Interest-Only", InterestOnlyThreshold = InterestOnlyThreshold });
            }
        }

        return accounts.Count == 0 ? null : accounts;
    }

    private static ConnzConnection GatewayConnection(GatewayConnection c, DateTime now) => new()
    {
        Cid = c.Id,
        Kind = "Gateway",
        Ip = c.RemoteIp,
        Port = c.RemotePort,
        Start = c.Started,
        LastActivity = c.LastActivity,
        Uptime = GoDuration.FormatUptime(now - c.Started),
        Idle = GoDuration.FormatUptime(now - c.LastActivity),
        Rtt = c.Rtt > TimeSpan.Zero ? GoDuration.Format(c.Rtt.Ticks * 100) : null,
        InMsgs = c.InMsgs,
        OutMsgs = c.Outbound.OutMsgs,
        InBytes = c.InBytes,
        OutBytes = c.Outbound.OutBytes,
        Subscriptions = c.SubscriptionsSnapshot().Length,
        Name = c.Link.RemoteId,
    };

    private VarzGateway GatewayVarz(ServerOptions o)
    {
        var gateway = o.Gateway;
        if (!gateway.Enabled)
        {
            return new VarzGateway();
        }

        List<VarzRemoteGateway>? remotes = null;
        foreach (var remote in gateway.Remotes)
        {
            (remotes ??= []).Add(new VarzRemoteGateway { Name = remote.Name, TlsTimeout = remote.Tls?.Timeout.TotalSeconds ?? 0, Urls = remote.Urls.ConvertAll(u => $"{u.Host}:{u.Port}") });
        }

        return new VarzGateway
        {
            Name = gateway.Name,
            Host = gateway.Host,
            Port = _broker.Gateways?.ListenPort ?? gateway.Port,
            AuthTimeout = gateway.AuthTimeout.TotalSeconds,
            TlsTimeout = gateway.Port != 0 ? (gateway.Tls?.Timeout ?? TlsOptions.DefaultTimeout).TotalSeconds : 0, // nats-server sets it with a listener, TLS or not
            TlsRequired = gateway.Tls is not null, // nats-server: both true with a gateway tls block
            TlsVerify = gateway.Tls is not null,
            ConnectRetries = gateway.ConnectRetries,
            Gateways = remotes,
            RejectUnknown = gateway.RejectUnknown,
        };
    }
}
