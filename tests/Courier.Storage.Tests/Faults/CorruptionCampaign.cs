using System.Buffers.Binary;
using System.Text;
using Courier.Storage.FileStorage;
using Courier.Storage.Persistence;

namespace Courier.Storage.Tests.Faults;

/// <summary>Where a fault goes.</summary>
public enum FaultTarget
{
    /// <summary>A stream's block file (<c>.blk</c>).</summary>
    MessageBlock,

    /// <summary>A stream's index file (<c>.idx</c>).</summary>
    Index,

    /// <summary>A block or index file of the consumer journal.</summary>
    Journal,

    /// <summary>A snapshot file.</summary>
    Snapshot,
}

/// <summary>What a fault does to the file's bytes.</summary>
public enum FaultKind
{
    BitFlip,
    Truncate,
    ZeroPage,
    SwapBlocks,
}

/// <summary>
/// The corruption campaign (issue 14): real files in a temporary directory, written and closed cleanly,
/// then one seeded fault per trial at a random offset of one file; the store is reopened and every
/// message, event or snapshot read back. A trial fails (throws) when the store crashes, serves bytes that
/// were not written, loses an intact record without it being reported, or a second restart renumbers or
/// drops what the first recovery kept. The table counts faults injected (that changed bytes), detected
/// (a warning or a load that said corrupt), harmless (nothing reported, nothing lost: the bytes were in
/// a record nobody reads again), and messages lost beyond the damaged records.
/// </summary>
internal sealed class CorruptionCampaign
{
    private const int PageSize = 4096;  // bytes: a zeroed page
    private const int SwapSize = 512;   // bytes: a swapped sector-sized block

    public Dictionary<(FaultTarget, FaultKind), Row> Table { get; } = [];

    public void Trial(FaultTarget target, FaultKind kind, int seed)
    {
        var random = new Random(seed);
        using var dir = new TempDirectory();
        var row = Table.TryGetValue((target, kind), out var r) ? r : Table[(target, kind)] = new Row();
        switch (target)
        {
            case FaultTarget.MessageBlock or FaultTarget.Index:
                StreamTrial(dir.Path, target, kind, random, row);
                break;
            case FaultTarget.Journal:
                JournalTrial(dir.Path, kind, random, row);
                break;
            default:
                SnapshotTrial(dir.Path, kind, random, row);
                break;
        }
    }

