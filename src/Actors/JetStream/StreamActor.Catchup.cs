using System.Buffers;
using System.Buffers.Binary;
using System.Text;
using System.Text.Json;
using Akka.Actor;
using Akka.Event;
using Courier.Actors.Raft;
using Courier.Protocols.JetStream;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// Log compaction and catch-up of a replicated stream.
/// </summary>
/// <remarks>
/// <para><b>Compaction.</b> Every <see cref="StreamReplication.CompactEvery"/> applied entries a replica
/// syncs its store and hands its Raft host a snapshot of what the store alone does not say (the
/// stream's totals, its config, the Nats-Msg-Id window); the log before that point goes. From then on
/// the store is trusted up to the snapshot, and the log only past it.</para>
/// <para><b>Restart.</b> The store is cut back to the snapshot's last sequence (appends after it are
/// applied again from the log). If its totals then match the snapshot's, the log's tail is applied on
/// it; if not (a delete or purge after the snapshot reached the disk, and applying the tail again could
/// decide differently), the replica catches up.</para>
/// <para><b>Catch-up</b> (after such a restart, or when the leader sends a snapshot because this
/// replica's log is behind its own, or for a new replica): the replica asks whoever leads, on
/// <c>$JSC.CU.&lt;group&gt;</c>, for the messages after its last sequence, one bounded batch at a time
/// (one request in flight, so memory stays bounded however large the stream). The batch that reaches
/// the end of the leader's store also carries the leader's image at its applied index Y, taken in the
/// same actor turn: totals, interior deletes, config, Nats-Msg-Id window and durable consumers. The
/// replica makes its store match it (or starts over from an empty store when it cannot), then skips
/// the committed entries up to Y, which it holds by copy, and applies the rest, held back meanwhile.
/// A replica that is catching up never acts as leader: it hands leadership on.</para>
/// </remarks>
internal sealed partial class StreamActor
{
    /// <summary>The largest batch of messages a catch-up reply carries (one message may make it larger).</summary>
    private const int CatchupBatchBytes = 256 * 1024;

    /// <summary>How long a catch-up request waits for its reply before it is sent again.</summary>
    private static readonly TimeSpan CatchupRetry = TimeSpan.FromSeconds(2);

    /// <summary>
    /// After a restart whose store disagreed with its snapshot, how long the replica waits for anyone to
    /// answer before it applies its own log on its own store (every replica restarted alike, so none leads).
    /// </summary>
    private static readonly TimeSpan CatchupGiveUp = TimeSpan.FromSeconds(15);

    private const byte SnapshotVersion = 1;

    private ulong _appliedIndex;
    private ulong _compactedAt;
    private ulong _skipThrough;
    private bool _compactAfterSkip;
    private ulong _selfMember;
    private Catchup? _catchup;

    private sealed class Catchup(string inbox, string sid, bool restart, ulong minIndex)
    {
        public string Inbox { get; } = inbox;
        public string Sid { get; } = sid;
        public bool Restart { get; } = restart;
        public ulong MinIndex { get; set; } = minIndex;
        public DateTime Started { get; } = DateTime.UtcNow;
        public ulong RequestId { get; set; }
        public int Replies { get; set; }
        public List<RaftHost.Protocol.Applied> Held { get; } = [];
    }

    /// <summary>The host started this replica's member: from nothing (the store is rebuilt from the log), or from its last snapshot.</summary>
    /// <summary>A durable consumer's meta file was damaged when the stream started (it was not started).</summary>
    private bool _consumerFilesDamaged;

