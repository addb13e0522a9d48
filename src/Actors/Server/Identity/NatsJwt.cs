using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using NATS.NKeys;

namespace Courier.Actors.Server.Identity;

/// <summary>
/// Decodes NATS JWTs (github.com/nats-io/jwt v2): <c>base64url(header).base64url(claims).base64url(sig)</c>,
/// the header <c>{"typ":"JWT","alg":"ed25519-nkey"}</c>, the signature an Ed25519 one by the claims'
/// issuer (an nkey) over the first two parts as ASCII. A token whose signature does not verify is refused.
/// </summary>
internal static class NatsJwt
{
    /// <summary>Every encoded JWT starts with the base64 of <c>{"</c>, as nats-server's jwtPrefix.</summary>
    public const string Prefix = "eyJ";

    private const int Ed25519SignatureLength = 64; // bytes

    /// <summary>
    /// Decodes and verifies <paramref name="token"/>: its issuer must be an nkey of
    /// <paramref name="issuerPrefix"/>'s kind and its subject one of <paramref name="subjectPrefix"/>'s.
    /// Null and the reason when it is not a valid JWT.
    /// </summary>
    public static T? Decode<T>(string token, JsonTypeInfo<T> type, PrefixByte issuerPrefix, PrefixByte subjectPrefix, out string? error)
        where T : JwtClaims
    {
        error = null;
        var parts = token.Trim().Split('.');
        if (parts.Length != 3)
        {
            error = "expected 3 chunks";
            return null;
        }

        try
        {
            var header = JsonSerializer.Deserialize(FromBase64Url(parts[0]), IdentityJsonContext.Default.JwtHeader);
            if (header is null || !string.Equals(header.Type, "JWT", StringComparison.OrdinalIgnoreCase))
            {
                error = "not supported type";
                return null;
            }

            // v2 signs with "ed25519-nkey"; v1's "ed25519" signed the same bytes.
            if (header.Algorithm is not ("ed25519-nkey" or "ed25519"))
            {
                error = $"unexpected {header.Algorithm} algorithm";
                return null;
            }

            var claims = JsonSerializer.Deserialize(FromBase64Url(parts[1]), type);
            if (claims is null)
            {
                error = "no claims";
                return null;
            }

            if (!IsPublicKey(issuerPrefix, claims.Issuer))
            {
                error = $"issuer {claims.Issuer} is not a valid {issuerPrefix} key";
                return null;
            }

            if (!IsPublicKey(subjectPrefix, claims.Subject))
            {
                error = $"subject {claims.Subject} is not a valid {subjectPrefix} key";
                return null;
            }

            var signature = FromBase64Url(parts[2]);
            var signed = Encoding.ASCII.GetBytes(token.Trim(), 0, parts[0].Length + 1 + parts[1].Length);
            if (signature.Length != Ed25519SignatureLength || !Verify(claims.Issuer, signed, signature))
            {
                error = "claim failed V2 signature verification";
                return null;
            }

            return claims;
        }
        catch (Exception e) when (e is JsonException or FormatException or ArgumentException or InvalidOperationException or NotSupportedException or NKeysException)
        {
            error = e.Message;
            return null;
        }
    }

    /// <summary>
    /// Whether <paramref name="key"/> is a public nkey of <paramref name="prefix"/>'s kind (the library
    /// throws on malformed input; a client's input is never allowed to throw here).
    /// </summary>
    public static bool IsPublicKey(PrefixByte prefix, string? key)
    {
        if (string.IsNullOrEmpty(key))
        {
            return false;
        }

        try
        {
            return KeyPair.IsValidPublicKey(prefix, key);
        }
        catch (Exception e) when (e is NKeysException or ArgumentException or FormatException or IndexOutOfRangeException)
        {
            return false;
        }
    }

    /// <summary>
    /// Whether <paramref name="signature"/> is <paramref name="publicKey"/>'s Ed25519 signature of
    /// <paramref name="message"/>. A malformed key is simply not a match.
    /// </summary>
    public static bool Verify(string publicKey, ReadOnlyMemory<byte> message, ReadOnlyMemory<byte> signature)
    {
        try
        {
            using var key = KeyPair.FromPublicKey(publicKey);
            return key.Verify(message, signature);
        }
        catch (Exception e) when (e is ArgumentException or FormatException or InvalidOperationException or NKeysException or IndexOutOfRangeException)
        {
            return false;
        }
    }

    /// <summary>
    /// A signature as a client sends it in CONNECT <c>sig</c>: raw URL-safe base64, or standard
    /// base64 as nats-server's fallback. Null when it is neither.
    /// </summary>
    public static byte[]? DecodeSignature(string sig)
    {
        try
        {
            return FromBase64Url(sig);
        }
        catch (FormatException)
        {
        }

        try
        {
            return Convert.FromBase64String(sig);
        }
        catch (FormatException)
        {
            return null;
        }
    }

    /// <summary>
    /// The JWT of a decorated file (a creds file or an <c>nsc</c> operator file, the
    /// <c>-----BEGIN ... JWT-----</c> block), or the text itself when it is a bare JWT, as the jwt
    /// library's ParseDecoratedJWT. Null when there is none.
    /// </summary>
    public static string? ParseDecorated(string text)
    {
        var lines = text.Split('\n');
        for (var i = 0; i < lines.Length; i++)
        {
            var line = lines[i].Trim();
            if (line.StartsWith("-----BEGIN", StringComparison.Ordinal) && line.Contains("JWT", StringComparison.Ordinal))
            {
                for (var j = i + 1; j < lines.Length; j++)
                {
                    var candidate = lines[j].Trim();
                    if (candidate.Length > 0)
                    {
                        return candidate.StartsWith("-----", StringComparison.Ordinal) ? null : candidate;
                    }
                }

                return null;
            }
        }

        var bare = text.Trim();
        return bare.StartsWith(Prefix, StringComparison.Ordinal) ? bare : null;
    }

    private static byte[] FromBase64Url(string text) => Base64Url.DecodeFromChars(text.AsSpan().TrimEnd('='));
}
