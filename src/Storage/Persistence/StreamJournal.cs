using System.Buffers;
using System.Buffers.Text;
using System.Text;

namespace Courier.Storage.Persistence;

/// <summary>
/// The journal on an <see cref="IStreamStore"/> (a FileStore, or a MemoryStore for tests): one store
/// message per atomic write on the subject <c>j.&lt;base64url(persistence id)&gt;</c>, and one deletion
/// marker per id that ever deleted, on <c>d.&lt;base64url(persistence id)&gt;</c>. The store's
/// per-subject state finds an id's messages without looking at anyone else's.
/// </summary>
/// <remarks>
/// <para>Per id it keeps, once first asked, the highest sequence number, the deleted-to sequence number
/// and the marker's store sequence (<see cref="IdState"/>): a write or a highest-sequence query reads
/// nothing from the store after that.</para>
/// <para>Deletes write the new marker first and then remove the covered messages oldest first, with one
/// flush: a torn write keeps a prefix of that, so the highest sequence number is never lost with the
/// last messages of an id.</para>
/// <para>Locking: <see cref="_lock"/> guards the id table, the scratch buffer and the store's writes;
/// replays read the store (thread-safe itself) outside it.</para>
/// </remarks>
internal sealed class StreamJournal : IDisposable
{
    private const int MaxEncodedId = 60_000; // bytes of base64url: subjects are at most 65,535 bytes

    private readonly IStreamStore _store;
    private readonly Lock _lock = new();
    private readonly Dictionary<string, IdState> _ids = new(StringComparer.Ordinal);
    private readonly ArrayBufferWriter<byte> _scratch = new(256);
    private Exception? _failure;
    private bool _disposed;

    public StreamJournal(IStreamStore store) => _store = store;

    public IStreamStore Store => _store;

    public IReadOnlyList<StoreWarning> Warnings => _store.Warnings;

    public void WriteMessages(ReadOnlySpan<JournalWrite> writes, Span<Exception?> rejections)
    {
        if (rejections.Length < writes.Length)
        {
            throw new ArgumentException("One rejection slot per write is needed.", nameof(rejections));
        }

        lock (_lock)
        {
            ThrowIfUnusable();
            var now = UnixNanosNow();
            var stored = 0;
            var highest = ArrayPool<(IdState, long)>.Shared.Rent(writes.Length);
            try
            {
                for (var i = 0; i < writes.Length; i++)
                {
                    rejections[i] = null;
                    var write = writes[i];
                    if (!TryState(write.PersistenceId, out var state, out var invalid))
                    {
                        rejections[i] = invalid;
                        continue;
                    }

                    var timestamp = JournalCodec.EffectiveTimestamp(write.Records[0], now);
                    var size = JournalCodec.EventsSize(write, timestamp, now);
                    if (size < 0 || size > int.MaxValue)
                    {
                        rejections[i] = new JournalWriteRejectedException($"{write} cannot be stored: too many events or a field too long.");
                        continue;
                    }

                    _scratch.ResetWrittenCount();
                    var span = _scratch.GetSpan((int)size)[..(int)size];
                    JournalCodec.WriteEvents(span, write, timestamp, now);
                    var result = _store.Append(state.Subject, [], span, timestamp);
                    if (result.Error is StoreError.WriteFailed or StoreError.Closed)
                    {
                        throw new IOException($"The journal store refused {write}: {result.Error.Describe()}.");
                    }

                    if (!result.Ok)
                    {
                        rejections[i] = new JournalWriteRejectedException($"{write} was refused by the store: {result.Error.Describe()}.");
                        continue;
                    }

                    highest[stored++] = (state, write.HighestSequenceNr);
                }

                if (stored > 0)
                {
                    _store.Flush();
                    StoreMetrics.GroupCommit(StoreMetrics.JournalLog, stored);
                }

                for (var i = 0; i < stored; i++)
                {
                    var (state, seq) = highest[i];
                    state.Highest = Math.Max(state.Highest, seq);
                }
            }
            catch (Exception e) when (e is not ArgumentException)
            {
                // Appended records may be readable but are not durable: nothing more is served or accepted.
                _failure = e;
                throw;
            }
            finally
            {
                ArrayPool<(IdState, long)>.Shared.Return(highest, clearArray: true);
            }
        }
    }