    private static void StreamTrial(string path, FaultTarget target, FaultKind kind, Random random, Row row)
    {
        var options = new FileStoreOptions { BlockSize = 4096 };
        var written = new Dictionary<ulong, (string Subject, byte[] Payload)>();
        var store = StreamStores.OpenFile(path, new StoreConfig { Name = "c" }, options);
        for (var i = 0; i < 150; i++)
        {
            var subject = $"s.{random.Next(10)}";
            var payload = new byte[random.Next(1, 200)];
            random.NextBytes(payload);
            var result = store.Append(Encoding.ASCII.GetBytes(subject), [], payload);
            written[result.Sequence] = (subject, payload);
        }

        store.Flush();
        var deleted = new HashSet<ulong>();
        for (var i = 0; i < 10; i++)
        {
            var seq = (ulong)random.Next(1, 151);
            if (deleted.Add(seq))
            {
                store.RemoveMessage(seq);
            }
        }

        store.Stop();

        var files = Directory.GetFiles(path, target == FaultTarget.Index ? "*.idx" : "*.blk").Order(StringComparer.Ordinal).ToArray();
        var file = files[random.Next(files.Length)];
        var original = File.ReadAllBytes(file);
        var damaged = Inject(file, kind, random);
        if (damaged.Count == 0)
        {
            return; // the fault changed nothing (zeros over zeros, equal blocks swapped)
        }

        row.Injected++;
        var hit = target == FaultTarget.MessageBlock ? MessagesIn(original, damaged) : [];
        IStreamStore recovered;
        try
        {
            recovered = StreamStores.OpenFile(path, new StoreConfig { Name = "c" }, options);
        }
        catch (Exception e)
        {
            throw new InvalidOperationException($"{target} {kind}: opening the damaged store threw", e);
        }

        var where = $"{target} {kind} in {Path.GetFileName(file)} at {string.Join(",", damaged.Select(d => $"[{d.Start},{d.End})"))}";
        var corruptLoads = 0;
        var kept = new Dictionary<ulong, byte[]>();
        foreach (var (seq, (subject, payload)) in written)
        {
            var loaded = recovered.LoadMessage(seq);
            if (loaded.Found)
            {
                var m = loaded.Message!;
                if (m.Subject != subject || !m.Payload.Span.SequenceEqual(payload) || m.Sequence != seq)
                {
                    throw new InvalidOperationException($"{where}: message {seq} served with bytes that were not written");
                }

                if (deleted.Contains(seq))
                {
                    row.DeletedBack++; // its tombstone was the damaged record
                }

                kept[seq] = payload;
                continue;
            }

            if (loaded.Status == LoadStatus.Corrupt)
            {
                corruptLoads++;
            }

            if (!deleted.Contains(seq) && !hit.Contains(seq))
            {
                row.LostBeyond++;
                row.Examples.Add($"{where}: intact message {seq} {loaded.Status}");
            }
            else if (!deleted.Contains(seq))
            {
                row.LostDamaged++;
            }
        }

        var damage = recovered.Damage;
        var lostListed = recovered.State().Lost?.Msgs.ToHashSet() ?? [];
        foreach (var seq in written.Keys.Where(s => !deleted.Contains(s) && !kept.ContainsKey(s)))
        {
            if (!lostListed.Contains(seq))
            {
                row.Unreported++;
            }
        }

        Classify(row, damage.Detected > 0 || corruptLoads > 0, kept.Count + deleted.Count(kept.ContainsKey) < written.Count - deleted.Count);

        // Sequences are never handed out again: the damaged store's last sequence is still the written one.
        var state = recovered.State();
        if (state.LastSeq < written.Keys.Max())
        {
            throw new InvalidOperationException($"{where}: last sequence went back from {written.Keys.Max()} to {state.LastSeq}");
        }

        // A restart keeps what the first recovery kept, with the same sequences.
        var firstWarnings = recovered.Warnings;
        recovered.Stop();
        var again = StreamStores.OpenFile(path, new StoreConfig { Name = "c" }, options);
        var state2 = again.State();
        if (state2.LastSeq != state.LastSeq)
        {
            throw new InvalidOperationException($"{where}: last sequence {state.LastSeq} became {state2.LastSeq} after a restart");
        }

        foreach (var (seq, payload) in kept)
        {
            var loaded = again.LoadMessage(seq);
            if (!loaded.Found || !loaded.Message!.Payload.Span.SequenceEqual(payload))
            {
                row.DroppedOnRestart++;
                row.Examples.Add($"{where}: message {seq}, kept by the first recovery, is {loaded.Status} after a restart");
            }
        }

        var next = again.Append("s.after"u8, [], "x"u8);
        if (next.Sequence != state.LastSeq + 1)
        {
            throw new InvalidOperationException($"{where}: the next append got {next.Sequence}, not {state.LastSeq + 1}");
        }

        again.Stop();
    }

