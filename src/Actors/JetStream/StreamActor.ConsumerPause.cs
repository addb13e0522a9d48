using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// CONSUMER.PAUSE (nats-server 2.11, jsConsumerPauseRequest): the consumer's <c>pause_until</c> changes as a
/// configuration update would change it (its meta file, and on a replicated stream its Consumer log entry),
/// and the answer says whether it is paused now and for how long. CONSUMER.RESET (nats-server 2.14,
/// processResetReq): the consumer starts again from a sequence, its pending deliveries forgotten.
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

    private const string ResetResponseType = "io.nats.jetstream.api.v1.consumer_reset_response";

    // $JS.API.CONSUMER.RESET.<stream>.<consumer>  [{"seq": N}]: no body (or seq 0) goes back to the ack floor.
    // nats-server's resetStartingSeq decides whether the sequence is allowed by the deliver policy.
    private void ResetConsumer(Protocol.ConsumerRequest request)
    {
        var seq = 0UL;
        if (request.Payload.Length > 0)
        {
            try
            {
                seq = System.Text.Json.JsonSerializer.Deserialize(request.Payload, ConsumerJsonContext.Default.ConsumerResetRequest)?.Seq ?? 0;
            }
            catch (System.Text.Json.JsonException)
            {
                Reply(request.ReplyTo, new ErrorResponse { Type = ResetResponseType, Error = ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
                return;
            }
        }

        if (!_consumers.TryGetValue(request.Consumer, out var consumer) || !_consumerConfigs.TryGetValue(request.Consumer, out var config))
        {
            ConsumerNotFound(request.ReplyTo, ResetResponseType);
            return;
        }

        var refused = seq == 0 ? null : config.DeliverPolicy switch
        {
            DeliverPolicy.All => null,
            DeliverPolicy.ByStartSequence when seq < config.OptStartSeq => "below start seq",
            DeliverPolicy.ByStartSequence => null,
            DeliverPolicy.ByStartTime when config.OptStartTime is { } time && seq < _store.GetSequenceFromTime((time.ToUniversalTime() - DateTime.UnixEpoch).Ticks * 100) => "below start time",
            DeliverPolicy.ByStartTime => null,
            _ => "not allowed",
        };
        if (refused is not null)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = ResetResponseType, Error = ApiError.ConsumerInvalidReset(refused) }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        // The consumer answers with its info after the reset, and the sequence it starts from.
        ReplyConsumerInfoLater(consumer, new ConsumerActor.Protocol.Reset(seq), request.ReplyTo, ResetResponseType);
    }
}