    public long ReplayMessages(string persistenceId, long fromSequenceNr, long toSequenceNr, long max, Action<JournalRecord> onReplayed)
    {
        ArgumentNullException.ThrowIfNull(onReplayed);
        IdState state;
        long deletedTo;
        lock (_lock)
        {
            ThrowIfUnusable();
            if (!TryState(persistenceId, out state, out _))
            {
                return 0;
            }

            deletedTo = state.DeletedTo;
        }

        var from = Math.Max(fromSequenceNr, deletedTo + 1);
        if (max <= 0 || from > toSequenceNr)
        {
            return 0;
        }

        var reader = new JournalCodec.Reader();
        long count = 0;
        var next = FirstMessageWith(state, from);
        while (count < max)
        {
            var load = _store.LoadNextMessage(state.SubjectText, next);
            if (!load.Found)
            {
                break;
            }

            var message = load.Message!;
            next = message.Sequence + 1;
            if (!JournalCodec.TryReadHeader(message.Payload.Span, out _, out var lowest, out var highest))
            {
                continue; // not a journal message: never served
            }

            if (highest < from)
            {
                continue;
            }

            if (lowest > toSequenceNr)
            {
                break;
            }

            var done = false;
            reader.ReadEvents(persistenceId, message.Payload, message.Timestamp, record =>
            {
                if (record.SequenceNr < from)
                {
                    return true;
                }

                if (record.SequenceNr > toSequenceNr)
                {
                    done = true;
                    return false;
                }

                onReplayed(record);
                if (++count >= max)
                {
                    done = true;
                    return false;
                }

                return true;
            });

            if (done)
            {
                break;
            }
        }

        return count;
    }

    public long ReadHighestSequenceNr(string persistenceId, long fromSequenceNr)
    {
        lock (_lock)
        {
            ThrowIfUnusable();
            return TryState(persistenceId, out var state, out _) ? state.Highest : 0;
        }
    }

    public void DeleteMessagesTo(string persistenceId, long toSequenceNr)
    {
        lock (_lock)
        {
            ThrowIfUnusable();
            if (!TryState(persistenceId, out var state, out var invalid))
            {
                throw invalid!;
            }

            var target = Math.Min(toSequenceNr, state.Highest);
            if (target <= state.DeletedTo)
            {
                return;
            }

            try
            {
                // The marker first: whatever prefix of this survives a crash keeps the highest sequence number.
                Span<byte> marker = stackalloc byte[JournalCodec.MarkerSize];
                JournalCodec.WriteMarker(marker, target, state.Highest);
                var result = _store.Append(state.MarkerSubject, [], marker);
                if (!result.Ok)
                {
                    throw new IOException($"The journal store refused the deletion marker of [{persistenceId}]: {result.Error.Describe()}.");
                }

                if (state.MarkerSeq != 0)
                {
                    _store.RemoveMessage(state.MarkerSeq);
                }

                // Whole messages at or below the target go, oldest first; one partly covered stays (replays skip its deleted part).
                ulong next = 0;
                while (true)
                {
                    var load = _store.LoadNextMessage(state.SubjectText, next);
                    if (!load.Found)
                    {
                        break;
                    }

                    next = load.Message!.Sequence + 1;
                    if (JournalCodec.TryReadHeader(load.Message.Payload.Span, out _, out _, out var highest) && highest > target)
                    {
                        break;
                    }

                    _store.RemoveMessage(load.Message.Sequence);
                }

                _store.Flush();
                state.DeletedTo = target;
                state.MarkerSeq = result.Sequence;
            }
            catch (IOException e)
            {
                _failure = e;
                throw;
            }
        }
    }