    private void OnRecovered(RaftHost.Protocol.Recovered recovered)
    {
        if (_members.Length == 0 && recovered.Voters.Length > 0)
        {
            // Started without a member list (its file was damaged): the group's own log names the voters.
            _members = recovered.Voters;
            Context.Parent.Tell(new JetStreamApi.Protocol.ReplicaMembers(_config.Name, Self, _members));
        }

        if (recovered.Snapshot is not { } snapshot)
        {
            // No snapshot yet: the log holds every entry since the stream's creation; rebuild the store from it.
            _store.Truncate(0);
            return;
        }

        _appliedIndex = _compactedAt = snapshot.Meta.Index;
        if (_replication?.Start == ReplicaStart.Adopt && _directory is not null)
        {
            File.Delete(Path.Combine(_directory, JetStreamApi.AdoptMarker)); // the group exists now: a restart joins it from its files
        }

        var image = SnapshotImage.Read(snapshot.Data.Span);
        if (image.Config is { } config)
        {
            ApplyConfig(config);
        }

        RestoreDuplicates(image);
        var state = _store.State();
        if (state.LastSeq > image.LastSeq)
        {
            CutTo(image.LastSeq);
        }

        if (Matches(_store.State(), image) && !_consumerFilesDamaged)
        {
            return; // the log's tail is applied on this store
        }

        if (_consumerFilesDamaged)
        {
            // A durable's definition is gone here and its creation compacted out of the log: the leader's copy.
            _log.Warning("stream {0}: a consumer's files are damaged; catching up from the leader", _config.Name);
        }
        else
        {
            _log.Warning("stream {0}: the store ({1}) does not match the replica's snapshot at index {2} (first {3}, last {4}, {5} messages); catching up from the leader",
                _config.Name, _store.State(), snapshot.Meta.Index, image.FirstSeq, image.LastSeq, image.Msgs);
        }

        StartCatchup(snapshot.Meta.Index, restart: true);
    }

    /// <summary>The store holds what the image says: the same totals (the first sequence only when it holds any).</summary>
    private static bool Matches(StreamState state, SnapshotImage image) =>
        state.LastSeq == image.LastSeq && state.Msgs == image.Msgs && state.NumDeleted == image.NumDeleted && (image.Msgs == 0 || state.FirstSeq == image.FirstSeq);

    /// <summary>Removes every message above <paramref name="sequence"/> (the store's truncate needs a stored message to end at).</summary>
    private void CutTo(ulong sequence)
    {
        var first = _store.State().FirstSeq;
        for (var s = sequence; s >= first && s > 0; s--)
        {
            if (_store.LoadMessage(s).Found)
            {
                _store.Truncate(s);
                return;
            }
        }

        _store.Truncate(0);
    }

    /// <summary>After applying: every <see cref="StreamReplication.CompactEvery"/> entries, a snapshot, and the log before it goes.</summary>
    private void MaybeCompact()
    {
        if (_catchup is not null || _replication is not { } replication)
        {
            return;
        }

        if (_compactAfterSkip && _appliedIndex >= _skipThrough)
        {
            _compactAfterSkip = false;
            CompactNow();
            return;
        }

        if (_appliedIndex >= _compactedAt + (ulong)replication.CompactEvery)
        {
            CompactNow();
        }
    }

    private void CompactNow()
    {
        _replication!.Host.Tell(new RaftHost.Protocol.Compact(_replication.Group, _appliedIndex, CurrentImage().Write()));
        _compactedAt = _appliedIndex;
    }

    /// <summary>The store synced, and what a snapshot says of it.</summary>
    private SnapshotImage CurrentImage()
    {
        _store.Flush();
        _store.Sync(); // the snapshot says the store holds everything up to here: it must, on disk
        return ImageOfStore();
    }

    /// <summary>What the store alone does not say, with its totals now.</summary>
    private SnapshotImage ImageOfStore()
    {
        var state = _store.State();
        return new SnapshotImage
        {
            FirstSeq = state.FirstSeq,
            LastSeq = state.LastSeq,
            Msgs = state.Msgs,
            NumDeleted = state.NumDeleted,
            Config = _config,
            LastMsgId = _lastMsgId,
            Duplicates = CurrentDuplicates(),
        };
    }

