using System.Buffers.Binary;
using System.Buffers.Text;
using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using Courier.Storage.Internal;
using Courier.Storage.IO;

namespace Courier.Storage.Persistence;

/// <summary>
/// One snapshot file (little-endian), named <c>&lt;key&gt;.&lt;sequence nr&gt;.&lt;timestamp ticks&gt;.snap</c>:
/// <code>
/// "CSNP" | u8 version 1 | u8 0 | u16 manifest length M | u32 persistence id length P | i64 sequence nr
/// | i64 timestamp ticks | u32 payload length N | persistence id | manifest | payload | u32 CRC-32C of all before
/// </code>
/// The key is <c>p</c> + base64url of the persistence id, or <c>h</c> + hex SHA-256 of it when that would
/// make the name too long; the id itself is in the file and checked on load.
/// </summary>
internal static class SnapshotFile
{
    public const string Extension = ".snap";
    public const string TempExtension = ".tmp";
    public const string CorruptExtension = ".corrupt";

    private const int HeaderSize = 32; // bytes, as laid out above
    private const int TrailerSize = 4; // bytes: the CRC
    private const byte Version = 1;
    private const int MaxKeyLength = 160; // chars: keeps names well under the 255-byte file name limit
    private static ReadOnlySpan<byte> Magic => "CSNP"u8;

    /// <summary>The file-name key of <paramref name="persistenceId"/>.</summary>
    public static string Key(string persistenceId)
    {
        var bytes = Encoding.UTF8.GetBytes(persistenceId);
        if (Base64Url.GetEncodedLength(bytes.Length) + 1 <= MaxKeyLength)
        {
            return "p" + Base64Url.EncodeToString(bytes);
        }

        return "h" + Convert.ToHexStringLower(SHA256.HashData(bytes));
    }

    public static string FileName(string key, long sequenceNr, long ticks) =>
        string.Create(CultureInfo.InvariantCulture, $"{key}.{sequenceNr}.{ticks}{Extension}");

    /// <summary>Parses a snapshot file name; false for anything else.</summary>
    public static bool TryParseName(string fileName, out string key, out long sequenceNr, out long ticks)
    {
        key = "";
        sequenceNr = ticks = 0;
        if (!fileName.EndsWith(Extension, StringComparison.Ordinal))
        {
            return false;
        }

        var parts = fileName[..^Extension.Length].Split('.');
        if (parts.Length != 3 || parts[0].Length < 2
            || !long.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out sequenceNr)
            || !long.TryParse(parts[2], NumberStyles.None, CultureInfo.InvariantCulture, out ticks))
        {
            return false;
        }

