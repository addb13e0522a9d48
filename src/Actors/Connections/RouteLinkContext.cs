using Courier.Actors.Cluster;
using Courier.Actors.Server;

namespace Courier.Actors.Connections;

/// <summary>What a route link (<see cref="RouteConnection"/>) uses beyond <see cref="ConnectionContext"/>.</summary>
/// <param name="Node">What every connection uses.</param>
/// <param name="Routes">The node's routes: a link registers there once the peer's INFO came.</param>
/// <param name="Cluster">The node's view of its cluster: route INFO, gossip, connect_urls.</param>
/// <param name="ServerId">This node's server id (a route to itself is dropped).</param>
/// <param name="ServerName">This node's name (a peer with the same name is refused).</param>
/// <param name="Tls">The <c>cluster { tls { } }</c> block, if any.</param>
internal sealed record RouteLinkContext(
    ConnectionContext Node,
    RouteTable Routes,
    ClusterView Cluster,
    string ServerId,
    string ServerName,
    TlsTransport? Tls);
