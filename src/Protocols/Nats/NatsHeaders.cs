using System.Text;

namespace Courier.Protocols.Nats;

/// <summary>
/// Reads and writes NATS header blocks: <c>NATS/1.0[ status]\r\nKey: Value\r\n...\r\n\r\n</c>.
/// Keys compare case-insensitively, as nats-server's textproto-based lookups do. Control paths only.
/// </summary>
public static class NatsHeaders
{
    /// <summary>The first value of <paramref name="name"/>, or null.</summary>
    public static string? Get(ReadOnlySpan<byte> block, string name)
    {
        if (block.IsEmpty)
        {
            return null;
        }

        var text = Encoding.UTF8.GetString(block);
        foreach (var line in text.Split("\r\n"))
        {
            var colon = line.IndexOf(':');
            if (colon > 0 && line.AsSpan(0, colon).Trim().Equals(name, StringComparison.OrdinalIgnoreCase))
            {
                return line[(colon + 1)..].Trim();
            }
        }

        return null;
    }

    /// <summary>A copy of the block with <paramref name="name"/> set to <paramref name="value"/> (replaced if present).</summary>
    public static byte[] Set(ReadOnlySpan<byte> block, string name, string value)
    {
        var text = block.IsEmpty ? "NATS/1.0\r\n\r\n" : Encoding.UTF8.GetString(block);
        var lines = text.Split("\r\n").Where(l => l.Length > 0).ToList();
        lines.RemoveAll(l => l.IndexOf(':') is var colon && colon > 0 && l.AsSpan(0, colon).Trim().Equals(name, StringComparison.OrdinalIgnoreCase));
        lines.Add($"{name}: {value}");
        return Encoding.UTF8.GetBytes(string.Join("\r\n", lines) + "\r\n\r\n");
    }
}
