using System.Text.Json;
using Courier.Actors.Connections;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>What happened to a stream or consumer, for its action advisory.</summary>
internal enum AdvisoryAction
{
    Create,
    Modify,
    Delete,
}

/// <summary>
/// The <c>$JS.EVENT.ADVISORY.</c> events nats-server 2.9.10 publishes in the account when a stream or a
/// consumer is created, updated or deleted (its stream_action and consumer_action advisories).
/// </summary>
internal static class Advisories
{
    public static void Stream(InProcessPublisher publisher, string stream, AdvisoryAction action, string? domain)
    {
        var advisory = new StreamActionAdvisory { Id = NewId(), Timestamp = DateTime.UtcNow, Stream = stream, Action = Wire(action), Domain = domain };
        publisher.Publish($"$JS.EVENT.ADVISORY.STREAM.{Kind(action)}.{stream}", null, default, JsonSerializer.SerializeToUtf8Bytes(advisory, ConsumerJsonContext.Default.StreamActionAdvisory));
    }

    public static void Consumer(InProcessPublisher publisher, string stream, string consumer, AdvisoryAction action, string? domain)
    {
        var advisory = new ConsumerActionAdvisory { Id = NewId(), Timestamp = DateTime.UtcNow, Stream = stream, Consumer = consumer, Action = Wire(action), Domain = domain };
        publisher.Publish($"$JS.EVENT.ADVISORY.CONSUMER.{Kind(action)}.{stream}.{consumer}", null, default, JsonSerializer.SerializeToUtf8Bytes(advisory, ConsumerJsonContext.Default.ConsumerActionAdvisory));
    }

    // The subject token and the "action" field, as nats-server writes them.
    private static string Kind(AdvisoryAction action) => action switch
    {
        AdvisoryAction.Create => "CREATED",
        AdvisoryAction.Modify => "UPDATED",
        _ => "DELETED",
    };

    private static string Wire(AdvisoryAction action) => action switch
    {
        AdvisoryAction.Create => "create",
        AdvisoryAction.Modify => "modify",
        _ => "delete",
    };

    private static string NewId() => Guid.NewGuid().ToString("N");
}
