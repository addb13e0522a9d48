using System.Text.Json;
using Courier.Actors.Connections;
using Courier.Protocols.JetStream;
using Courier.Protocols.Nats;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>Reads, deletes and purges of stored messages: DIRECT.GET, MSG.GET, MSG.DELETE, PURGE (and STREAM.INFO's dispatch).</summary>
internal sealed partial class StreamActor
{
    // $JS.API.DIRECT.GET.<stream> with {seq | last_by_subj | next_by_subj}, or
    // $JS.API.DIRECT.GET.<stream>.<subject>: the stored message itself, with Nats-Stream,
    // Nats-Subject, Nats-Sequence and Nats-Time-Stamp headers; 404 when there is none.
    private void DirectGet(IReadOnlyList<InternalMessage> requests)
    {
        foreach (var request in requests)
        {
            if (request.ReplyTo is not { } reply)
            {
                continue;
            }

            // The stream's own prefix, or its origin's when it is a mirror that answers for it (mirror_direct).
            var prefix = "";
            foreach (var candidate in _directPrefixes)
            {
                if (request.Subject.StartsWith(candidate, StringComparison.Ordinal) && (request.Subject.Length == candidate.Length || request.Subject[candidate.Length] == '.'))
                {
                    prefix = candidate;
                    break;
                }
            }

            if (prefix.Length == 0)
            {
                continue; // queued before the stream stopped answering these
            }

            LoadResult result;
            if (request.Subject.Length > prefix.Length + 1)
            {
                result = _store.LoadLastMessage(request.Subject[(prefix.Length + 1)..]);
            }
            else
            {
                MsgGetRequest? get = null;
                try
                {
                    get = JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.MsgGetRequest);
                }
                catch (JsonException)
                {
                }

                result = get is null ? default
                    : get.NextBySubject is { } next ? _store.LoadNextMessage(next, get.Seq)
                    : get.LastBySubject is { } last ? _store.LoadLastMessage(last)
                    : _store.LoadMessage(get.Seq);
            }

            if (!result.Found || result.Message is not { } m)
            {
                _out.Publish(reply, null, "NATS/1.0 404 Message Not Found\r\n\r\n"u8, default);
                continue;
            }

            var headers = NatsHeaders.Set(m.Headers.Span, "Nats-Stream", _config.Name);
            headers = NatsHeaders.Set(headers, "Nats-Subject", m.Subject);
            headers = NatsHeaders.Set(headers, "Nats-Sequence", m.Sequence.ToString(System.Globalization.CultureInfo.InvariantCulture));
            headers = NatsHeaders.Set(headers, "Nats-Time-Stamp", FromUnixNanos(m.Timestamp).ToString("yyyy-MM-ddTHH:mm:ss.fffffffZ", System.Globalization.CultureInfo.InvariantCulture));
            _out.Publish(reply, null, headers, m.Payload.Span);
        }
    }

    private void HandleRequest(Protocol.Request request)
    {
        if (_replication is not null && request.Operation is "PURGE" or "MSG.DELETE" && !_applying)
        {
            ProposeRequest(request); // applied by every replica, answered by the leader, when committed
            return;
        }

        if (_replication is not null && request.Operation == "INFO")
        {
            AskGroupStatus(request);
            return;
        }

        if (request.Operation == "LEADER.STEPDOWN")
        {
            StepDown(request.ReplyTo, "io.nats.jetstream.api.v1.stream_leader_stepdown_response");
            return;
        }

        try
        {
            HandleRequestCore(request);
        }
        catch (JsonException)
        {
            // A malformed request is the client's error, never the stream's: answer it, keep going.
            var type = "io.nats.jetstream.api.v1.stream_" + request.Operation.ToLowerInvariant().Replace('.', '_') + "_response";
            Reply(request.ReplyTo, new ErrorResponse { Type = type, Error = ApiError.InvalidJson }, JetStreamJsonContext.Default.ErrorResponse);
        }
    }

    private void HandleRequestCore(Protocol.Request request)
    {
        switch (request.Operation)
        {
            case "INFO":
                Reply(request.ReplyTo, DetailedInfo(request.Payload), JetStreamJsonContext.Default.StreamInfoResponse);
                break;
            case "PURGE":
                Purge(request);
                break;
            case "MSG.GET":
                GetMessage(request);
                break;
            case "MSG.DELETE":
                DeleteMessage(request);
                break;
        }
    }

    private void Purge(Protocol.Request request)
    {
        const string Type = "io.nats.jetstream.api.v1.stream_purge_response";
        if (_config.Sealed)
        {
            Reply(request.ReplyTo, new StreamPurgeResponse { Type = Type, Error = ApiError.StreamSealed }, JetStreamJsonContext.Default.StreamPurgeResponse);
            return;
        }

        if (_config.DenyPurge)
        {
            Reply(request.ReplyTo, new StreamPurgeResponse { Type = Type, Error = new ApiError(500, 10110, "stream purge not permitted") }, JetStreamJsonContext.Default.StreamPurgeResponse);
            return;
        }

        var purge = request.Payload.Length == 0
            ? new StreamPurgeRequest()
            : JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.StreamPurgeRequest) ?? new StreamPurgeRequest();
        var purged = purge.Filter is null && purge.Seq == 0 && purge.Keep == 0
            ? _store.Purge()
            : _store.Purge(purge.Filter, purge.Seq, purge.Keep);
        Reply(request.ReplyTo, new StreamPurgeResponse { Type = Type, Success = true, Purged = purged }, JetStreamJsonContext.Default.StreamPurgeResponse);
    }

    private void GetMessage(Protocol.Request request)
    {
        const string Type = "io.nats.jetstream.api.v1.stream_msg_get_response";
        MsgGetRequest? get;
        try
        {
            get = JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.MsgGetRequest);
        }
        catch (JsonException)
        {
            get = null;
        }

        if (get is null || (get.Seq == 0 && get.LastBySubject is null && get.NextBySubject is null))
        {
            Reply(request.ReplyTo, new MsgGetResponse { Type = Type, Error = ApiError.BadRequest }, JetStreamJsonContext.Default.MsgGetResponse);
            return;
        }

        var result = get.LastBySubject is { } last
            ? _store.LoadLastMessage(last)
            : get.NextBySubject is { } next
                ? _store.LoadNextMessage(next, get.Seq)
                : _store.LoadMessage(get.Seq);
        if (!result.Found || result.Message is not { } m)
        {
            Reply(request.ReplyTo, new MsgGetResponse { Type = Type, Error = ApiError.NoMessageFound }, JetStreamJsonContext.Default.MsgGetResponse);
            return;
        }

        var message = new StoredMessageInfo
        {
            Subject = m.Subject,
            Seq = m.Sequence,
            Headers = m.Headers.IsEmpty ? null : m.Headers.ToArray(),
            Data = m.Payload.IsEmpty ? null : m.Payload.ToArray(),
            Time = FromUnixNanos(m.Timestamp),
        };
        Reply(request.ReplyTo, new MsgGetResponse { Type = Type, Message = message }, JetStreamJsonContext.Default.MsgGetResponse);
    }

    private void DeleteMessage(Protocol.Request request)
    {
        const string Type = "io.nats.jetstream.api.v1.stream_msg_delete_response";
        if (_config.Sealed)
        {
            Reply(request.ReplyTo, new SuccessResponse { Type = Type, Error = ApiError.StreamSealed }, JetStreamJsonContext.Default.SuccessResponse);
            return;
        }

        if (_config.DenyDelete)
        {
            Reply(request.ReplyTo, new SuccessResponse { Type = Type, Error = new ApiError(500, 10057, "message delete not permitted") }, JetStreamJsonContext.Default.SuccessResponse);
            return;
        }

        var delete = JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.MsgDeleteRequest);
        if (delete is null)
        {
            Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = ApiError.BadRequest }, JetStreamJsonContext.Default.ErrorResponse);
            return;
        }

        if (delete.NoErase ? _store.RemoveMessage(delete.Seq) : _store.EraseMessage(delete.Seq))
        {
            Reply(request.ReplyTo, new SuccessResponse { Type = Type, Success = true }, JetStreamJsonContext.Default.SuccessResponse);
        }
        else
        {
            // nats-server 2.9.10: JSSequenceNotFoundErrF, with no "success" beside it.
            Reply(request.ReplyTo, new ErrorResponse { Type = Type, Error = new ApiError(400, 10043, $"sequence {delete.Seq} not found") }, JetStreamJsonContext.Default.ErrorResponse);
        }
    }
}