    private List<(string Id, ulong Sequence, DateTime Time)> CurrentDuplicates()
    {
        var list = new List<(string, ulong, DateTime)>(_duplicates.Count);
        foreach (var id in _duplicateOrder)
        {
            if (_duplicates.TryGetValue(id, out var entry))
            {
                list.Add((id, entry.Sequence, entry.Time));
            }
        }

        return list;
    }

    private void RestoreDuplicates(SnapshotImage image)
    {
        _duplicates.Clear();
        _duplicateOrder.Clear();
        foreach (var (id, sequence, time) in image.Duplicates)
        {
            _duplicates[id] = (sequence, time);
            _duplicateOrder.Enqueue(id);
        }

        _lastMsgId = image.LastMsgId;
    }

    /// <summary>Starts (or widens) a catch-up: this replica's store is not what its log's position says.</summary>
    private void StartCatchup(ulong minIndex, bool restart)
    {
        if (_catchup is { } running)
        {
            running.MinIndex = Math.Max(running.MinIndex, minIndex);
            return;
        }

        var inbox = $"$JSC.CR.{_replication!.Group}.{Guid.NewGuid():N}";
        var self = Self;
        var sid = _client.Subscribe(inbox, null, batch => self.Tell(new Protocol.CatchupReply(batch)));
        _catchup = new Catchup(inbox, sid, restart, minIndex);
        // The leader's store already respects the limits; copying it must not apply them a second time.
        _store.UpdateConfig(JetStreamApi.ToStoreConfig(_config) with { MaxMsgs = -1, MaxBytes = -1, MaxAge = TimeSpan.Zero, MaxMsgsPerSubject = -1, MaxMsgSize = -1, Discard = DiscardPolicy.Old, DiscardNewPerSubject = false });
        if (_leading)
        {
            StopLeading();
        }

        HandLeadershipOn();
        RequestCatchup();
    }

    private void RequestCatchup()
    {
        var catchup = _catchup!;
        catchup.RequestId++;
        Span<byte> request = stackalloc byte[8 + 8 + 8 + 4];
        BinaryPrimitives.WriteUInt64LittleEndian(request, catchup.RequestId);
        BinaryPrimitives.WriteUInt64LittleEndian(request[8..], _store.State().LastSeq + 1);
        BinaryPrimitives.WriteUInt64LittleEndian(request[16..], catchup.MinIndex);
        BinaryPrimitives.WriteInt32LittleEndian(request[24..], CatchupBatchBytes);
        _out.Publish($"$JSC.CU.{_replication!.Group}", catchup.Inbox, default, request);
        Timers.StartSingleTimer("catchup", new Protocol.CatchupTimeout(catchup.RequestId), CatchupRetry);
    }

    private void OnCatchupTimeout(Protocol.CatchupTimeout timeout)
    {
        if (_catchup is not { } catchup || timeout.RequestId != catchup.RequestId)
        {
            return;
        }

        if (catchup.Restart && catchup.Replies == 0 && DateTime.UtcNow - catchup.Started > CatchupGiveUp)
        {
            _log.Warning("stream {0}: nobody answered a catch-up for {1}; applying this replica's own log on its own store", _config.Name, CatchupGiveUp);
            EndCatchup(skipThrough: 0);
            return;
        }

        HandLeadershipOn();
        RequestCatchup();
    }

    /// <summary>A replica that is catching up and finds itself its group's leader hands leadership to another member.</summary>
    private void HandLeadershipOn()
    {
        if (_selfMember == 0 || _leader != _selfMember || _replication is not { } replication)
        {
            return;
        }

        var others = _members.Where(m => m != _selfMember).ToArray();
        if (others.Length > 0)
        {
            replication.Host.Tell(new RaftHost.Protocol.TransferLeadership(replication.Group, others[Random.Shared.Next(others.Length)]));
        }
    }

