using System.Diagnostics.CodeAnalysis;
using System.Net.Security;

namespace Courier.Gateway.Configuration;

/// <summary>The cipher suite names nats-server accepts in <c>cipher_suites</c> (Go's crypto/tls names).</summary>
internal static class CipherSuiteNames
{
    /// <summary>
    /// Go names the ChaCha20 ECDHE suites without the <c>_SHA256</c> IANA (and .NET) put at the end;
    /// every other name is the same.
    /// </summary>
    public static bool TryParse(string name, [NotNullWhen(true)] out TlsCipherSuite suite)
    {
        suite = default;
        if (!name.StartsWith("TLS_", StringComparison.Ordinal) || name.Any(c => !(char.IsAsciiLetterUpper(c) || char.IsAsciiDigit(c) || c == '_')))
        {
            return false;
        }

        if (name.EndsWith("_WITH_CHACHA20_POLY1305", StringComparison.Ordinal))
        {
            name += "_SHA256";
        }

        return Enum.TryParse(name, ignoreCase: false, out suite) && Enum.IsDefined(suite);
    }
}
