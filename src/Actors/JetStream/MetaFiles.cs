using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// The small files JetStream keeps beside its stores: a stream's and a consumer's <c>meta.json</c> and a
/// replica's copy of a consumer's state. Under encryption at rest (<c>jetstream { key }</c>) each is sealed
/// whole with a key derived for its account, stream and consumer (nats-server seals its <c>meta.inf</c>
/// the same way, with a <c>meta.key</c> beside it); without a key, plaintext with a checksum line at its end
/// (nats-server keeps a <c>meta.sum</c> beside its <c>meta.inf</c>): a flipped bit in a configuration must
/// not start a stream with another configuration (one replica instead of three, other limits).
/// </summary>
/// <param name="Encryption">The configured encryption; null: plaintext.</param>
/// <param name="Account">The account whose files these are (part of every key's context).</param>
internal sealed record MetaFiles(StoreEncryption? Encryption, string Account)
{
    /// <summary>Plaintext files (no key configured).</summary>
    public static MetaFiles Plain { get; } = new(null, "$G");

    /// <summary>What a stream's store key and meta file are derived for.</summary>
    public string StreamContext(string stream) => Account + ":" + stream;

    /// <summary>What a consumer's files are derived for.</summary>
    public string ConsumerContext(string stream, string consumer) => Account + ":" + stream + ":" + consumer;

    /// <summary>Writes <paramref name="content"/> durably (temporary file, fsync, rename), sealed when a key is configured.</summary>
    public void WriteDurably(string path, byte[] content, string context) =>
        StreamActor.WriteDurably(path, Encryption is null ? WithSum(content) : Encryption.SealFile(context, content));

    /// <summary>Writes <paramref name="content"/> (no fsync), sealed when a key is configured.</summary>
    public void Write(string path, byte[] content, string context) =>
        File.WriteAllBytes(path, Encryption is null ? WithSum(content) : Encryption.SealFile(context, content));

    // "\n#sum:" then 16 hex digits (the first 8 bytes of the content's SHA-256) and "\n": a line JSON readers never see.
    private static ReadOnlySpan<byte> SumMark => "\n#sum:"u8;
    private const int SumDigits = 16;

    /// <summary><paramref name="content"/> with its checksum line appended (a sealed file needs none: its seal is checked).</summary>
    public static byte[] WithSum(byte[] content)
    {
        var sum = Convert.ToHexStringLower(SHA256.HashData(content), 0, SumDigits / 2);
        var result = new byte[content.Length + SumMark.Length + SumDigits + 1];
        content.CopyTo(result, 0);
        SumMark.CopyTo(result.AsSpan(content.Length));
        Encoding.ASCII.GetBytes(sum, result.AsSpan(content.Length + SumMark.Length));
        result[^1] = (byte)'\n';
        return result;
    }

    /// <summary>
    /// The content of a file <see cref="WithSum"/> wrote, its checksum line checked and removed; a file written
    /// before checksums (no such line) as it is.
    /// </summary>
    /// <param name="data">The file's bytes.</param>
    /// <param name="what">What the file is, for the error.</param>
    /// <param name="required">The file was always written with a checksum (a member list): without one it was cut short.</param>
    /// <exception cref="InvalidDataException">The content does not match its checksum, or a required checksum is missing.</exception>
    public static byte[] WithoutSum(byte[] data, string what, bool required = false)
    {
        var trailer = SumMark.Length + SumDigits + 1;
        if (data.Length < trailer || data[^1] != (byte)'\n' || !data.AsSpan(data.Length - trailer, SumMark.Length).SequenceEqual(SumMark))
        {
            return required ? throw new InvalidDataException($"{what} has no checksum (cut short on disk)") : data;
        }

        var content = data.AsSpan(0, data.Length - trailer);
        var expected = Encoding.ASCII.GetString(data, data.Length - SumDigits - 1, SumDigits);
        var actual = Convert.ToHexStringLower(SHA256.HashData(content), 0, SumDigits / 2);
        if (!string.Equals(expected, actual, StringComparison.Ordinal))
        {
            throw new InvalidDataException(string.Create(CultureInfo.InvariantCulture, $"{what} checksum mismatch (damaged on disk)"));
        }

        return content.ToArray();
    }

    /// <summary>
    /// Reads a file these wrote. A file sealed under <c>prev_key</c>, or written without a key while one is
    /// configured now, is written again sealed with the current key (nats-server's "Encrypting stream").
    /// </summary>
    /// <param name="path">The file.</param>
    /// <param name="context">Its context (<see cref="StreamContext"/>, <see cref="ConsumerContext"/>).</param>
    /// <param name="kind"><c>stream</c> or <c>consumer</c>: the word in nats-server's error.</param>
    /// <exception cref="StoreKeyException">Sealed, and no configured key opens it: nats-server's
    /// <c>Error decrypting our stream metafile: ...</c>.</exception>
    public byte[] Read(string path, string context, string kind)
    {
        var data = File.ReadAllBytes(path);
        if (!StoreEncryption.IsSealedFile(data))
        {
            data = WithoutSum(data, $"{kind} metafile {Path.GetFileName(path)}");
            if (Encryption is not null)
            {
                WriteDurably(path, data, context);
            }

            return data;
        }

        if (Encryption is null)
        {
            throw new StoreKeyException($"Error decrypting our {kind} metafile: {StoreEncryption.NoEncryptionError}");
        }

        byte[] plain;
        bool previous;
        try
        {
            plain = Encryption.OpenFile(context, data, out previous);
        }
        catch (StoreKeyException e)
        {
            throw new StoreKeyException($"Error decrypting our {kind} metafile: {e.Message}", e);
        }

        if (previous)
        {
            WriteDurably(path, plain, context); // rotation: sealed with the current key from now on
        }

        return plain;
    }
}
