namespace Courier.Actors.Server;

/// <summary>
/// JWT operator mode (nats-server's <c>operator</c>, <c>system_account</c>, <c>resolver</c>,
/// <c>resolver_preload</c>): clients authenticate with a user JWT issued by an account that one of
/// the trusted operators issued. Null in <see cref="ServerOptions.Operator"/> without an <c>operator</c>.
/// </summary>
public sealed class OperatorOptions
{
    /// <summary>The trusted operators' JWTs (already checked: self-signed operator claims).</summary>
    public List<string> OperatorJwts { get; } = [];

    /// <summary><c>system_account</c>: the system account's public key; the operator JWT's when not configured.</summary>
    public string? SystemAccount { get; set; }

    /// <summary><c>resolver</c>: where account JWTs are looked up.</summary>
    public AccountResolverKind Resolver { get; set; } = AccountResolverKind.Memory;

    /// <summary><c>resolver.dir</c> for the <c>full</c> and <c>cache</c> directory resolvers: one <c>&lt;account&gt;.jwt</c> file per account.</summary>
    public string? ResolverDirectory { get; set; }

    /// <summary><c>resolver_preload</c>: account public key to account JWT.</summary>
    public Dictionary<string, string> Preload { get; } = new(StringComparer.Ordinal);
}

/// <summary>nats-server's account resolvers.</summary>
public enum AccountResolverKind
{
    /// <summary><c>resolver: MEMORY</c>: only the preloaded accounts.</summary>
    Memory,

    /// <summary><c>resolver: { type: full, dir }</c>: every account's JWT in the directory, updates stored.</summary>
    Full,

    /// <summary><c>resolver: { type: cache, dir }</c>: the accounts' JWTs the directory holds.</summary>
    Cache,
}

/// <summary>
/// One entry of <c>authorization.users</c>, or of an account's <c>users</c> (then <see cref="Account"/>
/// names it), that authenticates with an nkey (a signature over the INFO nonce).
/// </summary>
public sealed record NkeyUserEntry(string Nkey, Permissions? Permissions, string? Account = null);
