using System.Collections.Concurrent;
using System.Net;
using System.Text;
using System.Text.Json;
using Courier.Protocols.Nats;
using NATS.NKeys;

namespace Courier.Actors.Server.Identity;

/// <summary>
/// JWT operator mode: the trusted operators' keys, the account resolver, and the check of a user
/// JWT's whole chain (nats-server's processClientOrLeafAuthentication with trustedKeys): user JWT
/// issued by its account or one of the account's signing keys, the account JWT issued by a trusted
/// operator or one of its signing keys, none expired, the user not revoked, its signature over the
/// INFO nonce (unless a bearer token), its connection type and source network allowed.
/// </summary>
internal sealed class OperatorTrust
{
    private readonly HashSet<string> _trustedKeys = new(StringComparer.Ordinal);
    private readonly OperatorOptions _options;
    private readonly ConcurrentDictionary<string, string> _stored = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, (string Jwt, AccountClaims Claims)> _decoded = new(StringComparer.Ordinal);

    public OperatorTrust(OperatorOptions options)
    {
        _options = options;
        foreach (var jwt in options.OperatorJwts)
        {
            var claims = NatsJwt.Decode(jwt, IdentityJsonContext.Default.OperatorClaims, PrefixByte.Operator, PrefixByte.Operator, out var error)
                ?? throw new ArgumentException($"error parsing operator JWT: {error}", nameof(options));
            if (claims.Nats is not { StrictSigningKeyUsage: true })
            {
                _trustedKeys.Add(claims.Subject);
            }

            foreach (var key in claims.Nats?.SigningKeys ?? [])
            {
                _trustedKeys.Add(key);
            }

            SystemAccount ??= claims.Nats?.SystemAccount;
        }

        SystemAccount = options.SystemAccount ?? SystemAccount;
        if (options.ResolverDirectory is { } dir)
        {
            Directory.CreateDirectory(dir); // as nats-server's directory store, created when missing
        }

        foreach (var (account, jwt) in options.Preload)
        {
            _stored[account] = jwt;
        }
    }

    /// <summary>The system account's public key, if any (configured, or named by the operator JWT).</summary>
    public string? SystemAccount { get; }

    /// <summary>Whether <paramref name="issuer"/> may issue accounts: an operator or one of its signing keys.</summary>
    public bool IsTrustedIssuer(string issuer) => _trustedKeys.Contains(issuer);

    /// <summary>
    /// The account's claims, from the resolver (preloaded, or its directory's <c>&lt;key&gt;.jwt</c>),
    /// decoded once per distinct JWT. Null and why when it is unknown or not valid.
    /// </summary>
    public AccountClaims? LookupAccount(string publicKey, out string? error)
    {
        error = null;
        if (!NatsJwt.IsPublicKey(PrefixByte.Account, publicKey))
        {
            error = "will only fetch valid account keys";
            return null;
        }

        var jwt = Fetch(publicKey);
        if (jwt is null)
        {
            error = "account not found";
            return null;
        }

        if (_decoded.TryGetValue(publicKey, out var cached) && cached.Jwt == jwt)
        {
            return cached.Claims;
        }

        var claims = NatsJwt.Decode(jwt, IdentityJsonContext.Default.AccountClaims, PrefixByte.Operator, PrefixByte.Account, out error);
        if (claims is null)
        {
            return null;
        }

        if (claims.Nats is null)
        {
            error = "no nats claims";
            return null;
        }

        if (claims.Subject != publicKey)
        {
            error = "account name mismatch";
            return null;
        }

        if (!IsTrustedIssuer(claims.Issuer))
        {
            error = "account not trusted";
            return null;
        }

        _decoded[publicKey] = (jwt, claims);
        return claims;
    }

    private string? Fetch(string publicKey)
    {
        if (_options.ResolverDirectory is { } dir)
        {
            var path = Path.Combine(dir, publicKey + ".jwt");
            try
            {
                return File.ReadAllText(path).Trim();
            }
            catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException)
            {
            }
            catch (IOException)
            {
            }
        }

