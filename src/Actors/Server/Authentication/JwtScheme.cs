using Courier.Actors.Accounts;
using Courier.Actors.Server.Identity;

namespace Courier.Actors.Server.Authentication;

/// <summary>
/// Operator mode: a user JWT signed by an account the operator trusts, and its signature of the nonce.
/// Each account JWT's users live in an account named by its public key, as nats-server names it.
/// </summary>
internal sealed class JwtScheme(OperatorTrust trust, Func<string, Account> accounts) : IAuthenticationScheme
{
    public AuthResult? Authenticate(in AuthRequest request)
    {
        var result = trust.Authenticate(request.Connect, request.Nonce, request.ConnectionType, request.RemoteIp, DateTimeOffset.UtcNow.ToUnixTimeSeconds());
        return result is { Succeeded: true, AccountKey: { } key } ? result with { Account = accounts(key) } : result;
    }
}
