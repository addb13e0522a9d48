namespace Courier.Storage;

/// <summary>The AEAD cipher of encryption at rest (<c>jetstream { cipher }</c>), as nats-server's StoreCipher.</summary>
public enum StoreCipher
{
    /// <summary>ChaCha20-Poly1305 (<c>cipher: chachapoly</c> or <c>chacha</c>), nats-server's default.</summary>
    ChaCha = 0,

    /// <summary>AES-256-GCM (<c>cipher: aes</c>).</summary>
    Aes = 1,
}