        return _stored.TryGetValue(publicKey, out var jwt) ? jwt : null;
    }

    /// <summary>
    /// Checks a CONNECT's user JWT (<paramref name="connect"/>'s <c>jwt</c> and <c>sig</c>) for a client
    /// of <paramref name="connectionType"/> (the jwt library's STANDARD, WEBSOCKET, MQTT, MQTT_WS) from
    /// <paramref name="remoteIp"/>, at <paramref name="now"/> (Unix seconds).
    /// </summary>
    public AuthResult Authenticate(ConnectOptions connect, byte[]? nonce, string connectionType, string? remoteIp, long now)
    {
        if (string.IsNullOrEmpty(connect.Jwt))
        {
            return AuthResult.Refused("Authentication requires a user JWT");
        }

        var user = NatsJwt.Decode(connect.Jwt, IdentityJsonContext.Default.UserClaims, PrefixByte.Account, PrefixByte.User, out var error);
        if (user is null)
        {
            return AuthResult.Refused($"User JWT not valid: {error}");
        }

        if (user.Nats is null)
        {
            return AuthResult.Refused("User JWT not valid: no nats claims");
        }

        if (user.TimeError(now) is { } timeError)
        {
            return AuthResult.Refused($"User JWT no longer valid: {timeError}");
        }

        if (!ConnectionTypeAllowed(user.Nats.AllowedConnectionTypes, connectionType, out var typeFailure))
        {
            return AuthResult.Refused(typeFailure);
        }

        var issuer = string.IsNullOrEmpty(user.Nats.IssuerAccount) ? user.Issuer : user.Nats.IssuerAccount;
        var account = LookupAccount(issuer, out error);
        if (account is null)
        {
            return AuthResult.Refused($"Account JWT lookup error: {error}");
        }

        if (!IssuedBy(account, user, out var scope))
        {
            return AuthResult.Refused("User JWT issuer is not known");
        }

        if (scope is not null && (user.Nats.Pub is not null || user.Nats.Sub is not null))
        {
            return AuthResult.Refused("User JWT is not valid: scoped users require no permissions or limits set");
        }

        if (account.TimeError(now) is not null)
        {
            return AuthResult.Refused("Account JWT has expired");
        }

        if (user.Nats.BearerToken && account.Nats.Limits is { DisallowBearer: true })
        {
            return AuthResult.Refused("Account does not allow bearer token");
        }

        if (!user.Nats.BearerToken && SignatureFailure(user.Subject, connect.Sig, nonce) is { } signatureFailure)
        {
            return AuthResult.Refused(signatureFailure);
        }

        if (IsRevoked(account.Nats.Revocations, user.Subject, user.IssuedAt))
        {
            return AuthResult.Refused("User authentication revoked");
        }

        if (!SourceAllowed(user.Nats.Src, remoteIp))
        {
            return AuthResult.Refused($"Bad src Ip {remoteIp}");
        }

        var permissions = ToPermissions(scope?.Pub ?? user.Nats.Pub, scope?.Sub ?? user.Nats.Sub)
            ?? ToPermissions(account.Nats.DefaultPermissions?.Pub, account.Nats.DefaultPermissions?.Sub);
        DateTimeOffset? expires = user.Expires > 0 ? DateTimeOffset.FromUnixTimeSeconds(user.Expires) : null;
        return new AuthResult(true, user.Subject, permissions, Expires: expires, AccountKey: account.Subject);
    }

    /// <summary>Null when <paramref name="sig"/> is <paramref name="publicKey"/>'s signature of the nonce, else why not (nats-server's debug texts).</summary>
    public static string? SignatureFailure(string publicKey, string? sig, byte[]? nonce)
    {
        if (string.IsNullOrEmpty(sig))
        {
            return "Signature missing";
        }

        if (NatsJwt.DecodeSignature(sig) is not { } signature)
        {
            return "Signature not valid base64";
        }

        if (!NatsJwt.IsPublicKey(PrefixByte.User, publicKey))
        {
            return "User nkey not valid: invalid public key";
        }

        return nonce is null || !NatsJwt.Verify(publicKey, nonce, signature) ? "Signature not verified" : null;
    }

    /// <summary>
    /// Whether the account issued <paramref name="user"/>: its own key, or one of its signing keys (a
    /// scoped one gives its template's permissions in <paramref name="scope"/>).
    /// </summary>
    private static bool IssuedBy(AccountClaims account, UserClaims user, out JwtPermissions? scope)
    {
        scope = null;
        if (user.Issuer == account.Subject)
        {
            return true;
        }

        foreach (var key in account.Nats.SigningKeys ?? [])
        {
            if (key.ValueKind == JsonValueKind.String && key.GetString() == user.Issuer)
            {
                return true;
            }

            if (key.ValueKind == JsonValueKind.Object && key.TryGetProperty("key", out var k) && k.ValueKind == JsonValueKind.String &&
                k.GetString() == user.Issuer)
            {
                scope = key.TryGetProperty("template", out var template) && template.ValueKind == JsonValueKind.Object
                    ? template.Deserialize(IdentityJsonContext.Default.JwtPermissions) ?? new JwtPermissions()
                    : new JwtPermissions();
                return true;
            }
        }

        return false;
    }

    /// <summary>nats-server's isRevoked: revoked when the user's (or <c>*</c>'s) revocation time is at or after the JWT's issue time.</summary>
    internal static bool IsRevoked(Dictionary<string, long>? revocations, string subject, long issuedAt)
    {
        if (revocations is null || revocations.Count == 0)
        {
            return false;
        }

        return (revocations.TryGetValue(subject, out var t) && t >= issuedAt) ||
               (revocations.TryGetValue("*", out var all) && all >= issuedAt);
    }

    /// <summary>The JWT's allowed connection types (unknown names ignored unless none is known); empty allows all.</summary>
    private static bool ConnectionTypeAllowed(List<string>? allowed, string connectionType, out string failure)
    {
        failure = "Connection type not allowed";
        if (allowed is null || allowed.Count == 0)
        {
            return true;
        }

        var known = 0;
        foreach (var type in allowed)
        {
            var upper = type?.ToUpperInvariant();
            if (upper is "STANDARD" or "WEBSOCKET" or "LEAFNODE" or "LEAFNODE_WS" or "MQTT" or "MQTT_WS")
            {
                known++;
                if (upper == connectionType)
                {
                    return true;
                }
            }
        }

        if (known == 0)
        {
            failure = "invalid connection types";
        }

        return false;
    }

    /// <summary>nats-server's validateSrc: no networks allows all; else the client's address must be in one.</summary>
    private static bool SourceAllowed(JsonElement src, string? remoteIp)
    {
        var networks = new List<string>();
        if (src.ValueKind == JsonValueKind.Array)
        {
            foreach (var item in src.EnumerateArray())
            {
                if (item.ValueKind == JsonValueKind.String && item.GetString() is { Length: > 0 } s)
                {
                    networks.Add(s.Trim());
                }
            }
        }
        else if (src.ValueKind == JsonValueKind.String && src.GetString() is { Length: > 0 } list)
        {
            foreach (var s in list.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            {
                networks.Add(s);
            }
        }

        if (networks.Count == 0)
        {
            return true;
        }

        if (string.IsNullOrEmpty(remoteIp) || !IPAddress.TryParse(remoteIp, out var ip))
        {
            return false;
        }

        foreach (var cidr in networks)
        {
            if (!IPNetwork.TryParse(cidr, out var network))
            {
                return false; // as nats-server: a JWT with a bad network is not valid
            }

            if (network.Contains(ip))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>nats-server's buildPermissionsFromJwt: null when neither list says anything.</summary>
    private static Permissions? ToPermissions(JwtSubjectPermission? pub, JwtSubjectPermission? sub)
    {
        var publish = ToSubjectPermission(pub);
        var subscribe = ToSubjectPermission(sub);
        return publish is null && subscribe is null ? null : new Permissions(publish, subscribe);
    }

    private static SubjectPermission? ToSubjectPermission(JwtSubjectPermission? p)
    {
        var allow = Subjects(p?.Allow);
        var deny = Subjects(p?.Deny);
        return allow is null && deny is null ? null : new SubjectPermission(allow, deny);
    }

    // The non-empty subjects of a JWT's list; null when there are none.
    private static List<string>? Subjects(List<string>? list)
    {
        List<string>? subjects = null;
        foreach (var subject in list ?? [])
        {
            if (!string.IsNullOrWhiteSpace(subject))
            {
                (subjects ??= []).Add(subject);
            }
        }

        return subjects;
    }

    /// <summary>
    /// The accounts the resolver knows at startup (preloaded, or in its directory) as account options:
    /// their JWTs' exports, imports and JetStream limits, named by public key, for the account registry
    /// to link (nats-server's UpdateAccountClaims). Accounts that are not valid are left out.
    /// </summary>
    public List<AccountOptions> KnownAccounts()
    {
        var keys = new SortedSet<string>(_stored.Keys, StringComparer.Ordinal);
        if (_options.ResolverDirectory is { } dir && Directory.Exists(dir))
        {
            foreach (var file in Directory.EnumerateFiles(dir, "*.jwt"))
            {
                keys.Add(Path.GetFileNameWithoutExtension(file));
            }
        }

        var accounts = new List<AccountOptions>();
        foreach (var key in keys)
        {
            if (LookupAccount(key, out _) is { } claims)
            {
                accounts.Add(ToAccountOptions(claims));
            }
        }

        return accounts;
    }

    /// <summary>The options an account's JWT (the one the resolver holds now) gives it; null when there is none.</summary>
    public AccountOptions? AccountOptionsFor(string accountKey) =>
        LookupAccount(accountKey, out _) is { } claims ? ToAccountOptions(claims) : null;

    private static AccountOptions ToAccountOptions(AccountClaims claims)
    {
        var account = new AccountOptions(claims.Subject)
        {
            NameTag = string.IsNullOrEmpty(claims.Name) ? null : claims.Name,
            DefaultPermissions = ToPermissions(claims.Nats.DefaultPermissions?.Pub, claims.Nats.DefaultPermissions?.Sub),
        };
        foreach (var export in claims.Nats.Exports ?? [])
        {
            if (string.IsNullOrEmpty(export?.Subject))
            {
                continue;
            }

            var service = string.Equals(export.Type, "service", StringComparison.OrdinalIgnoreCase);
            var responseType = export.ResponseType?.ToUpperInvariant() switch
            {
                "STREAM" => ServiceResponseType.Streamed,
                "CHUNKED" => ServiceResponseType.Chunked,
                _ => ServiceResponseType.Singleton,
            };

            // token_req: only accounts with an activation token may import; Courier checks none, so none may.
            account.Exports.Add(new ExportOptions(export.Subject, service, responseType, export.TokenRequired ? [] : null));
        }

        foreach (var import in claims.Nats.Imports ?? [])
        {
            if (string.IsNullOrEmpty(import?.Subject) || string.IsNullOrEmpty(import.Account))
            {
                continue;
            }

            var local = string.IsNullOrEmpty(import.LocalSubject) ? null : import.LocalSubject;
            account.Imports.Add(string.Equals(import.Type, "service", StringComparison.OrdinalIgnoreCase)
                ? local is not null
                    ? new ImportOptions(true, import.Account, import.Subject, local, null)
                    : new ImportOptions(true, import.Account, string.IsNullOrEmpty(import.To) ? import.Subject : import.To, import.Subject, null)
                : new ImportOptions(false, import.Account, import.Subject, local, local is null && !string.IsNullOrEmpty(import.To) ? import.To : null));
        }

        if (claims.Nats.Limits is { } limits && (limits.MemoryStorage != 0 || limits.DiskStorage != 0))
        {
            account.JetStream = new AccountJetStreamLimits(limits.MemoryStorage, limits.DiskStorage,
                (int)Math.Clamp(limits.Streams, -1, int.MaxValue), (int)Math.Clamp(limits.Consumers, -1, int.MaxValue), limits.MaxBytesRequired);
        }

        return account;
    }

    /// <summary>The resolver: MEMORY, or a full or cache directory.</summary>
    public AccountResolverKind Resolver => _options.Resolver;

    /// <summary>Whether the resolver holds a JWT for <paramref name="publicKey"/>.</summary>
    public bool Holds(string publicKey) => Fetch(publicKey) is not null;

    /// <summary>
    /// Stores a pushed account JWT unless the resolver holds the same one or a newer one (nats-server's
    /// DirJWTStore.saveIfNewer). Null when stored or kept, else why not.
    /// </summary>
    public string? SaveIfNewer(string publicKey, string jwt, AccountClaims claims)
    {
        if (Fetch(publicKey) is { } existing &&
            NatsJwt.Decode(existing, IdentityJsonContext.Default.AccountClaims, PrefixByte.Operator, PrefixByte.Account, out _) is { } current)
        {
            if (current.Id == claims.Id || current.IssuedAt > claims.IssuedAt)
            {
                return null;
            }

            if (current.Subject != claims.Subject)
            {
                return "subject of existing and new jwt do not match";
            }
        }

        try
        {
            Store(publicKey, jwt);
            return null;
        }
        catch (IOException e)
        {
            return e.Message;
        }
        catch (UnauthorizedAccessException e)
        {
            return e.Message;
        }
    }

    /// <summary>Stores an account JWT pushed at runtime (the full directory resolver writes it to its directory).</summary>
    public void Store(string publicKey, string jwt)
    {
        _stored[publicKey] = jwt;
        if (_options is { Resolver: AccountResolverKind.Full or AccountResolverKind.Cache, ResolverDirectory: { } dir })
        {
            File.WriteAllText(Path.Combine(dir, publicKey + ".jwt"), jwt, Encoding.ASCII);
        }
    }
}