    /// <summary>At the leader: the messages after the asked sequence, and at the end of its store its image as of now.</summary>
    private void OnCatchupRequest(Protocol.CatchupRequest request)
    {
        foreach (var message in request.Messages)
        {
            if (!_leading || _catchup is not null || message.ReplyTo is null || message.Payload.Length < 28)
            {
                continue;
            }

            var payload = message.Payload.AsSpan();
            var id = BinaryPrimitives.ReadUInt64LittleEndian(payload);
            var from = BinaryPrimitives.ReadUInt64LittleEndian(payload[8..]);
            var minIndex = BinaryPrimitives.ReadUInt64LittleEndian(payload[16..]);
            var maxBytes = Math.Clamp(BinaryPrimitives.ReadInt32LittleEndian(payload[24..]), 1024, 4 * 1024 * 1024);
            _out.Publish(message.ReplyTo, null, default, CatchupBatch(id, from, minIndex, maxBytes));
        }
    }

    private byte[] CatchupBatch(ulong id, ulong from, ulong minIndex, int maxBytes)
    {
        var writer = new ArrayBufferWriter<byte>(Math.Min(maxBytes + 1024, 64 * 1024));
        WriteU64(writer, id);
        var messages = new List<StoredMessage>();
        var bytes = 0;
        var next = from;
        var atEnd = false;
        while (true)
        {
            var loaded = _store.LoadNextMessage(null, next);
            if (loaded.Message is not { } m)
            {
                atEnd = true;
                break;
            }

            var size = 32 + m.Subject.Length + m.Headers.Length + m.Payload.Length;
            if (messages.Count > 0 && bytes + size > maxBytes)
            {
                break;
            }

            messages.Add(m);
            bytes += size;
            next = m.Sequence + 1;
        }

        var final = atEnd && _appliedIndex >= minIndex;
        writer.GetSpan(1)[0] = final ? (byte)1 : (byte)0;
        writer.Advance(1);
        WriteI32(writer, messages.Count);
        foreach (var m in messages)
        {
            WriteU64(writer, m.Sequence);
            WriteU64(writer, (ulong)m.Timestamp);
            WriteBytes(writer, Encoding.UTF8.GetBytes(m.Subject));
            WriteBytes(writer, m.Headers.Span);
            WriteBytes(writer, m.Payload.Span);
        }

        if (final)
        {
            WriteU64(writer, _appliedIndex);
            WriteBytes(writer, ImageOfStore().Write());
            var deleted = _store.DeletedSequences();
            WriteI32(writer, deleted.Length);
            foreach (var d in deleted)
            {
                WriteU64(writer, d);
            }

            var consumers = DurableConsumerImages();
            WriteI32(writer, consumers.Count);
            foreach (var (name, meta, consumerState) in consumers)
            {
                WriteBytes(writer, Encoding.UTF8.GetBytes(name));
                WriteBytes(writer, meta);
                WriteBytes(writer, consumerState);
            }
        }

        return writer.WrittenSpan.ToArray();
    }

    /// <summary>The leader's durable consumers: each one's definition file and the state it last replicated.</summary>
    private List<(string Name, byte[] Meta, byte[] State)> DurableConsumerImages()
    {
        var list = new List<(string, byte[], byte[])>();
        if (ConsumersDirectory is not { } directory || !Directory.Exists(directory))
        {
            return list;
        }

        foreach (var consumerDirectory in Directory.GetDirectories(directory))
        {
            var meta = Path.Combine(consumerDirectory, ConsumerMetaFileName);
            if (!File.Exists(meta))
            {
                continue;
            }

            // Plaintext on the way (the link is the route's, TLS when configured): each node seals its copies
            // with its own key (encryption at rest, MetaFiles).
            var name = Path.GetFileName(consumerDirectory);
            var context = _meta.ConsumerContext(_config.Name, name);
            var state = _replicatedStates.TryGetValue(name, out var replicated) ? replicated
                : File.Exists(Path.Combine(consumerDirectory, ReplicaStateFile)) ? _meta.Read(Path.Combine(consumerDirectory, ReplicaStateFile), context + ":state", "consumer")
                : [];
            list.Add((name, _meta.Read(meta, context, "consumer"), state));
        }

        return list;
    }

