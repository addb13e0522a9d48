namespace Courier.Actors.Server;

/// <summary>The outcome of checking a CONNECT's credentials.</summary>
internal readonly record struct AuthResult(bool Succeeded, string? User, Permissions? Permissions)
{
    public static AuthResult Denied => new(false, null, null);
}
