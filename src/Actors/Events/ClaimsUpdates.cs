using System.Text;
using Courier.Actors.Accounts;
using Courier.Actors.Server;
using Courier.Actors.Server.Identity;
using NATS.NKeys;

namespace Courier.Actors.Events;

/// <summary>
/// Account JWTs pushed to the system account in operator mode, answered as nats-server 2.9.10:
/// the full directory resolver takes <c>$SYS.REQ.CLAIMS.UPDATE</c> and
/// <c>$SYS.REQ.ACCOUNT.&lt;key&gt;.CLAIMS.UPDATE</c> (and the older <c>$SYS.ACCOUNT.&lt;key&gt;.CLAIMS.UPDATE</c>)
/// and stores the JWT; the cache resolver only updates accounts in use; MEMORY updates the accounts it holds.
/// A stored JWT applies from the next lookup: its limits and revocations to the next CONNECT.
/// </summary>
internal static class ClaimsUpdates
{
    /// <summary>The subject a full directory resolver takes any account's JWT on.</summary>
    public const string UpdateSubject = "$SYS.REQ.CLAIMS.UPDATE";

    /// <summary>The per-account subjects (new and old form), with the account key as a wildcard.</summary>
    public static readonly string[] AccountSubjects = ["$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE", "$SYS.ACCOUNT.*.CLAIMS.UPDATE"];

    /// <summary>Handles a push on <paramref name="subject"/>; the answer, or null when none is due.</summary>
    public static ClaimsUpdateResponse? Handle(OperatorTrust trust, AccountRegistry accounts, ClientRegistry registry, SystemEvents events, string subject, byte[] payload)
    {
        var tokens = subject.Split('.');
        string? subjectKey = tokens.Length switch
        {
            6 when tokens[2] == "ACCOUNT" => tokens[3], // $SYS.REQ.ACCOUNT.<key>.CLAIMS.UPDATE
            5 when tokens[1] == "ACCOUNT" => tokens[2], // $SYS.ACCOUNT.<key>.CLAIMS.UPDATE
            _ => null,
        };
        if (subjectKey is null && subject != UpdateSubject)
        {
            return null;
        }

        var resolver = trust.Resolver;
        if (resolver != AccountResolverKind.Full && subjectKey is null)
        {
            return null; // only the full resolver listens on $SYS.REQ.CLAIMS.UPDATE
        }

        var cache = resolver == AccountResolverKind.Cache ? " cache" : "";
        var jwt = Encoding.ASCII.GetString(payload).Trim();
        if (jwt.Length == 0 && resolver == AccountResolverKind.Memory)
        {
            return Error(events, subjectKey, "jwt update error", "request body is empty");
        }

        var claims = NatsJwt.Decode(jwt, IdentityJsonContext.Default.AccountClaims, PrefixByte.Operator, PrefixByte.Account, out var decodeError);
        if (claims is null)
        {
            return Error(events, resolver == AccountResolverKind.Memory ? subjectKey : "n/a", $"jwt update{cache} resulted in error", decodeError ?? "not an account JWT");
        }

        if (subjectKey is not null && claims.Subject != subjectKey)
        {
            return Error(events, subjectKey, $"jwt update{cache} resulted in error", "subject does not match jwt content");
        }

        var key = claims.Subject;
        if (resolver != AccountResolverKind.Full && accounts.Find(key) is null)
        {
            // MEMORY and cache update only the accounts this server has loaded.
            return Ok(events, key, resolver == AccountResolverKind.Cache ? "jwt update cache skipped" : "jwt update skipped");
        }

        if (trust.SaveIfNewer(key, jwt, claims) is { } saveError)
        {
            return Error(events, key, $"jwt update{cache} resulted in error", saveError);
        }

        CloseRevoked(registry, trust, key);

        return Ok(events, key, "jwt updated");
    }

    /// <summary>
    /// As nats-server's updateAccountClaims: the account's connected users that its JWT (the one the
    /// resolver holds now) revokes, or whose bearer token it no longer allows, are closed.
    /// </summary>
    private static void CloseRevoked(ClientRegistry registry, OperatorTrust trust, string account)
    {
        if (trust.LookupAccount(account, out _) is not { Nats: var nats })
        {
            return;
        }

        var disallowBearer = nats.Limits is { DisallowBearer: true };
        if (nats.Revocations is not { Count: > 0 } && !disallowBearer)
        {
            return;
        }

        foreach (var client in registry.Clients)
        {
            if (client.IsClosed || client.JwtAccount != account || client.ConnectOptions?.Jwt is not { Length: > 0 } userJwt)
            {
                continue;
            }

            var user = NatsJwt.Decode(userJwt, IdentityJsonContext.Default.UserClaims, PrefixByte.Account, PrefixByte.User, out _);
            if (user?.Nats is null || (user.Nats.BearerToken && disallowBearer))
            {
                client.SendError(Protocols.Nats.NatsErrors.AuthorizationViolation);
                client.RequestClose("Authentication Failure");
            }
            else if (OperatorTrust.IsRevoked(nats.Revocations, user.Subject, user.IssuedAt))
            {
                client.SendError(Protocols.Nats.NatsErrors.UserAuthenticationRevoked);
                client.RequestClose("Credentials Revoked");
            }
        }
    }

    private static ClaimsUpdateResponse Ok(SystemEvents events, string account, string message) => new()
    {
        Server = events.NextServer(),
        Data = new ClaimsUpdateResult { Account = account, Code = 200, Message = message },
    };

    private static ClaimsUpdateResponse Error(SystemEvents events, string? account, string message, string error) => new()
    {
        Server = events.NextServer(),
        Error = new ClaimsUpdateResult { Account = account, Code = 500, Description = $"{message} - {error}" },
    };
}
