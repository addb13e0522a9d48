using Courier.Actors.Accounts;

namespace Courier.Actors.Server;

/// <summary>
/// The outcome of checking a CONNECT's credentials: the user, its permissions, and the account it
/// logs into (null: the global account <c>$G</c>). <see cref="Expires"/> is when a user JWT stops
/// being valid (the connection is closed then); <see cref="AccountKey"/> the public key of an
/// operator-mode user's account; <see cref="Failure"/> why a refusal was made, for the debug log
/// (never a secret).
/// </summary>
internal readonly record struct AuthResult(
    bool Succeeded,
    string? User,
    Permissions? Permissions,
    Account? Account = null,
    DateTimeOffset? Expires = null,
    string? AccountKey = null,
    string? Failure = null)
{
    public static AuthResult Denied => new(false, null, null);

    public static AuthResult Refused(string failure) => new(false, null, null, Failure: failure);
}
