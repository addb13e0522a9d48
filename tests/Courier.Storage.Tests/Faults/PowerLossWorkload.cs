using System.Buffers.Binary;
using System.Text;
using Courier.Storage.Persistence;

namespace Courier.Storage.Tests.Faults;

/// <summary>
/// The power-loss campaign's workload on one <see cref="PowerLossFileSystem"/>: three streams (one with
/// a message limit, one with interior deletes), small blocks so they roll over, get indexed and get
/// deleted, and three durable consumers whose ack floors go through the journal (an event per ack
/// batch) and the snapshot store (a snapshot every few events, the events below it deleted), as the
/// consumer actors use them. Each cycle runs a random number of steps with the power cut after a
/// random number of file operations, crashes, recovers new stores on the surviving bytes (sometimes
/// cutting the power again during recovery) and checks the promises.
/// </summary>
/// <remarks>
/// Acknowledged means the call the server waits for before its PubAck (or before confirming a consumer's
/// ack) returned: <c>Flush</c> / <c>WriteMessages</c>. Under <see cref="SyncPolicy.Always"/> that is
/// durable and nothing acknowledged may be lost. Under an interval it is durable after the next
/// completed <c>Sync</c> (the owner's timer, here every few steps): what is lost must be among what was
/// acknowledged since the last completed sync, and the run reports how much that was.
/// </remarks>
internal sealed class PowerLossWorkload
{
    private const string Root = "/powerloss";
    private const int LimitedMaxMsgs = 40;  // messages kept by the limited stream
    private const int SnapshotEvery = 5;    // journal events per consumer between snapshots
    private const int SyncEverySteps = 7;   // under an interval: steps between the owner's Sync calls

    private readonly PowerLossFileSystem _fs;
    private readonly Random _random;
    private readonly FileStoreOptions _options;
    private readonly StreamModel[] _streams;
    private readonly ConsumerModel[] _consumers;
    private IJournalStore? _journal;
    private FileSnapshotStore? _snapshots;

    public PowerLossWorkload(int seed, SyncPolicy sync, MetadataDurability metadata)
    {
        _random = new Random(seed);
        _fs = new PowerLossFileSystem(metadata);
        // Spare blocks prepared on the appending thread: the same seed cuts the power at the same call.
        _options = new FileStoreOptions { BlockSize = 2048, Sync = sync, FileSystem = _fs, PreallocateInline = true };
        _streams =
        [
            new StreamModel("plain", new StoreConfig { Name = "plain" }, Deletes: false),
            new StreamModel("limited", new StoreConfig { Name = "limited", MaxMsgs = LimitedMaxMsgs }, Deletes: false),
            new StreamModel("deletes", new StoreConfig { Name = "deletes" }, Deletes: true),
        ];
        _consumers = [new ConsumerModel("c-plain-1", _streams[0]), new ConsumerModel("c-plain-2", _streams[0]), new ConsumerModel("c-deletes", _streams[2])];
    }

    public PowerLossFileSystem FileSystem => _fs;

    public Report Totals { get; } = new();

    private bool Always => _options.Sync.IsAlways;

    /// <summary>Runs <paramref name="cycles"/> power cuts, or fewer if <paramref name="deadline"/> passes first; throws on a broken promise.</summary>
    public Report Run(int cycles, TimeSpan deadline)
    {
        var until = DateTime.UtcNow + deadline;
        OpenAll(cutDuringRecovery: false);
        for (var cycle = 0; cycle < cycles && DateTime.UtcNow < until; cycle++)
        {
            _fs.CutPowerAfter(1 + _random.Next(400));
            var steps = 10 + _random.Next(150);
            for (var step = 0; step < steps && !_fs.PowerIsOff; step++)
            {
                try
                {
                    Step(step);
                }
                catch (Exception e) when (_fs.PowerIsOff && e is IOException or ObjectDisposedException)
                {
                    // The power went off inside the call: it did not return, so nothing of it is acknowledged.
                }
            }

            _fs.Crash(_random);
            Totals.Cycles++;
            OpenAll(cutDuringRecovery: _random.Next(4) == 0);
            Check(cycle);
        }

        return Totals;
    }

    private void Step(int step)
    {
        if (!Always && step % SyncEverySteps == SyncEverySteps - 1)
        {
            SyncAll();
            return;
        }

        var dice = _random.Next(10);
        if (dice < 6)
        {
            Publish(_streams[_random.Next(_streams.Length)]);
        }
        else if (dice < 9)
        {
            Ack(_consumers[_random.Next(_consumers.Length)]);
        }
        else
        {
            Delete(_streams[2]);
        }
    }