    /// <summary>At the replica catching up: a batch stored; the last one also makes the store match the leader's image.</summary>
    private void OnCatchupReply(Protocol.CatchupReply reply)
    {
        foreach (var message in reply.Messages)
        {
            if (_catchup is not { } catchup || message.Payload.Length < 13)
            {
                return;
            }

            var data = message.Payload.AsSpan();
            var p = 0;
            if (ReadU64(data, ref p) != catchup.RequestId)
            {
                continue; // an answer to an earlier request
            }

            Timers.Cancel("catchup");
            catchup.Replies++;
            var final = data[p++] == 1;
            var count = ReadI32(data, ref p);
            for (var i = 0; i < count; i++)
            {
                var sequence = ReadU64(data, ref p);
                var timestamp = (long)ReadU64(data, ref p);
                var subject = ReadBytes(data, ref p);
                var headers = ReadBytes(data, ref p);
                var body = ReadBytes(data, ref p);
                StoreCopied(sequence, timestamp, subject, headers, body);
            }

            _store.Flush();
            if (!final)
            {
                if (count == 0)
                {
                    // The leader has nothing past our store but has not applied what our log says it must: ask again shortly.
                    Timers.StartSingleTimer("catchup", new Protocol.CatchupTimeout(catchup.RequestId), TimeSpan.FromMilliseconds(100));
                }
                else
                {
                    RequestCatchup();
                }

                return;
            }

            var appliedAtLeader = ReadU64(data, ref p);
            var image = SnapshotImage.Read(ReadBytes(data, ref p));
            var deletedCount = ReadI32(data, ref p);
            var deleted = new ulong[deletedCount];
            for (var i = 0; i < deletedCount; i++)
            {
                deleted[i] = ReadU64(data, ref p);
            }

            var consumerCount = ReadI32(data, ref p);
            var consumers = new List<(string, byte[], byte[])>(consumerCount);
            for (var i = 0; i < consumerCount; i++)
            {
                consumers.Add((Encoding.UTF8.GetString(ReadBytes(data, ref p)), ReadBytes(data, ref p).ToArray(), ReadBytes(data, ref p).ToArray()));
            }

            if (!MatchImage(image, deleted))
            {
                _log.Warning("stream {0}: after catching up the store ({1}) still differs from the leader's (first {2}, last {3}, {4} messages); starting over from an empty store",
                    _config.Name, _store.State(), image.FirstSeq, image.LastSeq, image.Msgs);
                _store.Truncate(0);
                RequestCatchup();
                return;
            }

            _store.Sync();
            ReconcileConsumers(consumers);
            RestoreDuplicates(image);
            if (image.Config is { } config)
            {
                _config = config; // ApplyConfig below (EndCatchup) restores the store's limits with it
            }

            _log.Info("stream {0}: caught up to the leader's index {1} ({2} messages, last sequence {3})", _config.Name, appliedAtLeader, image.Msgs, image.LastSeq);
            EndCatchup(appliedAtLeader);
            return;
        }
    }

    /// <summary>A copied message at its sequence; a gap before it becomes removed placeholders (the leader deleted those).</summary>
    private void StoreCopied(ulong sequence, long timestamp, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> headers, ReadOnlySpan<byte> payload)
    {
        var state = _store.State();
        if (sequence <= state.LastSeq)
        {
            return;
        }

        FillTo(sequence - 1, subject, timestamp);
        _store.Append(subject, headers, payload, timestamp);
    }

