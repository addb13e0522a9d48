using System.Globalization;
using System.Numerics;
using System.Text;
using System.Text.Json;

namespace Courier.Protocols.JetStream;

/// <summary>
/// nats-server 2.12's distributed counters (ADR-49, <c>allow_msg_counter</c>): a publish carries
/// <c>Nats-Incr: &lt;signed integer&gt;</c> and no payload; the stream stores the subject's new total as
/// <c>{"val":"&lt;n&gt;"}</c>. Values are arbitrary-precision (Go's big.Int, here <see cref="BigInteger"/>).
/// A stream that sources counters keeps, per origin stream and subject, the last total it copied in the
/// <c>Nats-Counter-Sources</c> header (<c>{"stream":{"subject":"n"}}</c>), so that it adds only the difference.
/// </summary>
public static class MessageCounter
{
    /// <summary>The increment's header (JSMessageIncr).</summary>
    public const string IncrHeader = "Nats-Incr";

    /// <summary>The header with the last totals copied from each source (JSMessageCounterSources).</summary>
    public const string SourcesHeader = "Nats-Counter-Sources";

    /// <summary>A publish with <c>Nats-Incr</c> on a stream without allow_msg_counter (JSMessageIncrDisabledErr).</summary>
    public static ApiError Disabled => new(400, 10168, "message counters is disabled");

    /// <summary>A publish without <c>Nats-Incr</c> on a counter stream (JSMessageIncrMissingErr).</summary>
    public static ApiError Missing => new(400, 10169, "message counter increment is missing");

    /// <summary>An increment with a payload (JSMessageIncrPayloadErr).</summary>
    public static ApiError Payload => new(400, 10170, "message counter has payload");

    /// <summary>An unreadable increment, or one with headers a counter refuses (JSMessageIncrInvalidErr).</summary>
    public static ApiError Invalid => new(400, 10171, "message counter increment is invalid");

    /// <summary>The subject's last message is not a counter value (JSMessageCounterBrokenErr).</summary>
    public static ApiError Broken => new(400, 10172, "message counter is broken");

    /// <summary>A mirror with allow_msg_counter (JSMirrorWithCountersErr).</summary>
    public static ApiError MirrorWithCounters => new(400, 10173, "stream mirrors can not also calculate counters");

    /// <summary>
    /// The <c>Nats-Incr</c> in <paramref name="headers"/> (nats-server's getMessageIncr): null when there is
    /// none (or it is empty); false when it is not a base-10 integer with an optional sign (Go's SetString).
    /// </summary>
    public static bool TryReadIncrement(ReadOnlySpan<byte> headers, out BigInteger? increment)
    {
        increment = null;
        var value = SliceHeader(headers, "Nats-Incr:"u8);
        if (value.IsEmpty)
        {
            return true;
        }

        if (!TryParseInteger(value, out var parsed))
        {
            return false;
        }

        increment = parsed;
        return true;
    }

    /// <summary>Go's <c>(*big.Int).SetString(s, 10)</c>: an optional <c>+</c> or <c>-</c>, then one or more digits, nothing else.</summary>
    public static bool TryParseInteger(ReadOnlySpan<byte> text, out BigInteger value)
    {
        value = default;
        var digits = text.Length > 0 && (text[0] == (byte)'+' || text[0] == (byte)'-') ? text[1..] : text;
        if (digits.IsEmpty || digits.IndexOfAnyExceptInRange((byte)'0', (byte)'9') >= 0)
        {
            return false;
        }

        value = BigInteger.Parse(Encoding.ASCII.GetString(digits), NumberStyles.None, CultureInfo.InvariantCulture);
        if (text[0] == (byte)'-')
        {
            value = -value;
        }

        return true;
    }

