using System.Text.Json;
using Courier.Actors.Connections;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// The <c>$JS.EVENT.ADVISORY.</c> events nats-server 2.9.10 publishes in the account when a stream or a
/// consumer is created, updated or deleted (its stream_action and consumer_action advisories).
/// </summary>
internal static class Advisories
{
    public static void StreamAction(InProcessPublisher publisher, string stream, string action, string? domain)
    {
        var kind = action switch { "create" => "CREATED", "modify" => "UPDATED", _ => "DELETED" };
        var advisory = new StreamActionAdvisory { Id = NewId(), Timestamp = DateTime.UtcNow, Stream = stream, Action = action, Domain = domain };
        publisher.Publish($"$JS.EVENT.ADVISORY.STREAM.{kind}.{stream}", null, default, JsonSerializer.SerializeToUtf8Bytes(advisory, ConsumerJsonContext.Default.StreamActionAdvisory));
    }

    public static void ConsumerAction(InProcessPublisher publisher, string stream, string consumer, string action, string? domain)
    {
        var kind = action == "create" ? "CREATED" : "DELETED";
        var advisory = new ConsumerActionAdvisory { Id = NewId(), Timestamp = DateTime.UtcNow, Stream = stream, Consumer = consumer, Action = action, Domain = domain };
        publisher.Publish($"$JS.EVENT.ADVISORY.CONSUMER.{kind}.{stream}.{consumer}", null, default, JsonSerializer.SerializeToUtf8Bytes(advisory, ConsumerJsonContext.Default.ConsumerActionAdvisory));
    }

    private static string NewId() => Guid.NewGuid().ToString("N");
}
