using Courier.Actors.Accounts;

namespace Courier.Actors.Server.Authentication;

/// <summary>
/// <c>authorization.users</c> with passwords: a CONNECT naming a configured user with its password. An
/// unknown user or a wrong password passes to the next scheme, or is refused where the users list is
/// the last word (a WebSocket block's own authorization).
/// </summary>
internal sealed class UserListScheme(UserEntry[] users, Permissions? defaultPermissions, Func<string, Account> accounts, bool refuseUnknown, bool passwordlessUsers = false) : IAuthenticationScheme
{
    public AuthResult? Authenticate(in AuthRequest request)
    {
        if (request.Connect.User is not { } name)
        {
            return null;
        }

        foreach (var user in users)
        {
            // nats-server compares the two as strings: no password and an empty one are the same.
            if (user.User == name && (Secrets.Equal(user.Password, request.Connect.Pass) || (passwordlessUsers && string.IsNullOrEmpty(user.Password) && string.IsNullOrEmpty(request.Connect.Pass))))
            {
                return Authenticator.Success(user, defaultPermissions, accounts);
            }
        }

        return refuseUnknown ? AuthResult.Denied : null;
    }
}