    /// <summary>Moves the store's last sequence up to <paramref name="last"/> with nothing stored in between.</summary>
    private void FillTo(ulong last, ReadOnlySpan<byte> subject, long timestamp)
    {
        var state = _store.State();
        if (last <= state.LastSeq)
        {
            return;
        }

        if (state.Msgs == 0)
        {
            _store.Compact(last + 1);
            return;
        }

        for (var s = state.LastSeq + 1; s <= last; s++)
        {
            var placeholder = _store.Append(subject, default, default, timestamp);
            if (placeholder.Ok)
            {
                _store.RemoveMessage(placeholder.Sequence);
            }
        }
    }

    private bool MatchImage(SnapshotImage image, ulong[] deleted)
    {
        var state = _store.State();
        if (state.LastSeq > image.LastSeq)
        {
            CutTo(image.LastSeq);
        }

        FillTo(image.LastSeq, "_"u8, 0);
        if (_store.State().FirstSeq < image.FirstSeq)
        {
            _store.Compact(image.FirstSeq);
        }

        foreach (var sequence in deleted)
        {
            _store.RemoveMessage(sequence);
        }

        _store.Flush();
        return Matches(_store.State(), image);
    }

    /// <summary>This replica's durable consumers become the leader's: definitions written, states kept for when it leads, the others removed.</summary>
    private void ReconcileConsumers(List<(string Name, byte[] Meta, byte[] State)> consumers)
    {
        if (ConsumersDirectory is not { } directory)
        {
            return;
        }

        var names = new HashSet<string>(consumers.Select(c => c.Name), StringComparer.Ordinal);
        if (Directory.Exists(directory))
        {
            foreach (var existing in Directory.GetDirectories(directory))
            {
                if (!names.Contains(Path.GetFileName(existing)))
                {
                    DeleteConsumerDirectory(Path.GetFileName(existing));
                }
            }
        }

        foreach (var (name, meta, state) in consumers)
        {
            var consumerDirectory = Path.Combine(directory, name);
            Directory.CreateDirectory(consumerDirectory);
            var file = Path.Combine(consumerDirectory, ConsumerMetaFileName);
            var context = _meta.ConsumerContext(_config.Name, name);
            if (!File.Exists(file) || !_meta.Read(file, context, "consumer").AsSpan().SequenceEqual(meta))
            {
                _meta.WriteDurably(file, meta, context);
            }

            if (state.Length > 0)
            {
                _meta.Write(Path.Combine(consumerDirectory, ReplicaStateFile), state, context + ":state");
            }
        }
    }

    /// <summary>Ends a catch-up: entries up to <paramref name="skipThrough"/> are held by copy; the ones held back are applied.</summary>
    private void EndCatchup(ulong skipThrough)
    {
        var catchup = _catchup!;
        _catchup = null;
        Timers.Cancel("catchup");
        _client.Unsubscribe(catchup.Sid);
        ApplyConfig(_config); // the store's limits again
        if (skipThrough > 0)
        {
            _skipThrough = Math.Max(_skipThrough, skipThrough);
            _compactAfterSkip = true; // a snapshot soon, so a restart trusts this store and does not catch up again
        }

        foreach (var held in catchup.Held)
        {
            OnApplied(held);
        }

        if (_selfMember != 0 && _leader == _selfMember && !_leading)
        {
            StartLeading();
        }

        MaybeCompact();
    }

    private static void WriteU64(ArrayBufferWriter<byte> writer, ulong value)
    {
        BinaryPrimitives.WriteUInt64LittleEndian(writer.GetSpan(8), value);
        writer.Advance(8);
    }

    private static void WriteI32(ArrayBufferWriter<byte> writer, int value)
    {
        BinaryPrimitives.WriteInt32LittleEndian(writer.GetSpan(4), value);
        writer.Advance(4);
    }

    private static void WriteBytes(ArrayBufferWriter<byte> writer, ReadOnlySpan<byte> value)
    {
        WriteI32(writer, value.Length);
        writer.Write(value);
    }

