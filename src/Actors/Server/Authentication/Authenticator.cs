using System.Buffers.Text;
using System.Collections.Concurrent;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Courier.Actors.Accounts;
using Courier.Actors.Server.Identity;
using Courier.Protocols.Nats;

namespace Courier.Actors.Server.Authentication;

/// <summary>
/// Checks whoever logs in (NATS, WebSocket and MQTT clients) against the authorization in force: an
/// immutable <see cref="AuthorizationSnapshot"/> of schemes, swapped whole on reload, so no CONNECT
/// waits for a lock and none sees half a reload. Also the INFO nonce, and the connection count of
/// operator-mode accounts (an account JWT's <c>limits.conn</c>).
/// </summary>
internal sealed class Authenticator
{
    private const int NonceRawLength = 11; // random bytes, as nats-server's nonceRawLen (15 characters of raw URL-safe base64)

    private readonly Func<string, Account> _accounts;
    private readonly MqttOptions? _mqtt;
    private readonly ConcurrentDictionary<string, int> _accountConnections = new(StringComparer.Ordinal);
    private AuthorizationSnapshot _snapshot;

    /// <param name="options">The server's options (their authorization part is copied into a snapshot).</param>
    /// <param name="trust">Operator mode's trusted keys and account resolver; null without an <c>operator</c>.</param>
    /// <param name="accounts">The account of a given name, made on first use.</param>
    public Authenticator(ServerOptions options, OperatorTrust? trust, Func<string, Account> accounts)
    {
        _accounts = accounts;
        _mqtt = options.Mqtt;
        Trust = trust;
        _snapshot = new AuthorizationSnapshot(options, trust, accounts);
    }

    /// <summary>Operator mode's trusted keys and account resolver; null without an <c>operator</c>.</summary>
    public OperatorTrust? Trust { get; }

    /// <summary>Whether a client must log in before anything else.</summary>
    public bool AuthRequired => Volatile.Read(ref _snapshot).AuthRequired;

    /// <summary>Whether INFO carries a nonce for the client to sign (nkey users or operator mode).</summary>
    public bool NonceRequired => Volatile.Read(ref _snapshot).NonceRequired;

    /// <summary>Puts <paramref name="next"/>'s authorization in force for every later login.</summary>
    public void Reload(ServerOptions next) => Volatile.Write(ref _snapshot, new AuthorizationSnapshot(next, Trust, _accounts));

    /// <summary>Checks a NATS (or WebSocket) client's CONNECT.</summary>
    public AuthResult Authenticate(ConnectOptions connect, X509Certificate2? certificate = null, bool webSocket = false, byte[]? nonce = null, string? remoteIp = null)
    {
        var snapshot = Volatile.Read(ref _snapshot);
        var request = new AuthRequest(connect, certificate, webSocket, nonce, remoteIp);
        if (webSocket && snapshot.WebSocket is { } webSocketSchemes)
        {
            return First(webSocketSchemes, request);
        }

        return snapshot.AuthRequired ? First(snapshot.Schemes, request) : new AuthResult(true, null, null);
    }

