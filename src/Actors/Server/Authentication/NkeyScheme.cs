using Courier.Actors.Accounts;
using Courier.Actors.Server.Identity;

namespace Courier.Actors.Server.Authentication;

/// <summary>NKey users: a CONNECT's <c>nkey</c> must be configured and its <c>sig</c> sign this client's INFO nonce.</summary>
internal sealed class NkeyScheme(NkeyUserEntry[] users, Permissions? defaultPermissions, Func<string, Account> accounts) : IAuthenticationScheme
{
    public AuthResult? Authenticate(in AuthRequest request)
    {
        if (request.Connect.Nkey is not { } nkey)
        {
            return null;
        }

        NkeyUserEntry? entry = null;
        foreach (var candidate in users)
        {
            if (candidate.Nkey == nkey)
            {
                entry = candidate;
                break;
            }
        }

        if (entry is null)
        {
            return AuthResult.Denied;
        }

        if (OperatorTrust.SignatureFailure(entry.Nkey, request.Connect.Sig, request.Nonce) is { } failure)
        {
            return AuthResult.Refused(failure);
        }

        return new AuthResult(true, entry.Nkey, entry.Permissions ?? defaultPermissions, entry.Account is { } name ? accounts(name) : null);
    }
}
