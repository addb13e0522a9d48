using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using ArmCrc = System.Runtime.Intrinsics.Arm.Crc32;
using X86Crc = System.Runtime.Intrinsics.X86.Sse42;

namespace Courier.Storage.Internal;

/// <summary>
/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum on every FileStore record,
/// block header and index file. Uses the CPU's CRC32C instruction where there is one (SSE4.2 on
/// x64, the CRC extension on Arm64) and a slicing-by-8 table otherwise.
/// </summary>
/// <remarks>Hot path: called once per appended record and once per record read; allocates nothing.</remarks>
internal static class Crc32C
{
    private const uint Polynomial = 0x82F63B78; // reflected Castagnoli

    private static readonly uint[] Table = BuildTable();

    /// <summary>The register value to start an incremental CRC with (<see cref="Append"/>, then <see cref="Finish"/>).</summary>
    public const uint Start = 0xFFFFFFFF;

    /// <summary>The CRC-32C of <paramref name="data"/> (initial value and final xor 0xFFFFFFFF).</summary>
    public static uint Compute(ReadOnlySpan<byte> data) => ~Update(Start, data);

    /// <summary>Continues an incremental CRC over more data.</summary>
    public static uint Append(uint register, ReadOnlySpan<byte> data) => Update(register, data);

    /// <summary>The CRC of everything appended to <paramref name="register"/>.</summary>
    public static uint Finish(uint register) => ~register;

    /// <summary>Continues a raw (not inverted) CRC register over more data.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint Update(uint crc, ReadOnlySpan<byte> data)
    {
        if (X86Crc.X64.IsSupported)
        {
            return UpdateX64(crc, data);
        }

        if (ArmCrc.Arm64.IsSupported)
        {
            return UpdateArm64(crc, data);
        }

        return UpdateSoftware(crc, data);
    }

    private static uint UpdateX64(uint crc, ReadOnlySpan<byte> data)
    {
        ulong c = crc;
        while (data.Length >= 8)
        {
            c = X86Crc.X64.Crc32(c, BinaryPrimitives.ReadUInt64LittleEndian(data));
            data = data[8..];
        }

        var r = (uint)c;
        foreach (var b in data)
        {
            r = X86Crc.Crc32(r, b);
        }

        return r;
    }

    private static uint UpdateArm64(uint crc, ReadOnlySpan<byte> data)
    {
        while (data.Length >= 8)
        {
            crc = ArmCrc.Arm64.ComputeCrc32C(crc, BinaryPrimitives.ReadUInt64LittleEndian(data));
            data = data[8..];
        }

        foreach (var b in data)
        {
            crc = ArmCrc.ComputeCrc32C(crc, b);
        }

        return crc;
    }

    /// <summary>Slicing-by-8 over the 8 x 256 table; internal so tests can compare it with the instruction path.</summary>
    internal static uint UpdateSoftware(uint crc, ReadOnlySpan<byte> data)
    {
        var t = Table;
        while (data.Length >= 8)
        {
            var lo = BinaryPrimitives.ReadUInt32LittleEndian(data) ^ crc;
            var hi = BinaryPrimitives.ReadUInt32LittleEndian(data[4..]);
            crc = t[(7 * 256) + (lo & 0xFF)] ^ t[(6 * 256) + ((lo >> 8) & 0xFF)] ^
                  t[(5 * 256) + ((lo >> 16) & 0xFF)] ^ t[(4 * 256) + (lo >> 24)] ^
                  t[(3 * 256) + (hi & 0xFF)] ^ t[(2 * 256) + ((hi >> 8) & 0xFF)] ^
                  t[256 + ((hi >> 16) & 0xFF)] ^ t[hi >> 24];
            data = data[8..];
        }

        foreach (var b in data)
        {
            crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8);
        }

        return crc;
    }

    private static uint[] BuildTable()
    {
        var t = new uint[8 * 256];
        for (uint i = 0; i < 256; i++)
        {
            var c = i;
            for (var k = 0; k < 8; k++)
            {
                c = (c & 1) != 0 ? (c >> 1) ^ Polynomial : c >> 1;
            }

            t[i] = c;
        }

        for (var i = 0; i < 256; i++)
        {
            for (var s = 1; s < 8; s++)
            {
                var prev = t[((s - 1) * 256) + i];
                t[(s * 256) + i] = (prev >> 8) ^ t[prev & 0xFF];
            }
        }

        return t;
    }
}
