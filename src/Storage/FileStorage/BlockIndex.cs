using System.Buffers.Binary;
using Courier.Storage.Internal;

namespace Courier.Storage.FileStorage;

/// <summary>One record of a block as its index file lists it.</summary>
internal struct IndexEntry
{
    public uint Offset;
    public uint Length;
    public ulong Sequence;
    public long Timestamp;  // floor records: the stream's last timestamp
    public ulong Aux;       // floor records: the stream's last sequence
    public byte[]? Subject; // messages only
    public RecordKind Kind;
}

/// <summary>
/// A block's index file (<c>NNNNNNNNNN.idx</c>): every record of the block without its payload, so a
/// restart rebuilds the in-memory state without reading message bytes. Little-endian:
/// <code>
/// 0   u32  magic "CIDX"
/// 4   u8   version (1)
/// 5   u8[3] reserved
/// 8   u32  block id
/// 12  u32  entry count N
/// 16  u64  covered length: the block file bytes these entries describe (from offset 32)
/// 24  u32  subject count K
/// 28  u32  reserved
/// 32  K x (u16 length, bytes)        the distinct subjects
/// ..  N x 40 bytes: u32 offset, u32 length, u64 sequence, i64 timestamp, u64 aux,
///                   i32 subject index (-1: none), u8 kind, u8[3] reserved
///                   (floor records: timestamp and aux are the last timestamp and last sequence)
/// end u32  CRC-32C of everything before it
/// </code>
/// Entries ascend by offset and do not overlap; bytes between them (a damaged record found by a
/// scan) are skipped. Written (to a temporary file, then renamed) when a block is sealed and, for the write block, on
/// Stop. Not fsynced: a missing or damaged index only costs a scan of its block.
/// </summary>
internal static class BlockIndex
{
    private const uint Magic = 0x58444943; // "CIDX" read as little-endian
    private const byte Version = 1;
    private const int FixedSize = 32;
    private const int EntrySize = 40;

    public static void Write(string path, uint blockId, long coveredLength, IReadOnlyList<IndexEntry> entries)
    {
        var subjectIndex = new Dictionary<byte[], int>(ByteArrayComparer.Instance);
        var subjects = new List<byte[]>();
        var subjectBytes = 0;
        foreach (var e in entries)
        {
            if (e.Subject is { } s && !subjectIndex.ContainsKey(s))
            {
                subjectIndex[s] = subjects.Count;
                subjects.Add(s);
                subjectBytes += 2 + s.Length;
            }
        }

        var size = FixedSize + subjectBytes + (entries.Count * EntrySize) + 4;
        var buffer = new byte[size];
        var b = buffer.AsSpan();
        BinaryPrimitives.WriteUInt32LittleEndian(b, Magic);
        b[4] = Version;
        BinaryPrimitives.WriteUInt32LittleEndian(b[8..], blockId);
        BinaryPrimitives.WriteUInt32LittleEndian(b[12..], (uint)entries.Count);
        BinaryPrimitives.WriteInt64LittleEndian(b[16..], coveredLength);
        BinaryPrimitives.WriteUInt32LittleEndian(b[24..], (uint)subjects.Count);
        var at = FixedSize;
        foreach (var s in subjects)
        {
            BinaryPrimitives.WriteUInt16LittleEndian(b[at..], (ushort)s.Length);
            s.CopyTo(b[(at + 2)..]);
            at += 2 + s.Length;
        }

        foreach (var e in entries)
        {
            var d = b[at..];
            BinaryPrimitives.WriteUInt32LittleEndian(d, e.Offset);
            BinaryPrimitives.WriteUInt32LittleEndian(d[4..], e.Length);
            BinaryPrimitives.WriteUInt64LittleEndian(d[8..], e.Sequence);
            BinaryPrimitives.WriteInt64LittleEndian(d[16..], e.Timestamp);
            BinaryPrimitives.WriteUInt64LittleEndian(d[24..], e.Aux);
            BinaryPrimitives.WriteInt32LittleEndian(d[32..], e.Subject is { } s ? subjectIndex[s] : -1);
            d[36] = (byte)e.Kind;
            at += EntrySize;
        }

        BinaryPrimitives.WriteUInt32LittleEndian(b[at..], Crc32C.Compute(b[..at]));
        var temporary = path + ".tmp";
        File.WriteAllBytes(temporary, buffer);
        File.Move(temporary, path, overwrite: true);
    }

