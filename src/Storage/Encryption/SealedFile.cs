using System.Buffers.Binary;
using System.Security.Cryptography;

namespace Courier.Storage.Encryption;

/// <summary>
/// A whole file sealed with one AEAD key (index files, metadata files, snapshots, Raft state), little-endian:
/// <code>
/// 0   u32  magic "CENC"
/// 4   u8   version (1)
/// 5   u8   cipher (0 ChaCha20-Poly1305, 1 AES-256-GCM)
/// 6   u16  reserved, 0
/// 8   12   nonce (random per write)
/// 20  N    ciphertext of the file's plaintext
/// end 16   tag; the first 8 bytes are authenticated with it
/// </code>
/// </summary>
internal static class SealedFile
{
    public const int HeaderSize = 8;
    public const int Overhead = HeaderSize + Aead.NonceSize + Aead.TagSize;
    private const uint Magic = 0x434E4543; // "CENC" read as little-endian
    private const byte Version = 1;

    /// <summary>Whether <paramref name="data"/> starts as a sealed file does.</summary>
    public static bool IsSealed(ReadOnlySpan<byte> data) =>
        data.Length >= Overhead && BinaryPrimitives.ReadUInt32LittleEndian(data) == Magic && data[4] == Version;

    /// <summary>The cipher a sealed file names (valid only when <see cref="IsSealed"/>).</summary>
    public static StoreCipher CipherOf(ReadOnlySpan<byte> data) => data[5] == (byte)StoreCipher.Aes ? StoreCipher.Aes : StoreCipher.ChaCha;

    public static byte[] Seal(Aead key, ReadOnlySpan<byte> plaintext)
    {
        var result = new byte[Overhead + plaintext.Length];
        var r = result.AsSpan();
        BinaryPrimitives.WriteUInt32LittleEndian(r, Magic);
        r[4] = Version;
        r[5] = (byte)key.Cipher;
        var nonce = r.Slice(HeaderSize, Aead.NonceSize);
        RandomNumberGenerator.Fill(nonce);
        key.Seal(nonce, plaintext, r.Slice(HeaderSize + Aead.NonceSize, plaintext.Length), r[^Aead.TagSize..], r[..HeaderSize]);
        return result;
    }

    /// <summary>The plaintext of a sealed file; null when it is not one or <paramref name="key"/> does not open it.</summary>
    public static byte[]? TryOpen(Aead key, ReadOnlySpan<byte> data)
    {
        if (!IsSealed(data))
        {
            return null;
        }

        var plaintext = new byte[data.Length - Overhead];
        return key.TryOpen(data.Slice(HeaderSize, Aead.NonceSize), data.Slice(HeaderSize + Aead.NonceSize, plaintext.Length), data[^Aead.TagSize..], plaintext, data[..HeaderSize])
            ? plaintext
            : null;
    }
}
