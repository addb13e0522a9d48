using Courier.Actors.Server;

namespace Courier.Actors.Gateway;

/// <summary>
/// What a gateway link knows about the other cluster and how it came to be. nats-server's gateway links
/// are one-way: an outbound link (dialled by this node, one per remote gateway) carries this cluster's
/// messages there and receives the remote's interest (RS+/RS-); an inbound link (accepted) carries the
/// remote's messages here and sends this cluster's interest back. Written by the link's read pump during
/// the handshake; read by the gateway table, the publish path and monitoring.
/// </summary>
internal sealed class GatewayLink(string? remoteName, Uri? url, GatewayRemote? remote)
{
    private volatile string? _name = remoteName;

    /// <summary>The remote gateway (cluster) name: the configured one for an outbound link, the CONNECT's for an inbound one.</summary>
    public string? Name
    {
        get => _name;
        set => _name = value;
    }

    /// <summary>The URL dialled (null for an accepted link).</summary>
    public Uri? Url { get; } = url;

    /// <summary>The configured remote, or null for an implicit (gossiped) one or an accepted link.</summary>
    public GatewayRemote? Remote { get; } = remote;

    /// <summary>This node dialled the link: it carries messages out and receives interest.</summary>
    public bool Outbound => Url is not null;

    /// <summary>The other side's server id.</summary>
    public string? RemoteId { get; set; }

    /// <summary>The other side takes HMSG.</summary>
    public bool Headers { get; set; }

    /// <summary>nats-server's hash of the remote gateway's name: a mapped reply carrying it goes over this link.</summary>
    public byte[] ClusterHash { get; set; } = [];

    /// <summary>An inbound link got its CONNECT.</summary>
    public bool ConnectReceived { get; set; }

    /// <summary>The link is registered: an outbound one sends messages, an inbound one is told interest.</summary>
    public bool Registered { get; set; }

    /// <summary>The remote's gateway URLs (from its INFO), for an inbound link: where to dial back when no remote names it.</summary>
    public string[]? RemoteUrls { get; set; }

    public override string ToString() => Name ?? Url?.ToString() ?? "(accepted)";
}
