using System.Buffers;
using System.IO.Compression;

namespace Courier.Protocols.WebSocket;

/// <summary>
/// permessage-deflate (RFC 7692) with no context takeover in either direction, as nats-server
/// negotiates it: each message is raw DEFLATE, compressed with a sync flush whose empty stored
/// block tail (<c>00 00 ff ff</c>) is removed (§7.2.1), and decompressed with that tail put back (§7.2.2).
/// </summary>
/// <remarks>
/// Compression is opt-in (<c>compression: true</c>) and costs a zlib stream per message; payloads
/// of <see cref="CompressThreshold"/> bytes or fewer go out uncompressed, as nats-server does.
/// </remarks>
internal static class PerMessageDeflate
{
    /// <summary>Bytes: a batch this small is sent uncompressed (nats-server's wsCompressThreshold).</summary>
    public const int CompressThreshold = 64;

    private static ReadOnlySpan<byte> Tail => [0x00, 0x00, 0xff, 0xff];

    /// <summary>
    /// Compresses the concatenation of <paramref name="parts"/> into <paramref name="output"/> (reset first),
    /// without the 4-byte tail.
    /// </summary>
    public static void Compress(IReadOnlyList<ArraySegment<byte>> parts, MemoryStream output)
    {
        output.SetLength(0);
        using (var deflate = new DeflateStream(output, CompressionLevel.Fastest, leaveOpen: true))
        {
            foreach (var part in parts)
            {
                deflate.Write(part);
            }

            deflate.Flush(); // Z_SYNC_FLUSH: ends with an empty stored block 00 00 ff ff
        }

        // Disposing writes a final empty block after the sync flush (03 00); cut back to the flush point.
        var buffer = output.GetBuffer();
        var end = (int)output.Length;
        var tail = LastIndexOfTail(buffer.AsSpan(0, end));
        output.SetLength(tail);
    }

    /// <summary>
    /// Decompresses one message (its frames' payloads joined) into <paramref name="output"/>; false
    /// when the data is not valid DEFLATE or inflates past <paramref name="maxSize"/> bytes.
    /// </summary>
    public static bool TryDecompress(ReadOnlySpan<byte> message, int maxSize, ArrayBufferWriter<byte> output)
    {
        var input = ArrayPool<byte>.Shared.Rent(message.Length + Tail.Length);
        try
        {
            message.CopyTo(input);
            Tail.CopyTo(input.AsSpan(message.Length));
            using var source = new MemoryStream(input, 0, message.Length + Tail.Length, writable: false);
            using var inflate = new DeflateStream(source, CompressionMode.Decompress);
            while (true)
            {
                var span = output.GetSpan(4096);
                int read;
                try
                {
                    read = inflate.Read(span);
                }
                catch (InvalidDataException)
                {
                    return false;
                }

                if (read == 0)
                {
                    return true;
                }

                output.Advance(read);
                if (output.WrittenCount > maxSize)
                {
                    return false;
                }
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(input);
        }
    }

    private static int LastIndexOfTail(ReadOnlySpan<byte> data)
    {
        var index = data.LastIndexOf(Tail);
        return index < 0 ? data.Length : index;
    }
}
