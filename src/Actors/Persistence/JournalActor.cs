using System.Buffers;
using Courier.Actors.Runtime;
using Courier.Storage.Persistence;

namespace Courier.Actors.Persistence;

/// <summary>
/// The journal actor (Akka.Persistence's <c>AsyncWriteJournal</c>) over an <see cref="IJournalStore"/>: serializes
/// events, group-commits them, replays and deletes. One per system, at <c>/user/persistence-journal</c>.
/// </summary>
/// <remarks>
/// <para><b>Group commit.</b> A <see cref="WriteMessages"/> is serialized into one batch buffer and held; the
/// batch goes to the engine (one write, one fsync) when the mailbox has no more messages, when it holds
/// <see cref="PersistenceSettings.MaxWriteBatch"/> atomic writes, or before a replay or delete (so those see
/// every earlier write). While one fsync runs, the writes of every persistent actor queue up and become the
/// next batch. Replies go out after the engine returns, in request order: <see cref="WriteMessagesSuccessful"/>,
/// then one per event (sender: the command's sender) and per deferred message.</para>
/// <para><b>Replays</b> run on the thread pool (the engine is thread-safe), so a long replay holds up no write;
/// their messages go straight to the persistent actor.</para>
/// <para>An event with no codec is rejected alone (<see cref="WriteMessageRejected"/>); an engine failure fails the
/// whole batch (<see cref="WriteMessagesFailed"/> and <see cref="WriteMessageFailure"/> per event: the actors stop).</para>
/// </remarks>
internal sealed class JournalActor : ActorBase
{
    private readonly IJournalStore _journal;
    private readonly PersistenceSerialization _serialization;
    private readonly PersistenceSettings _settings;
    private readonly ArrayBufferWriter<byte> _buffer = new(4096);
    private readonly List<Pending> _pending = [];
    private int _pendingWrites;

    public JournalActor(IJournalStore journal, PersistenceSerialization serialization, PersistenceSettings settings)
    {
        _journal = journal;
        _serialization = serialization;
        _settings = settings;
    }

    public static Props Props(IJournalStore journal, PersistenceSerialization serialization, PersistenceSettings settings) =>
        Runtime.Props.Create(() => new JournalActor(journal, serialization, settings));

    protected override bool Receive(object message)
    {
        switch (message)
        {
            case WriteMessages write:
                Add(write);
                if (_pendingWrites >= _settings.MaxWriteBatch)
                {
                    Flush();
                }

                break;
            case ReplayMessages replay:
                Flush();
                Replay(replay);
                break;
            case DeleteMessagesTo delete:
                Flush();
                Delete(delete);
                break;
            default:
                return false;
        }

        if (_pending.Count > 0 && !HasQueuedUserMessages)
        {
            Flush(); // the last message of the burst: commit the batch
        }

        return true;
    }

    protected override void PostStop() => Flush();

    /// <summary>Serializes the request's events into the batch buffer (a codec failure rejects that atomic write only).</summary>
    private void Add(WriteMessages request)
    {
        var envelopes = request.Messages;
        var parts = new Part[envelopes.Count];
        for (var i = 0; i < envelopes.Count; i++)
        {
            if (envelopes[i] is not AtomicWrite write)
            {
                continue;
            }

            if (Invalid(write) is { } invalid)
            {
                parts[i] = new Part(null, invalid);
                continue;
            }

            var start = _buffer.WrittenCount;
            var events = new SerializedEvent[write.Events.Count];
            try
            {
                for (var e = 0; e < events.Length; e++)
                {
                    var offset = _buffer.WrittenCount;
                    var manifest = _serialization.Serialize(write.Events[e].Payload, _buffer);
                    events[e] = new SerializedEvent(manifest, offset, _buffer.WrittenCount - offset);
                }

                parts[i] = new Part(events, null);
                _pendingWrites++;
            }
            catch (Exception e)
            {
                // Drop what this atomic write put in the buffer: later slices start where it started.
                Rewind(start);
                parts[i] = new Part(null, e);
            }
        }

        _pending.Add(new Pending(request, parts));
    }

    /// <summary>Writes the batch with one engine call and replies to every request in it.</summary>
    private void Flush()
    {
        if (_pending.Count == 0)
        {
            return;
        }

        var written = _buffer.WrittenMemory;
        var writes = new JournalWrite[_pendingWrites];
        var n = 0;
        foreach (var pending in _pending)
        {
            for (var i = 0; i < pending.Parts.Length; i++)
            {
                if (pending.Parts[i].Events is { } events)
                {
                    var write = (AtomicWrite)pending.Request.Messages[i];
                    var records = new JournalRecord[events.Length];
                    for (var e = 0; e < events.Length; e++)
                    {
                        var p = write.Events[e];
                        var s = events[e];
                        records[e] = new JournalRecord(p.PersistenceId, p.SequenceNr, written.Slice(s.Offset, s.Length), s.Manifest, p.WriterGuid, p.Timestamp);
                    }

                    writes[n++] = new JournalWrite(records);
                }
            }
        }

        var rejections = new Exception?[writes.Length];
        Exception? failure = null;
        try
        {
            if (n > 0)
            {
                _journal.WriteMessages(writes.AsSpan(0, n), rejections);
            }
        }
        catch (Exception e)
        {
            failure = e;
        }

        var batch = _pending.ToArray();
        _pending.Clear();
        _pendingWrites = 0;
        _buffer.ResetWrittenCount();

        n = 0;
        foreach (var pending in batch)
        {
            Reply(pending, failure, rejections, ref n);
        }
    }

