using System.Text.Json;
using System.Text.Json.Serialization;

namespace Courier.Actors.Server.Identity;

/// <summary>
/// The claims every NATS JWT carries (github.com/nats-io/jwt v2 <c>ClaimsData</c>): who issued it,
/// whom it is about, and when it is valid. Times are Unix seconds; 0 means unset.
/// </summary>
internal abstract class JwtClaims
{
    [JsonPropertyName("jti")]
    public string? Id { get; set; }

    [JsonPropertyName("iat")]
    public long IssuedAt { get; set; }

    [JsonPropertyName("iss")]
    public string Issuer { get; set; } = "";

    [JsonPropertyName("sub")]
    public string Subject { get; set; } = "";

    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("exp")]
    public long Expires { get; set; }

    [JsonPropertyName("nbf")]
    public long NotBefore { get; set; }

    /// <summary>
    /// Null when the claim is valid at <paramref name="now"/> (Unix seconds), else why not, as the jwt
    /// library's time checks (both are blocking for authentication).
    /// </summary>
    public string? TimeError(long now) =>
        Expires > 0 && now > Expires ? "claim is expired"
        : NotBefore > 0 && NotBefore > now ? "claim is not yet valid"
        : null;
}

/// <summary>A user JWT (<c>nats.type: user</c>): issued by an account or one of its signing keys.</summary>
internal sealed class UserClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public UserNats Nats { get; set; } = new();
}

/// <summary>The <c>nats</c> part of a user JWT.</summary>
internal sealed class UserNats
{
    [JsonPropertyName("pub")]
    public JwtSubjectPermission? Pub { get; set; }

    [JsonPropertyName("sub")]
    public JwtSubjectPermission? Sub { get; set; }

    /// <summary>Source networks the user may connect from: an array of CIDRs (older JWTs: one comma-separated string).</summary>
    [JsonPropertyName("src")]
    public JsonElement Src { get; set; }

    /// <summary>No signature over the nonce is needed: the JWT alone authenticates.</summary>
    [JsonPropertyName("bearer_token")]
    public bool BearerToken { get; set; }

    [JsonPropertyName("allowed_connection_types")]
    public List<string>? AllowedConnectionTypes { get; set; }

    /// <summary>The account, when the JWT was issued by one of its signing keys.</summary>
    [JsonPropertyName("issuer_account")]
    public string? IssuerAccount { get; set; }

    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("version")]
    public int Version { get; set; }
}

/// <summary>An <c>allow</c>/<c>deny</c> pair of subject lists.</summary>
internal sealed class JwtSubjectPermission
{
    [JsonPropertyName("allow")]
    public List<string>? Allow { get; set; }

    [JsonPropertyName("deny")]
    public List<string>? Deny { get; set; }
}

/// <summary>The <c>pub</c>/<c>sub</c> pair of an account's default permissions or a signing key's template.</summary>
internal sealed class JwtPermissions
{
    [JsonPropertyName("pub")]
    public JwtSubjectPermission? Pub { get; set; }

    [JsonPropertyName("sub")]
    public JwtSubjectPermission? Sub { get; set; }
}

/// <summary>An account JWT (<c>nats.type: account</c>): issued by the operator or one of its signing keys.</summary>
internal sealed class AccountClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public AccountNats Nats { get; set; } = new();
}

/// <summary>The <c>nats</c> part of an account JWT.</summary>
internal sealed class AccountNats
{
    /// <summary>Keys that may issue the account's users: a public key, or <c>{ kind: user_scope, key, template }</c>.</summary>
    [JsonPropertyName("signing_keys")]
    public List<JsonElement>? SigningKeys { get; set; }

    /// <summary>User public key (or <c>*</c>) to the Unix time before which its JWTs are revoked.</summary>
    [JsonPropertyName("revocations")]
    public Dictionary<string, long>? Revocations { get; set; }

    [JsonPropertyName("limits")]
    public AccountLimits? Limits { get; set; }

    [JsonPropertyName("default_permissions")]
    public JwtPermissions? DefaultPermissions { get; set; }

    [JsonPropertyName("imports")]
    public List<JwtImport>? Imports { get; set; }

