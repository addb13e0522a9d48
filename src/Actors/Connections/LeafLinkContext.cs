using Courier.Actors.Leaf;
using Courier.Actors.Server.Authentication;

namespace Courier.Actors.Connections;

/// <summary>What a leaf node link (<see cref="LeafConnection"/>) uses beyond <see cref="ConnectionContext"/>.</summary>
/// <param name="Node">What every connection uses.</param>
/// <param name="Leafs">The node's leaf links: a link registers there once its account is bound.</param>
/// <param name="ServerId">This node's server id (INFO, CONNECT).</param>
/// <param name="ServerName">This node's name.</param>
/// <param name="ClusterName">This node's cluster name, if it has routes (CONNECT <c>cluster</c>).</param>
/// <param name="Authentication">The clients' authentication: accepted leafs log in with it when <c>leafnodes</c> has no authorization.</param>
internal sealed record LeafLinkContext(
    ConnectionContext Node,
    LeafTable Leafs,
    string ServerId,
    string ServerName,
    Func<string?> ClusterName,
    Authenticator Authentication);
