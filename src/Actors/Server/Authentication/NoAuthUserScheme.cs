using Courier.Actors.Accounts;

namespace Courier.Actors.Server.Authentication;

/// <summary>
/// <c>no_auth_user</c>: a client that sends no credentials logs in as that configured user
/// (nats-server's processClientOrLeafAuthentication). A name that is no configured user passes on.
/// </summary>
/// <param name="users">The configured users.</param>
/// <param name="noAuthUser">The user a client without credentials logs in as.</param>
/// <param name="defaultPermissions">The permissions of a user configured without its own.</param>
/// <param name="accounts">The account of a given name.</param>
/// <param name="webSocket">
/// The <c>websocket {}</c> block's: it looks only at the user, password and token being absent, as nats-server's override does.
/// </param>
internal sealed class NoAuthUserScheme(UserEntry[] users, string noAuthUser, Permissions? defaultPermissions, Func<string, Account> accounts, bool webSocket = false) : IAuthenticationScheme
{
    public AuthResult? Authenticate(in AuthRequest request)
    {
        var connect = request.Connect;
        var anonymous = webSocket ? connect.User is null && connect.Pass is null && connect.AuthToken is null : request.HasNoCredentials;
        if (!anonymous)
        {
            return null;
        }

        foreach (var user in users)
        {
            if (user.User == noAuthUser)
            {
                return Authenticator.Success(user, defaultPermissions, accounts);
            }
        }

        return null;
    }
}
