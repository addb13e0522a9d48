using System.Security.Cryptography;
using System.Text;

namespace Courier.Actors.Server.Authentication;

/// <summary>Comparing secrets (passwords, tokens) in constant time.</summary>
internal static class Secrets
{
    /// <summary>True when both are set and equal, compared in time independent of where they differ.</summary>
    public static bool Equal(string? expected, string? given) =>
        expected is not null && given is not null &&
        CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(expected), Encoding.UTF8.GetBytes(given));
}
