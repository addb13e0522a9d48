using System.Globalization;
using Courier.Protocols.Nats;

namespace Courier.Protocols.JetStream;

/// <summary>
/// A message's own time to live, nats-server 2.11's <c>Nats-TTL</c> header (ADR-43), read as nats-server's
/// getMessageTTL / parseMessageTTL read it: <c>never</c> (any case), a Go duration of at least one second
/// (<c>"5s"</c>, <c>"1h30m"</c>, whole seconds kept), or a bare number of seconds.
/// </summary>
public static class MessageTtl
{
    /// <summary>The header's name.</summary>
    public const string Header = "Nats-TTL";

    /// <summary>What <c>never</c> reads as: the message outlives max_age too.</summary>
    public const long Never = -1;

    /// <summary>
    /// The TTL in <paramref name="headers"/>: seconds above 0, <see cref="Never"/>, or 0 when there is none.
    /// False when the header is there but invalid (nats-server's JSMessageTTLInvalidErr).
    /// </summary>
    public static bool TryRead(ReadOnlySpan<byte> headers, out long seconds)
    {
        seconds = 0;
        return headers.IsEmpty || NatsHeaders.Get(headers, Header) is not { Length: > 0 } value || TryParse(value, out seconds);
    }

    /// <summary>Parses a <c>Nats-TTL</c> value (see the type); false for an invalid one.</summary>
    public static bool TryParse(string value, out long seconds)
    {
        seconds = 0;
        if (value.Equals("never", StringComparison.OrdinalIgnoreCase))
        {
            seconds = Never;
            return true;
        }

        if (GoDuration.TryParse(value, out var duration, out _))
        {
            // A duration below a second (0 and negative ones too) is invalid.
            if (duration < TimeSpan.FromSeconds(1))
            {
                return false;
            }

            seconds = (long)duration.TotalSeconds;
            return true;
        }

        // Go's parseInt64: digits only, else -1, which reads as invalid ("0" is no TTL).
        if (value.Length == 0 || value.Length > 18 || !value.All(char.IsAsciiDigit))
        {
            return false;
        }

        seconds = long.Parse(value, NumberStyles.None, CultureInfo.InvariantCulture);
        return true;
    }

    /// <summary>The Unix-nanosecond time a message stored at <paramref name="timestamp"/> with a TTL of <paramref name="seconds"/> (above 0) expires.</summary>
    public static long Expiry(long timestamp, long seconds) =>
        seconds > (long.MaxValue - timestamp) / 1_000_000_000 ? long.MaxValue : timestamp + (seconds * 1_000_000_000);
}
