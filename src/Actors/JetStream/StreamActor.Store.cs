using System.Buffers;
using System.Buffers.Text;
using System.Numerics;
using System.Text;
using System.Text.Json;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Protocols.JetStream;
using Courier.Protocols.Nats;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// Storing what is published: read batches appended and group-flushed, Nats-Msg-Id dedupe, header
/// expectations, interest retention, and the PubAcks sent once a batch is durable (invariant 4).
/// </summary>
internal sealed partial class StreamActor
{
    private readonly Dictionary<string, (ulong Sequence, DateTime Time)> _duplicates = new(StringComparer.Ordinal);
    private readonly Queue<string> _duplicateOrder = new();
    private string? _lastMsgId;
    private readonly List<UnflushedBatch> _unflushed = [];
    private StoreMessage[] _storeScratch = []; // a batch's messages as the store takes them; reused, cleared after each batch
    private bool _flushQueued;

    /// <summary>
    /// The time the duplicate window is measured by: now, or while a replica applies its log the time the
    /// leader proposed the entry, so that every replica decides every Nats-Msg-Id alike, however late it applies.
    /// </summary>
    private DateTime Now => _applyClock ?? DateTime.UtcNow;

    private DateTime? _applyClock;

    /// <summary>
    /// Stores a read batch (buffered in the store, not yet written) and queues one flush behind whatever
    /// else is already in the mailbox: batches queued meanwhile are stored before it, so one write and one
    /// fsync cover them all (group commit sized by what is queued). Their PubAcks go out after it.
    /// </summary>
    private void Append(Protocol.Append append)
    {
        var batch = append.Messages;
        if (_replication is not null)
        {
            ProposeMessages(batch); // stored when committed (StreamActor.Replication.cs)
            return;
        }

        try
        {
            var (results, acks) = StoreBatch(batch);
            _unflushed.Add(new UnflushedBatch(batch, results, acks));
        }
        catch
        {
            batch.Release();
            throw;
        }

        if (!_flushQueued)
        {
            _flushQueued = true;
            Self.Tell(Protocol.FlushAppends.Instance);
        }
    }

    /// <summary>Makes every stored batch durable with one flush, then sends their PubAcks (invariant 4).</summary>
    private void FlushAppends()
    {
        _flushQueued = false;
        if (_unflushed.Count == 0)
        {
            return;
        }

        try
        {
            _store.Flush(); // durable before any PubAck goes out
            RecordGroupCommit();
            foreach (var consumer in _consumers.Actors)
            {
                consumer.Tell(ConsumerActor.Protocol.NewMessages.Instance);
            }

            _streams.Notify(_config.Name); // mirrors and sources of this stream copy it

            SendRepublished();
            foreach (var unflushed in _unflushed)
            {
                SendPubAcks(unflushed.Batch, unflushed.Results, unflushed.Acks);
            }
        }
        finally
        {
            ReleaseUnflushed();
        }
    }

    private void RecordGroupCommit()
    {
        if (StoreMetrics.GroupCommitEntries.Enabled)
        {
            var entries = 0;
            foreach (var unflushed in _unflushed)
            {
                entries += unflushed.Batch.Count;
            }

            StoreMetrics.GroupCommit(StoreMetrics.StreamLog, entries);
        }
    }

    /// <summary>Returns the buffers of stored batches; those not flushed get no PubAck (their clients time out).</summary>
    private void ReleaseUnflushed()
    {
        foreach (var unflushed in _unflushed)
        {
            unflushed.Batch.Release();
            ArrayPool<StoreResult>.Shared.Return(unflushed.Results);
            ArrayPool<PubAck?>.Shared.Return(unflushed.Acks, clearArray: true);
        }

        _unflushed.Clear();
        _republishing.Clear();
    }

