using System.Text;

namespace Courier.Protocols.Nats;

/// <summary>
/// Reads and writes NATS header blocks: <c>NATS/1.0[ status]\r\nKey: Value\r\n...\r\n\r\n</c>.
/// Keys compare case-insensitively, as nats-server's textproto-based lookups do. Control paths only.
/// </summary>
public static class NatsHeaders
{
    /// <summary>The first value of <paramref name="name"/>, or null.</summary>
    /// <remarks>
    /// Lines are scanned as bytes and only the value found is decoded; a block with a byte outside ASCII in a
    /// name, or a name outside ASCII, is decoded whole, so that Unicode whitespace trims as it does in text.
    /// </remarks>
    public static string? Get(ReadOnlySpan<byte> block, string name)
    {
        if (block.IsEmpty)
        {
            return null;
        }

        if (Ascii.IsValid(name))
        {
            var rest = block;
            while (true)
            {
                var end = rest.IndexOf("\r\n"u8);
                var line = end < 0 ? rest : rest[..end];
                var colon = line.IndexOf((byte)':');
                if (colon > 0)
                {
                    var key = line[..colon];
                    if (!Ascii.IsValid(key))
                    {
                        return GetDecoded(block, name);
                    }

                    if (Ascii.EqualsIgnoreCase(key.Trim(AsciiWhitespace), name))
                    {
                        return Encoding.UTF8.GetString(line[(colon + 1)..]).Trim();
                    }
                }

                if (end < 0)
                {
                    return null;
                }

                rest = rest[(end + 2)..];
            }
        }

        return GetDecoded(block, name);
    }

    /// <summary>
    /// True when <paramref name="block"/> names no header JetStream acts on: no name (trimmed, any case) starts with
    /// <c>Nats-</c>, as <see cref="Get"/> would find them. A name with a byte outside ASCII counts as not inert.
    /// Allocates nothing: JetStream's store path asks it per message.
    /// </summary>
    public static bool InertForJetStream(ReadOnlySpan<byte> block)
    {
        var rest = block;
        while (!rest.IsEmpty)
        {
            var end = rest.IndexOf("\r\n"u8);
            var line = end < 0 ? rest : rest[..end];
            var colon = line.IndexOf((byte)':');
            if (colon > 0)
            {
                var key = line[..colon];
                if (!Ascii.IsValid(key))
                {
                    return false;
                }

                var trimmed = key.Trim(AsciiWhitespace);
                if (trimmed.Length >= 5 && Ascii.EqualsIgnoreCase(trimmed[..5], "nats-"u8))
                {
                    return false;
                }
            }

            if (end < 0)
            {
                break;
            }

            rest = rest[(end + 2)..];
        }

        return true;
    }

    // What string.Trim removes among ASCII (char.IsWhiteSpace: U+0009-U+000D and the space).
    private static ReadOnlySpan<byte> AsciiWhitespace => " \t\r\n\v\f"u8;

    private static string? GetDecoded(ReadOnlySpan<byte> block, string name)
    {
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
