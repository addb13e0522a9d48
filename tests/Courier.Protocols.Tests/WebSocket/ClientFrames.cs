using System.Buffers.Binary;
using System.Text;
using Courier.Protocols.WebSocket;

namespace Courier.Protocols.Tests.WebSocket;

/// <summary>Builds client frames as a browser would send them (masked), and malformed ones.</summary>
internal static class ClientFrames
{
    private static readonly byte[] Key = [0x37, 0xfa, 0x21, 0x3d];

    public static byte[] Binary(string text, bool final = true) => Frame(WebSocketOpcode.Binary, Encoding.ASCII.GetBytes(text), final);

    public static byte[] Frame(WebSocketOpcode opcode, byte[] payload, bool final = true, bool masked = true, byte rsv = 0, int? lengthForm = null)
    {
        var output = new List<byte> { (byte)((final ? 0x80 : 0) | rsv | (byte)opcode) };
        var maskBit = masked ? 0x80 : 0;
        var form = lengthForm ?? (payload.Length <= 125 ? 7 : payload.Length <= ushort.MaxValue ? 16 : 64);
        switch (form)
        {
            case 7:
                output.Add((byte)(maskBit | payload.Length));
                break;
            case 16:
                output.Add((byte)(maskBit | 126));
                output.AddRange([(byte)(payload.Length >> 8), (byte)payload.Length]);
                break;
            default:
                output.Add((byte)(maskBit | 127));
                var length = new byte[8];
                BinaryPrimitives.WriteUInt64BigEndian(length, (ulong)payload.Length);
                output.AddRange(length);
                break;
        }

        if (masked)
        {
            output.AddRange(Key);
            for (var i = 0; i < payload.Length; i++)
            {
                output.Add((byte)(payload[i] ^ Key[i & 3]));
            }
        }
        else
        {
            output.AddRange(payload);
        }

        return [.. output];
    }

    /// <summary>A header declaring <paramref name="length"/> payload bytes with the 64-bit form, and no payload.</summary>
    public static byte[] Header64(WebSocketOpcode opcode, ulong length)
    {
        var header = new byte[14];
        header[0] = (byte)(0x80 | (byte)opcode);
        header[1] = 0x80 | 127;
        BinaryPrimitives.WriteUInt64BigEndian(header.AsSpan(2), length);
        Key.CopyTo(header, 10);
        return header;
    }

    public static byte[] Concat(params byte[][] parts) => [.. parts.SelectMany(p => p)];
}
