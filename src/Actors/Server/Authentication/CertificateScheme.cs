using Courier.Actors.Accounts;

namespace Courier.Actors.Server.Authentication;

/// <summary>
/// <c>tls { verify_and_map }</c> with users configured: the client certificate alone names the user
/// (nats-server's checkClientTLSCertSubject); one that names no configured user is refused. The
/// listener's own block decides: the websocket block's for WebSocket clients.
/// </summary>
internal sealed class CertificateScheme(UserEntry[] users, Permissions? defaultPermissions, Func<string, Account> accounts, bool clients, bool webSocketClients) : IAuthenticationScheme
{
    public AuthResult? Authenticate(in AuthRequest request)
    {
        if (!(request.WebSocket ? webSocketClients : clients))
        {
            return null;
        }

        return request.Certificate is not null && CertificateUserMap.Find(request.Certificate, users) is { } mapped
            ? Authenticator.Success(mapped, defaultPermissions, accounts)
            : AuthResult.Denied;
    }
}