    /// <summary>
    /// A counter message's total (nats-server unmarshals the body into <c>{"val": string}</c>): false when the
    /// body is not such JSON (the counter is broken). A <c>val</c> that is missing or not an integer reads as 0, as
    /// Go's SetString leaves it.
    /// </summary>
    public static bool TryReadValue(ReadOnlySpan<byte> body, out BigInteger value)
    {
        value = BigInteger.Zero;
        try
        {
            var reader = new Utf8JsonReader(body);
            if (!reader.Read() || reader.TokenType == JsonTokenType.Null)
            {
                return reader.TokenType == JsonTokenType.Null && !reader.Read();
            }

            if (reader.TokenType != JsonTokenType.StartObject)
            {
                return false;
            }

            string? val = null;
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                // Go's encoding/json matches field names case-insensitively.
                var isVal = reader.ValueTextEquals("val"u8) || string.Equals(reader.GetString(), "val", StringComparison.OrdinalIgnoreCase);
                reader.Read();
                if (isVal)
                {
                    if (reader.TokenType == JsonTokenType.String)
                    {
                        val = reader.GetString();
                    }
                    else if (reader.TokenType != JsonTokenType.Null)
                    {
                        return false; // a number or an object is no string: json.Unmarshal fails
                    }
                }
                else
                {
                    reader.Skip();
                }
            }

            if (reader.TokenType != JsonTokenType.EndObject || reader.Read())
            {
                return false;
            }

            if (val is not null && TryParseInteger(Encoding.UTF8.GetBytes(val), out var parsed))
            {
                value = parsed;
            }

            return true;
        }
        catch (JsonException)
        {
            return false;
        }
    }

    /// <summary>A counter message's body: <c>{"val":"&lt;n&gt;"}</c>.</summary>
    public static byte[] FormatValue(BigInteger value) =>
        Encoding.ASCII.GetBytes("{\"val\":\"" + value.ToString(CultureInfo.InvariantCulture) + "\"}");

    /// <summary>
    /// Reads a <c>Nats-Counter-Sources</c> value (<c>{"stream":{"subject":"n"}}</c>); false when it is not that JSON.
    /// </summary>
    public static bool TryReadSources(ReadOnlySpan<byte> json, out SortedDictionary<string, SortedDictionary<string, string>> sources)
    {
        sources = new(StringComparer.Ordinal);
        try
        {
            using var document = JsonDocument.Parse(json.ToArray());
            if (document.RootElement.ValueKind == JsonValueKind.Null)
            {
                return true;
            }

            if (document.RootElement.ValueKind != JsonValueKind.Object)
            {
                return false;
            }

            foreach (var stream in document.RootElement.EnumerateObject())
            {
                var subjects = new SortedDictionary<string, string>(StringComparer.Ordinal);
                if (stream.Value.ValueKind == JsonValueKind.Object)
                {
                    foreach (var subject in stream.Value.EnumerateObject())
                    {
                        if (subject.Value.ValueKind != JsonValueKind.String)
                        {
                            return false;
                        }

                        subjects[subject.Name] = subject.Value.GetString()!;
                    }
                }
                else if (stream.Value.ValueKind != JsonValueKind.Null)
                {
                    return false;
                }

                sources[stream.Name] = subjects;
            }

            return true;
        }
        catch (JsonException)
        {
            return false;
        }
    }

    /// <summary>Writes a <c>Nats-Counter-Sources</c> value as Go's json.Marshal does (keys sorted, no spaces).</summary>
    public static string FormatSources(SortedDictionary<string, SortedDictionary<string, string>> sources)
    {
        using var buffer = new MemoryStream();
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            foreach (var (stream, subjects) in sources)
            {
                writer.WriteStartObject(stream);
                foreach (var (subject, total) in subjects)
                {
                    writer.WriteString(subject, total);
                }

                writer.WriteEndObject();
            }

            writer.WriteEndObject();
        }

        return Encoding.UTF8.GetString(buffer.ToArray());
    }

    /// <summary>
    /// A header's value as nats-server's sliceHeader finds it: <paramref name="keyColon"/> (case-sensitive, with its
    /// colon) at the start of a line, leading spaces skipped, up to the line's CRLF; empty when absent.
    /// </summary>
    public static ReadOnlySpan<byte> SliceHeader(ReadOnlySpan<byte> headers, ReadOnlySpan<byte> keyColon)
    {
        var index = headers.IndexOf(keyColon);
        if (index < 2 || headers[index - 1] != (byte)'\n' || headers[index - 2] != (byte)'\r')
        {
            return [];
        }

        index += keyColon.Length;
        while (index < headers.Length && headers[index] == (byte)' ')
        {
            index++;
        }

        var rest = headers[index..];
        var end = rest.IndexOf("\r\n"u8);
        return end < 0 ? rest : rest[..end];
    }
}
