using Courier.Actors.Connections;
using Courier.Actors.Server;
using Courier.Protocols;

namespace Courier.Gateway.Monitoring;

/// <summary>/gatewayz and the <c>gateway</c> part of /varz, as nats-server 2.9's Gatewayz and GatewayOptsVarz.</summary>
internal sealed partial class MonitoringPages
{
    /// <summary>The node's gateway links: outbound by remote gateway name, inbound by remote gateway name (a list each).</summary>
    public Gatewayz Gatewayz()
    {
        var table = _broker.Gateways;
        var options = _broker.Options.Gateway;
        if (table is null)
        {
            return new Gatewayz { ServerId = _broker.ServerId, Now = DateTime.UtcNow };
        }

        var now = DateTime.UtcNow;
        var outbound = new Dictionary<string, RemoteGatewayz>(StringComparer.Ordinal);
        foreach (var c in table.Outbound)
        {
            outbound[c.Link.Name ?? ""] = new RemoteGatewayz { Configured = c.Link.Remote is not null, Connection = GatewayConnection(c, now) };
        }

        var inbound = new Dictionary<string, List<RemoteGatewayz>>(StringComparer.Ordinal);
        foreach (var c in table.Inbound)
        {
            var name = c.Link.Name ?? "";
            if (!inbound.TryGetValue(name, out var list))
            {
                inbound[name] = list = [];
            }

            list.Add(new RemoteGatewayz { Connection = GatewayConnection(c, now) }); // nats-server never marks an inbound link configured
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
            (remotes ??= []).Add(new VarzRemoteGateway { Name = remote.Name, Urls = remote.Urls.ConvertAll(u => $"{u.Host}:{u.Port}") });
        }

        return new VarzGateway
        {
            Name = gateway.Name,
            Host = gateway.Host,
            Port = _broker.Gateways?.ListenPort ?? gateway.Port,
            AuthTimeout = gateway.AuthTimeout.TotalSeconds,
            ConnectRetries = gateway.ConnectRetries,
            Gateways = remotes,
            RejectUnknown = gateway.RejectUnknown,
        };
    }
}