    public void Dispose()
    {
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
        }

        _store.Dispose();
    }

    /// <summary>The store sequence to start a replay from <paramref name="from"/>: binary search over the id's messages (sequence numbers ascend with store order).</summary>
    private ulong FirstMessageWith(IdState state, long from)
    {
        var first = _store.LoadNextMessage(state.SubjectText, 0);
        if (!first.Found)
        {
            return ulong.MaxValue;
        }

        if (!JournalCodec.TryReadHeader(first.Message!.Payload.Span, out _, out _, out var firstHighest) || firstHighest >= from)
        {
            return first.Message.Sequence;
        }

        var lo = first.Message.Sequence + 1;
        var last = _store.LoadLastMessage(state.SubjectText);
        if (!last.Found)
        {
            return lo;
        }

        var hi = last.Message!.Sequence;
        while (lo < hi)
        {
            var mid = lo + ((hi - lo) / 2);
            var probe = _store.LoadNextMessage(state.SubjectText, mid);
            if (!probe.Found || !JournalCodec.TryReadHeader(probe.Message!.Payload.Span, out _, out _, out var highest) || highest >= from)
            {
                hi = mid;
            }
            else
            {
                lo = probe.Message.Sequence + 1;
            }
        }

        return lo;
    }

    /// <summary>The id's state, read from the store the first time. Lock held.</summary>
    private bool TryState(string persistenceId, out IdState state, out Exception? invalid)
    {
        invalid = null;
        if (_ids.TryGetValue(persistenceId, out state!))
        {
            return true;
        }

        if (string.IsNullOrEmpty(persistenceId))
        {
            invalid = new JournalWriteRejectedException("The persistence id is empty.");
            return false;
        }

        var idBytes = Encoding.UTF8.GetBytes(persistenceId);
        if (Base64Url.GetEncodedLength(idBytes.Length) > MaxEncodedId)
        {
            invalid = new JournalWriteRejectedException($"The persistence id is longer than {MaxEncodedId * 3 / 4} bytes.");
            return false;
        }

        var encoded = Base64Url.EncodeToString(idBytes);
        state = new IdState("j." + encoded, "d." + encoded);
        var last = _store.LoadLastMessage(state.SubjectText);
        if (last.Found && JournalCodec.TryReadHeader(last.Message!.Payload.Span, out _, out _, out var highest))
        {
            state.Highest = highest;
        }

        var marker = _store.LoadLastMessage(state.MarkerSubjectText);
        if (marker.Found && JournalCodec.TryReadMarker(marker.Message!.Payload.Span, out var deletedTo, out var markedHighest))
        {
            state.DeletedTo = deletedTo;
            state.Highest = Math.Max(state.Highest, markedHighest);
            state.MarkerSeq = marker.Message.Sequence;
        }

        _ids.Add(persistenceId, state);
        return true;
    }

    private void ThrowIfUnusable()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_failure is not null)
        {
            throw new IOException("The journal failed to write earlier and accepts nothing until it is reopened.", _failure);
        }
    }

    private static long UnixNanosNow() => (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) * 100;

    /// <summary>What the journal remembers per persistence id.</summary>
    private sealed class IdState(string subject, string markerSubject)
    {
        public string SubjectText { get; } = subject;

        public byte[] Subject { get; } = Encoding.ASCII.GetBytes(subject);

        public string MarkerSubjectText { get; } = markerSubject;

        public byte[] MarkerSubject { get; } = Encoding.ASCII.GetBytes(markerSubject);

        /// <summary>The highest sequence number ever stored (deletes do not lower it).</summary>
        public long Highest { get; set; }

        /// <summary>Every event at or below it is deleted.</summary>
        public long DeletedTo { get; set; }

        /// <summary>The store sequence of the current deletion marker; 0 when there is none.</summary>
        public ulong MarkerSeq { get; set; }
    }
}