    /// <summary>A batch of publishes and one flush: the PubAcks go out when it returns.</summary>
    private void Publish(StreamModel s)
    {
        var count = 1 + _random.Next(12);
        var batch = new List<ulong>(count);
        for (var i = 0; i < count; i++)
        {
            var payload = new byte[_random.Next(1, 300)];
            _random.NextBytes(payload);
            var subject = Encoding.ASCII.GetBytes($"{s.Name}.{_random.Next(5)}");
            var result = s.Store!.Append(subject, [], payload);
            if (!result.Ok)
            {
                throw new InvalidOperationException($"{s.Name}: append failed with {result.Error} while the power was on");
            }

            s.Written[result.Sequence] = (subject, payload);
            s.AppendedSinceSync++;
            batch.Add(result.Sequence);
        }

        s.Store!.Flush();
        foreach (var seq in batch)
        {
            s.Acked.Add(seq);
            if (Always)
            {
                s.Durable.Add(seq);
            }

            Totals.MessagesAcked++;
        }
    }

    /// <summary>A consumer reads past its floor (checking every message it is served) and persists a new ack floor.</summary>
    private void Ack(ConsumerModel c)
    {
        var high = c.Stream.Acked.Count == 0 ? 0 : c.Stream.Acked.Max;
        if (high <= c.Floor)
        {
            return;
        }

        var floor = c.Floor + 1 + (ulong)_random.Next((int)Math.Min(20, high - c.Floor));
        for (var seq = c.Floor + 1; seq <= floor; seq++)
        {
            var loaded = c.Stream.Store!.LoadMessage(seq);
            if (loaded.Found)
            {
                c.Stream.Expect(seq, loaded.Message!, "served to a consumer");
            }
            else if (loaded.Status == LoadStatus.Corrupt)
            {
                throw new InvalidOperationException($"{c.Stream.Name}: message {seq} corrupt while the power was on");
            }
        }

        var payload = new byte[8];
        BinaryPrimitives.WriteUInt64LittleEndian(payload, floor);
        var seqNr = c.NextSeqNr;
        c.Attempted = Math.Max(c.Attempted, floor);
        var rejections = new Exception?[1];
        _journal!.WriteMessages([new JournalWrite(new JournalRecord(c.Id, seqNr, payload, "floor"))], rejections);
        if (rejections[0] is not null)
        {
            throw new InvalidOperationException($"{c.Id}: journal write rejected", rejections[0]);
        }

        c.NextSeqNr++;
        c.Floor = floor;
        c.Acknowledged = floor;
        if (Always)
        {
            c.Durable = floor;
        }

        Totals.ConsumerAcks++;
        if (seqNr % SnapshotEvery == 0)
        {
            _snapshots!.Save(new SnapshotMetadata(c.Id, seqNr, DateTime.UnixEpoch.AddSeconds(seqNr)), "floor", payload);
            _journal.DeleteMessagesTo(c.Id, seqNr);
        }
    }

    private void Delete(StreamModel s)
    {
        if (s.Acked.Count == 0)
        {
            return;
        }

        var seq = s.Acked.ElementAt(_random.Next(s.Acked.Count));
        if (s.Consumers.Any(c => c.Floor < seq) && _random.Next(2) == 0)
        {
            return; // mostly delete what the consumers are past, as a work queue would
        }

        s.Acked.Remove(seq);
        s.Durable.Remove(seq);
        s.Store!.RemoveMessage(seq);
        s.Store.Flush();
        if (Always)
        {
            s.Deleted.Add(seq);
        }
        else
        {
            s.DeletedUnsynced.Add(seq);
        }
    }

    /// <summary>The owner's sync timer under an interval: everything acknowledged so far becomes durable.</summary>
    private void SyncAll()
    {
        foreach (var s in _streams)
        {
            var acked = s.Acked.ToArray();
            var deleted = s.DeletedUnsynced.ToArray();
            s.Store!.Sync();
            s.AppendedSinceSync = 0;
            s.Durable.UnionWith(acked);
            s.Deleted.UnionWith(deleted);
            s.DeletedUnsynced.ExceptWith(deleted);
        }

        var floors = _consumers.Select(c => c.Acknowledged).ToArray();
        ((FileJournalStore)_journal!).Sync();
        for (var i = 0; i < _consumers.Length; i++)
        {
            _consumers[i].Durable = Math.Max(_consumers[i].Durable, floors[i]);
        }
    }

    private void OpenAll(bool cutDuringRecovery)
    {
        for (var attempt = 0; ; attempt++)
        {
            if (cutDuringRecovery && attempt < 3)
            {
                _fs.CutPowerAfter(1 + _random.Next(30));
            }

            try
            {
                foreach (var s in _streams)
                {
                    s.Store = StreamStores.OpenFile($"{Root}/streams/{s.Name}", s.Config, _options);
                }

                _journal = FileJournalStore.Open($"{Root}/journal", _options);
                _snapshots = FileSnapshotStore.Open($"{Root}/snapshots", _fs);
                _fs.CancelCut();
                return;
            }
            catch (Exception e) when (_fs.PowerIsOff && e is IOException or ObjectDisposedException)
            {
                Totals.CutsDuringRecovery++;
                _fs.Crash(_random);
            }
        }
    }

