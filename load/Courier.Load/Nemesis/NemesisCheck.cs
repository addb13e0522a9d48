using System.Globalization;

namespace Courier.Load.Nemesis;

/// <summary>What the checker found in one run.</summary>
internal sealed record NemesisVerdict(
    int Ops, int Acked, int Unknown, int Lost, int Duplicated, int Misplaced, int Divergent, int Unverified,
    int KvAcked, int KvLost, int KvLostUpdates, int KvStaleReads, int ConsumerSkipped, bool Drained, IReadOnlyList<string> Problems, bool Error = false)
{
    /// <summary>A run that could not be set up or read back.</summary>
    public static NemesisVerdict Failed(string why) => new(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, [why], Error: true);

    /// <summary>Nothing acknowledged lost, nothing doubled or moved, every replica the same, the bucket linearizable, no message skipped.</summary>
    public bool Safe => !Error && Lost == 0 && Duplicated == 0 && Misplaced == 0 && Divergent == 0 && KvLost == 0 && KvLostUpdates == 0 && KvStaleReads == 0 && ConsumerSkipped == 0;
}

/// <summary>
/// The checker. Publishes: every acknowledged Nats-Msg-Id is in the stream exactly once, at the sequence its
/// PubAck named, on every replica (each replica read while it leads), and the replicas hold the same
/// messages. The bucket, per key, a versioned register: revisions are unique, so a history is linearizable
/// iff ordering its operations by (revision, write before reads) never puts an operation after one that
/// began only once it had ended; no two acknowledged compare-and-sets from the same revision (a lost
/// update); each revision has one value; the final value counts every acknowledged increment and no more
/// than the acknowledged and unknown ones together. The consumer: every acknowledged publish was delivered.
/// </summary>
internal static class NemesisCheck
{
    public static NemesisVerdict Check(
        IReadOnlyList<NemesisOp> ops,
        IReadOnlyList<IReadOnlyList<StoredMessage>?> streamReads,
        IReadOnlyList<IReadOnlyList<StoredMessage>?> bucketReads,
        bool drained)
    {
        var problems = new List<string>();
        var pubs = ops.Where(o => o.Kind == "pub").ToList();
        var acked = pubs.Where(o => o.Outcome == Outcome.Ok).ToList();
        var unknown = pubs.Count(o => o.Outcome == Outcome.Info);
        var canonical = streamReads.FirstOrDefault(IsRead);
        var lost = 0;
        var duplicated = 0;
        var misplaced = 0;
        if (canonical is null)
        {
            problems.Add("no replica of the stream could be read");
            lost = acked.Count;
        }
        else
        {
            var where = new Dictionary<string, List<ulong>>(StringComparer.Ordinal);
            foreach (var m in canonical)
            {
                if (!where.TryGetValue(m.Data, out var seqs))
                {
                    where[m.Data] = seqs = [];
                }

                seqs.Add(m.Seq);
            }

            duplicated = where.Count(kv => kv.Value.Count > 1);
            foreach (var op in acked)
            {
                if (!where.TryGetValue(op.Key, out var seqs))
                {
                    lost++;
                    Note(problems, $"lost: {op.Key} acknowledged at seq {op.Seq}");
                }
                else if (!seqs.Contains(op.Seq))
                {
                    misplaced++;
                    Note(problems, $"misplaced: {op.Key} acknowledged at seq {op.Seq}, stored at {string.Join('/', seqs)}");
                }
            }
        }

        var divergent = 0;
        var unverified = 0;
        var bucketCanonical = bucketReads.FirstOrDefault(IsRead);
        for (var i = 0; i < streamReads.Count; i++)
        {
            if (ReferenceEquals(streamReads[i], NemesisReader.NotAReplica) && ReferenceEquals(bucketReads[i], NemesisReader.NotAReplica))
            {
                continue; // a node that holds neither (five nodes, three replicas)
            }

            var differs = (IsRead(streamReads[i]) && Differs(canonical, streamReads[i])) || (IsRead(bucketReads[i]) && Differs(bucketCanonical, bucketReads[i]));
            if (streamReads[i] is null || bucketReads[i] is null)
            {
                unverified++;
                Note(problems, $"n{i + 1}: its replica could not be read (it never led)");
            }
            else if (differs)
            {
                divergent++;
                Note(problems, $"n{i + 1}: its replica differs from the first one read: {FirstDifference(canonical, streamReads[i]) ?? FirstDifference(bucketCanonical, bucketReads[i])}");
            }
        }

        var (kvAcked, kvLost, kvLostUpdates, kvStale) = CheckBucket(ops, bucketCanonical, problems);
        var delivered = ops.Where(o => o.Kind == "deliver").Select(o => o.Seq).ToHashSet();
        var skipped = acked.Count(o => !delivered.Contains(o.Seq));
        if (skipped > 0)
        {
            Note(problems, $"consumer: {skipped} acknowledged messages never delivered");
        }

        if (!drained)
        {
            problems.Add("consumer: did not drain after healing");
        }

        return new NemesisVerdict(ops.Count, acked.Count, unknown, lost, duplicated, misplaced, divergent, unverified,
            kvAcked, kvLost, kvLostUpdates, kvStale, skipped, drained, problems);
    }