    /// <summary>
    /// Reads and checks an index against its block. Returns false with a null
    /// <paramref name="problem"/> when there is no index file, with a reason when it is unusable.
    /// </summary>
    public static bool TryRead(string path, uint blockId, long blockFileLength, out List<IndexEntry> entries, out long coveredLength, out string? problem)
    {
        entries = [];
        coveredLength = 0;
        problem = null;
        byte[] buffer;
        try
        {
            buffer = File.ReadAllBytes(path);
        }
        catch (FileNotFoundException)
        {
            return false;
        }

        var b = (ReadOnlySpan<byte>)buffer;
        if (b.Length < FixedSize + 4
            || BinaryPrimitives.ReadUInt32LittleEndian(b) != Magic
            || b[4] != Version
            || BinaryPrimitives.ReadUInt32LittleEndian(b[^4..]) != Crc32C.Compute(b[..^4]))
        {
            problem = "bad magic, version or checksum";
            return false;
        }

        if (BinaryPrimitives.ReadUInt32LittleEndian(b[8..]) != blockId)
        {
            problem = "index of another block";
            return false;
        }

        var count = BinaryPrimitives.ReadUInt32LittleEndian(b[12..]);
        coveredLength = BinaryPrimitives.ReadInt64LittleEndian(b[16..]);
        var subjectCount = BinaryPrimitives.ReadUInt32LittleEndian(b[24..]);
        if (coveredLength < BlockHeader.Size || coveredLength > blockFileLength)
        {
            problem = $"covers {coveredLength} bytes but the block has {blockFileLength}";
            return false;
        }

        var subjects = new byte[subjectCount][];
        var at = FixedSize;
        for (var i = 0; i < subjectCount; i++)
        {
            if (at + 2 > b.Length - 4)
            {
                problem = "subject table overruns the file";
                return false;
            }

            var length = BinaryPrimitives.ReadUInt16LittleEndian(b[at..]);
            if (at + 2 + length > b.Length - 4)
            {
                problem = "subject table overruns the file";
                return false;
            }

            subjects[i] = b.Slice(at + 2, length).ToArray();
            at += 2 + length;
        }

        if ((long)at + ((long)count * EntrySize) + 4 != b.Length)
        {
            problem = "entry count does not match the file size";
            return false;
        }

        entries = new List<IndexEntry>((int)count);
        long expectedOffset = BlockHeader.Size;
        for (var i = 0; i < count; i++)
        {
            var d = b[at..];
            var e = new IndexEntry
            {
                Offset = BinaryPrimitives.ReadUInt32LittleEndian(d),
                Length = BinaryPrimitives.ReadUInt32LittleEndian(d[4..]),
                Sequence = BinaryPrimitives.ReadUInt64LittleEndian(d[8..]),
                Timestamp = BinaryPrimitives.ReadInt64LittleEndian(d[16..]),
                Aux = BinaryPrimitives.ReadUInt64LittleEndian(d[24..]),
                Kind = (RecordKind)d[36],
            };
            var subject = BinaryPrimitives.ReadInt32LittleEndian(d[32..]);
            if (e.Offset < expectedOffset || e.Length < RecordFormat.Overhead || e.Kind is < RecordKind.Message or > RecordKind.Erased
                || (e.Kind == RecordKind.Message && (uint)subject >= subjectCount))
            {
                problem = $"entry {i} is inconsistent";
                entries = [];
                return false;
            }

            e.Subject = subject >= 0 && subject < subjectCount ? subjects[subject] : null;
            entries.Add(e);
            expectedOffset = (long)e.Offset + e.Length;
            at += EntrySize;
        }

        if (expectedOffset > coveredLength)
        {
            problem = "entries run past the covered length";
            entries = [];
            return false;
        }

        return true;
    }
}