    /// <summary>After a recovery: every durable acknowledged message and ack floor is there, nothing else is wrong.</summary>
    private void Check(int cycle)
    {
        foreach (var s in _streams)
        {
            var store = s.Store!;
            var state = store.State();
            var where = $"cycle {cycle}, stream {s.Name}";
            var highestDurable = s.Durable.Count == 0 ? 0 : s.Durable.Max();
            if (state.LastSeq < highestDurable)
            {
                throw new InvalidOperationException($"{where}: last sequence {state.LastSeq} below the acknowledged {highestDurable}");
            }

            ulong lost = 0;
            var lostList = new List<ulong>();
            foreach (var seq in s.Acked.ToArray())
            {
                var kept = s.Config.MaxMsgs <= 0 || seq > state.LastSeq - (ulong)s.Config.MaxMsgs;
                var loaded = store.LoadMessage(seq);
                if (loaded.Found)
                {
                    s.Expect(seq, loaded.Message!, where);
                    continue;
                }

                // Under an interval a limited stream may also lose older messages: the limit removed them for
                // newer acknowledged messages, and the removal reached the disk while those did not. The
                // count stays within what the interval appended (checked below).
                if (s.Durable.Contains(seq) && kept && (Always || s.Config.MaxMsgs <= 0))
                {
                    throw new InvalidOperationException($"{where}: acknowledged message {seq} {loaded.Status} after the crash (first {state.FirstSeq}, last {state.LastSeq}; {string.Join("; ", store.Warnings)})");
                }

                if (kept)
                {
                    lostList.Add(seq);
                    lost++; // acknowledged under an interval, not yet synced
                }

                s.Acked.Remove(seq);
            }

            // Each message of the interval can cost itself and, in a limited stream, one older message the
            // limit dropped for it.
            var bound = (ulong)s.AppendedSinceSync * (s.Config.MaxMsgs > 0 ? 2UL : 1UL);
            if (lost > bound)
            {
                throw new InvalidOperationException($"{where}: {lost} acknowledged messages lost, but only {s.AppendedSinceSync} were appended since the last sync (bound {bound}): {string.Join(",", lostList)} (durable: {string.Join(",", lostList.Where(s.Durable.Contains))}; first {state.FirstSeq}, last {state.LastSeq}; {string.Join("; ", store.Warnings)})");
            }

            s.AppendedSinceSync = 0;
            Totals.RecordLoss(lost);
            foreach (var seq in s.Deleted)
            {
                if (store.LoadMessage(seq).Found)
                {
                    throw new InvalidOperationException($"{where}: message {seq}, deleted durably, came back");
                }
            }

            // Everything stored is what was written at that sequence (unacknowledged survivors included), once.
            var previous = 0UL;
            var present = new Dictionary<ulong, (byte[] Subject, byte[] Payload)>();
            for (var r = store.LoadNextMessage(null, 0); r.Found; r = store.LoadNextMessage(null, r.Message!.Sequence + 1))
            {
                var m = r.Message!;
                if (m.Sequence <= previous)
                {
                    throw new InvalidOperationException($"{where}: sequence {m.Sequence} after {previous}");
                }

                s.Expect(m.Sequence, m, where);
                present[m.Sequence] = (Encoding.ASCII.GetBytes(m.Subject), m.Payload.ToArray());
                previous = m.Sequence;
                if (!s.Acked.Contains(m.Sequence) && !s.Deleted.Contains(m.Sequence))
                {
                    s.Acked.Add(m.Sequence); // an unacknowledged message that survived: the stream has it now
                    Totals.UnackedSurvivors++;
                }
            }

            foreach (var w in store.Warnings)
            {
                Totals.Warnings[w.Kind] = Totals.Warnings.GetValueOrDefault(w.Kind) + 1;
            }

            // Nothing written since the crash may reuse a sequence.
            s.Written.Clear();
            foreach (var (seq, m) in present)
            {
                s.Written[seq] = m;
            }

            s.Durable.Clear();
            s.Durable.UnionWith(s.Acked);
            s.DeletedUnsynced.Clear();
            var probe = store.Append(Encoding.ASCII.GetBytes($"{s.Name}.probe"), [], "probe"u8);
            if (!probe.Ok || probe.Sequence != state.LastSeq + 1 || probe.Sequence <= highestDurable)
            {
                throw new InvalidOperationException($"{where}: the first append after recovery got {probe} (last {state.LastSeq})");
            }

            store.Flush();
            store.Sync();
            s.Written[probe.Sequence] = (Encoding.ASCII.GetBytes($"{s.Name}.probe"), "probe"u8.ToArray());
            s.Acked.Add(probe.Sequence);
            s.Durable.Add(probe.Sequence);
        }

        foreach (var c in _consumers)
        {
            var snapshot = _snapshots!.Load(c.Id, SnapshotSelectionCriteria.Latest);
            var floor = snapshot is null ? 0 : BinaryPrimitives.ReadUInt64LittleEndian(snapshot.Payload.Span);
            var from = snapshot is null ? 1 : snapshot.Metadata.SequenceNr + 1;
            _journal!.ReplayMessages(c.Id, from, long.MaxValue, long.MaxValue, r => floor = Math.Max(floor, BinaryPrimitives.ReadUInt64LittleEndian(r.Payload.Span)));
            var highest = Math.Max(_journal.ReadHighestSequenceNr(c.Id, 0), snapshot?.Metadata.SequenceNr ?? 0);
            if (floor < c.Durable)
            {
                throw new InvalidOperationException($"cycle {cycle}, consumer {c.Id}: ack floor {floor} after the crash, {c.Durable} was acknowledged");
            }

            if (floor > c.Attempted)
            {
                throw new InvalidOperationException($"cycle {cycle}, consumer {c.Id}: ack floor {floor} was never written (highest {c.Attempted})");
            }

            if (floor < c.Acknowledged)
            {
                Totals.ConsumerAcksLost++;
            }

            c.Floor = c.Acknowledged = c.Durable = floor;
            c.NextSeqNr = highest + 1;
        }
    }

