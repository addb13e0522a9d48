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
/// consumer is created, updated or deleted (its stream_action and consumer_action advisories), and when a
/// replicated stream or consumer has a new leader.
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

    /// <summary>A replicated stream's new leader (stream_leader_elected), and its replicas as the leader sees them.</summary>
    public static void StreamLeaderElected(InProcessPublisher publisher, string stream, string leader, List<PeerInfo> replicas, string? domain)
    {
        var advisory = new LeaderElectedAdvisory { Type = "io.nats.jetstream.advisory.v1.stream_leader_elected", Id = NewId(), Timestamp = DateTime.UtcNow, Stream = stream, Leader = leader, Replicas = replicas, Domain = domain };
        publisher.Publish($"$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.{stream}", null, default, JsonSerializer.SerializeToUtf8Bytes(advisory, ConsumerJsonContext.Default.LeaderElectedAdvisory));
    }

    /// <summary>A replicated consumer's new leader (consumer_leader_elected): the stream's, where its consumers run.</summary>
    public static void ConsumerLeaderElected(InProcessPublisher publisher, string stream, string consumer, string leader, List<PeerInfo> replicas, string? domain)
    {
        var advisory = new LeaderElectedAdvisory { Type = "io.nats.jetstream.advisory.v1.consumer_leader_elected", Id = NewId(), Timestamp = DateTime.UtcNow, Stream = stream, Consumer = consumer, Leader = leader, Replicas = replicas, Domain = domain };
        publisher.Publish($"$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.{stream}.{consumer}", null, default, JsonSerializer.SerializeToUtf8Bytes(advisory, ConsumerJsonContext.Default.LeaderElectedAdvisory));
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
