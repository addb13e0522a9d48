using Courier.Actors.Accounts;

namespace Courier.Actors.Server;

/// <summary>
/// The outcome of checking a CONNECT's credentials: the user, its permissions, and the account it
/// logs into (null: the global account <c>$G</c>).
/// </summary>
internal readonly record struct AuthResult(bool Succeeded, string? User, Permissions? Permissions, Account? Account = null)
{
    public static AuthResult Denied => new(false, null, null);
}
