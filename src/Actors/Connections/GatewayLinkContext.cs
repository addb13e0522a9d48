using Courier.Actors.Gateway;
using Courier.Actors.Server;

namespace Courier.Actors.Connections;

/// <summary>What a gateway link (<see cref="GatewayConnection"/>) uses beyond <see cref="ConnectionContext"/>.</summary>
/// <param name="Node">What every connection uses.</param>
/// <param name="Gateways">The node's gateway links and the interest told to the inbound ones.</param>
/// <param name="ServerId">This node's server id (INFO, CONNECT).</param>
/// <param name="ServerName">This node's name.</param>
/// <param name="Implicit">Asks for an outbound link to a gateway learnt from an INFO (an inbound link's, or gossip): its name and URLs.</param>
/// <param name="Tls">The <c>gateway { tls { } }</c> block: both sides of every gateway link; null for plain links.</param>
internal sealed record GatewayLinkContext(
    ConnectionContext Node,
    GatewayTable Gateways,
    string ServerId,
    string ServerName,
    Action<string, string[]> Implicit,
    TlsTransport? Tls)
{
    private readonly Dictionary<GatewayRemote, TlsTransport> _remoteTls = Node.Options.Gateway.Remotes
        .Where(r => r.Tls is not null)
        .ToDictionary(r => r, r => new TlsTransport(r.Tls!));

    /// <summary>
    /// The TLS of a link this node dials to <paramref name="remote"/> (null for an implicit gateway): the
    /// remote's own block, else the gateway block's (nats-server's solicitGateway); null for a plain link.
    /// </summary>
    public TlsTransport? OutboundTls(GatewayRemote? remote) => remote is not null && _remoteTls.TryGetValue(remote, out var own) ? own : Tls;
}
