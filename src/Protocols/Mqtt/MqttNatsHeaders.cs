using System.Buffers.Text;

namespace Courier.Protocols.Mqtt;

/// <summary>
/// Maps an MQTT 5.0 PUBLISH's application properties to NATS header lines and back: each User
/// Property is one header (<c>name: value</c>, in order, repeats kept); Payload Format Indicator,
/// Message Expiry Interval, Content Type, Response Topic and Correlation Data (base64) travel as the
/// <c>Mqtt-*</c> headers below, so a v5 subscriber gets them back as properties and a NATS client
/// sees them as headers. No allocation.
/// </summary>
/// <remarks>
/// A header line is <c>Name: Value\r\n</c>. A user property that cannot be a NATS header (a name
/// that is not printable ASCII without ':', or one starting with the reserved <c>Mqtt-</c> or
/// <c>Nmqtt-</c>; CR or LF in the value) makes the PUBLISH unrepresentable: the caller refuses it.
/// On the way back, headers whose name or value is not a valid MQTT string are left out, and
/// nats-server's <c>Nmqtt-*</c> headers are never properties.
/// </remarks>
public static class MqttNatsHeaders
{
    /// <summary>Header for the Payload Format Indicator (0 or 1).</summary>
    public static ReadOnlySpan<byte> PayloadFormat => "Mqtt-Payload-Format"u8;

    /// <summary>Header for the Message Expiry Interval (seconds, forwarded as published).</summary>
    public static ReadOnlySpan<byte> MessageExpiry => "Mqtt-Message-Expiry"u8;

    /// <summary>Header for the Content Type.</summary>
    public static ReadOnlySpan<byte> ContentType => "Mqtt-Content-Type"u8;

    /// <summary>
    /// Header for the Response Topic (the MQTT topic, unmapped). The connection also makes the topic the
    /// NATS reply subject, and a NATS reply subject the Response Topic of a delivery without this header,
    /// so MQTT 5.0 and NATS request/reply meet.
    /// </summary>
    public static ReadOnlySpan<byte> ResponseTopic => "Mqtt-Response-Topic"u8;

    /// <summary>Header for the Correlation Data (base64).</summary>
    public static ReadOnlySpan<byte> CorrelationData => "Mqtt-Correlation-Data"u8;

    private static ReadOnlySpan<byte> ReservedPrefix => "Mqtt-"u8;

    private static ReadOnlySpan<byte> NatsServerPrefix => "Nmqtt-"u8;

    /// <summary>
    /// Bytes of the header lines for a PUBLISH's validated <paramref name="properties"/>, or -1 when a
    /// user property cannot be a NATS header. Topic Alias and Subscription Identifier are not mapped
    /// (the connection refuses them first).
    /// </summary>
    public static int HeaderLinesLength(ReadOnlySpan<byte> properties)
    {
        var total = 0;
        foreach (var property in MqttProperties.Enumerate(properties))
        {
            switch (property.Id)
            {
                case MqttPropertyId.UserProperty:
                    if (!IsHeaderName(property.Data) || HasReservedPrefix(property.Data) || property.Value.IndexOfAny((byte)'\r', (byte)'\n') >= 0)
                    {
                        return -1;
                    }

                    total += Line(property.Data.Length, property.Value.Length);
                    break;
                case MqttPropertyId.PayloadFormatIndicator:
                    total += Line(PayloadFormat.Length, 1);
                    break;
                case MqttPropertyId.MessageExpiryInterval:
                    total += Line(MessageExpiry.Length, Digits(property.Number));
                    break;
                case MqttPropertyId.ContentType or MqttPropertyId.ResponseTopic:
                    if (property.Data.IndexOfAny((byte)'\r', (byte)'\n') >= 0)
                    {
                        return -1;
                    }

                    total += Line(property.Id == MqttPropertyId.ContentType ? ContentType.Length : ResponseTopic.Length, property.Data.Length);
                    break;
                case MqttPropertyId.CorrelationData:
                    total += Line(CorrelationData.Length, Base64.GetMaxEncodedToUtf8Length(property.Data.Length));
                    break;
            }
        }

        return total;
    }

