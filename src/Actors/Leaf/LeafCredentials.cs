using System.Buffers.Text;
using System.Text;
using System.Text.RegularExpressions;
using NATS.NKeys;

namespace Courier.Actors.Leaf;

/// <summary>
/// A remote's <c>credentials</c> file (<c>nsc generate creds</c>: a user JWT and its nkey seed) as
/// nats-server's sendLeafConnect uses it: the JWT goes in the leaf CONNECT, with the seed's Ed25519
/// signature of the hub's INFO nonce (raw URL-safe base64). Read at each dial, as nats-server does,
/// so a rotated file is picked up; the seed never leaves this method.
/// </summary>
internal static partial class LeafCredentials
{
    private const int SignatureLength = 64; // bytes, Ed25519

    /// <summary>Reads <paramref name="path"/> and signs <paramref name="nonce"/>; false with <paramref name="problem"/> when it cannot.</summary>
    public static bool TrySign(string path, string? nonce, out string jwt, out string sig, out string problem)
    {
        jwt = sig = problem = "";
        string text;
        try
        {
            text = File.ReadAllText(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            problem = e.Message;
            return false;
        }

        // nats-server's credsRe: the blocks between the dashed lines, the JWT first, then the seed.
        var blocks = Block().Matches(text);
        if (blocks.Count < 2)
        {
            problem = "Credentials file malformed";
            return false;
        }

        jwt = blocks[0].Groups[1].Value.Trim();
        try
        {
            using var key = KeyPair.FromSeed(blocks[1].Groups[1].Value.Trim());
            var signature = new byte[SignatureLength];
            key.Sign(Encoding.ASCII.GetBytes(nonce ?? ""), signature);
            sig = Base64Url.EncodeToString(signature);
            return true;
        }
        catch (Exception e) when (e is ArgumentException or FormatException or InvalidOperationException or NKeysException)
        {
            problem = "Credentials file has malformed seed";
            return false;
        }
    }

    [GeneratedRegex(@"\s*(?:(?:[-]{3,}[^\n]*[-]{3,}\n)(.+)(?:\n\s*[-]{3,}[^\n]*[-]{3,}\n))")]
    private static partial Regex Block();
}
