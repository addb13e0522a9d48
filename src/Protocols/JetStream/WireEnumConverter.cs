using System.Text.Json;
using System.Text.Json.Serialization;

namespace Courier.Protocols.JetStream;

/// <summary>
/// Reads and writes an enum as its nats-server wire name ("limits", "explicit", ...), exact and
/// case-sensitive as nats-server's UnmarshalJSON. The one place a policy's text becomes a value:
/// past the JSON edge the server carries the enum.
/// </summary>
/// <remarks>
/// An unknown name (or null) is refused as nats-server refuses it (a <see cref="JsonException"/>,
/// answered "invalid JSON"), unless the enum keeps an <paramref name="unknown"/> value for it: then
/// it reads as that value, which the configuration rules refuse with their own text (a stream's
/// "invalid storage type", ...). Cold path: API requests and stored configurations only.
/// </remarks>
public abstract class WireEnumConverter<T>(T? unknown, params (string Wire, T Value)[] names) : JsonConverter<T>
    where T : struct, Enum
{
    public override bool HandleNull => true;

    public override T Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        if (reader.TokenType is not (JsonTokenType.String or JsonTokenType.Null))
        {
            throw new JsonException($"{typeof(T).Name} is a string");
        }

        if (reader.TokenType == JsonTokenType.String)
        {
            foreach (var (wire, value) in names)
            {
                if (reader.ValueTextEquals(wire))
                {
                    return value;
                }
            }
        }

        return unknown ?? throw new JsonException($"unknown {typeof(T).Name}");
    }

    public override void Write(Utf8JsonWriter writer, T value, JsonSerializerOptions options)
    {
        foreach (var (wire, known) in names)
        {
            if (EqualityComparer<T>.Default.Equals(known, value))
            {
                writer.WriteStringValue(wire);
                return;
            }
        }

        throw new JsonException($"{typeof(T).Name} {value} has no wire name");
    }
}
