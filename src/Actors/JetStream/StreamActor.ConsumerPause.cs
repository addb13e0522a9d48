using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// CONSUMER.PAUSE (nats-server 2.11, jsConsumerPauseRequest): the consumer's <c>pause_until</c> changes as a
/// configuration update would change it (its meta file, and on a replicated stream its Consumer log entry),
/// and the answer says whether it is paused now and for how long.
/// </summary>
internal sealed partial class StreamActor
{
    private const string PauseResponseType = "io.nats.jetstream.api.v1.consumer_pause_response";

    // $JS.API.CONSUMER.PAUSE.<stream>.<consumer>  {"pause_until": "<RFC 3339>"}; an empty body or the zero time resumes.
    private void PauseConsumer(Protocol.ConsumerRequest request)
    {
        var until = default(DateTime?);
        var body = request.Payload.AsSpan().Trim(" \t\r\n"u8);
        if (body.Length > 0 && body[0] is (byte)'{' or (byte)'[')
        {
            var pause = StrictRequests.ReadPause(body, out var unreadable);
            if (pause is null)
            {
                Reply(request.ReplyTo, new ErrorResponse { Type = PauseResponseType, Error = unreadable ?? ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
                return;
            }

            until = ConsumerConfigRules.PauseTime(pause.PauseUntil);
        }

        if (!_consumers.TryGetValue(request.Consumer, out var consumer) || !_consumerConfigs.TryGetValue(request.Consumer, out var current))
        {
            ConsumerNotFound(request.ReplyTo, PauseResponseType);
            return;
        }

        if (current.PauseUntil != until)
        {
            var config = ConsumerConfigRules.Copy(current);
            config.PauseUntil = until;
            UpdateConsumer(request.Consumer, consumer, config);
        }

        var now = DateTime.UtcNow;
        var response = new ConsumerPauseResponse { Type = PauseResponseType, PauseUntil = until ?? DateTime.SpecifyKind(DateTime.MinValue, DateTimeKind.Utc) };
        if (until is { } time && now < time)
        {
            response.Paused = true;
            response.PauseRemaining = (time - now).Ticks * 100;
        }

        Reply(request.ReplyTo, response, ConsumerJsonContext.Default.ConsumerPauseResponse);
    }
}