    /// <summary>Stores a batch; the results and acks are rented (at least the batch's length) and go back in <see cref="ReleaseUnflushed"/>.</summary>
    private (StoreResult[] Results, PubAck?[] Acks) StoreBatch(RawMessages batch)
    {
        var results = ArrayPool<StoreResult>.Shared.Rent(batch.Count);
        var acks = ArrayPool<PubAck?>.Shared.Rent(batch.Count); // returned cleared: every entry starts null
        var plain = !_config.Sealed && _republish is null && _ingest is null && !_config.AllowMsgCounter;
        for (var i = 0; i < batch.Count && plain; i++)
        {
            plain = batch[i].HeadersLength == 0 || NatsHeaders.InertForJetStream(batch.Headers(i).Span);
        }

        if (plain)
        {
            // Fast path: no header JetStream acts on (none, or only an application's own: no Nats-*), so no dedupe,
            // expectations, TTL or rollup: one batch append, straight from the read buffer.
            if (_storeScratch.Length < batch.Count)
            {
                _storeScratch = new StoreMessage[Math.Max(batch.Count, _storeScratch.Length * 2)];
            }

            var messages = _storeScratch.AsSpan(0, batch.Count);
            for (var i = 0; i < batch.Count; i++)
            {
                messages[i] = new StoreMessage(batch.Subject(i), batch[i].HeadersLength == 0 ? ReadOnlyMemory<byte>.Empty : batch.Headers(i), batch.Payload(i));
            }

            try
            {
                _store.AppendBatch(messages, results.AsSpan(0, batch.Count));
            }
            finally
            {
                messages.Clear(); // no reference kept to the batch's buffer once it goes back to its pool
            }
        }
        else
        {
            for (var i = 0; i < batch.Count; i++)
            {
                acks[i] = AppendChecked(Ingested(batch.ToMessage(i)), out results[i]);
            }
        }

        if (_interest is not null)
        {
            DropUninteresting(batch, results);
        }

        return (results, acks);
    }

    private void SendPubAcks(RawMessages batch, StoreResult[] results, PubAck?[] acks)
    {
        Span<byte> ackJson = stackalloc byte[_pubAckPrefix.Length + 48];
        for (var i = 0; i < batch.Count; i++)
        {
            var reply = batch.Reply(i);
            if (reply.IsEmpty)
            {
                continue;
            }

            if (acks[i] is null && results[i].Ok)
            {
                _out.Publish(reply, FormatPubAck(ackJson, results[i].Sequence, duplicate: false));
                continue;
            }

            if (acks[i] is { Duplicate: true, Error: null } duplicate)
            {
                _out.Publish(reply, FormatPubAck(ackJson, duplicate.Seq, duplicate: true));
                continue;
            }

            if (acks[i] is { Value: { } total, Error: null } counted)
            {
                _out.Publish(reply, FormatCounterAck(counted.Seq, total));
                continue;
            }

            var ack = acks[i] ?? new PubAck { Error = StoreFailure(results[i].Error) };
            _out.Publish(reply, JsonSerializer.SerializeToUtf8Bytes(ack, JetStreamJsonContext.Default.PubAck));
        }
    }

    /// <summary>A read batch stored but not yet flushed, with what its PubAcks will say.</summary>
    private readonly record struct UnflushedBatch(RawMessages Batch, StoreResult[] Results, PubAck?[] Acks);

    /// <summary>
    /// nats-server's PubAck bytes, formatted from a per-stream prefix as it does:
    /// <c>{"stream":"S", "seq":5}</c>, or <c>{"stream":"S", "seq":5,"duplicate": true}</c>.
    /// </summary>
    private ReadOnlySpan<byte> FormatPubAck(Span<byte> into, ulong seq, bool duplicate)
    {
        _pubAckPrefix.CopyTo(into);
        var p = _pubAckPrefix.Length;
        Utf8Formatter.TryFormat(seq, into[p..], out var written);
        p += written;
        if (duplicate)
        {
            ",\"duplicate\": true"u8.CopyTo(into[p..]);
            p += ",\"duplicate\": true"u8.Length;
        }

        into[p++] = (byte)'}';
        return into[..p];
    }