    private static void JournalTrial(string path, FaultKind kind, Random random, Row row)
    {
        var options = new FileStoreOptions { BlockSize = 4096 };
        var events = new Dictionary<(string Id, long SeqNr), byte[]>();
        var journal = FileJournalStore.Open(path, options);
        var ids = new[] { "consumer-a", "consumer-b", "consumer-c" };
        var next = ids.ToDictionary(i => i, _ => 1L);
        for (var i = 0; i < 120; i++)
        {
            var id = ids[random.Next(ids.Length)];
            var count = 1 + random.Next(3);
            var records = new List<JournalRecord>();
            for (var k = 0; k < count; k++)
            {
                var payload = new byte[8 + random.Next(40)];
                random.NextBytes(payload);
                events[(id, next[id])] = payload;
                records.Add(new JournalRecord(id, next[id]++, payload, "ack"));
            }

            var rejections = new Exception?[1];
            journal.WriteMessages([new JournalWrite(records)], rejections);
        }

        // Which store message holds which events, to know what a fault damaged.
        var byStoreSeq = new Dictionary<ulong, (string Id, long Low, long High)>();
        for (var m = journal.Store.LoadNextMessage(null, 0); m.Found; m = journal.Store.LoadNextMessage(null, m.Message!.Sequence + 1))
        {
            var p = m.Message!.Payload.Span;
            var id = Encoding.UTF8.GetString(Convert.FromBase64String(ToBase64(m.Message.Subject[2..])));
            byStoreSeq[m.Message.Sequence] = (id, BinaryPrimitives.ReadInt64LittleEndian(p[4..]), BinaryPrimitives.ReadInt64LittleEndian(p[12..]));
        }

        journal.Dispose();
        var files = Directory.GetFiles(path, "*.*").Where(f => f.EndsWith(".blk", StringComparison.Ordinal) || f.EndsWith(".idx", StringComparison.Ordinal)).Order(StringComparer.Ordinal).ToArray();
        var file = files[random.Next(files.Length)];
        var original = File.ReadAllBytes(file);
        var damaged = Inject(file, kind, random);
        if (damaged.Count == 0)
        {
            return;
        }

        row.Injected++;
        var hitEvents = new HashSet<(string, long)>();
        if (file.EndsWith(".blk", StringComparison.Ordinal))
        {
            foreach (var seq in MessagesIn(original, damaged))
            {
                if (byStoreSeq.TryGetValue(seq, out var w))
                {
                    for (var s = w.Low; s <= w.High; s++)
                    {
                        hitEvents.Add((w.Id, s));
                    }
                }
            }
        }

        var where = $"Journal {kind} in {Path.GetFileName(file)} at {string.Join(",", damaged.Select(d => $"[{d.Start},{d.End})"))}";
        FileJournalStore reopened;
        try
        {
            reopened = FileJournalStore.Open(path, options);
        }
        catch (Exception e)
        {
            throw new InvalidOperationException($"{where}: opening the damaged journal threw", e);
        }

        var seen = new HashSet<(string, long)>();
        foreach (var id in ids)
        {
            reopened.ReplayMessages(id, 1, long.MaxValue, long.MaxValue, r =>
            {
                if (!events.TryGetValue((id, r.SequenceNr), out var payload) || !r.Payload.Span.SequenceEqual(payload))
                {
                    throw new InvalidOperationException($"{where}: event {id}#{r.SequenceNr} replayed with bytes that were not written");
                }

                seen.Add((id, r.SequenceNr));
            });
        }

        var missing = events.Keys.Where(e => !seen.Contains(e)).ToList();
        foreach (var e in missing)
        {
            if (hitEvents.Contains(e))
            {
                row.LostDamaged++;
            }
            else
            {
                row.LostBeyond++;
                row.Examples.Add($"{where}: intact event {e} not replayed");
            }
        }

        Classify(row, reopened.Warnings.Count > 0 || reopened.Store.Damage.Detected > 0, missing.Count > 0);
        reopened.Dispose();
    }

    private static void SnapshotTrial(string path, FaultKind kind, Random random, Row row)
    {
        var snapshots = FileSnapshotStore.Open(path);
        var written = new Dictionary<(string Id, long SeqNr), byte[]>();
        var ids = new[] { "consumer-a", "consumer-b", "consumer-c" };
        foreach (var id in ids)
        {
            for (var seqNr = 1000L; seqNr <= 4000; seqNr += 1000)
            {
                var payload = new byte[64 + random.Next(3000)];
                random.NextBytes(payload);
                written[(id, seqNr)] = payload;
                snapshots.Save(new SnapshotMetadata(id, seqNr, DateTime.UnixEpoch.AddSeconds(seqNr)), "state", payload);
            }
        }

        snapshots.Dispose();
        var files = Directory.GetFiles(path, "*.snap").Order(StringComparer.Ordinal).ToArray();
        var file = files[random.Next(files.Length)];
        var damaged = Inject(file, kind, random);
        if (damaged.Count == 0)
        {
            return;
        }

        row.Injected++;
        var where = $"Snapshot {kind} in {Path.GetFileName(file)}";
        var reopened = FileSnapshotStore.Open(path);
        var lost = false;
        foreach (var id in ids)
        {
            // Every snapshot in turn, newest first, as a consumer falling back would ask for them.
            for (var seqNr = 4000L; seqNr >= 1000; seqNr -= 1000)
            {
                var loaded = reopened.Load(id, new SnapshotSelectionCriteria(seqNr));
                if (loaded is null && seqNr == 1000 && file.Contains($".{seqNr}.", StringComparison.Ordinal) && file.Contains(SnapshotFile.Key(id), StringComparison.Ordinal))
                {
                    lost = true;
                    row.LostDamaged++; // the oldest snapshot was the damaged one: nothing older to fall back on
                    continue;
                }

                if (loaded is null)
                {
                    throw new InvalidOperationException($"{where}: no snapshot of {id} up to {seqNr} served at all");
                }

                if (!loaded.Payload.Span.SequenceEqual(written[(id, loaded.Metadata.SequenceNr)]))
                {
                    throw new InvalidOperationException($"{where}: snapshot {id}@{loaded.Metadata.SequenceNr} served with bytes that were not written");
                }

                if (loaded.Metadata.SequenceNr != seqNr)
                {
                    lost = true;
                    if (seqNr - 1000 != loaded.Metadata.SequenceNr)
                    {
                        row.LostBeyond++;
                    }
                    else
                    {
                        row.LostDamaged++;
                    }
                }
            }
        }

        Classify(row, reopened.Warnings.Count > 0, lost);
        reopened.Dispose();
    }