    /// <summary>The figures of a run.</summary>
    internal sealed class Report
    {
        public int Cycles { get; set; }

        public int CutsDuringRecovery { get; set; }

        public long MessagesAcked { get; set; }

        public long ConsumerAcks { get; set; }

        /// <summary>Acknowledged messages missing after a crash (only possible under an interval).</summary>
        public long MessagesLost { get; set; }

        public long MaxLostInOneCrash { get; set; }

        public long ConsumerAcksLost { get; set; }

        public long UnackedSurvivors { get; set; }

        public Dictionary<StoreWarningKind, int> Warnings { get; } = [];

        public void RecordLoss(ulong lost)
        {
            MessagesLost += (long)lost;
            MaxLostInOneCrash = Math.Max(MaxLostInOneCrash, (long)lost);
        }

        public override string ToString() =>
            $"{Cycles} power cuts ({CutsDuringRecovery} more during recovery); {MessagesAcked} messages and {ConsumerAcks} consumer ack floors acknowledged; " +
            $"lost: {MessagesLost} messages (at most {MaxLostInOneCrash} in one crash), {ConsumerAcksLost} ack floors; {UnackedSurvivors} unacknowledged messages survived; " +
            $"recovery warnings: {string.Join(", ", Warnings.Select(w => $"{w.Key} {w.Value}"))}";
    }

    private sealed record StreamModel(string Name, StoreConfig Config, bool Deletes)
    {
        public IStreamStore? Store { get; set; }

        /// <summary>Every message written since the last recovery (or present at it), by sequence.</summary>
        public Dictionary<ulong, (byte[] Subject, byte[] Payload)> Written { get; } = [];

        /// <summary>Acknowledged (flush returned) and not deleted.</summary>
        public SortedSet<ulong> Acked { get; } = [];

        /// <summary>Acknowledged and durable: must survive.</summary>
        public HashSet<ulong> Durable { get; } = [];

        public HashSet<ulong> Deleted { get; } = [];

        public HashSet<ulong> DeletedUnsynced { get; } = [];

        public List<ConsumerModel> Consumers { get; } = [];

        /// <summary>Messages appended since the last completed sync (an interval's worth), acknowledged or not.</summary>
        public long AppendedSinceSync { get; set; }

        public void Expect(ulong seq, StoredMessage m, string where)
        {
            if (!Written.TryGetValue(seq, out var w))
            {
                throw new InvalidOperationException($"{where}: message {seq} was never written");
            }

            if (m.Sequence != seq || m.Subject != Encoding.ASCII.GetString(w.Subject) || !m.Payload.Span.SequenceEqual(w.Payload) || m.Headers.Length != 0)
            {
                throw new InvalidOperationException($"{where}: message {seq} is not what was written (subject {m.Subject}, {m.Payload.Length} B)");
            }
        }
    }

    private sealed class ConsumerModel
    {
        public ConsumerModel(string id, StreamModel stream)
        {
            Id = id;
            Stream = stream;
            stream.Consumers.Add(this);
        }

        public string Id { get; }

        public StreamModel Stream { get; }

        public ulong Floor { get; set; }

        public ulong Acknowledged { get; set; }

        public ulong Durable { get; set; }

        public ulong Attempted { get; set; }

        public long NextSeqNr { get; set; } = 1;
    }
}
