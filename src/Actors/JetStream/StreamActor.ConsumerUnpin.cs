using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// CONSUMER.UNPIN (nats-server 2.11, jsConsumerUnpinRequest): the consumer forgets its pinned client, says so in
/// the unpinned advisory (reason "admin"), and the next pull request without a pin id gets pinned. Any policy: as
/// nats-server, only the group must be one of the consumer's.
/// </summary>
internal sealed partial class StreamActor
{
    private const string UnpinResponseType = "io.nats.jetstream.api.v1.consumer_unpin_response";

    // $JS.API.CONSUMER.UNPIN.<stream>.<consumer>  {"group": "<name>"}
    private void UnpinConsumer(Protocol.ConsumerRequest request)
    {
        if (ConsumerConfigRules.ReadUnpin(request.Payload, out var group) is { } unreadable)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = UnpinResponseType, Error = unreadable }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        if (!_consumers.TryGetValue(request.Consumer, out var consumer) || !_consumerConfigs.TryGetValue(request.Consumer, out var config))
        {
            ConsumerNotFound(request.ReplyTo, UnpinResponseType);
            return;
        }

        if (config.PriorityGroups is not { } groups || !groups.Contains(group, StringComparer.Ordinal))
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = UnpinResponseType, Error = ApiError.ConsumerInvalidPriorityGroup }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        // Before the answer in the consumer's mailbox: a pull request sent after the answer comes after the unpin.
        consumer.Tell(new ConsumerActor.Protocol.Unpin(group), Self);
        Reply(request.ReplyTo, new ConsumerUnpinResponse { Type = UnpinResponseType }, ConsumerJsonContext.Default.ConsumerUnpinResponse);
    }
}
