using System.Globalization;

namespace Courier.Gateway.Configuration;

/// <summary>
/// Go's <c>time.ParseDuration</c>, which nats-server uses for duration strings such as
/// <c>"2m"</c>, <c>"1h30m"</c>, <c>"500ms"</c>, <c>"1.5s"</c>: an optional sign, then one or more
/// decimal numbers each followed by a unit (<c>ns</c>, <c>us</c>, <c>µs</c>, <c>ms</c>, <c>s</c>,
/// <c>m</c>, <c>h</c>). A lone <c>0</c> needs no unit.
/// </summary>
internal static class GoDuration
{
    private const decimal NanosPerTick = 100m; // a TimeSpan tick is 100 ns

    /// <summary>Parses <paramref name="text"/>; on failure <paramref name="error"/> is Go's message.</summary>
    public static bool TryParse(string text, out TimeSpan value, out string? error)
    {
        value = TimeSpan.Zero;
        error = $"time: invalid duration \"{text}\"";
        var s = text.AsSpan();
        var negative = false;
        if (s.Length > 0 && (s[0] == '-' || s[0] == '+'))
        {
            negative = s[0] == '-';
            s = s[1..];
        }

        if (s is "0")
        {
            error = null;
            return true;
        }

        if (s.IsEmpty)
        {
            return false;
        }

        // Go limits a duration to an int64 of nanoseconds (about 292 years).
        var maxNanos = (decimal)long.MaxValue;
        decimal totalNanos = 0;
        while (!s.IsEmpty)
        {
            var digits = 0;
            while (digits < s.Length && (char.IsAsciiDigit(s[digits]) || s[digits] == '.'))
            {
                digits++;
            }

            var number = s[..digits];
            if (number.IsEmpty || number is "." || number.IndexOf('.') != number.LastIndexOf('.')
                || number.Length > 28 // decimal holds 28 digits; anything longer overflows anyway
                || !decimal.TryParse(number, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var amount))
            {
                return false;
            }

            s = s[digits..];
            var unitLength = 0;
            while (unitLength < s.Length && s[unitLength] != '.' && !char.IsAsciiDigit(s[unitLength]))
            {
                unitLength++;
            }

            if (unitLength == 0)
            {
                error = $"time: missing unit in duration \"{text}\"";
                return false;
            }

            var unit = s[..unitLength].ToString();
            decimal nanosPerUnit = unit switch
            {
                "ns" => 1m,
                "us" or "\u00b5s" or "\u03bcs" => 1_000m, // micro sign and Greek mu, both accepted by Go
                "ms" => 1_000_000m,
                "s" => 1_000_000_000m,
                "m" => 60m * 1_000_000_000m,
                "h" => 3600m * 1_000_000_000m,
                _ => 0m,
            };
            if (nanosPerUnit == 0m)
            {
                error = $"time: unknown unit \"{unit}\" in duration \"{text}\"";
                return false;
            }

            s = s[unitLength..];
            if (amount > maxNanos / nanosPerUnit)
            {
                return false;
            }

            totalNanos += decimal.Truncate(amount * nanosPerUnit);
            if (totalNanos > maxNanos)
            {
                return false;
            }
        }

        var ticks = (long)decimal.Truncate(totalNanos / NanosPerTick);
        value = TimeSpan.FromTicks(negative ? -ticks : ticks);
        error = null;
        return true;
    }
}