        key = parts[0];
        return true;
    }

    /// <summary>What a snapshot file's key is derived for under encryption at rest.</summary>
    public const string EncryptionContext = "snapshots";

    /// <summary>Writes the file to <paramref name="path"/> and fsyncs it; sealed whole with <paramref name="encryption"/> when given.</summary>
    public static void Write(StoreFileSystem fs, string path, SnapshotMetadata metadata, string manifest, ReadOnlySpan<byte> payload, StoreEncryption? encryption = null)
    {
        var id = Encoding.UTF8.GetBytes(metadata.PersistenceId);
        var manifestBytes = Encoding.UTF8.GetBytes(manifest);
        if (manifestBytes.Length > ushort.MaxValue)
        {
            throw new ArgumentException("The manifest is longer than 65,535 bytes.", nameof(manifest));
        }

        Span<byte> header = stackalloc byte[HeaderSize];
        Magic.CopyTo(header);
        header[4] = Version;
        header[5] = 0;
        BinaryPrimitives.WriteUInt16LittleEndian(header[6..], (ushort)manifestBytes.Length);
        BinaryPrimitives.WriteInt32LittleEndian(header[8..], id.Length);
        BinaryPrimitives.WriteInt64LittleEndian(header[12..], metadata.SequenceNr);
        BinaryPrimitives.WriteInt64LittleEndian(header[20..], metadata.Timestamp.Ticks);
        BinaryPrimitives.WriteInt32LittleEndian(header[28..], payload.Length);

        var crc = Crc32C.Append(Crc32C.Start, header);
        crc = Crc32C.Append(crc, id);
        crc = Crc32C.Append(crc, manifestBytes);
        crc = Crc32C.Append(crc, payload);
        Span<byte> trailer = stackalloc byte[TrailerSize];
        BinaryPrimitives.WriteUInt32LittleEndian(trailer, Crc32C.Finish(crc));

        using var file = fs.Open(path, FileMode.Create);
        if (encryption is not null)
        {
            var plain = new byte[header.Length + id.Length + manifestBytes.Length + payload.Length + trailer.Length];
            var p = plain.AsSpan();
            header.CopyTo(p);
            id.CopyTo(p = p[header.Length..]);
            manifestBytes.CopyTo(p = p[id.Length..]);
            payload.CopyTo(p = p[manifestBytes.Length..]);
            trailer.CopyTo(p[payload.Length..]);

            file.Write(encryption.SealFile(EncryptionContext, plain), 0);
            file.Sync();
            return;
        }

        long at = 0;
        file.Write(header, at);
        file.Write(id, at += header.Length);
        file.Write(manifestBytes, at += id.Length);
        file.Write(payload, at += manifestBytes.Length);
        file.Write(trailer, at + payload.Length);
        file.Sync();
    }

    /// <summary>
    /// Reads and verifies the file: magic, version, lengths, checksum, and that it holds
    /// <paramref name="persistenceId"/> at <paramref name="sequenceNr"/> and <paramref name="ticks"/>
    /// (its name). Null with a reason when anything is off.
    /// </summary>
    /// <exception cref="StoreKeyException">The file is encrypted and <paramref name="encryption"/> is missing or does not open it.</exception>
    public static StoredSnapshot? Read(StoreFileSystem fs, string path, string persistenceId, long sequenceNr, long ticks, out string? problem, StoreEncryption? encryption = null)
    {
        var data = fs.ReadAllBytes(path) ?? throw new FileNotFoundException("snapshot file not found", path);
        if (StoreEncryption.IsSealedFile(data))
        {
            data = (encryption ?? throw new StoreKeyException(StoreEncryption.NoEncryptionError)).OpenFile(EncryptionContext, data, out _);
        }

        problem = Verify(data, persistenceId, sequenceNr, ticks, out var manifest, out var payload);
        if (problem is not null)
        {
            return null;
        }

        var metadata = new SnapshotMetadata(persistenceId, sequenceNr, new DateTime(ticks, DateTimeKind.Utc));
        return new StoredSnapshot(metadata, manifest, payload);
    }

    private static string? Verify(byte[] data, string persistenceId, long sequenceNr, long ticks, out string manifest, out ReadOnlyMemory<byte> payload)
    {
        manifest = "";
        payload = default;
        var span = data.AsSpan();
        if (span.Length < HeaderSize + TrailerSize || !span[..4].SequenceEqual(Magic))
        {
            return "not a snapshot file (size or magic)";
        }

        if (span[4] != Version)
        {
            return $"unknown version {span[4]}";
        }

        long manifestLength = BinaryPrimitives.ReadUInt16LittleEndian(span[6..]);
        long idLength = BinaryPrimitives.ReadUInt32LittleEndian(span[8..]);
        long payloadLength = BinaryPrimitives.ReadUInt32LittleEndian(span[28..]);
        if (HeaderSize + idLength + manifestLength + payloadLength + TrailerSize != span.Length)
        {
            return "lengths do not add up to the file size (truncated or damaged)";
        }

        var body = span[..^TrailerSize];
        if (Crc32C.Compute(body) != BinaryPrimitives.ReadUInt32LittleEndian(span[^TrailerSize..]))
        {
            return "checksum mismatch";
        }

        var id = body.Slice(HeaderSize, (int)idLength);
        if (!id.SequenceEqual(Encoding.UTF8.GetBytes(persistenceId)))
        {
            return "holds another persistence id";
        }

        if (BinaryPrimitives.ReadInt64LittleEndian(span[12..]) != sequenceNr || BinaryPrimitives.ReadInt64LittleEndian(span[20..]) != ticks)
        {
            return "its sequence number or timestamp differs from its name";
        }

        var p = HeaderSize + (int)idLength;
        manifest = Encoding.UTF8.GetString(body.Slice(p, (int)manifestLength));
        p += (int)manifestLength;
        payload = data.AsMemory(p, (int)payloadLength);
        return null;
    }
}
