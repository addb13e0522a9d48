using Courier.Protocols.Nats;

namespace Courier.Actors.Cluster;

/// <summary>
/// What a route connection knows about its peer and how it came to be: dialled (solicited, with the
/// URL, explicit when the URL is in <c>cluster.routes</c>) or accepted. Written by the link's read
/// pump during the handshake and by the route table when a duplicate hands over its URL; read by the
/// route manager when the link ends (reconnect or not) and by monitoring.
/// </summary>
internal sealed class RouteLink
{
    private volatile RouteInfo? _remoteInfo;
    private volatile Uri? _url;

    public RouteLink(Uri? url, bool isExplicit)
    {
        _url = url;
        Solicited = url is not null;
        Explicit = isExplicit;
    }

    /// <summary>The URL this node dialled, or (for an accepted link that replaced a dialled duplicate) took over.</summary>
    public Uri? Url
    {
        get => _url;
        set => _url = value;
    }

    /// <summary>This node dialled the link (nats-server's didSolicit); an accepted link may be upgraded when a dialled duplicate is dropped.</summary>
    public bool Solicited { get; set; }

    /// <summary>The URL is one of <c>cluster.routes</c>: re-dialled forever when the link drops.</summary>
    public bool Explicit { get; set; }

    /// <summary>Set on the kept link when a duplicate was dropped: re-dial even an implicit route if it drops (nats-server's route.retry).</summary>
    public bool Retry { get; set; }

    /// <summary>The peer's server id: from its CONNECT (accepted) or INFO (dialled).</summary>
    public string? RemoteId { get; set; }

    /// <summary>The peer turned out to be this node (a route URL naming itself): never re-dialled.</summary>
    public bool IsSelf { get; set; }

    /// <summary>The CONNECT was received (accepted links must send it first).</summary>
    public bool ConnectReceived { get; set; }

    /// <summary>The peer's first INFO, once received: the link is registered from then on.</summary>
    public RouteInfo? RemoteInfo
    {
        get => _remoteInfo;
        set => _remoteInfo = value;
    }

    /// <summary>The link is the node's route to <see cref="RemoteId"/> (not a duplicate being dropped).</summary>
    public bool Registered { get; set; }

    /// <summary>The peer said it is in lame duck mode (a route INFO with <c>"ldm":true</c>): its client URLs are no longer advertised.</summary>
    public bool LameDuck { get; set; }

    /// <summary>The peer accepts HMSG.</summary>
    public bool Headers { get; set; } = true;

    /// <summary>The peer reads nats-server's lnoc forms (LS+ and LMSG with the origin cluster of a leaf link).</summary>
    public bool Lnoc { get; set; }

    /// <summary>For /routez: the peer's client URLs it advertised.</summary>
    public IReadOnlyList<string> ConnectUrls => RemoteInfo?.ConnectUrls ?? [];

    public override string ToString() => RemoteId ?? Url?.ToString() ?? "(accepted)";
}
