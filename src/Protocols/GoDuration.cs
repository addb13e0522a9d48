using System.Globalization;
using System.Text;

namespace Courier.Protocols;

/// <summary>
/// Go's durations as nats-server reads and writes them: <see cref="TryParse"/> is
/// <c>time.ParseDuration</c> (config values such as <c>"2m"</c>, <c>"1h30m"</c>, <c>"1.5s"</c>),
/// <see cref="Format"/> is <c>time.Duration.String()</c> (status texts such as
/// <c>409 Exceeded MaxRequestExpires of 1.5s</c>), <see cref="FormatUptime"/> is nats-server's
/// uptime text (<c>1d2h3m4s</c>).
/// </summary>
public static class GoDuration
{
    private const long Microsecond = 1_000; // ns
    private const long Millisecond = 1_000_000; // ns
    private const long Second = 1_000_000_000; // ns
    private const decimal NanosPerTick = 100m; // a TimeSpan tick is 100 ns

    /// <summary>
    /// Parses <paramref name="text"/> as Go's <c>time.ParseDuration</c>: an optional sign, then one or
    /// more decimal numbers each followed by a unit (<c>ns</c>, <c>us</c>, <c>µs</c>, <c>ms</c>,
    /// <c>s</c>, <c>m</c>, <c>h</c>); a lone <c>0</c> needs no unit. On failure
    /// <paramref name="error"/> is Go's message.
    /// </summary>
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

    /// <summary>Formats <paramref name="nanoseconds"/> as Go does.</summary>
    public static string Format(long nanoseconds)
    {
        if (nanoseconds == 0)
        {
            return "0s";
        }

        var text = new StringBuilder();
        if (nanoseconds < 0)
        {
            text.Append('-');
        }

        var u = nanoseconds == long.MinValue ? (ulong)long.MaxValue + 1 : (ulong)Math.Abs(nanoseconds);
        if (u < Second)
        {
            // Below a second: one unit with a fraction (ns, µs or ms).
            return u < Microsecond ? text.Append(u.ToString(CultureInfo.InvariantCulture)).Append("ns").ToString()
                : u < Millisecond ? AppendFraction(text, u, 3).Append("µs").ToString()
                : AppendFraction(text, u, 6).Append("ms").ToString();
        }

        var seconds = u % (60 * Second);
        var minutes = u / (60 * Second);
        if (minutes > 0)
        {
            var hours = minutes / 60;
            if (hours > 0)
            {
                text.Append(hours.ToString(CultureInfo.InvariantCulture)).Append('h');
            }

            text.Append((minutes % 60).ToString(CultureInfo.InvariantCulture)).Append('m');
        }

        return AppendFraction(text, seconds, 9).Append('s').ToString();
    }

    // value / 10^digits, with the fraction's trailing zeros (and a bare point) dropped.
    private static StringBuilder AppendFraction(StringBuilder text, ulong value, int digits)
    {
        var scale = 1UL;
        for (var i = 0; i < digits; i++)
        {
            scale *= 10;
        }

        text.Append((value / scale).ToString(CultureInfo.InvariantCulture));
        var fraction = value % scale;
        if (fraction != 0)
        {
            text.Append('.').Append(fraction.ToString(CultureInfo.InvariantCulture).PadLeft(digits, '0').TrimEnd('0'));
        }

        return text;
    }

    /// <summary>A duration the way nats-server prints uptime and idle time: <c>1d2h3m4s</c>, largest units first (negative as 0s).</summary>
    public static string FormatUptime(TimeSpan d)
    {
        if (d < TimeSpan.Zero)
        {
            d = TimeSpan.Zero;
        }

        var text = "";
        if (d.Days > 0)
        {
            text += $"{d.Days}d";
        }

        if (d.Hours > 0 || text.Length > 0)
        {
            text += $"{d.Hours}h";
        }

        if (d.Minutes > 0 || text.Length > 0)
        {
            text += $"{d.Minutes}m";
        }

        return text + $"{d.Seconds}s";
    }
}
