using System.Globalization;
using System.Text;

namespace Courier.Protocols.JetStream;

/// <summary>
/// Durations written as Go's <c>time.Duration.String()</c> writes them ("1.5s", "100ms", "2m0s",
/// "1h0m0s"): nats-server puts them in status texts such as <c>409 Exceeded MaxRequestExpires of 1.5s</c>.
/// </summary>
public static class GoDuration
{
    private const long Microsecond = 1_000; // ns
    private const long Millisecond = 1_000_000; // ns
    private const long Second = 1_000_000_000; // ns

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
}