    /// <summary>Writes the header lines <see cref="HeaderLinesLength"/> measured; returns the bytes written.</summary>
    public static int WriteHeaderLines(ReadOnlySpan<byte> properties, Span<byte> destination)
    {
        var at = 0;
        Span<byte> digits = stackalloc byte[10]; // a u32 in decimal
        foreach (var property in MqttProperties.Enumerate(properties))
        {
            switch (property.Id)
            {
                case MqttPropertyId.UserProperty:
                    at += WriteLine(destination[at..], property.Data, property.Value);
                    break;
                case MqttPropertyId.PayloadFormatIndicator:
                    at += WriteLine(destination[at..], PayloadFormat, property.Number == 1 ? "1"u8 : "0"u8);
                    break;
                case MqttPropertyId.MessageExpiryInterval:
                    Utf8Formatter.TryFormat(property.Number, digits, out var written);
                    at += WriteLine(destination[at..], MessageExpiry, digits[..written]);
                    break;
                case MqttPropertyId.ContentType:
                    at += WriteLine(destination[at..], ContentType, property.Data);
                    break;
                case MqttPropertyId.ResponseTopic:
                    at += WriteLine(destination[at..], ResponseTopic, property.Data);
                    break;
                case MqttPropertyId.CorrelationData:
                    var line = destination[at..];
                    CorrelationData.CopyTo(line);
                    ": "u8.CopyTo(line[CorrelationData.Length..]);
                    var valueAt = CorrelationData.Length + 2;
                    Base64.EncodeToUtf8(property.Data, line[valueAt..], out _, out var encoded);
                    "\r\n"u8.CopyTo(line[(valueAt + encoded)..]);
                    at += valueAt + encoded + 2;
                    break;
            }
        }

        return at;
    }