    private static void Classify(Row row, bool detected, bool anythingLost)
    {
        if (detected)
        {
            row.Detected++;
        }
        else if (!anythingLost)
        {
            row.Harmless++;
        }
        else
        {
            row.Silent++;
        }
    }

    private static string ToBase64(string url)
    {
        var s = url.Replace('-', '+').Replace('_', '/');
        return s.PadRight(s.Length + ((4 - (s.Length % 4)) % 4), '=');
    }

    /// <summary>Applies the fault; returns the byte ranges whose content changed (empty when none did).</summary>
    private static List<(long Start, long End)> Inject(string file, FaultKind kind, Random random)
    {
        var bytes = File.ReadAllBytes(file);
        if (bytes.Length == 0)
        {
            return [];
        }

        var ranges = new List<(long, long)>();
        switch (kind)
        {
            case FaultKind.BitFlip:
                {
                    var at = random.Next(bytes.Length);
                    bytes[at] ^= (byte)(1 << random.Next(8));
                    ranges.Add((at, at + 1));
                    break;
                }

            case FaultKind.Truncate:
                {
                    var at = random.Next(bytes.Length);
                    File.WriteAllBytes(file, bytes[..at]);
                    return [(at, bytes.Length)];
                }

            case FaultKind.ZeroPage:
                {
                    var page = random.Next((bytes.Length + PageSize - 1) / PageSize) * PageSize;
                    var end = Math.Min(bytes.Length, page + PageSize);
                    if (bytes.AsSpan(page, end - page).IndexOfAnyExcept((byte)0) < 0)
                    {
                        return [];
                    }

                    bytes.AsSpan(page, end - page).Clear();
                    ranges.Add((page, end));
                    break;
                }

            default:
                {
                    var sectors = bytes.Length / SwapSize;
                    if (sectors < 2)
                    {
                        return [];
                    }

                    var a = random.Next(sectors);
                    var b = (a + 1 + random.Next(sectors - 1)) % sectors;
                    var x = bytes.AsSpan(a * SwapSize, SwapSize).ToArray();
                    var y = bytes.AsSpan(b * SwapSize, SwapSize).ToArray();
                    if (x.AsSpan().SequenceEqual(y))
                    {
                        return [];
                    }

                    y.CopyTo(bytes.AsSpan(a * SwapSize));
                    x.CopyTo(bytes.AsSpan(b * SwapSize));
                    ranges.Add((a * SwapSize, (a + 1) * SwapSize));
                    ranges.Add((b * SwapSize, (b + 1) * SwapSize));
                    break;
                }
        }

        File.WriteAllBytes(file, bytes);
        return ranges;
    }

    /// <summary>The sequences of the message records of a block file (as it was before the fault) that overlap the ranges.</summary>
    private static HashSet<ulong> MessagesIn(byte[] block, List<(long Start, long End)> ranges)
    {
        var hit = new HashSet<ulong>();
        var pos = BlockHeader.Size;
        while (pos + RecordFormat.HeaderSize <= block.Length)
        {
            var h = RecordFormat.ReadHeader(block.AsSpan(pos));
            if (h.Length < RecordFormat.Overhead || pos + h.Length > block.Length)
            {
                break;
            }

            if (h.Kind == RecordKind.Message && ranges.Any(r => r.Start < pos + h.Length && r.End > pos))
            {
                hit.Add(h.Sequence);
            }

            pos += (int)h.Length;
        }

        // A damaged block header: the block is scanned, no record lost by it.
        return hit;
    }

    /// <summary>One line of the table.</summary>
    internal sealed class Row
    {
        public int Injected;
        public int Detected;
        public int Harmless;
        public int Silent;
        public int LostDamaged;
        public int LostBeyond;
        public int Unreported;
        public int DeletedBack;
        public int DroppedOnRestart;

        public List<string> Examples { get; } = [];
    }
}