    /// <summary>Why the engine would refuse <paramref name="write"/> as an atomic write, or null.</summary>
    private static JournalWriteRejectedException? Invalid(AtomicWrite write)
    {
        if (string.IsNullOrEmpty(write.PersistenceId))
        {
            return new JournalWriteRejectedException("The persistence id is empty.");
        }

        var previous = 0L;
        foreach (var p in write.Events)
        {
            if (p.SequenceNr <= previous)
            {
                return new JournalWriteRejectedException($"Sequence numbers must be positive and ascending: {p.SequenceNr} after {previous}.");
            }

            previous = p.SequenceNr;
        }

        return null;
    }

    private static void Reply(Pending pending, Exception? failure, Exception?[] rejections, ref int n)
    {
        var request = pending.Request;
        var target = request.PersistentActor;
        var id = request.ActorInstanceId;
        if (failure is null)
        {
            target.Tell(WriteMessagesSuccessful.Instance, null);
        }
        else
        {
            target.Tell(new WriteMessagesFailed(failure, request.Messages.Count(m => m is AtomicWrite)), null);
        }

        for (var i = 0; i < request.Messages.Count; i++)
        {
            var part = pending.Parts[i];
            switch (request.Messages[i])
            {
                case AtomicWrite write:
                    {
                        var rejection = part.Rejection;
                        if (part.Events is not null)
                        {
                            rejection ??= rejections[n];
                            n++;
                        }

                        foreach (var p in write.Events)
                        {
                            object reply = failure is not null && part.Rejection is null ? new WriteMessageFailure(p, failure, id)
                                : rejection is not null ? new WriteMessageRejected(p, rejection, id)
                                : new WriteMessageSuccess(p, id);
                            target.Tell(reply, p.Sender);
                        }

                        break;
                    }

                case var envelope:
                    target.Tell(new LoopMessageSuccess(envelope.Payload, id), envelope.Sender);
                    break;
            }
        }
    }

    private void Replay(ReplayMessages replay)
    {
        var journal = _journal;
        var serialization = _serialization;
        var target = replay.PersistentActor;
        _ = Task.Run(() =>
        {
            try
            {
                var highest = journal.ReadHighestSequenceNr(replay.PersistenceId, Math.Max(0, replay.FromSequenceNr - 1));
                var to = Math.Min(replay.ToSequenceNr, highest);
                if (to > 0 && replay.FromSequenceNr <= to)
                {
                    journal.ReplayMessages(replay.PersistenceId, replay.FromSequenceNr, to, replay.Max, record =>
                    {
                        var payload = serialization.Deserialize(record.Manifest, record.Payload);
                        var persistent = new Persistent(payload, record.SequenceNr, record.PersistenceId, record.Manifest, null, record.WriterGuid, record.Timestamp);
                        target.Tell(new ReplayedMessage(persistent) { ReplayId = replay.ReplayId }, null);
                    });
                }

                target.Tell(new RecoverySuccess(highest) { ReplayId = replay.ReplayId }, null);
            }
            catch (Exception e)
            {
                target.Tell(new ReplayMessagesFailure(e) { ReplayId = replay.ReplayId }, null);
            }
        });
    }

    private void Delete(DeleteMessagesTo delete)
    {
        try
        {
            _journal.DeleteMessagesTo(delete.PersistenceId, delete.ToSequenceNr);
            delete.PersistentActor.Tell(new DeleteMessagesSuccess(delete.ToSequenceNr), Self);
            if (_settings.PublishPluginCommands)
            {
                Context.System.EventStream.Publish(delete);
            }
        }
        catch (Exception e)
        {
            delete.PersistentActor.Tell(new DeleteMessagesFailure(e, delete.ToSequenceNr), Self);
        }
    }

    private void Rewind(int writtenCount)
    {
        // ArrayBufferWriter cannot shrink its count: copy what stays into a fresh state.
        var keep = _buffer.WrittenSpan[..writtenCount].ToArray();
        _buffer.ResetWrittenCount();
        _buffer.Write(keep);
    }

    /// <summary>One event's bytes in the batch buffer.</summary>
    private readonly record struct SerializedEvent(string Manifest, int Offset, int Length);

    /// <summary>One envelope of a request: its serialized events, or why it was rejected; both null for a deferred message.</summary>
    private readonly record struct Part(SerializedEvent[]? Events, Exception? Rejection);

    private sealed record Pending(WriteMessages Request, Part[] Parts);
}
