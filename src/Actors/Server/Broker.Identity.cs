using System.Buffers.Text;
using System.Collections.Concurrent;
using System.Security.Cryptography;
using Courier.Actors.Server.Identity;
using Courier.Protocols.Nats;

namespace Courier.Actors.Server;

/// <summary>NKey users and JWT operator mode: the INFO nonce and the checks of signatures over it.</summary>
public sealed partial class Broker
{
    private const int NonceRawLength = 11; // random bytes, as nats-server's nonceRawLen (15 characters of raw URL-safe base64)

    /// <summary>Connections now per operator-mode account (public key), for the account JWT's <c>limits.conn</c>.</summary>
    private readonly ConcurrentDictionary<string, int> _accountConnections = new(StringComparer.Ordinal);

    /// <summary>
    /// Counts a client into its operator-mode account unless the account JWT's <c>limits.conn</c> is
    /// reached (nats-server's MaxTotalConnectionsReached; -1 is unlimited). A client admitted is
    /// released with <see cref="ReleaseFromAccount"/> when it closes.
    /// </summary>
    internal bool TryAdmitToAccount(string account)
    {
        var limit = Trust?.LookupAccount(account, out _)?.Nats.Limits?.Connections ?? -1;
        while (true)
        {
            var now = _accountConnections.GetOrAdd(account, 0);
            if (limit >= 0 && now >= limit)
            {
                return false;
            }

            if (_accountConnections.TryUpdate(account, now + 1, now))
            {
                return true;
            }
        }
    }

    /// <summary>A client admitted by <see cref="TryAdmitToAccount"/> has closed.</summary>
    internal void ReleaseFromAccount(string account) =>
        _accountConnections.AddOrUpdate(account, 0, (_, n) => Math.Max(0, n - 1));

    /// <summary>Operator mode's trusted keys and account resolver; null without an <c>operator</c>.</summary>
    internal OperatorTrust? Trust { get; }

    /// <summary>Whether INFO carries a nonce for the client to sign (nkey users or operator mode).</summary>
    internal bool NonceRequired
    {
        get
        {
            lock (_authLock)
            {
                return Options.NonceRequired;
            }
        }
    }

    /// <summary>A fresh INFO nonce: 11 random bytes as raw URL-safe base64 (the client signs these 15 ASCII bytes).</summary>
    internal static string NewNonce()
    {
        Span<byte> raw = stackalloc byte[NonceRawLength];
        RandomNumberGenerator.Fill(raw);
        return Base64Url.EncodeToString(raw);
    }

    /// <summary>
    /// The log line of a refused CONNECT, as nats-server's authViolation: the nkey or the user it
    /// claimed to be (never a secret), or nothing more in operator mode.
    /// </summary>
    internal string AuthenticationErrorText(ConnectOptions connect)
    {
        lock (_authLock)
        {
            return Trust is not null ? "authentication error"
                : Options.NkeyUsers.Count > 0 ? $"authentication error - Nkey \"{connect.Nkey}\""
                : Options.Users.Count > 0 ? $"authentication error - User \"{connect.User}\""
                : "authentication error";
        }
    }

    // nats-server: the configured nkey user, then its signature over this client's nonce.
    private AuthResult AuthenticateNkey(ConnectOptions connect, byte[]? nonce)
    {
        NkeyUserEntry? entry = null;
        foreach (var candidate in Options.NkeyUsers)
        {
            if (candidate.Nkey == connect.Nkey)
            {
                entry = candidate;
                break;
            }
        }

        if (entry is null)
        {
            return AuthResult.Denied;
        }

        if (OperatorTrust.SignatureFailure(entry.Nkey, connect.Sig, nonce) is { } failure)
        {
            return AuthResult.Refused(failure);
        }

        return new AuthResult(true, entry.Nkey, entry.Permissions ?? Options.DefaultPermissions,
            entry.Account is { } name ? Accounts.GetOrCreate(name) : null);
    }
}
