using Courier.Actors.Accounts;
using Courier.Actors.Server.Identity;

namespace Courier.Actors.Server.Authentication;

/// <summary>
/// The authorization options in force, immutable: a reload makes a new snapshot and swaps it in, so a
/// CONNECT is checked against one consistent set without a lock. Holds the schemes in nats-server's
/// order of precedence (processClientOrLeafAuthentication).
/// </summary>
internal sealed class AuthorizationSnapshot
{
    public AuthorizationSnapshot(ServerOptions options, OperatorTrust? trust, Func<string, Account> accounts)
    {
        Users = [.. options.Users];
        NkeyUsers = [.. options.NkeyUsers];
        DefaultPermissions = options.DefaultPermissions;
        NoAuthUser = options.NoAuthUser;
        AuthRequired = options.AuthRequired;
        NonceRequired = options.NonceRequired;
        OperatorMode = trust is not null;

        var schemes = new List<IAuthenticationScheme>();
        if (trust is not null)
        {
            schemes.Add(new JwtScheme(trust, accounts)); // operator mode: a user JWT is required, whatever else the CONNECT carries
        }
        else
        {
            if (NkeyUsers.Length > 0)
            {
                schemes.Add(new NkeyScheme(NkeyUsers, DefaultPermissions, accounts));
            }

            if (Users.Length > 0 && (options.Tls is { MapCertificateToUser: true } || options.WebSocket?.Tls is { MapCertificateToUser: true }))
            {
                // The listener's own block decides (nats-server's tlsMap: the websocket block's for WebSocket clients).
                schemes.Add(new CertificateScheme(Users, DefaultPermissions, accounts, options.Tls is { MapCertificateToUser: true }, options.WebSocket?.Tls is { MapCertificateToUser: true }));
            }

            if (NoAuthUser is not null)
            {
                schemes.Add(new NoAuthUserScheme(Users, NoAuthUser, DefaultPermissions, accounts));
            }
            else if (SystemAccountOnly(options))
            {
                // nats-server's configureAccounts: when the only configured account is the system account
                // (users given there to reach $SYS) and there is no authorization block, clients without
                // credentials still land in the global account, through an implicit no-auth user.
                var implicitUser = new UserEntry(ImplicitNoAuthUser, null, null, Account.GlobalName);
                schemes.Add(new NoAuthUserScheme([implicitUser], ImplicitNoAuthUser, null, accounts));
            }

            if (Users.Length > 0)
            {
                // nats-server compares a user's password with the client's as strings, so a user configured
                // without one logs in with its name alone; not where users map from TLS certificates.
                var certificates = options.Tls is { MapCertificateToUser: true } || options.WebSocket?.Tls is { MapCertificateToUser: true };
                schemes.Add(new UserListScheme(Users, DefaultPermissions, accounts, refuseUnknown: false, passwordlessUsers: !certificates));
            }

            if (options.Username is not null)
            {
                schemes.Add(new SingleUserScheme(options.Username, options.Password, DefaultPermissions));
            }

            if (options.Token is not null)
            {
                schemes.Add(new TokenScheme(options.Token, DefaultPermissions));
            }
        }

        Schemes = schemes;
        WebSocket = options.WebSocket is { AuthOverride: true } ws ? WebSocketSchemes(ws, accounts) : null;
    }

    /// <summary>The implicit no-auth user's name (nats-server makes up <c>nats-&lt;random&gt;</c>; this one cannot clash with a configured name's account).</summary>
    internal const string ImplicitNoAuthUser = "nats-implicit-no-auth";

    private static bool SystemAccountOnly(ServerOptions options) =>
        !options.AuthorizationBlock && options.Accounts.Count == 1 && options.Username is null && options.Token is null &&
        options.Accounts[0].Name == (options.SystemAccount ?? Broker.DefaultSystemAccount);

    /// <summary>Configured users with a password.</summary>
    public UserEntry[] Users { get; }

    /// <summary>Configured nkey users.</summary>
    public NkeyUserEntry[] NkeyUsers { get; }

    public Permissions? DefaultPermissions { get; }

    public string? NoAuthUser { get; }

    /// <summary>Whether a client must log in (a user, token, nkey user or operator is configured).</summary>
    public bool AuthRequired { get; }

    /// <summary>Whether INFO carries a nonce for the client to sign (nkey users or operator mode).</summary>
    public bool NonceRequired { get; }

    public bool OperatorMode { get; }

    /// <summary>The schemes tried in order for a NATS client; the first that answers decides.</summary>
    public IReadOnlyList<IAuthenticationScheme> Schemes { get; }

    /// <summary>With a <c>websocket {}</c> block's own authorization: the schemes for WebSocket clients instead.</summary>
    public IReadOnlyList<IAuthenticationScheme>? WebSocket { get; }

    // A WebSocket client when the websocket block has its own authorization: its user, password, token
    // and no_auth_user replace the server's; the users list still applies and, when it has them, refuses
    // an unknown user (nats-server's processClientOrLeafAuthentication with the websocket override).
    private IReadOnlyList<IAuthenticationScheme> WebSocketSchemes(WebSocketOptions ws, Func<string, Account> accounts)
    {
        var schemes = new List<IAuthenticationScheme>();
        if (ws.NoAuthUser is { } noAuthUser)
        {
            schemes.Add(new NoAuthUserScheme(Users, noAuthUser, DefaultPermissions, accounts, webSocket: true));
        }

        if (Users.Length > 0)
        {
            schemes.Add(new UserListScheme(Users, DefaultPermissions, accounts, refuseUnknown: true));
        }

        if (ws.Username is not null)
        {
            schemes.Add(new SingleUserScheme(ws.Username, ws.Password, null));
        }

        if (ws.Token is not null)
        {
            schemes.Add(new TokenScheme(ws.Token, null));
        }

        return schemes;
    }
}
