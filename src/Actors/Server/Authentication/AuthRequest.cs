using System.Security.Cryptography.X509Certificates;
using Courier.Protocols.Nats;

namespace Courier.Actors.Server.Authentication;

/// <summary>
/// What a client presents to log in: its CONNECT, the certificate of its TLS handshake, whether it came
/// over WebSocket, the nonce its INFO carried (nkey and JWT users sign it) and its address (a user
/// JWT's source networks).
/// </summary>
internal readonly record struct AuthRequest(ConnectOptions Connect, X509Certificate2? Certificate, bool WebSocket, byte[]? Nonce, string? RemoteIp, bool Mqtt = false)
{
    /// <summary>The connection type a user JWT's <c>allowed_connection_types</c> is checked against (the jwt library's names).</summary>
    public string ConnectionType => Mqtt ? (WebSocket ? "MQTT_WS" : "MQTT") : WebSocket ? "WEBSOCKET" : "STANDARD";

    /// <summary>No credentials at all: the case <c>no_auth_user</c> answers (an MQTT password doubles as token and JWT).</summary>
    public bool HasNoCredentials =>
        string.IsNullOrEmpty(Connect.User) && string.IsNullOrEmpty(Connect.Pass) && string.IsNullOrEmpty(Connect.AuthToken)
        && string.IsNullOrEmpty(Connect.Nkey) && string.IsNullOrEmpty(Connect.Jwt);
}

/// <summary>
/// One way of logging in (users and passwords, a token, nkeys, client certificates, JWTs ...), over the
/// authorization options of one <see cref="AuthorizationSnapshot"/>.
/// </summary>
internal interface IAuthenticationScheme
{
    /// <summary>This scheme's answer, or null when the request is not one for it (the next scheme decides).</summary>
    AuthResult? Authenticate(in AuthRequest request);
}