    /// <summary>Where two reads of a stream first differ, as text; null when they do not.</summary>
    private static string? FirstDifference(IReadOnlyList<StoredMessage>? a, IReadOnlyList<StoredMessage>? b)
    {
        if (!IsRead(a) || !IsRead(b))
        {
            return null;
        }

        for (var i = 0; i < Math.Max(a!.Count, b!.Count); i++)
        {
            var x = i < a.Count ? a[i] : default;
            var y = i < b.Count ? b[i] : default;
            if (x != y)
            {
                return $"message {i + 1}: {(i < a.Count ? $"seq {x.Seq} {x.Subject} '{x.Data}'" : "none")} against {(i < b.Count ? $"seq {y.Seq} {y.Subject} '{y.Data}'" : "none")} ({a.Count} and {b.Count} messages)";
            }
        }

        return null;
    }

    private static bool IsRead(IReadOnlyList<StoredMessage>? read) => read is not null && !ReferenceEquals(read, NemesisReader.NotAReplica);

    private static bool Differs(IReadOnlyList<StoredMessage>? a, IReadOnlyList<StoredMessage>? b) =>
        a is not null && b is not null && !a.SequenceEqual(b);

    private static void Note(List<string> problems, string text)
    {
        if (problems.Count < 50)
        {
            problems.Add(text);
        }
    }

    private static (int Acked, int Lost, int LostUpdates, int Stale) CheckBucket(IReadOnlyList<NemesisOp> ops, IReadOnlyList<StoredMessage>? stored, List<string> problems)
    {
        int acked = 0, lost = 0, lostUpdates = 0, stale = 0;
        foreach (var key in ops.Where(o => o.Kind is "cas" or "read").Select(o => o.Key).Distinct(StringComparer.Ordinal).Order(StringComparer.Ordinal))
        {
            var cas = ops.Where(o => o.Kind == "cas" && o.Key == key).ToList();
            var writes = cas.Where(o => o.Outcome == Outcome.Ok).ToList();
            var reads = ops.Where(o => o.Kind == "read" && o.Key == key && o.Outcome == Outcome.Ok).ToList();
            acked += writes.Count;

            // Two acknowledged compare-and-sets from one revision: one of them overwrote the other unseen.
            foreach (var same in writes.GroupBy(w => w.Expected).Where(g => g.Count() > 1))
            {
                lostUpdates += same.Count() - 1;
                Note(problems, $"kv {key}: {same.Count()} acknowledged CAS from revision {same.Key}");
            }

            // One value per revision, across reads, writes and the stored history.
            var values = new Dictionary<ulong, long>();
            var history = stored?.Where(m => m.Subject == $"$KV.{NemesisWorkload.Bucket}.{key}").ToList() ?? [];
            foreach (var (rev, value, what) in writes.Select(w => (w.Seq, w.Value, "write"))
                .Concat(reads.Select(r => (r.Seq, r.Value, "read")))
                .Concat(history.Select(m => (m.Seq, long.Parse(m.Data, CultureInfo.InvariantCulture), "stored"))))
            {
                if (values.TryGetValue(rev, out var known) && known != value)
                {
                    lostUpdates++;
                    Note(problems, $"kv {key}: revision {rev} holds {known} and {value} ({what})");
                }

                values.TryAdd(rev, value);
            }

            // Every acknowledged write the bucket still keeps (its history holds the last revisions) is there.
            if (history.Count > 0)
            {
                var oldest = history[0].Seq;
                var kept = history.Select(m => m.Seq).ToHashSet();
                foreach (var w in writes.Where(w => w.Seq >= oldest && !kept.Contains(w.Seq)))
                {
                    lost++;
                    Note(problems, $"kv {key}: acknowledged write at revision {w.Seq} missing");
                }

                var final = long.Parse(history[^1].Data, CultureInfo.InvariantCulture);
                var unknown = cas.Count(o => o.Outcome == Outcome.Info);
                if (final < writes.Count || final > writes.Count + unknown)
                {
                    lost += final < writes.Count ? writes.Count - (int)final : 0;
                    lostUpdates += final > writes.Count + unknown ? 1 : 0;
                    Note(problems, $"kv {key}: final value {final} with {writes.Count} acknowledged and {unknown} unknown increments");
                }
            }

            // Real time: an operation placed after another in revision order must not have ended before that one began.
            var placed = writes.Select(w => (Rev: w.Seq, Read: 0, w.Start, w.End))
                .Concat(reads.Select(r => (Rev: r.Seq, Read: 1, r.Start, r.End)))
                .OrderBy(p => p.Rev).ThenBy(p => p.Read)
                .ToList();
            var minEndAfter = long.MaxValue;
            for (var i = placed.Count - 1; i >= 0;)
            {
                var j = i;
                while (j >= 0 && placed[j].Rev == placed[i].Rev && placed[j].Read == placed[i].Read)
                {
                    j--;
                }

                for (var k = i; k > j; k--)
                {
                    if (minEndAfter < placed[k].Start)
                    {
                        stale++;
                        Note(problems, $"kv {key}: {(placed[k].Read == 1 ? "read" : "write")} of revision {placed[k].Rev} began after a later revision's operation had ended");
                    }
                }

                for (var k = i; k > j; k--)
                {
                    minEndAfter = Math.Min(minEndAfter, placed[k].End);
                }

                i = j;
            }
        }

        return (acked, lost, lostUpdates, stale);
    }
}
