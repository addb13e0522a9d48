using System.Buffers.Binary;
using System.Security.Cryptography;
using Courier.Storage.IO;

namespace Courier.Storage.Encryption;

/// <summary>
/// A FileStore's data key, <c>store.key</c> in its directory (nats-server keeps <c>meta.key</c> and a
/// key per block; one random key per store is enough here, records carry their own nonces). Little-endian:
/// <code>
/// 0   u32  magic "CKEY"
/// 4   u8   version (1)
/// 5   u8   cipher of the store (0 ChaCha20-Poly1305, 1 AES-256-GCM)
/// 6   u16  reserved, 0
/// 8   12   nonce
/// 20  32   the data key, sealed with the key-encryption key of the store's context (same cipher)
/// 52  16   tag; the first 8 bytes are authenticated with it
/// </code>
/// Written once, to a temporary file that is synced and renamed (and the directory synced), before any
/// block is; sealed again with the current key when only <c>prev_key</c> opened it.
/// </summary>
internal static class StoreKeyFile
{
    public const string FileName = "store.key";
    private const uint Magic = 0x59454B43; // "CKEY" read as little-endian
    private const byte Version = 1;
    private const int HeaderSize = 8;
    private const int Size = HeaderSize + Aead.NonceSize + Aead.KeySize + Aead.TagSize;

    /// <summary>
    /// The store's data key: read from <c>store.key</c>, or created with it when the store is new.
    /// Null when the store is plaintext and no encryption is configured.
    /// </summary>
    /// <param name="fs">The file system.</param>
    /// <param name="directory">The store's directory.</param>
    /// <param name="encryption">The configured encryption, or null.</param>
    /// <param name="context">What the key-encryption key is derived for (the stream's account and name).</param>
    /// <param name="create">Whether a missing key file is created (a new store); false: null is returned (a check that must change nothing).</param>
    /// <exception cref="StoreKeyException">The store is encrypted and no key or a wrong one is configured.</exception>
    public static Aead? Load(StoreFileSystem fs, string directory, StoreEncryption? encryption, string context, bool create)
    {
        var path = Path.Combine(directory, FileName);
        var data = fs.ReadAllBytes(path);
        if (data is null)
        {
            return encryption is null || !create ? null : Create(fs, directory, encryption, context);
        }

        if (encryption is null)
        {
            throw new StoreKeyException(StoreEncryption.NoMainKeyError);
        }

        if (data.Length != Size || BinaryPrimitives.ReadUInt32LittleEndian(data) != Magic || data[4] != Version)
        {
            throw new StoreKeyException($"{path}: not a store key file");
        }

        var cipher = data[5] == (byte)StoreCipher.Aes ? StoreCipher.Aes : StoreCipher.ChaCha;
        Span<byte> seed = stackalloc byte[Aead.KeySize];
        try
        {
            if (TryUnseal(data, encryption.DeriveKey(context, previous: false), cipher, seed))
            {
                return new Aead(cipher, seed);
            }

            if (encryption.HasPreviousKey && TryUnseal(data, encryption.DeriveKey(context, previous: true), cipher, seed))
            {
                // Rotation: the data key stays, the current key seals it from now on.
                Write(fs, directory, Seal(seed, encryption.DeriveKey(context, previous: false), cipher));
                return new Aead(cipher, seed);
            }
        }
        finally
        {
            CryptographicOperations.ZeroMemory(seed);
        }

        throw new StoreKeyException(encryption.AuthenticationFailedError);
    }

    private static Aead Create(StoreFileSystem fs, string directory, StoreEncryption encryption, string context)
    {
        var key = Generate(encryption, context, out var file);
        Write(fs, directory, file);
        return key;
    }

    /// <summary>A new random data key and its key file's content, not written yet (a store being encrypted writes it once its blocks are).</summary>
    public static Aead Generate(StoreEncryption encryption, string context, out byte[] file)
    {
        Span<byte> seed = stackalloc byte[Aead.KeySize];
        RandomNumberGenerator.Fill(seed);
        try
        {
            file = Seal(seed, encryption.DeriveKey(context, previous: false), encryption.Cipher);
            return new Aead(encryption.Cipher, seed);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(seed);
        }
    }

    private static bool TryUnseal(ReadOnlySpan<byte> data, byte[] kek, StoreCipher cipher, Span<byte> seed)
    {
        using var key = new Aead(cipher, kek);
        return key.TryOpen(data.Slice(HeaderSize, Aead.NonceSize), data.Slice(HeaderSize + Aead.NonceSize, Aead.KeySize), data[^Aead.TagSize..], seed, data[..HeaderSize]);
    }

    private static byte[] Seal(ReadOnlySpan<byte> seed, byte[] kek, StoreCipher cipher)
    {
        var data = new byte[Size];
        var d = data.AsSpan();
        BinaryPrimitives.WriteUInt32LittleEndian(d, Magic);
        d[4] = Version;
        d[5] = (byte)cipher;
        var nonce = d.Slice(HeaderSize, Aead.NonceSize);
        RandomNumberGenerator.Fill(nonce);
        using var key = new Aead(cipher, kek);
        key.Seal(nonce, seed, d.Slice(HeaderSize + Aead.NonceSize, Aead.KeySize), d[^Aead.TagSize..], d[..HeaderSize]);
        return data;
    }

    /// <summary>Writes the key file durably: a temporary file, synced, renamed, the directory synced.</summary>
    public static void Write(StoreFileSystem fs, string directory, byte[] data)
    {
        var path = Path.Combine(directory, FileName);
        var temporary = path + ".tmp";
        using (var file = fs.Open(temporary, FileMode.Create))
        {
            file.Write(data, 0);
            file.Sync();
        }

        fs.Move(temporary, path);
        fs.SyncDirectory(directory);
    }
}
