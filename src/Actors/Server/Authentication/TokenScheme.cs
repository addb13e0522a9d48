namespace Courier.Actors.Server.Authentication;

/// <summary><c>authorization { token }</c> (or <c>--auth</c>): a CONNECT's <c>auth_token</c>.</summary>
internal sealed class TokenScheme(string token, Permissions? permissions) : IAuthenticationScheme
{
    public AuthResult? Authenticate(in AuthRequest request) =>
        Secrets.Equal(token, request.Connect.AuthToken) ? new AuthResult(true, null, permissions) : null;
}
