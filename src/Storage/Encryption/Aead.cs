using System.Security.Cryptography;

namespace Courier.Storage.Encryption;

/// <summary>
/// One AEAD key of encryption at rest: .NET's <see cref="ChaCha20Poly1305"/> or <see cref="AesGcm"/>
/// (never a cipher of our own), 256-bit key, 96-bit nonce, 128-bit tag.
/// </summary>
/// <remarks>
/// Safe from any thread: each call takes the key's own lock (the .NET types do not promise concurrent
/// use of one instance). Held for the cipher's work on one record or file, never across I/O, and no
/// other lock is taken under it (innermost; see LOCKS.md). No allocation per call.
/// </remarks>
internal sealed class Aead : IDisposable
{
    public const int KeySize = 32;   // bytes: ChaCha20-Poly1305 and AES-256
    public const int NonceSize = 12; // bytes: both ciphers' standard nonce
    public const int TagSize = 16;   // bytes: both ciphers' full tag

    private readonly AesGcm? _aes;
    private readonly ChaCha20Poly1305? _chacha;
    private readonly Lock _lock = new();

    public Aead(StoreCipher cipher, ReadOnlySpan<byte> key)
    {
        if (key.Length != KeySize)
        {
            throw new ArgumentException($"an encryption key is {KeySize} bytes", nameof(key));
        }

        Cipher = cipher;
        if (cipher == StoreCipher.Aes)
        {
            _aes = new AesGcm(key, TagSize);
        }
        else
        {
            _chacha = new ChaCha20Poly1305(key);
        }
    }

    public StoreCipher Cipher { get; }

    /// <summary>Encrypts <paramref name="plaintext"/> into <paramref name="ciphertext"/> (same length) and writes the tag.</summary>
    public void Seal(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> plaintext, Span<byte> ciphertext, Span<byte> tag, ReadOnlySpan<byte> associatedData)
    {
        lock (_lock)
        {
            if (_aes is not null)
            {
                _aes.Encrypt(nonce, plaintext, ciphertext, tag, associatedData);
            }
            else
            {
                _chacha!.Encrypt(nonce, plaintext, ciphertext, tag, associatedData);
            }
        }
    }

    /// <summary>Decrypts and authenticates; false when the tag does not match (wrong key, or damaged or forged bytes).</summary>
    public bool TryOpen(ReadOnlySpan<byte> nonce, ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> tag, Span<byte> plaintext, ReadOnlySpan<byte> associatedData)
    {
        try
        {
            lock (_lock)
            {
                if (_aes is not null)
                {
                    _aes.Decrypt(nonce, ciphertext, tag, plaintext, associatedData);
                }
                else
                {
                    _chacha!.Decrypt(nonce, ciphertext, tag, plaintext, associatedData);
                }
            }

            return true;
        }
        catch (AuthenticationTagMismatchException)
        {
            plaintext.Clear(); // the .NET types clear it too; never leave unauthenticated bytes behind
            return false;
        }
    }

    public void Dispose()
    {
        _aes?.Dispose();
        _chacha?.Dispose();
    }
}