    [JsonPropertyName("exports")]
    public List<JwtExport>? Exports { get; set; }

    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("version")]
    public int Version { get; set; }
}

/// <summary>An account JWT's export: a <c>stream</c> or <c>service</c> subject, public unless <c>token_req</c>.</summary>
internal sealed class JwtExport
{
    [JsonPropertyName("subject")]
    public string? Subject { get; set; }

    [JsonPropertyName("type")]
    public string? Type { get; set; }

    /// <summary>Importers need an activation token (not supported: no account may import it).</summary>
    [JsonPropertyName("token_req")]
    public bool TokenRequired { get; set; }

    /// <summary><c>Singleton</c> (default), <c>Stream</c> or <c>Chunked</c>.</summary>
    [JsonPropertyName("response_type")]
    public string? ResponseType { get; set; }
}

/// <summary>
/// An account JWT's import from <c>account</c>: its <c>subject</c>, mapped to <c>local_subject</c>
/// (or, deprecated, a stream's prefix or a service's remote subject in <c>to</c>).
/// </summary>
internal sealed class JwtImport
{
    [JsonPropertyName("subject")]
    public string? Subject { get; set; }

    [JsonPropertyName("account")]
    public string? Account { get; set; }

    [JsonPropertyName("to")]
    public string? To { get; set; }

    [JsonPropertyName("local_subject")]
    public string? LocalSubject { get; set; }

    [JsonPropertyName("type")]
    public string? Type { get; set; }
}

/// <summary>An account's limits (-1 is unlimited, as the jwt library's defaults).</summary>
internal sealed class AccountLimits
{
    /// <summary>Client connections at once.</summary>
    [JsonPropertyName("conn")]
    public long Connections { get; set; } = -1;

    /// <summary>Whether users of the account may authenticate with bearer tokens.</summary>
    [JsonPropertyName("disallow_bearer")]
    public bool DisallowBearer { get; set; }

    [JsonPropertyName("subs")]
    public long Subscriptions { get; set; } = -1;

    [JsonPropertyName("payload")]
    public long Payload { get; set; } = -1;

    [JsonPropertyName("mem_storage")]
    public long MemoryStorage { get; set; }

    [JsonPropertyName("disk_storage")]
    public long DiskStorage { get; set; }

    [JsonPropertyName("streams")]
    public long Streams { get; set; }

    [JsonPropertyName("consumer")]
    public long Consumers { get; set; }

    [JsonPropertyName("max_bytes_required")]
    public bool MaxBytesRequired { get; set; }
}

/// <summary>An operator JWT (<c>nats.type: operator</c>): self-signed, the root of trust.</summary>
internal sealed class OperatorClaims : JwtClaims
{
    [JsonPropertyName("nats")]
    public OperatorNats Nats { get; set; } = new();
}

/// <summary>The <c>nats</c> part of an operator JWT.</summary>
internal sealed class OperatorNats
{
    /// <summary>Keys besides the operator's own that may issue accounts.</summary>
    [JsonPropertyName("signing_keys")]
    public List<string>? SigningKeys { get; set; }

    [JsonPropertyName("system_account")]
    public string? SystemAccount { get; set; }

    /// <summary>Only the signing keys may issue accounts, not the operator's own key.</summary>
    [JsonPropertyName("strict_signing_key_usage")]
    public bool StrictSigningKeyUsage { get; set; }

    [JsonPropertyName("account_server_url")]
    public string? AccountServerUrl { get; set; }

    [JsonPropertyName("type")]
    public string? Type { get; set; }

    [JsonPropertyName("version")]
    public int Version { get; set; }
}

/// <summary>The JOSE header of a NATS JWT.</summary>
internal sealed class JwtHeader
{
    [JsonPropertyName("typ")]
    public string? Type { get; set; }

    [JsonPropertyName("alg")]
    public string? Algorithm { get; set; }
}

/// <summary>Source-generated (de)serialization of the JWT parts.</summary>
[JsonSourceGenerationOptions(DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull)]
[JsonSerializable(typeof(JwtHeader))]
[JsonSerializable(typeof(UserClaims))]
[JsonSerializable(typeof(AccountClaims))]
[JsonSerializable(typeof(OperatorClaims))]
internal sealed partial class IdentityJsonContext : JsonSerializerContext;