    /// <summary>
    /// An MQTT CONNECT's credentials, as nats-server: the <c>mqtt.authorization</c> user or token
    /// when set (the token is sent as the password); else, with <c>mqtt.tls.verify_and_map</c>, the
    /// client certificate's user; else <c>mqtt.no_auth_user</c> for a client
    /// without a user name; else the server's own users, user or token (the password doubling as the token).
    /// </summary>
    /// <remarks>
    /// In operator mode the password carries the user JWT (nats-server's mqttParseConnect sets it as
    /// JWT, token and password): a bearer JWT, as there is no nonce to sign.
    /// </remarks>
    public AuthResult AuthenticateMqtt(string? user, string? password, X509Certificate2? certificate = null, string? remoteIp = null, bool webSocket = false)
    {
        var snapshot = Volatile.Read(ref _snapshot);
        if (_mqtt?.Username is { } mqttUser)
        {
            return user == mqttUser && Secrets.Equal(_mqtt.Password, password) ? new AuthResult(true, user, null) : AuthResult.Denied;
        }

        if (_mqtt?.Token is { } token)
        {
            return Secrets.Equal(token, password) ? new AuthResult(true, null, null) : AuthResult.Denied;
        }

        if (_mqtt?.Tls is { MapCertificateToUser: true } && snapshot.Users.Length > 0)
        {
            // mqtt.tls.verify_and_map: the certificate alone names the user, as for NATS clients.
            return certificate is not null && CertificateUserMap.Find(certificate, snapshot.Users) is { } mapped
                ? Success(mapped, snapshot.DefaultPermissions, _accounts)
                : AuthResult.Denied;
        }

        if (user is null && _mqtt?.NoAuthUser is { } noAuthUser)
        {
            var entry = Array.Find(snapshot.Users, u => u.User == noAuthUser);
            return entry is null ? AuthResult.Denied : Success(entry, snapshot.DefaultPermissions, _accounts);
        }

        if (!snapshot.AuthRequired)
        {
            return new AuthResult(true, null, null);
        }

        var request = new AuthRequest(new ConnectOptions { User = user, Pass = password, AuthToken = password, Jwt = password }, null, webSocket, null, remoteIp, Mqtt: true);
        return First(snapshot.Schemes, request);
    }

    /// <summary>
    /// The log line of a refused CONNECT, as nats-server's authViolation: the nkey or the user it
    /// claimed to be (never a secret), or nothing more in operator mode.
    /// </summary>
    public string ErrorText(ConnectOptions connect)
    {
        var snapshot = Volatile.Read(ref _snapshot);
        return snapshot.OperatorMode ? "authentication error"
            : snapshot.NkeyUsers.Length > 0 ? $"authentication error - Nkey \"{connect.Nkey}\""
            : snapshot.Users.Length > 0 ? $"authentication error - User \"{connect.User}\""
            : "authentication error";
    }

    /// <summary>
    /// Counts a client into its operator-mode account unless the account JWT's <c>limits.conn</c> is
    /// reached (nats-server's MaxTotalConnectionsReached; -1 is unlimited). A client admitted is
    /// released with <see cref="ReleaseFromAccount"/> when it closes.
    /// </summary>
    public bool TryAdmitToAccount(string account)
    {
        var limit = Trust?.LookupAccount(account, out _)?.Nats.Limits?.Connections ?? -1;
        while (true)
        {
            var now = _accountConnections.GetOrAdd(account, 0);
            if (limit >= 0 && now >= limit)
            {
                return false;
            }

            if (_accountConnections.TryUpdate(account, now + 1, now))
            {
                return true;
            }
        }
    }

    /// <summary>A client admitted by <see cref="TryAdmitToAccount"/> has closed.</summary>
    public void ReleaseFromAccount(string account) =>
        _accountConnections.AddOrUpdate(account, 0, (_, n) => Math.Max(0, n - 1));

    /// <summary>A fresh INFO nonce: 11 random bytes as raw URL-safe base64 (the client signs these 15 ASCII bytes).</summary>
    public static string NewNonce()
    {
        Span<byte> raw = stackalloc byte[NonceRawLength];
        RandomNumberGenerator.Fill(raw);
        return Base64Url.EncodeToString(raw);
    }

    /// <summary>A configured user logged in: its permissions (or the default ones) and its account (null: the global account).</summary>
    internal static AuthResult Success(UserEntry user, Permissions? defaultPermissions, Func<string, Account> accounts) =>
        new(true, user.User, user.Permissions ?? defaultPermissions, user.Account is { } name ? accounts(name) : null);

    private static AuthResult First(IReadOnlyList<IAuthenticationScheme> schemes, in AuthRequest request)
    {
        foreach (var scheme in schemes)
        {
            if (scheme.Authenticate(request) is { } result)
            {
                return result;
            }
        }

        return AuthResult.Denied;
    }
}
