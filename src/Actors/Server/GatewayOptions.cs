namespace Courier.Actors.Server;

/// <summary>
/// nats-server's <c>gateway { name, listen | host/port, gateways [ { name, url | urls } ], authorization
/// { user, password, timeout }, reject_unknown_cluster, connect_retries }</c>: this cluster's place in a
/// super-cluster. A reload that changes it is refused.
/// </summary>
public sealed class GatewayOptions
{
    /// <summary><c>gateway.name</c>: this cluster's gateway name (required).</summary>
    public string? Name { get; set; }

    /// <summary><c>gateway.host</c>: the gateway listener's address (nats-server's default 0.0.0.0).</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary><c>gateway.port</c>: 0 means no listener, -1 a random free port.</summary>
    public int Port { get; set; }

    /// <summary><c>authorization.user</c>: the user an inbound gateway must CONNECT as.</summary>
    public string? Username { get; set; }

    /// <summary><c>authorization.password</c>.</summary>
    public string? Password { get; set; }

    /// <summary><c>authorization.timeout</c>: time an accepted gateway has to send its CONNECT.</summary>
    public TimeSpan AuthTimeout { get; set; } = TimeSpan.FromSeconds(2); // nats-server's default: its AUTH_TIMEOUT, 2 s

    /// <summary><c>reject_unknown_cluster</c> (alias <c>reject_unknown</c>): refuse inbound gateways not in <see cref="Remotes"/>.</summary>
    public bool RejectUnknown { get; set; }

    /// <summary><c>connect_retries</c>: dial attempts of an explicit remote before giving up (0: forever, as nats-server).</summary>
    public int ConnectRetries { get; set; }

    /// <summary><c>gateway.gateways</c>: the other clusters this one dials.</summary>
    public List<GatewayRemote> Remotes { get; } = [];

    /// <summary>
    /// <c>gateway.tls</c>: TLS on every gateway link, both ways (nats-server's getTLSConfig: the handshake
    /// first, this node's certificate as server and client, the peer's always verified).
    /// </summary>
    public TlsOptions? Tls { get; set; }

    /// <summary>True when the config has a <c>gateway</c> block with a name.</summary>
    public bool Enabled => Name is not null;

    /// <summary>Whether <paramref name="other"/> configures the same gateway (a reload that changes it is refused).</summary>
    public bool SameAs(GatewayOptions other)
    {
        var same = Name == other.Name && Host == other.Host && Port == other.Port && Username == other.Username
            && Password == other.Password && AuthTimeout == other.AuthTimeout && RejectUnknown == other.RejectUnknown
            && ConnectRetries == other.ConnectRetries && Remotes.Count == other.Remotes.Count
            && Tls?.CertFile == other.Tls?.CertFile;
        for (var i = 0; same && i < Remotes.Count; i++)
        {
            same = Remotes[i].Name == other.Remotes[i].Name && Remotes[i].Urls.SequenceEqual(other.Remotes[i].Urls)
                && Remotes[i].Tls?.CertFile == other.Remotes[i].Tls?.CertFile;
        }

        return same;
    }
}

/// <summary>One entry of <c>gateway.gateways</c>: another cluster's gateway name and the URLs of its gateway listeners.</summary>
public sealed class GatewayRemote(string name)
{
    /// <summary><c>name</c>: the remote cluster's gateway name.</summary>
    public string Name { get; } = name;

    /// <summary><c>url</c> / <c>urls</c>: its gateway URLs (<c>nats://[user:pass@]host:port</c>), tried in turn.</summary>
    public List<Uri> Urls { get; } = [];

    /// <summary><c>tls</c>: this remote's own block, for dials to it (nats-server's RemoteGatewayOpts.TLSConfig); null: the gateway block's.</summary>
    public TlsOptions? Tls { get; set; }
}
