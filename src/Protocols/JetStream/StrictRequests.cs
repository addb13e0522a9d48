using System.Text.Json;
using System.Text.Json.Serialization;

namespace Courier.Protocols.JetStream;

/// <summary>
/// The configurations of STREAM.CREATE / UPDATE and CONSUMER.CREATE read as nats-server 2.12 reads them
/// with <c>jetstream.strict</c> (its default): a field Courier does not know is refused with
/// <c>invalid JSON: json: unknown field "…"</c> (jetstream_api.go unmarshalRequest, json DisallowUnknownFields),
/// never kept and echoed as if it were applied.
/// </summary>
/// <remarks>
/// Fields newer than the advertised 2.10.22 that Courier does not implement (allow_atomic,
/// allow_msg_schedules, ...) are not in the models, so they are
/// unknown here as they are to a nats-server that lacks them. Stored configurations are read leniently
/// (<see cref="JetStreamJsonContext"/>), so a stream written before this still loads.
/// </remarks>
public static class StrictRequests
{
    /// <summary>A STREAM.CREATE / UPDATE body, or the error nats-server's strict decoding answers.</summary>
    public static StreamConfig? ReadStreamConfig(ReadOnlySpan<byte> payload, out ApiError? error) =>
        Read(payload, StrictRequestJsonContext.Default.StreamConfig, out error);

    /// <summary>A CONSUMER.CREATE / DURABLE.CREATE body, or the error nats-server's strict decoding answers.</summary>
    public static CreateConsumerRequest? ReadCreateConsumer(ReadOnlySpan<byte> payload, out ApiError? error) =>
        Read(payload, StrictRequestJsonContext.Default.CreateConsumerRequest, out error);

    /// <summary>A CONSUMER.PAUSE body, or the error nats-server's strict decoding answers.</summary>
    public static ConsumerPauseRequest? ReadPause(ReadOnlySpan<byte> payload, out ApiError? error) =>
        Read(payload, StrictRequestJsonContext.Default.ConsumerPauseRequest, out error);

    private static T? Read<T>(ReadOnlySpan<byte> payload, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> typeInfo, out ApiError? error)
        where T : class
    {
        try
        {
            var value = JsonSerializer.Deserialize(payload, typeInfo);
            error = value is null ? ApiError.InvalidJson : null;
            return value;
        }
        catch (JsonException e) when (UnknownField(e) is { } field)
        {
            error = ApiError.UnknownField(field);
            return null;
        }
        catch (WireValueException e)
        {
            error = ApiError.InvalidJsonBecause(e.Message);
            return null;
        }
    }

    // System.Text.Json: "The JSON property 'x' could not be mapped to any .NET member contained in type '...'."
    private static string? UnknownField(JsonException e)
    {
        if (!e.Message.Contains("could not be mapped", StringComparison.Ordinal))
        {
            return null;
        }

        var start = e.Message.IndexOf('\'', StringComparison.Ordinal);
        var end = start < 0 ? -1 : e.Message.IndexOf('\'', start + 1);
        return end > start ? e.Message[(start + 1)..end] : null;
    }
}

/// <summary>Source-generated JSON that refuses members the models do not have (nats-server's strict mode).</summary>
[JsonSourceGenerationOptions(NumberHandling = JsonNumberHandling.AllowReadingFromString, AllowTrailingCommas = true, UnmappedMemberHandling = JsonUnmappedMemberHandling.Disallow)]
[JsonSerializable(typeof(StreamConfig))]
[JsonSerializable(typeof(CreateConsumerRequest))]
[JsonSerializable(typeof(ConsumerPauseRequest))]
internal sealed partial class StrictRequestJsonContext : JsonSerializerContext;
