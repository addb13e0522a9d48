namespace Courier.Actors.Server;

/// <summary>
/// The <c>websocket { }</c> block: a listener for NATS clients over WebSocket (browsers, nats.ws),
/// with its own origin rules, compression and, optionally, its own authorization that replaces the
/// server's for these clients (nats-server's <c>WebsocketOpts</c>).
/// </summary>
public sealed class WebSocketOptions
{
    /// <summary><c>host</c>; the listen address (nats-server's default 0.0.0.0).</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary><c>port</c>; -1 picks a random free port.</summary>
    public int Port { get; set; }

    /// <summary><c>no_tls</c>: serve plain <c>ws://</c>. Required without a <c>tls</c> block, as nats-server.</summary>
    public bool NoTls { get; set; }

    /// <summary>
    /// <c>tls { }</c>: serve <c>wss://</c>, the TLS handshake before the HTTP upgrade. Its <c>verify</c>
    /// and <c>verify_and_map</c> apply to WebSocket clients in place of the client listener's block; its
    /// <c>timeout</c> is not used (<see cref="HandshakeTimeout"/> bounds the handshake and the upgrade, as nats-server).
    /// </summary>
    public TlsOptions? Tls { get; set; }

    /// <summary><c>compression</c>: negotiate permessage-deflate with clients that offer it.</summary>
    public bool Compression { get; set; }

    /// <summary><c>same_origin</c>: a browser's Origin must be the request's Host.</summary>
    public bool SameOrigin { get; set; }

    /// <summary><c>allowed_origins</c>: when not empty, a browser's Origin must be one of these URLs.</summary>
    public List<string> AllowedOrigins { get; } = [];

    /// <summary>
    /// <c>handshake_timeout</c>: time a connection has to complete the HTTP upgrade. nats-server has
    /// no limit when it is not set; Courier bounds it by <see cref="DefaultHandshakeTimeout"/> then.
    /// </summary>
    public TimeSpan? HandshakeTimeout { get; set; }

    /// <summary>The handshake limit when none is configured.</summary>
    public static TimeSpan DefaultHandshakeTimeout { get; } = TimeSpan.FromSeconds(10);

    /// <summary><c>authorization.user</c>: replaces the server's authorization for WebSocket clients.</summary>
    public string? Username { get; set; }

    /// <summary><c>authorization.password</c>.</summary>
    public string? Password { get; set; }

    /// <summary><c>authorization.token</c>.</summary>
    public string? Token { get; set; }

    /// <summary><c>authorization.timeout</c>: the CONNECT timeout for WebSocket clients (else the server's).</summary>
    public TimeSpan? AuthTimeout { get; set; }

    /// <summary><c>jwt_cookie</c>: the cookie whose value is the client's JWT.</summary>
    public string? JwtCookie { get; set; }

    /// <summary><c>no_auth_user</c>: the user (of <c>authorization.users</c>) a client without credentials is.</summary>
    public string? NoAuthUser { get; set; }

    /// <summary>The block has its own authorization (nats-server's <c>authOverride</c>).</summary>
    public bool AuthOverride => Username is not null || Token is not null || NoAuthUser is not null;
}