    /// <summary>
    /// The Message Expiry Interval a NATS header block carries (the first parsable <c>Mqtt-Message-Expiry</c>),
    /// seconds; false when it carries none. [MQTT-3.3.2-5]
    /// </summary>
    public static bool TryGetMessageExpiry(ReadOnlySpan<byte> headerBlock, out uint seconds)
    {
        seconds = 0;
        var rest = headerBlock;
        while (TryFindHeader(ref rest, MessageExpiry, out var value))
        {
            if (Utf8Parser.TryParse(value, out seconds, out var used) && used == value.Length)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Whether a NATS header block carries a <c>Mqtt-Response-Topic</c> header (then it, not the reply subject, is the Response Topic).</summary>
    public static bool HasResponseTopic(ReadOnlySpan<byte> headerBlock)
    {
        var rest = headerBlock;
        return TryFindHeader(ref rest, ResponseTopic, out _);
    }

    // The value of the next header named `name` in `block` (a whole block at the first call: its status
    // line is skipped), trimmed; `block` is left after that line.
    private static bool TryFindHeader(ref ReadOnlySpan<byte> block, ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        value = default;
        if (block.StartsWith("NATS/"u8))
        {
            var firstLine = block.IndexOf("\r\n"u8);
            block = firstLine < 0 ? default : block[(firstLine + 2)..];
        }

        while (true)
        {
            var end = block.IndexOf("\r\n"u8);
            if (end <= 0)
            {
                block = default;
                return false;
            }

            var line = block[..end];
            block = block[(end + 2)..];
            var colon = line.IndexOf((byte)':');
            if (colon > 0 && line[..colon].Trim((byte)' ').Is(name))
            {
                value = line[(colon + 1)..].Trim((byte)' ');
                return true;
            }
        }
    }

    /// <summary>Bytes of the MQTT 5.0 properties for a NATS header block (<c>NATS/1.0...\r\n\r\n</c>; empty: none).</summary>
    public static int PropertiesLength(ReadOnlySpan<byte> headerBlock) => Convert(headerBlock, default, measure: true);

    /// <summary>Writes the properties <see cref="PropertiesLength"/> measured; returns the bytes written.</summary>
    public static int WriteProperties(ReadOnlySpan<byte> headerBlock, Span<byte> destination) => Convert(headerBlock, destination, measure: false);

    private static int Convert(ReadOnlySpan<byte> block, Span<byte> destination, bool measure)
    {
        var firstLine = block.IndexOf("\r\n"u8);
        if (firstLine < 0)
        {
            return 0;
        }

        var rest = block[(firstLine + 2)..]; // past the status line
        var at = 0;
        var seen = 0; // single-instance properties written, one bit each
        while (true)
        {
            var end = rest.IndexOf("\r\n"u8);
            if (end <= 0)
            {
                return at;
            }

            var line = rest[..end];
            rest = rest[(end + 2)..];
            var colon = line.IndexOf((byte)':');
            if (colon <= 0)
            {
                continue;
            }

            var name = line[..colon].Trim((byte)' ');
            var value = line[(colon + 1)..].Trim((byte)' ');
            if (!MqttProperties.IsValidString(value) || value.Length > ushort.MaxValue)
            {
                continue;
            }

            if (name.StartsWith(NatsServerPrefix, true))
            {
                continue; // nats-server's own (Nmqtt-Pub, ...)
            }

            var span = measure ? default : destination[at..];
            if (name.StartsWith(ReservedPrefix, true))
            {
                at += Mapped(name, value, span, measure, ref seen);
                continue;
            }

            if (MqttProperties.IsValidString(name) && name.Length <= ushort.MaxValue)
            {
                at += measure ? MqttProperties.PairSize(name.Length, value.Length) : MqttProperties.WritePair(span, name, value);
            }
        }
    }

    // One of the Mqtt-* headers back to its property (the first of each; unparsable values are left out).
    private static int Mapped(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, Span<byte> span, bool measure, ref int seen)
    {
        int bit;
        if (name.Is(PayloadFormat) && (value.SequenceEqual("0"u8) || value.SequenceEqual("1"u8)))
        {
            bit = 1;
            if ((seen & bit) != 0)
            {
                return 0;
            }

            seen |= bit;
            return measure ? MqttProperties.ByteSize : MqttProperties.WriteByte(span, MqttPropertyId.PayloadFormatIndicator, (byte)(value[0] - '0'));
        }

        if (name.Is(MessageExpiry) && Utf8Parser.TryParse(value, out uint seconds, out var used) && used == value.Length)
        {
            bit = 2;
            if ((seen & bit) != 0)
            {
                return 0;
            }

            seen |= bit;
            return measure ? MqttProperties.FourByteSize : MqttProperties.WriteUInt32(span, MqttPropertyId.MessageExpiryInterval, seconds);
        }

        var id = name.Is(ContentType) ? MqttPropertyId.ContentType
            : name.Is(ResponseTopic) ? MqttPropertyId.ResponseTopic
            : name.Is(CorrelationData) ? MqttPropertyId.CorrelationData
            : (MqttPropertyId)0;
        if (id == 0)
        {
            return 0;
        }

        bit = 1 << (int)id;
        if ((seen & bit) != 0)
        {
            return 0;
        }

        if (id != MqttPropertyId.CorrelationData)
        {
            if (id == MqttPropertyId.ResponseTopic && (value.IsEmpty || value.IndexOfAny((byte)'+', (byte)'#') >= 0))
            {
                return 0; // a Response Topic is a topic name [MQTT-3.3.2-14]
            }

            seen |= bit;
            return measure ? MqttProperties.StringSize(value.Length) : MqttProperties.WriteString(span, id, value);
        }

        if (!Base64.IsValid(value, out var decodedLength) || decodedLength > ushort.MaxValue)
        {
            return 0;
        }

        seen |= bit;
        if (measure)
        {
            return MqttProperties.StringSize(decodedLength);
        }

        span[0] = (byte)id;
        span[1] = (byte)(decodedLength >> 8);
        span[2] = (byte)decodedLength;
        Base64.DecodeFromUtf8(value, span[3..], out _, out _);
        return MqttProperties.StringSize(decodedLength);
    }

    // A NATS header name: printable ASCII without ':' (nats-server's textproto rules).
    private static bool IsHeaderName(ReadOnlySpan<byte> name)
    {
        if (name.IsEmpty)
        {
            return false;
        }

        foreach (var b in name)
        {
            if (b is <= 32 or >= 127 or (byte)':')
            {
                return false;
            }
        }

        return true;
    }

    private static bool HasReservedPrefix(ReadOnlySpan<byte> name) => name.StartsWith(ReservedPrefix, true) || name.StartsWith(NatsServerPrefix, true);

    private static int Line(int nameLength, int valueLength) => nameLength + 2 + valueLength + 2;

    private static int WriteLine(Span<byte> destination, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        name.CopyTo(destination);
        ": "u8.CopyTo(destination[name.Length..]);
        value.CopyTo(destination[(name.Length + 2)..]);
        "\r\n"u8.CopyTo(destination[(name.Length + 2 + value.Length)..]);
        return Line(name.Length, value.Length);
    }

    private static int Digits(uint value)
    {
        var digits = 1;
        while (value >= 10)
        {
            value /= 10;
            digits++;
        }

        return digits;
    }

    // ASCII case-insensitive, as header names compare.
    private static bool StartsWith(this ReadOnlySpan<byte> text, ReadOnlySpan<byte> prefix, bool ignoreCase) =>
        text.Length >= prefix.Length && (ignoreCase ? System.Text.Ascii.EqualsIgnoreCase(text[..prefix.Length], prefix) : text[..prefix.Length].SequenceEqual(prefix));

    private static bool Is(this ReadOnlySpan<byte> name, ReadOnlySpan<byte> header) => System.Text.Ascii.EqualsIgnoreCase(name, header);
}
