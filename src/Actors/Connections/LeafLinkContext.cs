using Courier.Actors.Leaf;
using Courier.Actors.Server;
using Courier.Actors.Server.Authentication;

namespace Courier.Actors.Connections;

/// <summary>What a leaf node link (<see cref="LeafConnection"/>) uses beyond <see cref="ConnectionContext"/>.</summary>
/// <param name="Node">What every connection uses.</param>
/// <param name="Leafs">The node's leaf links: a link registers there once its account is bound.</param>
/// <param name="ServerId">This node's server id (INFO, CONNECT).</param>
/// <param name="ServerName">This node's name.</param>
/// <param name="ClusterName">This node's cluster name, if it has routes (CONNECT <c>cluster</c>).</param>
/// <param name="Authentication">The clients' authentication: accepted leafs log in with it when <c>leafnodes</c> has no authorization.</param>
/// <param name="Tls">The <c>leafnodes { tls { } }</c> block of accepted links, if any.</param>
internal sealed record LeafLinkContext(
    ConnectionContext Node,
    LeafTable Leafs,
    string ServerId,
    string ServerName,
    Func<string?> ClusterName,
    Authenticator Authentication,
    TlsTransport? Tls)
{
    private readonly Dictionary<LeafNodeRemote, TlsDialer> _dialers = Node.Options.LeafNodes.Remotes
        .Where(r => r.Tls is not null)
        .ToDictionary(r => r, r => new TlsDialer(r.Tls!));

    private readonly Lazy<TlsDialer> _systemRoots = new(() => new TlsDialer(RemoteTlsOptions.Default));

    /// <summary>The TLS client of <paramref name="remote"/>: its own block's, else the system's roots (a hub that said <c>tls_required</c>).</summary>
    public TlsDialer DialerFor(LeafNodeRemote remote) => _dialers.TryGetValue(remote, out var dialer) ? dialer : _systemRoots.Value;
}
