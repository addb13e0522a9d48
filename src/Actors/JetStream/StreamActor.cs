using System.Text;
using System.Text.Json;
using Courier.Actors.Runtime;
using Courier.Protocols.JetStream;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// One JetStream stream: owns its store, stores what is published to its subjects in batches (one
/// store flush per batch, PubAcks only after it: invariant 4), and answers the API requests that
/// concern it alone.
/// </summary>
internal sealed class StreamActor : ReceiveActor
{
    private readonly InternalClient _client;
    private readonly IStreamStore _store;
    private readonly StreamConfig _config;
    private readonly DateTime _created;
    private readonly List<string> _sids = [];

    public StreamActor(InternalClient client, StreamConfig config, DateTime created, IStreamStore store)
    {
        _client = client;
        _config = config;
        _created = created;
        _store = store;

        Receive<Protocol.Append>(Append);
        Receive<Protocol.GetInfo>(_ => Sender.Tell(Info("")));
        Receive<Protocol.Request>(HandleRequest);
        Receive<Protocol.Delete>(_ =>
        {
            Unsubscribe();
            _store.Delete();
            Sender.Tell(Protocol.Deleted.Instance);
            Context.Stop(Self);
        });
    }

    public static Props Props(InternalClient client, StreamConfig config, DateTime created, IStreamStore store) =>
        Runtime.Props.Create(() => new StreamActor(client, config, created, store));

    protected override void PreStart()
    {
        var self = Self;
        var subjects = _config.Subjects is { Count: > 0 } s ? s : [_config.Name];
        foreach (var subject in subjects)
        {
            // One actor message per read batch of the internal client, never one per NATS message.
            _sids.Add(_client.Subscribe(subject, null, batch => self.Tell(new Protocol.Append(batch))));
        }
    }

    protected override void PostStop()
    {
        Unsubscribe();
        _store.Stop();
    }

    private void Unsubscribe()
    {
        foreach (var sid in _sids)
        {
            _client.Unsubscribe(sid);
        }

        _sids.Clear();
    }

    private void Append(Protocol.Append append)
    {
        var batch = append.Messages;
        var messages = new StoreMessage[batch.Count];
        for (var i = 0; i < batch.Count; i++)
        {
            var m = batch[i];
            messages[i] = new StoreMessage(Encoding.UTF8.GetBytes(m.Subject), m.Headers ?? ReadOnlyMemory<byte>.Empty, m.Payload);
        }

        var results = new StoreResult[batch.Count];
        _store.AppendBatch(messages, results);
        _store.Flush(); // durable before any PubAck goes out

        for (var i = 0; i < batch.Count; i++)
        {
            if (batch[i].ReplyTo is not { } reply)
            {
                continue;
            }

            var ack = results[i].Ok
                ? new PubAck { Stream = _config.Name, Seq = results[i].Sequence }
                : new PubAck { Error = ApiError.StreamStoreFailed(results[i].Error.Describe()) };
            _client.Publish(reply, null, default, JsonSerializer.SerializeToUtf8Bytes(ack, JetStreamJsonContext.Default.PubAck));
        }
    }

    private void HandleRequest(Protocol.Request request)
    {
        switch (request.Operation)
        {
            case "INFO":
                Reply(request.ReplyTo, Info("io.nats.jetstream.api.v1.stream_info_response"), JetStreamJsonContext.Default.StreamInfoResponse);
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
        if (_config.DenyPurge || _config.Sealed)
        {
            Reply(request.ReplyTo, new StreamPurgeResponse { Type = Type, Error = ApiError.StreamInvalidConfig("stream purge not permitted") }, JetStreamJsonContext.Default.StreamPurgeResponse);
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
        if (_config.DenyDelete || _config.Sealed)
        {
            Reply(request.ReplyTo, new SuccessResponse { Type = Type, Error = ApiError.StreamInvalidConfig("message delete not permitted") }, JetStreamJsonContext.Default.SuccessResponse);
            return;
        }

        var delete = JsonSerializer.Deserialize(request.Payload, JetStreamJsonContext.Default.MsgDeleteRequest);
        var removed = delete is not null && (delete.NoErase ? _store.RemoveMessage(delete.Seq) : _store.EraseMessage(delete.Seq));
        Reply(
            request.ReplyTo,
            removed ? new SuccessResponse { Type = Type, Success = true } : new SuccessResponse { Type = Type, Error = new ApiError(400, 10057, $"no message found") },
            JetStreamJsonContext.Default.SuccessResponse);
    }

    private StreamInfoResponse Info(string type)
    {
        var state = _store.State();
        return new StreamInfoResponse
        {
            Type = type,
            Config = _config,
            Created = _created,
            Ts = DateTime.UtcNow,
            State = new StreamStateInfo
            {
                Messages = state.Msgs,
                Bytes = state.Bytes,
                FirstSeq = state.FirstSeq,
                FirstTs = FromUnixNanos(state.FirstTime),
                LastSeq = state.LastSeq,
                LastTs = FromUnixNanos(state.LastTime),
                NumDeleted = state.NumDeleted,
                NumSubjects = state.NumSubjects,
            },
        };
    }

    private void Reply<T>(string? replyTo, T response, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> typeInfo)
    {
        if (replyTo is not null)
        {
            _client.Publish(replyTo, null, default, JsonSerializer.SerializeToUtf8Bytes(response, typeInfo));
        }
    }

    internal static DateTime FromUnixNanos(long nanos) =>
        nanos <= 0 ? DateTime.MinValue.ToUniversalTime() : DateTime.UnixEpoch.AddTicks(nanos / 100);

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>A read batch of messages published to the stream's subjects.</summary>
        public sealed class Append
        {
            public Append(IReadOnlyList<InternalMessage> messages)
            {
                ArgumentNullException.ThrowIfNull(messages);
                Messages = messages;
            }

            public IReadOnlyList<InternalMessage> Messages { get; }

            public override string ToString() => $"Append({Messages.Count})";
        }

        /// <summary>An API request for this stream: <c>INFO</c>, <c>PURGE</c>, <c>MSG.GET</c>, <c>MSG.DELETE</c>.</summary>
        public sealed class Request
        {
            public Request(string operation, string? replyTo, byte[] payload)
            {
                Operation = operation;
                ReplyTo = replyTo;
                Payload = payload;
            }

            public string Operation { get; }

            public string? ReplyTo { get; }

            public byte[] Payload { get; }
        }

        /// <summary>Asks for a <see cref="StreamInfoResponse"/> (for STREAM.LIST).</summary>
        public sealed class GetInfo
        {
            public static readonly GetInfo Instance = new();

            private GetInfo()
            {
            }
        }

        /// <summary>Delete the stream and its data, then stop.</summary>
        public sealed class Delete
        {
            public static readonly Delete Instance = new();

            private Delete()
            {
            }
        }

        /// <summary>The stream is deleted.</summary>
        public sealed class Deleted
        {
            public static readonly Deleted Instance = new();

            private Deleted()
            {
            }
        }
    }
}