    /// <summary>
    /// Interest retention: a message that no consumer's filter matches is not kept, though it takes
    /// its sequence and gets its PubAck (nats-server skips it: SkipMsg). The store has no skip, so
    /// it is appended and removed before the flush: both are durable together, but the limits count
    /// it for that moment (at max_msgs with discard old it pushes out the oldest, as a kept one would).
    /// </summary>
    private void DropUninteresting(RawMessages batch, StoreResult[] results)
    {
        Span<char> subject = stackalloc char[256];
        for (var i = 0; i < batch.Count; i++)
        {
            var bytes = batch.Subject(i).Span;
            var chars = bytes.Length <= subject.Length ? subject[..Encoding.UTF8.GetChars(bytes, subject)] : Encoding.UTF8.GetString(bytes).AsSpan();
            if (results[i].Ok && !_interest!.IsInteresting(chars))
            {
                _store.RemoveMessage(results[i].Sequence);
            }
        }
    }

    /// <summary>
    /// Stores one message after nats-server's header checks: Nats-Msg-Id dedupe within the duplicate
    /// window, Nats-Expected-* expectations, Nats-Rollup. Returns the PubAck when it is not a plain success.
    /// </summary>
    /// <param name="m">The message.</param>
    /// <param name="result">What the store said.</param>
    /// <param name="timestamp">The time to store it with (0: now).</param>
    /// <param name="sourced">It comes from a source: its <c>Nats-TTL</c> is kept as a header, not refused (nats-server).</param>
    /// <param name="originSubject">A sourced message's subject in its origin (a counter's sources are kept by it).</param>
    private PubAck? AppendChecked(InternalMessage m, out StoreResult result, long timestamp = 0, bool sourced = false, string? originSubject = null)
    {
        result = default;
        if (_config.Sealed)
        {
            return new PubAck { Error = new ApiError(400, 10109, "invalid operation on sealed stream") };
        }

        var headers = m.Headers;
        BigInteger? increment = null;
        if (headers is not null && CheckIncrement(headers, m.Payload.Length, sourced, out increment) is { } badIncrement)
        {
            return new PubAck { Stream = _config.Name, Error = badIncrement };
        }

        var msgId = headers is null ? null : NatsHeaders.Get(headers, "Nats-Msg-Id");
        PruneDuplicates();
        if (msgId is not null && _duplicates.TryGetValue(msgId, out var original))
        {
            return new PubAck { Stream = _config.Name, Seq = original.Sequence, Duplicate = true };
        }

        if (headers is not null)
        {
            if (NatsHeaders.Get(headers, "Nats-Expected-Stream") is { } expectedStream && expectedStream != _config.Name)
            {
                return new PubAck { Error = new ApiError(400, 10060, "expected stream does not match") };
            }

            // A TTL'd message on a stream without allow_msg_ttl is refused (an unreadable one is refused below, as invalid).
            if (!sourced && !_config.AllowMsgTtl && MessageTtl.TryRead(headers, out var refusedTtl) && refusedTtl != 0)
            {
                return new PubAck { Stream = _config.Name, Error = ApiError.MessageTtlDisabled };
            }

            var last = _store.State().LastSeq;
            if (NatsHeaders.Get(headers, "Nats-Expected-Last-Sequence") is { } expectedLast &&
                ulong.TryParse(expectedLast, System.Globalization.CultureInfo.InvariantCulture, out var expected) && expected != last)
            {
                return new PubAck { Error = new ApiError(400, 10071, $"wrong last sequence: {last}") };
            }

            if (NatsHeaders.Get(headers, "Nats-Expected-Last-Subject-Sequence") is { } expectedSubjectLast &&
                ulong.TryParse(expectedSubjectLast, System.Globalization.CultureInfo.InvariantCulture, out var expectedSubject))
            {
                var lastForSubject = _store.LoadLastMessage(m.Subject) is { Found: true, Message: { } lm } ? lm.Sequence : 0;
                if (lastForSubject != expectedSubject)
                {
                    return new PubAck { Error = new ApiError(400, 10071, $"wrong last sequence: {lastForSubject}") };
                }
            }

            if (NatsHeaders.Get(headers, "Nats-Expected-Last-Msg-Id") is { } expectedId && expectedId != (_lastMsgId ?? ""))
            {
                return new PubAck { Error = new ApiError(400, 10070, $"wrong last msg ID: {_lastMsgId}") };
            }
        }

        var rollup = headers is null ? null : NatsHeaders.Get(headers, "Nats-Rollup");
        if (rollup is not null && !_config.AllowRollup)
        {
            return new PubAck { Error = new ApiError(500, 10111, "rollup not permitted") };
        }

        if (headers is not null && !sourced)
        {
            if (!MessageTtl.TryRead(headers, out var ttl))
            {
                return new PubAck { Stream = _config.Name, Error = ApiError.MessageTtlInvalid };
            }

            // With delete markers a TTL is at least the markers' own, or a marker could outlive what follows it
            // (nats-server; max_msgs_per_subject 1 needs none: a subject keeps one message anyway).
            var markerTtl = _config.SubjectDeleteMarkerTtl / 1_000_000_000;
            if (ttl > 0 && markerTtl > 0 && _config.MaxMsgsPerSubject != 1 && ttl < markerTtl)
            {
                headers = NatsHeaders.Set(headers, MessageTtl.Header, markerTtl.ToString(System.Globalization.CultureInfo.InvariantCulture));
            }
        }

        string? total = null;
        if (_config.AllowMsgCounter)
        {
            if (increment is null)
            {
                return new PubAck { Stream = _config.Name, Error = MessageCounter.Missing };
            }

            var payload = m.Payload;
            if (ApplyIncrement(m.Subject, originSubject, ref headers, ref payload, increment.Value, out total) is { } broken)
            {
                return new PubAck { Stream = _config.Name, Error = broken };
            }

            m = m with { Headers = headers, Payload = payload };
        }

        var (republishTo, subjectLastSequence) = RepublishTarget(m.Subject);
        result = _store.Append(Encoding.UTF8.GetBytes(m.Subject), headers ?? default, m.Payload, timestamp);
        if (!result.Ok)
        {
            return new PubAck { Error = StoreFailure(result.Error) };
        }

        if (republishTo is not null)
        {
            QueueRepublish(republishTo, m, result.Sequence, subjectLastSequence);
        }

        if (rollup == "sub")
        {
            _store.Purge(m.Subject, 0, 1);
        }
        else if (rollup == "all")
        {
            _store.Purge(null, 0, 1);
        }

        if (msgId is not null)
        {
            _duplicates[msgId] = (result.Sequence, Now);
            _duplicateOrder.Enqueue(msgId);
            _lastMsgId = msgId;
        }

        return total is null ? null : new PubAck { Stream = _config.Name, Seq = result.Sequence, Value = total };
    }

    private void PruneDuplicates()
    {
        var window = _config.DuplicateWindow > 0 ? TimeSpan.FromTicks(_config.DuplicateWindow / 100) : TimeSpan.FromMinutes(2);
        var cutoff = Now - window;
        while (_duplicateOrder.TryPeek(out var oldest) && (!_duplicates.TryGetValue(oldest, out var entry) || entry.Time < cutoff))
        {
            _duplicateOrder.Dequeue();
            if (_duplicates.TryGetValue(oldest, out var e) && e.Time < cutoff)
            {
                _duplicates.Remove(oldest);
            }
        }
    }

    private static ApiError StoreFailure(StoreError error) => error switch
    {
        StoreError.MessageTooLarge => new ApiError(400, 10054, "message size exceeds maximum allowed"),
        StoreError.MaxMsgs or StoreError.MaxBytes or StoreError.MaxMsgsPerSubject => new ApiError(503, 10077, error.Describe()),
        _ => ApiError.StreamStoreFailed(error.Describe()),
    };
}
