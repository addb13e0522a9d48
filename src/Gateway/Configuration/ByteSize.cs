using System.Globalization;

namespace Courier.Gateway.Configuration;

/// <summary>
/// Byte counts written with a unit, in the two forms nats-server accepts.
/// </summary>
internal static class ByteSize
{
    /// <summary>
    /// Parses <c>&lt;integer&gt;[suffix]</c> as nats-server's config lexer and parser do (conf/parse.go):
    /// the suffix is case-insensitive; a bare letter is decimal (<c>k</c> = 1000, <c>m</c> = 1000²,
    /// <c>g</c>, <c>t</c>, <c>p</c>, <c>e</c>), a letter with <c>b</c>, <c>i</c> or <c>ib</c> is binary
    /// (<c>kb</c> = <c>ki</c> = <c>kib</c> = 1024, <c>mb</c> = 1024², ...). No suffix means bytes.
    /// </summary>
    /// <param name="text">The number and suffix, nothing else (no spaces).</param>
    /// <param name="value">The byte count.</param>
    /// <param name="error">Why the text is not a size, when the result is false.</param>
    public static bool TryParse(string text, out long value, out string? error)
    {
        value = 0;
        var digits = text.Length > 0 && text[0] == '-' ? 1 : 0;
        var start = digits;
        while (digits < text.Length && char.IsAsciiDigit(text[digits]))
        {
            digits++;
        }

        if (digits == start)
        {
            error = $"expected integer, but got '{text}'";
            return false;
        }

        if (!long.TryParse(text.AsSpan(0, digits), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var number))
        {
            error = $"integer '{text}' is out of the range";
            return false;
        }

        var multiplier = Multiplier(text.AsSpan(digits));
        if (multiplier == 0)
        {
            error = $"unknown size suffix '{text[digits..]}' in '{text}'; use k, kb, m, mb, g, gb, t, tb, p, pb, e or eb";
            return false;
        }

        try
        {
            value = checked(number * multiplier);
        }
        catch (OverflowException)
        {
            error = $"integer '{text}' is out of the range";
            return false;
        }

        error = null;
        return true;
    }

    /// <summary>
    /// Parses a JetStream storage size given as a string, as nats-server's <c>getStorageSize</c>:
    /// an integer followed by exactly one of <c>K</c>, <c>M</c>, <c>G</c>, <c>T</c> (upper case,
    /// binary: K = 1024). The empty string is 0.
    /// </summary>
    public static bool TryParseStorageSize(string text, out long value, out string? error)
    {
        value = 0;
        error = null;
        if (text.Length == 0)
        {
            return true;
        }

        // Shift counts: K = 2^10 bytes, M = 2^20, G = 2^30, T = 2^40 (nats-server's suffixMap).
        var shift = text[^1] switch { 'K' => 10, 'M' => 20, 'G' => 30, 'T' => 40, _ => 0 };
        if (shift == 0)
        {
            error = "sizes defined as strings must end in K, M, G, T";
            return false;
        }

        if (!long.TryParse(text.AsSpan(0, text.Length - 1), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var number))
        {
            error = $"invalid size '{text}'";
            return false;
        }

        if (number > long.MaxValue >> shift || number < long.MinValue >> shift)
        {
            error = $"size '{text}' is out of the range";
            return false;
        }

        value = number << shift;
        return true;
    }

    /// <summary>Bytes per unit of a lexer suffix; 0 when the suffix is not one.</summary>
    private static long Multiplier(ReadOnlySpan<char> suffix)
    {
        if (suffix.IsEmpty)
        {
            return 1;
        }

        var power = char.ToLowerInvariant(suffix[0]) switch
        {
            'k' => 1,
            'm' => 2,
            'g' => 3,
            't' => 4,
            'p' => 5,
            'e' => 6,
            _ => 0,
        };
        if (power == 0)
        {
            return 0;
        }

        var rest = suffix[1..];
        long unit;
        if (rest.IsEmpty)
        {
            unit = 1000; // decimal: 1k = 1000 bytes
        }
        else if (rest.Equals("b", StringComparison.OrdinalIgnoreCase)
            || rest.Equals("i", StringComparison.OrdinalIgnoreCase)
            || rest.Equals("ib", StringComparison.OrdinalIgnoreCase))
        {
            unit = 1024; // binary: 1kb = 1ki = 1kib = 1024 bytes
        }
        else
        {
            return 0;
        }

        long multiplier = 1;
        for (var i = 0; i < power; i++)
        {
            multiplier *= unit; // at most 1024^6 = 2^60, fits a long
        }

        return multiplier;
    }
}
