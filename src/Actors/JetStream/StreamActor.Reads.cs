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

            if (request.Subject.Length > prefix.Length + 1)
            {
                // $JS.API.DIRECT.GET.<stream>.<subject>: the subject's last message; this form takes no body.
                if (request.Payload.Length > 0)
                {
                    DirectStatus(reply, "408 Bad Request");
                    continue;
                }

                SendDirect(reply, _store.LoadLastMessage(request.Subject[(prefix.Length + 1)..]));
                continue;
            }

            DirectGetRequest(reply, request.Payload);
        }
    }

    private void DirectStatus(string reply, string status) =>
        _out.Publish(reply, null, System.Text.Encoding.ASCII.GetBytes($"NATS/1.0 {status}\r\n\r\n"), default);

    private void SendDirect(string reply, LoadResult result)
    {
        if (!result.Found || result.Message is not { } m)
        {
            DirectStatus(reply, "404 Message Not Found");
            return;
        }

        _out.Publish(reply, null, DirectHeaders(m, null, 0), m.Payload.Span);
    }

    // The stored headers with the stream's, and in a batch the pending count and the sequence sent before.
    private byte[] DirectHeaders(StoredMessage m, ulong? numPending, ulong lastSequence)
    {
        var headers = NatsHeaders.Set(m.Headers.Span, "Nats-Stream", _config.Name);
        headers = NatsHeaders.Set(headers, "Nats-Subject", m.Subject);
        headers = NatsHeaders.Set(headers, "Nats-Sequence", m.Sequence.ToString(System.Globalization.CultureInfo.InvariantCulture));
        headers = NatsHeaders.Set(headers, "Nats-Time-Stamp", FromUnixNanos(m.Timestamp).ToString("yyyy-MM-ddTHH:mm:ss.fffffffZ", System.Globalization.CultureInfo.InvariantCulture));
        if (numPending is { } pending)
        {
            headers = NatsHeaders.Set(headers, "Nats-Num-Pending", pending.ToString(System.Globalization.CultureInfo.InvariantCulture));
            headers = NatsHeaders.Set(headers, "Nats-Last-Sequence", lastSequence.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        return headers;
    }

    /// <summary>
    /// <c>$JS.API.DIRECT.GET.&lt;stream&gt;</c> with a request, as nats-server 2.11's processDirectGetRequest: one message by
    /// sequence, time, next or last subject; a <c>batch</c> of them (each with <c>Nats-Num-Pending</c> and
    /// <c>Nats-Last-Sequence</c>, then <c>204 EOB</c>); or the last message of each subject <c>multi_last</c> matches,
    /// as of <c>up_to_seq</c> / <c>up_to_time</c>. A request that is empty, unreadable or contradicts itself gets
    /// nats-server's 408 statuses.
    /// </summary>
    private void DirectGetRequest(string reply, byte[] payload)
    {
        if (payload.Length == 0)
        {
            DirectStatus(reply, "408 Empty Request");
            return;
        }

        MsgGetRequest? get;
        try
        {
            get = JsonSerializer.Deserialize(payload, JetStreamJsonContext.Default.MsgGetRequest);
        }
        catch (JsonException)
        {
            get = null;
        }

        if (get is null)
        {
            DirectStatus(reply, "408 Malformed Request");
            return;
        }

        var last = string.IsNullOrEmpty(get.LastBySubject) ? null : get.LastBySubject;
        var next = string.IsNullOrEmpty(get.NextBySubject) ? null : get.NextBySubject;
        var multi = get.MultiLast is { Count: > 0 } filters ? filters : null;
        if (get.Seq == 0 && last is null && next is null && multi is null && get.StartTime is null)
        {
            DirectStatus(reply, "408 Empty Request");
            return;
        }

        if ((get.Seq > 0 && last is not null) || (get.Seq > 0 && get.StartTime is not null) || (get.StartTime is not null && last is not null)
            || (last is not null && next is not null) || (last is not null && get.Batch > 0) || (last is not null && multi is not null)
            || (next is not null && multi is not null) || (get.UpToSeq > 0 && get.UpToTime is not null))
        {
            DirectStatus(reply, "408 Bad Request");
            return;
        }

        var maxBytes = get.MaxBytes > 0 ? get.MaxBytes : DirectMaxBytes;
        if (multi is not null)
        {
            DirectMultiLast(reply, get, multi, maxBytes);
            return;
        }

        if (last is not null)
        {
            SendDirect(reply, _store.LoadLastMessage(last));
            return;
        }

        var seq = get.StartTime is { } start ? _store.GetSequenceFromTime((start.ToUniversalTime() - DateTime.UnixEpoch).Ticks * 100) : get.Seq;
        if (get.Batch <= 0)
        {
            SendDirect(reply, next is not null ? _store.LoadNextMessage(next, seq) : _store.LoadMessage(seq));
            return;
        }

        var (pending, validThrough) = _store.NumPending(seq, next, lastPerSubject: false);
        ulong lastSent = 0;
        var sentBytes = 0L;
        for (var i = 0; i < get.Batch; i++)
        {
            // The first by its sequence (a gap there is "not found"), the rest by stepping over gaps.
            var result = next is null && i == 0 ? _store.LoadMessage(seq) : _store.LoadNextMessage(next, seq);
            if (!result.Found || result.Message is not { } m)
            {
                if (i == 0)
                {
                    DirectStatus(reply, "404 Message Not Found");
                    return;
                }

                break;
            }

            seq = m.Sequence + 1;
            _out.Publish(reply, null, DirectHeaders(m, pending, lastSent), m.Payload.Span);
            pending = pending > 0 ? pending - 1 : 0;
            lastSent = m.Sequence;
            sentBytes += m.Subject.Length + m.Headers.Length + m.Payload.Length;
            if (sentBytes >= maxBytes)
            {
                break;
            }
        }

        if (_store.State().LastSeq > validThrough)
        {
            pending = _store.NumPending(seq, next, lastPerSubject: false).Total;
        }

        _out.Publish(reply, null, System.Text.Encoding.ASCII.GetBytes($"NATS/1.0 204 EOB\r\nNats-Num-Pending: {pending}\r\nNats-Last-Sequence: {lastSent}\r\n\r\n"), default);
    }

    /// <summary>nats-server's MAX_PENDING_SIZE: how much a batch sends when the request sets no max_bytes.</summary>
    private const int DirectMaxBytes = 64 * 1024 * 1024;

    /// <summary>nats-server's limit on a multi_last answer.</summary>
    private const int DirectMaxResults = 1024;

    // multi_last: the last sequence of every matching subject at or below up_to, in sequence order (getDirectMulti).
    private void DirectMultiLast(string reply, MsgGetRequest get, List<string> filters, int maxBytes)
    {
        var upTo = get.UpToSeq;
        if (get.UpToTime is { } time)
        {
            // The ceiling: the last message stored before that time.
            var first = _store.GetSequenceFromTime((time.ToUniversalTime() - DateTime.UnixEpoch).Ticks * 100);
            upTo = first > 0 ? first - 1 : 0;
        }

        if (upTo == 0)
        {
            upTo = _store.State().LastSeq;
        }

        var lasts = new SortedSet<ulong>();
        var subjects = new HashSet<string>(StringComparer.Ordinal);
        foreach (var filter in filters)
        {
            foreach (var (subject, state) in _store.SubjectsState(filter))
            {
                if (!subjects.Add(subject))
                {
                    continue;
                }

                var found = state.Last <= upTo ? state.Last : LastAtOrBelow(subject, state.First, upTo);
                if (found > 0)
                {
                    lasts.Add(found);
                }

                if (lasts.Count > DirectMaxResults)
                {
                    DirectStatus(reply, "413 Too Many Results");
                    return;
                }
            }
        }

        if (lasts.Count == 0)
        {
            DirectStatus(reply, "404 No Results");
            return;
        }

        var pending = (ulong)lasts.Count - 1;
        ulong lastSent = 0;
        var sentBytes = 0L;
        var sent = 0;
        foreach (var seq in lasts)
        {
            if (seq < get.Seq)
            {
                pending = pending > 0 ? pending - 1 : 0;
                continue;
            }

            if (_store.LoadMessage(seq) is not { Found: true, Message: { } m })
            {
                DirectStatus(reply, "404 Message Not Found");
                return;
            }

            _out.Publish(reply, null, DirectHeaders(m, pending, lastSent), m.Payload.Span);
            pending = pending > 0 ? pending - 1 : 0;
            lastSent = m.Sequence;
            sentBytes += m.Subject.Length + m.Headers.Length + m.Payload.Length;
            if (sentBytes >= maxBytes || (get.Batch > 0 && ++sent >= get.Batch))
            {
                break;
            }
        }

        _out.Publish(reply, null, System.Text.Encoding.ASCII.GetBytes($"NATS/1.0 204 EOB\r\nNats-Num-Pending: {pending}\r\nNats-Last-Sequence: {lastSent}\r\nNats-UpTo-Sequence: {upTo}\r\n\r\n"), default);
    }

    // The last message of a literal subject at or below `upTo`, walking forward from its first (0: none).
    private ulong LastAtOrBelow(string subject, ulong first, ulong upTo)
    {
        ulong found = 0;
        var seq = first;
        while (seq <= upTo && _store.LoadNextMessage(subject, seq) is { Found: true, Message: { } m } && m.Sequence <= upTo)
        {
            found = m.Sequence;
            seq = m.Sequence + 1;
        }

        return found;
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

        // As nats-server 2.11's jsMsgGetRequest: no batches here (DIRECT.GET has them); seq, last_by_subj and
        // start_time exclude each other; next_by_subj filters from seq or start_time.
        var lastFor = string.IsNullOrEmpty(get?.LastBySubject) ? null : get.LastBySubject;
        var nextFor = string.IsNullOrEmpty(get?.NextBySubject) ? null : get.NextBySubject;
        if (get is null || get.Batch > 0 || get.MaxBytes > 0
            || (get.Seq > 0 && lastFor is not null) || (get.Seq == 0 && lastFor is null && nextFor is null && get.StartTime is null)
            || (get.Seq > 0 && get.StartTime is not null) || (get.StartTime is not null && lastFor is not null) || (lastFor is not null && nextFor is not null))
        {
            Reply(request.ReplyTo, new MsgGetResponse { Type = Type, Error = ApiError.BadRequest }, JetStreamJsonContext.Default.MsgGetResponse);
            return;
        }

        var seq = get.StartTime is { } start ? _store.GetSequenceFromTime((start.ToUniversalTime() - DateTime.UnixEpoch).Ticks * 100) : get.Seq;
        var result = lastFor is not null
            ? _store.LoadLastMessage(lastFor)
            : nextFor is not null
                ? _store.LoadNextMessage(nextFor, seq)
                : _store.LoadMessage(seq);
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
