namespace Courier.Actors.Server.Authentication;

/// <summary><c>authorization { user, password }</c> (or the <c>--user/--pass</c> flags): the one configured user.</summary>
internal sealed class SingleUserScheme(string user, string? password, Permissions? permissions) : IAuthenticationScheme
{
    public AuthResult? Authenticate(in AuthRequest request) =>
        request.Connect.User == user && Secrets.Equal(password, request.Connect.Pass) ? new AuthResult(true, user, permissions) : null;
}