    private static ulong ReadU64(ReadOnlySpan<byte> data, ref int p)
    {
        var value = BinaryPrimitives.ReadUInt64LittleEndian(data[p..]);
        p += 8;
        return value;
    }

    private static int ReadI32(ReadOnlySpan<byte> data, ref int p)
    {
        var value = BinaryPrimitives.ReadInt32LittleEndian(data[p..]);
        p += 4;
        if (value < 0 || value > data.Length)
        {
            throw new InvalidDataException($"a length of {value} in a catch-up frame of {data.Length} bytes");
        }

        return value;
    }

    private static ReadOnlySpan<byte> ReadBytes(ReadOnlySpan<byte> data, ref int p)
    {
        var length = ReadI32(data, ref p);
        var value = data.Slice(p, length);
        p += length;
        return value;
    }

    /// <summary>What a stream's snapshot (and a catch-up's last batch) says beyond the messages: totals, config, the Nats-Msg-Id window.</summary>
    private sealed class SnapshotImage
    {
        public ulong FirstSeq { get; init; }
        public ulong LastSeq { get; init; }
        public ulong Msgs { get; init; }
        public ulong NumDeleted { get; init; }
        public StreamConfig? Config { get; init; }
        public string? LastMsgId { get; init; }
        public List<(string Id, ulong Sequence, DateTime Time)> Duplicates { get; init; } = [];

        public byte[] Write()
        {
            var writer = new ArrayBufferWriter<byte>(256);
            writer.GetSpan(1)[0] = SnapshotVersion;
            writer.Advance(1);
            WriteU64(writer, FirstSeq);
            WriteU64(writer, LastSeq);
            WriteU64(writer, Msgs);
            WriteU64(writer, NumDeleted);
            WriteBytes(writer, Config is null ? [] : JsonSerializer.SerializeToUtf8Bytes(Config, JetStreamJsonContext.Default.StreamConfig));
            WriteBytes(writer, LastMsgId is null ? [] : Encoding.UTF8.GetBytes(LastMsgId));
            WriteI32(writer, Duplicates.Count);
            foreach (var (id, sequence, time) in Duplicates)
            {
                WriteBytes(writer, Encoding.UTF8.GetBytes(id));
                WriteU64(writer, sequence);
                WriteU64(writer, (ulong)time.Ticks);
            }

            return writer.WrittenSpan.ToArray();
        }

        public static SnapshotImage Read(ReadOnlySpan<byte> data)
        {
            if (data.Length < 1 || data[0] != SnapshotVersion)
            {
                throw new InvalidDataException("not a stream snapshot of a version this server reads");
            }

            var p = 1;
            var first = ReadU64(data, ref p);
            var last = ReadU64(data, ref p);
            var msgs = ReadU64(data, ref p);
            var deleted = ReadU64(data, ref p);
            var config = ReadBytes(data, ref p);
            var lastId = ReadBytes(data, ref p);
            var count = ReadI32(data, ref p);
            var duplicates = new List<(string, ulong, DateTime)>(count);
            for (var i = 0; i < count; i++)
            {
                var id = Encoding.UTF8.GetString(ReadBytes(data, ref p));
                var sequence = ReadU64(data, ref p);
                var ticks = (long)ReadU64(data, ref p);
                duplicates.Add((id, sequence, new DateTime(ticks, DateTimeKind.Utc)));
            }

            return new SnapshotImage
            {
                FirstSeq = first,
                LastSeq = last,
                Msgs = msgs,
                NumDeleted = deleted,
                Config = config.IsEmpty ? null : JsonSerializer.Deserialize(config, JetStreamJsonContext.Default.StreamConfig),
                LastMsgId = lastId.IsEmpty ? null : Encoding.UTF8.GetString(lastId),
                Duplicates = duplicates,
            };
        }
    }
}
