using System.Security.Cryptography;
using System.Text;
using Courier.Storage.Encryption;

namespace Courier.Storage;

/// <summary>
/// Encryption at rest (<c>jetstream { key, cipher, prev_key }</c>), as nats-server's: the server key is
/// never used directly; every store and file gets a key-encryption key derived for its context,
/// HMAC-SHA256(key, context) (nats-server's <c>jsKeyGen</c>). A FileStore keeps a random data key of
/// its own in <c>store.key</c>, sealed with its key-encryption key; metadata files are sealed with
/// theirs (<see cref="SealFile"/>).
/// </summary>
/// <remarks>
/// Rotation: with <see cref="HasPreviousKey"/>, what the current key cannot open is tried with the
/// previous one; a store key opened that way is sealed again with the current key at once, and a file
/// is rewritten by its owner (<see cref="OpenFile"/> tells it), so after one start under the new key
/// the previous key is no longer needed. The data keys themselves do not change: rotation replaces the
/// key that protects them, so nothing but the small key and metadata files is rewritten.
/// </remarks>
public sealed class StoreEncryption
{
    /// <summary>nats-server's <c>errNoMainKey</c>: an encrypted store opened without a key.</summary>
    public const string NoMainKeyError = "encrypted store encountered with no main key";

    /// <summary>nats-server's <c>errNoEncryption</c>: an encrypted metadata file read without a key.</summary>
    public const string NoEncryptionError = "encryption not enabled";

    private readonly byte[] _key;
    private readonly byte[]? _previousKey;

    /// <summary>Encryption with <paramref name="key"/> (and <paramref name="previousKey"/> to rotate from).</summary>
    public StoreEncryption(string key, StoreCipher cipher, string? previousKey = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(key);
        _key = Encoding.UTF8.GetBytes(key);
        _previousKey = string.IsNullOrEmpty(previousKey) ? null : Encoding.UTF8.GetBytes(previousKey);
        Cipher = cipher;
    }

    /// <summary>The cipher of new stores and files. What exists keeps the cipher it names.</summary>
    public StoreCipher Cipher { get; }

    /// <summary>Whether a previous key (<c>prev_key</c>) is there to rotate from.</summary>
    public bool HasPreviousKey => _previousKey is not null;

    /// <summary>nats-server's name of the cipher (its start-up banner: <c>Encryption: AES-GCM</c>).</summary>
    public string CipherName => Cipher == StoreCipher.Aes ? "AES-GCM" : "ChaCha20-Poly1305";

    /// <summary>
    /// The text nats-server 2.9.10 logs when neither key opens a file: its Go error of the last cipher it
    /// tried, the one not configured (it tries the configured cipher first, then the other).
    /// </summary>
    public string AuthenticationFailedError => Cipher == StoreCipher.Aes
        ? "chacha20poly1305: message authentication failed"
        : "cipher: message authentication failed";

    /// <summary>Seals <paramref name="plaintext"/> for <paramref name="context"/> with the current key.</summary>
    public byte[] SealFile(string context, ReadOnlySpan<byte> plaintext)
    {
        using var key = new Aead(Cipher, DeriveKey(context, previous: false));
        return SealedFile.Seal(key, plaintext);
    }

    /// <summary>Whether <paramref name="data"/> is a sealed file (else it is plaintext, written without a key).</summary>
    public static bool IsSealedFile(ReadOnlySpan<byte> data) => SealedFile.IsSealed(data);

    /// <summary>
    /// Opens a file <see cref="SealFile"/> wrote for <paramref name="context"/>, with the current key or
    /// else the previous one (<paramref name="sealedWithPreviousKey"/>: the owner should write it again).
    /// </summary>
    /// <exception cref="StoreKeyException">Neither key opens it (<see cref="AuthenticationFailedError"/>).</exception>
    public byte[] OpenFile(string context, ReadOnlySpan<byte> data, out bool sealedWithPreviousKey)
    {
        sealedWithPreviousKey = false;
        if (!SealedFile.IsSealed(data))
        {
            throw new StoreKeyException(AuthenticationFailedError);
        }

        var cipher = SealedFile.CipherOf(data);
        using (var current = new Aead(cipher, DeriveKey(context, previous: false)))
        {
            if (SealedFile.TryOpen(current, data) is { } plaintext)
            {
                return plaintext;
            }
        }

        if (_previousKey is not null)
        {
            using var previous = new Aead(cipher, DeriveKey(context, previous: true));
            if (SealedFile.TryOpen(previous, data) is { } plaintext)
            {
                sealedWithPreviousKey = true;
                return plaintext;
            }
        }

        throw new StoreKeyException(AuthenticationFailedError);
    }

    /// <summary>The key-encryption key of <paramref name="context"/>: HMAC-SHA256(key, context), 32 bytes.</summary>
    internal byte[] DeriveKey(string context, bool previous)
    {
        var key = previous ? _previousKey ?? throw new InvalidOperationException("no previous key") : _key;
        return HMACSHA256.HashData(key, Encoding.UTF8.GetBytes(context));
    }

    /// <inheritdoc/>
    public override string ToString() => $"encryption ({CipherName}{(HasPreviousKey ? ", rotating from a previous key" : "")})"; // never the key
}
