using System.Text.Json;

namespace Courier.Protocols.JetStream;

/// <summary>What nats-server asks of a JetStream API request's body.</summary>
public static class ApiRequests
{
    /// <summary>
    /// nats-server's isEmptyRequest: no body, <c>{}</c>, or any JSON object without members; anything else
    /// (another JSON value, an object with members, text that is not JSON) is a body.
    /// </summary>
    public static bool IsEmpty(ReadOnlySpan<byte> body)
    {
        if (body.IsEmpty || body.SequenceEqual("{}"u8))
        {
            return true;
        }

        var reader = new Utf8JsonReader(body);
        try
        {
            return reader.Read() && reader.TokenType == JsonTokenType.StartObject
                && reader.Read() && reader.TokenType == JsonTokenType.EndObject
                && !reader.Read();
        }
        catch (JsonException)
        {
            return false;
        }
    }
}
