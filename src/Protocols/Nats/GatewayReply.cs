using System.Security.Cryptography;
using System.Text;

namespace Courier.Protocols.Nats;

/// <summary>
/// nats-server's gateway reply mapping: a reply subject sent to another cluster becomes
/// <c>_GR_.&lt;cluster hash&gt;.&lt;server hash&gt;.&lt;reply&gt;</c>, so the answer is sent straight back to the
/// cluster (and server) of the requestor, whatever interest has reached the responder's cluster yet.
/// </summary>
public static class GatewayReply
{
    /// <summary>nats-server's gwReplyPrefix.</summary>
    public static ReadOnlySpan<byte> Prefix => "_GR_."u8;

    /// <summary>gwHashLen: characters of a cluster or server hash.</summary>
    public const int HashLength = 6;

    /// <summary>gwSubjectOffset: where the original reply starts (<c>_GR_.</c> + hash + <c>.</c> + hash + <c>.</c>).</summary>
    public const int SubjectOffset = 5 + HashLength + 1 + HashLength + 1;

    private const string Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"; // nats-server's digits, base 62

    /// <summary>nats-server's getHashSize(name, 6): the first 6 bytes of SHA-256(name), each as a base-62 digit.</summary>
    public static string Hash(string name)
    {
        Span<byte> sha = stackalloc byte[32];
        SHA256.HashData(Encoding.UTF8.GetBytes(name), sha);
        Span<char> chars = stackalloc char[HashLength];
        for (var i = 0; i < HashLength; i++)
        {
            chars[i] = Digits[sha[i] % Digits.Length];
        }

        return new string(chars);
    }

    /// <summary>The reply prefix of a server: <c>_GR_.&lt;hash(gateway name)&gt;.&lt;hash(server id)&gt;.</c></summary>
    public static byte[] PrefixFor(string gatewayName, string serverId) =>
        Encoding.ASCII.GetBytes($"_GR_.{Hash(gatewayName)}.{Hash(serverId)}.");

    /// <summary>Whether <paramref name="subject"/> is a mapped reply (long enough to hold both hashes and a subject).</summary>
    public static bool IsMapped(ReadOnlySpan<byte> subject) => subject.Length > SubjectOffset && subject.StartsWith(Prefix);

    /// <summary>The cluster hash of a mapped reply (<see cref="IsMapped"/> first).</summary>
    public static ReadOnlySpan<byte> ClusterHash(ReadOnlySpan<byte> subject) => subject.Slice(Prefix.Length, HashLength);

    /// <summary>The original subject of a mapped reply (<see cref="IsMapped"/> first).</summary>
    public static ReadOnlySpan<byte> Unmapped(ReadOnlySpan<byte> subject) => subject[SubjectOffset..];
}
