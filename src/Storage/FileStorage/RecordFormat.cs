using System.Buffers.Binary;
using Courier.Storage.Internal;

namespace Courier.Storage.FileStorage;

/// <summary>What a record in a block file says.</summary>
internal enum RecordKind : byte
{
    /// <summary>A stored message: subject, headers, payload.</summary>
    Message = 1,

    /// <summary>An interior delete: the message at <see cref="RecordHeader.Sequence"/> is gone.</summary>
    Tombstone = 2,

    /// <summary>
    /// Every message below <see cref="RecordHeader.Sequence"/> is gone (front removals, compaction);
    /// the 16-byte payload holds the stream's last sequence (u64) and last timestamp (i64) then.
    /// </summary>
    Floor = 3,

    /// <summary>A message record overwritten by EraseMessage (its bytes are random; its sequence still counts).</summary>
    Erased = 4,
}

/// <summary>The fixed part of a record.</summary>
internal readonly record struct RecordHeader(uint Length, RecordKind Kind, ushort SubjectLength, ulong Sequence, long Timestamp, uint HeadersLength)
{
    public int PayloadLength => (int)(Length - RecordFormat.Overhead - SubjectLength - HeadersLength);
}

/// <summary>
/// One record in a block file, little-endian:
/// <code>
/// 0   u32  length of the whole record, these 4 bytes and the checksum included
/// 4   u8   kind (1 message, 2 tombstone, 3 floor, 4 erased)
/// 5   u8   reserved, 0
/// 6   u16  subject length S
/// 8   u64  sequence (tombstone: the deleted one; floor: the first that may hold a message)
/// 16  i64  timestamp, Unix nanoseconds
/// 24  u32  headers length H
/// 28  S    subject
/// ..  H    headers
/// ..  P    payload
/// L-4 u32  CRC-32C of bytes [0, L-4)
/// </code>
/// A record's size is <see cref="IStreamStore.MessageSize"/>: 32 + S + H + P (it counts for 30 + S + H + P in the stream's bytes, as nats-server's).
/// Tombstones are 32 bytes; floors 48 (their payload: last sequence and last timestamp).
/// </summary>
internal static class RecordFormat
{
    public const int HeaderSize = 28;
    public const int Overhead = HeaderSize + 4;
    public const int FloorPayload = 16;

    public static void Write(Span<byte> destination, RecordKind kind, ulong seq, long timestamp, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        var length = Overhead + subject.Length + headers.Length + payload.Length;
        var d = destination[..length];
        BinaryPrimitives.WriteUInt32LittleEndian(d, (uint)length);
        d[4] = (byte)kind;
        d[5] = 0;
        BinaryPrimitives.WriteUInt16LittleEndian(d[6..], (ushort)subject.Length);
        BinaryPrimitives.WriteUInt64LittleEndian(d[8..], seq);
        BinaryPrimitives.WriteInt64LittleEndian(d[16..], timestamp);
        BinaryPrimitives.WriteUInt32LittleEndian(d[24..], (uint)headers.Length);
        var at = HeaderSize;
        subject.CopyTo(d[at..]);
        at += subject.Length;
        headers.CopyTo(d[at..]);
        at += headers.Length;
        payload.CopyTo(d[at..]);
        Seal(d);
    }

    /// <summary>Writes the checksum over the rest of <paramref name="record"/> into its last 4 bytes.</summary>
    public static void Seal(Span<byte> record) =>
        BinaryPrimitives.WriteUInt32LittleEndian(record[^4..], Crc32C.Compute(record[..^4]));

    /// <summary>Reads the fixed part; <paramref name="source"/> must hold at least <see cref="HeaderSize"/> bytes.</summary>
    public static RecordHeader ReadHeader(ReadOnlySpan<byte> source) => new(
        BinaryPrimitives.ReadUInt32LittleEndian(source),
        (RecordKind)source[4],
        BinaryPrimitives.ReadUInt16LittleEndian(source[6..]),
        BinaryPrimitives.ReadUInt64LittleEndian(source[8..]),
        BinaryPrimitives.ReadInt64LittleEndian(source[16..]),
        BinaryPrimitives.ReadUInt32LittleEndian(source[24..]));

    /// <summary>Whether the fixed part is self-consistent (before the checksum is looked at).</summary>
    public static bool IsPlausible(in RecordHeader h, long maxLength)
    {
        if (h.Length < Overhead || h.Length > maxLength || (long)Overhead + h.SubjectLength + h.HeadersLength > h.Length)
        {
            return false;
        }

        return h.Kind switch
        {
            RecordKind.Message or RecordKind.Erased => h.SubjectLength > 0,
            RecordKind.Tombstone => h.Length == Overhead,
            RecordKind.Floor => h.Length == Overhead + FloorPayload && h.SubjectLength == 0 && h.HeadersLength == 0,
            _ => false,
        };
    }

    /// <summary>Whether the checksum in the last 4 bytes matches the rest of <paramref name="record"/>.</summary>
    public static bool ChecksumOk(ReadOnlySpan<byte> record) =>
        record.Length >= Overhead && BinaryPrimitives.ReadUInt32LittleEndian(record[^4..]) == Crc32C.Compute(record[..^4]);

    /// <summary>A whole valid record starts at <paramref name="record"/>[0] (fixed part plausible, checksum good).</summary>
    public static bool IsValidAt(ReadOnlySpan<byte> record, long maxLength, out RecordHeader header)
    {
        header = default;
        if (record.Length < Overhead)
        {
            return false;
        }

        header = ReadHeader(record);
        return IsPlausible(header, Math.Min(maxLength, record.Length)) && ChecksumOk(record[..(int)header.Length]);
    }
}
