using System.Text.Json;

namespace Courier.Protocols.JetStream;

/// <summary>
/// An enum's nats-server wire names ("limits", "explicit", ...), read and written exact and
/// case-sensitive as nats-server's UnmarshalJSON: the one place a policy's text becomes a value; past
/// the JSON edge the server carries the enum. Each enum's converter (<see cref="StorageTypeConverter"/>,
/// ...) is a plain class over one of these.
/// </summary>
/// <remarks>
/// An unknown name (or null) is refused as nats-server refuses it (a <see cref="JsonException"/>,
/// answered "invalid JSON"), unless the enum keeps an <c>unknown</c> value for it: then it reads as that
/// value, which the configuration rules refuse with their own text (a stream's "invalid storage type",
/// ...). Cold path: API requests and stored configurations only. Not generic over the enum: a generic
/// converter's instantiations over enums were not precompiled into the ReadyToRun image, and JIT-compiling
/// them cost a fresh server's first stream and consumer creates several milliseconds.
/// </remarks>
/// <param name="type">The enum's name, for errors.</param>
/// <param name="unknown">The value an unknown name reads as; null: an unknown name is invalid JSON.</param>
/// <param name="names">Each wire name and the enum value (as an int) it stands for.</param>
public sealed class WireNames(string type, int? unknown, params (string Wire, int Value)[] names)
{
    public int Read(ref Utf8JsonReader reader)
    {
        if (reader.TokenType is not (JsonTokenType.String or JsonTokenType.Null))
        {
            throw new JsonException($"{type} is a string");
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

        return unknown ?? throw new JsonException($"unknown {type}");
    }

    public void Write(Utf8JsonWriter writer, int value)
    {
        foreach (var (wire, known) in names)
        {
            if (known == value)
            {
                writer.WriteStringValue(wire);
                return;
            }
        }

        throw new JsonException($"{type} {value} has no wire name");
    }
}
