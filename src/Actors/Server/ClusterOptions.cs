namespace Courier.Actors.Server;

/// <summary>
/// nats-server's <c>cluster { name, listen | host/port, routes, no_advertise, connect_retries,
/// authorization { user, password, timeout } }</c> (and the flags <c>--cluster</c>,
/// <c>--cluster_listen</c>, <c>--routes</c>, <c>--cluster_name</c>, <c>--no_advertise</c>).
/// A port of 0 means no route listener, so no cluster.
/// </summary>
public sealed class ClusterOptions
{
    /// <summary><c>cluster.name</c>; nats-server generates one when unset (and adopts a peer's dynamically).</summary>
    public string? Name { get; set; }

    /// <summary><c>cluster.host</c>; the route listener's address (nats-server's default 0.0.0.0).</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary><c>cluster.port</c>; 0 means no cluster, -1 picks a random free port.</summary>
    public int Port { get; set; }

    /// <summary>
    /// <c>cluster.routes</c> or <c>--routes</c>: the route URLs to dial (<c>nats-route://[user:pass@]host:port</c>).
    /// A URL naming this node itself is dialled, recognised by its server id and dropped, as nats-server.
    /// </summary>
    public List<Uri> Routes { get; } = [];

    /// <summary><c>cluster.no_advertise</c>: do not tell clients the other nodes' client URLs (INFO <c>connect_urls</c>).</summary>
    public bool NoAdvertise { get; set; }

    /// <summary>
    /// <c>cluster.connect_retries</c>: attempts after the first failed dial of an implicit route (one
    /// learned from a peer) before giving up; explicit routes are retried forever, as nats-server.
    /// </summary>
    public int ConnectRetries { get; set; }

    /// <summary><c>cluster.advertise</c>: the route URL (host:port) this node gives its peers instead of its listen address.</summary>
    public string? Advertise { get; set; }

    /// <summary>
    /// <c>cluster.akka_port</c> (Courier's own, not nats-server's): the port Akka.Remote (membership
    /// gossip and heartbeats) listens on; 0, the default, an ephemeral port.
    /// </summary>
    public int AkkaPort { get; set; }

    /// <summary>
    /// <c>cluster.akka_advertise</c> (Courier's own): the <c>host:port</c> peers reach Akka.Remote on, when
    /// that is not the listen address (a proxy, a port forward), as <see cref="Advertise"/> is for routes.
    /// </summary>
    public string? AkkaAdvertise { get; set; }

    /// <summary><c>cluster.authorization.user</c>: peers must send this in their route CONNECT.</summary>
    public string? Username { get; set; }

    /// <summary><c>cluster.authorization.password</c>.</summary>
    public string? Password { get; set; }

    /// <summary><c>cluster.authorization.timeout</c>: time a peer has to send its route CONNECT (2 s, as nats-server).</summary>
    public TimeSpan AuthTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// <c>cluster.tls</c>: routes are TLS both ways, the handshake first (nats-server's createRoute). As
    /// nats-server's getTLSConfig for routes, <see cref="TlsOptions.Verify"/> is always on: an accepted
    /// peer must present a certificate that chains to <c>ca_file</c> (the system's roots without one),
    /// and a dialled peer's server certificate is checked against the same CAs and the route URL's host.
    /// </summary>
    public TlsOptions? Tls { get; set; }

    /// <summary>True when the route listener is on (a port was given).</summary>
    public bool Enabled => Port != 0;
}
