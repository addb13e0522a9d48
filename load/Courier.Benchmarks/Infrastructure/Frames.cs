using System.Text;

namespace Courier.Benchmarks.Infrastructure;

/// <summary>Client protocol frames built once in a benchmark's setup, never on the measured path.</summary>
internal static class Frames
{
    /// <summary>A payload of <paramref name="size"/> printable bytes.</summary>
    public static byte[] Payload(int size)
    {
        var payload = new byte[size];
        for (var i = 0; i < size; i++)
        {
            payload[i] = (byte)('a' + (i % 26));
        }

        return payload;
    }

    // PUB <subject> [reply-to] <#bytes>\r\n[payload]\r\n
    public static byte[] Pub(string subject, int size, string? replyTo = null)
    {
        var line = replyTo is null ? $"PUB {subject} {size}\r\n" : $"PUB {subject} {replyTo} {size}\r\n";
        return Concat(Encoding.ASCII.GetBytes(line), Payload(size), "\r\n"u8.ToArray());
    }

    // HPUB <subject> [reply-to] <#header bytes> <#total bytes>\r\n[headers]\r\n\r\n[payload]\r\n
    public static byte[] HPub(string subject, string headers, int size)
    {
        var headerBlock = Encoding.ASCII.GetBytes($"NATS/1.0\r\n{headers}\r\n\r\n");
        var line = Encoding.ASCII.GetBytes($"HPUB {subject} {headerBlock.Length} {headerBlock.Length + size}\r\n");
        return Concat(line, headerBlock, Payload(size), "\r\n"u8.ToArray());
    }

    /// <summary><paramref name="frame"/> repeated <paramref name="count"/> times: one read batch.</summary>
    public static byte[] Repeat(byte[] frame, int count)
    {
        var batch = new byte[frame.Length * count];
        for (var i = 0; i < count; i++)
        {
            frame.CopyTo(batch, i * frame.Length);
        }

        return batch;
    }

    public static byte[] Ascii(string text) => Encoding.ASCII.GetBytes(text);

    public static byte[] Concat(params byte[][] parts)
    {
        var total = 0;
        foreach (var part in parts)
        {
            total += part.Length;
        }

        var result = new byte[total];
        var at = 0;
        foreach (var part in parts)
        {
            part.CopyTo(result, at);
            at += part.Length;
        }

        return result;
    }
}
