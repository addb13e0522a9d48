using Courier.Actors.Server;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Leaf;

/// <summary>
/// What a leaf node link knows about the other side and how it came to be: dialled by this node (it is
/// the leaf, nats-server's solicited "spoke" side, for one of <c>leafnodes.remotes</c>) or accepted on
/// the leaf node port (this node is the hub). Written by the link's read pump during the handshake;
/// read by the leaf table, the publish path (headers, deny lists) and monitoring.
/// </summary>
internal sealed class LeafLink
{
    private readonly byte[][]? _denyImports;
    private readonly byte[][]? _denyExports;
    private volatile string? _remoteName;
    private string? _remoteCluster;

    public LeafLink(LeafNodeRemote? remote, Uri? url)
    {
        Remote = remote;
        Url = url;
        if (remote is not null)
        {
            DenyImports = remote.DenyImports.Count > 0 ? [.. remote.DenyImports] : null;
            _denyImports = DenyImports is null ? null : Array.ConvertAll(DenyImports, System.Text.Encoding.UTF8.GetBytes);
            _denyExports = remote.DenyExports.Count > 0 ? remote.DenyExports.ConvertAll(System.Text.Encoding.UTF8.GetBytes).ToArray() : null;
        }
    }

    /// <summary>The remote this node dialled; null for an accepted link.</summary>
    public LeafNodeRemote? Remote { get; }

    /// <summary>The URL dialled (null for an accepted link).</summary>
    public Uri? Url { get; }

    /// <summary>This node dialled the link: it is the leaf (spoke) side.</summary>
    public bool Solicited => Remote is not null;

    /// <summary>The other side's server name (its CONNECT's <c>name</c>, or its INFO's <c>server_name</c>).</summary>
    public string? RemoteName
    {
        get => _remoteName;
        set => _remoteName = value;
    }

    /// <summary>The other side's server id.</summary>
    public string? RemoteId { get; set; }

    /// <summary>The other side's cluster name, if it is in one: interest and messages are never sent back into it.</summary>
    public string? RemoteCluster
    {
        get => _remoteCluster;
        set
        {
            _remoteCluster = value;
            RemoteClusterUtf8 = value is null ? [] : System.Text.Encoding.UTF8.GetBytes(value);
        }
    }

    /// <summary><see cref="RemoteCluster"/> as the origin on a route's LS+/LMSG (empty when none).</summary>
    public byte[] RemoteClusterUtf8 { get; private set; } = [];

    /// <summary>The other side takes HMSG.</summary>
    public bool Headers { get; set; }

    /// <summary>The nonce of the hub's INFO (a dialled link signs it with its credentials), or of this hub's INFO (an accepted link).</summary>
    public string? Nonce { get; set; }

    /// <summary>An accepted link sent its CONNECT (it must do so first).</summary>
    public bool ConnectReceived { get; set; }

    /// <summary>A dialled link got the hub's first INFO and sent its CONNECT.</summary>
    public bool InfoReceived { get; set; }

    /// <summary>The link is in the leaf table: interest flows both ways.</summary>
    public bool Registered { get; set; }

    /// <summary>The other side reported a loop (or this side found one): the next dial waits longer.</summary>
    public bool LoopDetected { get; set; }

    /// <summary>A dialled link runs TLS after the hub's INFO: the remote has TLS, or the hub said <c>tls_required</c>.</summary>
    public bool Tls { get; set; }

    /// <summary><c>deny_imports</c> of the remote: subjects this leaf neither subscribes to on the hub nor takes messages on.</summary>
    public string[]? DenyImports { get; }

    /// <summary>Whether a message on <paramref name="subject"/> may not be sent over this link.</summary>
    public bool ExportDenied(ReadOnlySpan<byte> subject) => _denyExports is { } deny && AnyMatch(deny, subject);

    /// <summary>Whether the remote has <c>deny_exports</c> (the publish path checks only then).</summary>
    public bool HasExportDenies => _denyExports is not null;

    /// <summary>Whether a message on <paramref name="subject"/> from the other side is dropped.</summary>
    public bool ImportDenied(ReadOnlySpan<byte> subject) => _denyImports is { } deny && AnyMatch(deny, subject);

    /// <summary>Whether interest in <paramref name="subject"/> (a subscription's, maybe with wildcards) is not told to the other side.</summary>
    public bool InterestDenied(string subject)
    {
        if (DenyImports is not { } deny)
        {
            return false;
        }

        foreach (var pattern in deny)
        {
            if (SubjectRules.IsSubsetOf(subject, pattern))
            {
                return true;
            }
        }

        return false;
    }

    private static bool AnyMatch(byte[][] patterns, ReadOnlySpan<byte> subject)
    {
        foreach (var pattern in patterns)
        {
            if (SubjectRules.Matches(subject, pattern))
            {
                return true;
            }
        }

        return false;
    }

    public override string ToString() => RemoteName ?? Url?.ToString() ?? "(accepted)";
}
