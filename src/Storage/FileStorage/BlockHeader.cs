using System.Buffers.Binary;
using Courier.Storage.Internal;

namespace Courier.Storage.FileStorage;

/// <summary>
/// The first 32 bytes of every block file, little-endian:
/// <code>
/// 0   u32  magic "CBLK"
/// 4   u8   version (1)
/// 5   u8   flags: bit 0 = reset (every block with a lower id is obsolete: written by purge)
/// 6   u16  reserved
/// 8   u32  block id (also the file name)
/// 12  u32  reserved
/// 16  u64  floor: when the block was created, every sequence below this held no message
///          (and the last sequence was at least floor - 1)
/// 24  u32  reserved
/// 28  u32  CRC-32C of bytes [0, 28)
/// </code>
/// </summary>
internal static class BlockHeader
{
    public const int Size = 32;
    public const byte Version = 1;
    public const byte ResetFlag = 1;
    private const uint Magic = 0x4B4C4243; // "CBLK" read as little-endian

    public static void Write(Span<byte> destination, uint id, ulong floor, bool reset)
    {
        var d = destination[..Size];
        d.Clear();
        BinaryPrimitives.WriteUInt32LittleEndian(d, Magic);
        d[4] = Version;
        d[5] = reset ? ResetFlag : (byte)0;
        BinaryPrimitives.WriteUInt32LittleEndian(d[8..], id);
        BinaryPrimitives.WriteUInt64LittleEndian(d[16..], floor);
        BinaryPrimitives.WriteUInt32LittleEndian(d[28..], Crc32C.Compute(d[..28]));
    }

    public static bool TryRead(ReadOnlySpan<byte> source, out uint id, out ulong floor, out bool reset)
    {
        id = 0;
        floor = 0;
        reset = false;
        if (source.Length < Size
            || BinaryPrimitives.ReadUInt32LittleEndian(source) != Magic
            || source[4] != Version
            || BinaryPrimitives.ReadUInt32LittleEndian(source[28..]) != Crc32C.Compute(source[..28]))
        {
            return false;
        }

        reset = (source[5] & ResetFlag) != 0;
        id = BinaryPrimitives.ReadUInt32LittleEndian(source[8..]);
        floor = BinaryPrimitives.ReadUInt64LittleEndian(source[16..]);
        return true;
    }
}
