namespace Courier.Actors.Server;

/// <summary>
/// nats-server's <c>leafnodes { listen | host/port, authorization { user, password, users, account,
/// timeout }, remotes [ ... ], reconnect }</c>. A port of 0 means no leaf node listener; remotes are
/// dialled whether or not there is one.
/// </summary>
public sealed class LeafNodeOptions
{
    /// <summary><c>leafnodes.host</c>: the leaf node listener's address (nats-server's default 0.0.0.0).</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary><c>leafnodes.port</c>: 0 means no listener, -1 a random free port.</summary>
    public int Port { get; set; }

    /// <summary><c>authorization.user</c>: the one user a leaf must CONNECT as (bound to <see cref="Account"/>).</summary>
    public string? Username { get; set; }

    /// <summary><c>authorization.password</c>.</summary>
    public string? Password { get; set; }

    /// <summary><c>authorization.account</c>: the account the single user's links are bound to (the global account when unset).</summary>
    public string? Account { get; set; }

    /// <summary><c>authorization.users</c>: each user's password and the account its links are bound to.</summary>
    public List<LeafNodeUser> Users { get; } = [];

    /// <summary><c>authorization.timeout</c>: time an accepted leaf has to send its CONNECT.</summary>
    public TimeSpan AuthTimeout { get; set; } = TimeSpan.FromSeconds(2); // nats-server's default: its AUTH_TIMEOUT, 2 s

    /// <summary><c>leafnodes.remotes</c>: the hubs this node dials as a leaf.</summary>
    public List<LeafNodeRemote> Remotes { get; } = [];

    /// <summary><c>leafnodes.reconnect</c>: the pause before dialling a lost or unreachable hub again (nats-server's default 1 s).</summary>
    public TimeSpan ReconnectInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// <c>leafnodes.tls</c>: TLS on accepted links. The hub's INFO goes out in the clear saying
    /// <c>tls_required</c>, then the handshake (nats-server 2.9's createLeafNode); <c>verify</c> requires a
    /// client certificate.
    /// </summary>
    public TlsOptions? Tls { get; set; }

    /// <summary>True when the leaf node listener is on.</summary>
    public bool Enabled => Port != 0;

    /// <summary>True when accepted leafs must authenticate with a user of <c>leafnodes.authorization</c>.</summary>
    public bool AuthRequired => Username is not null || Users.Count > 0;

    /// <summary>Whether <paramref name="other"/> configures the same leaf nodes (a reload that changes them is refused).</summary>
    public bool SameAs(LeafNodeOptions other) => Signature() == other.Signature();

    private string Signature()
    {
        var text = new System.Text.StringBuilder();
        text.Append(Host).Append('|').Append(Port).Append('|').Append(Username).Append('|').Append(Password).Append('|')
            .Append(Account).Append('|').Append(AuthTimeout).Append('|').Append(ReconnectInterval).Append('|')
            .Append(Tls?.CertFile).Append('|').Append(Tls?.Verify);
        foreach (var user in Users)
        {
            text.Append("|u:").Append(user);
        }

        foreach (var remote in Remotes)
        {
            text.Append("|r:").Append(remote.Account).Append(':').Append(remote.Credentials).Append(':').AppendJoin(',', remote.Urls)
                .Append(':').AppendJoin(',', remote.DenyImports).Append(':').AppendJoin(',', remote.DenyExports)
                .Append(':').Append(remote.Tls is null ? "-" : remote.Tls.CertFile + "," + remote.Tls.CaFile + "," + remote.Tls.Insecure);
        }

        return text.ToString();
    }
}

/// <summary>One user of <c>leafnodes.authorization.users</c>.</summary>
public sealed record LeafNodeUser(string Username, string? Password, string? Account);

/// <summary>One entry of <c>leafnodes.remotes</c>: a hub this node dials, and what the link may carry.</summary>
public sealed class LeafNodeRemote
{
    /// <summary><c>url</c> / <c>urls</c>: the hub's leaf node URLs (<c>nats-leaf://[user:pass@]host:port</c>), tried in turn.</summary>
    public List<Uri> Urls { get; } = [];

    /// <summary>
    /// <c>credentials</c> / <c>creds</c>: a <c>.creds</c> file (a user JWT and its nkey seed), read at each dial:
    /// the CONNECT carries the JWT and the seed's signature of the hub's nonce (operator mode on the hub).
    /// </summary>
    public string? Credentials { get; set; }

    /// <summary><c>account</c> / <c>local</c>: the local account the link is bound to (the global account when unset).</summary>
    public string? Account { get; set; }

    /// <summary><c>deny_imports</c>: subjects this node does not subscribe to on the hub (no LS+, no messages in).</summary>
    public List<string> DenyImports { get; } = [];

    /// <summary><c>deny_exports</c>: subjects this node does not publish to the hub (their messages stay here).</summary>
    public List<string> DenyExports { get; } = [];

    /// <summary>
    /// <c>tls { }</c> of the remote (or <see cref="RemoteTlsOptions.Default"/> for a <c>tls://</c> URL alone): the
    /// link starts TLS after the hub's INFO. Null: TLS only if the hub's INFO says <c>tls_required</c>
    /// (then with the system's roots), as nats-server.
    /// </summary>
    public RemoteTlsOptions? Tls { get; set; }
}
