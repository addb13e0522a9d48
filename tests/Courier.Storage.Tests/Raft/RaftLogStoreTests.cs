using Courier.Raft;
using Courier.Storage.Raft;
using Courier.Storage.Tests.Faults;
using Xunit;

namespace Courier.Storage.Tests.Raft;

/// <summary>A Raft member's durable state on FileStore: what a restart recovers, and what survives a power cut.</summary>
public sealed class RaftLogStoreTests
{
    private static Entry E(ulong index, ulong term, string data = "", EntryType type = EntryType.Normal) =>
        new(term, index, type, System.Text.Encoding.UTF8.GetBytes(data.Length > 0 ? data : $"e{index}t{term}"));

    private static Ready Write(HardState? hard = null, Snapshot? snapshot = null, params Entry[] entries) =>
        new() { HardState = hard, Snapshot = snapshot, Entries = entries };

    private static void AssertEntries(IEnumerable<Entry> expected, IEnumerable<Entry> actual) =>
        Assert.Equal(expected.Select(e => (e.Index, e.Term, e.Type, Convert.ToHexString(e.Data.Span))),
                     actual.Select(e => (e.Index, e.Term, e.Type, Convert.ToHexString(e.Data.Span))));

    [Fact]
    public void A_fresh_store_has_nothing_and_a_reopened_one_has_what_was_saved()
    {
        using var dir = new TempDirectory();
        using (var store = RaftLogStore.Open(dir.Path)) Assert.Null(store.Load());
        var entries = new[] { E(1, 1, type: EntryType.ConfChange), E(2, 1), E(3, 2) };
        using (var store = RaftLogStore.Open(dir.Path)) store.Save(Write(new HardState(2, 7, 3), null, entries));
        using (var store = RaftLogStore.Open(dir.Path))
        {
            var state = store.Load()!;
            Assert.Equal(new HardState(2, 7, 3), state.HardState);
            Assert.Null(state.Snapshot);
            AssertEntries(entries, state.Entries);
        }
    }

    [Fact]
    public void Entries_from_a_new_leader_replace_the_suffix_they_overlap()
    {
        using var dir = new TempDirectory();
        using (var store = RaftLogStore.Open(dir.Path))
        {
            store.Save(Write(new HardState(1, 1, 0), null, E(1, 1), E(2, 1), E(3, 1), E(4, 1)));
            store.Save(Write(new HardState(3, 2, 0), null, E(3, 3), E(4, 3), E(5, 3)));
        }
        using var reopened = RaftLogStore.Open(dir.Path);
        AssertEntries([E(1, 1), E(2, 1), E(3, 3), E(4, 3), E(5, 3)], reopened.Load()!.Entries);
    }

    [Fact]
    public void Only_a_term_or_vote_change_writes_the_hard_state_and_the_commit_is_a_lower_bound()
    {
        using var dir = new TempDirectory();
        using (var store = RaftLogStore.Open(dir.Path))
        {
            store.Save(Write(new HardState(1, 1, 0), null, E(1, 1), E(2, 1)));
            store.Save(Write(new HardState(1, 1, 2))); // commit only: not written
        }
        using (var store = RaftLogStore.Open(dir.Path))
        {
            Assert.Equal(new HardState(1, 1, 0), store.Load()!.HardState);
            store.Save(Write(new HardState(2, 0, 2))); // a new term: written, with the commit known then
        }
        using var last = RaftLogStore.Open(dir.Path);
        Assert.Equal(new HardState(2, 0, 2), last.Load()!.HardState);
    }

    [Fact]
    public void A_compaction_keeps_the_snapshot_and_the_entries_after_it()
    {
        using var dir = new TempDirectory();
        var config = new Configuration([1, 2, 3], [4]);
        using (var store = RaftLogStore.Open(dir.Path))
        {
            store.Save(Write(new HardState(2, 1, 5), null, E(1, 1), E(2, 1), E(3, 2), E(4, 2), E(5, 2), E(6, 2)));
            store.SaveSnapshot(new Snapshot(new SnapshotMeta(4, 2, config), new byte[] { 9, 8, 7 }));
        }
        using var reopened = RaftLogStore.Open(dir.Path);
        var state = reopened.Load()!;
        Assert.Equal(4UL, state.Snapshot!.Meta.Index);
        Assert.Equal(2UL, state.Snapshot.Meta.Term);
        Assert.Equal(config.Voters, state.Snapshot.Meta.Configuration.Voters);
        Assert.Equal(config.Learners, state.Snapshot.Meta.Configuration.Learners);
        Assert.Equal(new byte[] { 9, 8, 7 }, state.Snapshot.Data.ToArray());
        AssertEntries([E(5, 2), E(6, 2)], state.Entries);
        // The restarted member recovers from it.
        var raft = new RaftNode(1, new RaftOptions(), state);
        Assert.Equal(5UL, raft.FirstIndex);
        Assert.Equal(6UL, raft.LastIndex);
    }

    [Fact]
    public void An_installed_snapshot_replaces_the_whole_log_and_entries_continue_after_it()
    {
        using var dir = new TempDirectory();
        var snapshot = new Snapshot(new SnapshotMeta(100, 5, new Configuration([1, 2, 3], [])), new byte[] { 1 });
        using (var store = RaftLogStore.Open(dir.Path))
        {
            store.Save(Write(new HardState(1, 1, 2), null, E(1, 1), E(2, 1), E(3, 1)));
            store.Save(Write(new HardState(5, 0, 100), snapshot, E(101, 5), E(102, 5)));
        }
        using var reopened = RaftLogStore.Open(dir.Path);
        var state = reopened.Load()!;
        Assert.Equal(100UL, state.Snapshot!.Meta.Index);
        AssertEntries([E(101, 5), E(102, 5)], state.Entries);
    }

    /// <summary>Flips one bit inside the stored record whose payload holds <paramref name="marker"/> (the log's block files, or the file named).</summary>
    private static void FlipBitIn(string directory, string marker, string? file = null)
    {
        var needle = System.Text.Encoding.UTF8.GetBytes(marker);
        foreach (var path in file is null ? Directory.EnumerateFiles(Path.Combine(directory, "log"), "*.blk", SearchOption.AllDirectories) : [Path.Combine(directory, file)])
        {
            var bytes = File.ReadAllBytes(path);
            var at = bytes.AsSpan().IndexOf(needle);
            if (at < 0) continue;
            bytes[at] ^= 0x04;
            File.WriteAllBytes(path, bytes);
            return;
        }
        throw new InvalidOperationException($"{marker} not found");
    }

    [Fact]
    public void A_flipped_bit_in_an_acknowledged_entry_cuts_the_log_there_and_the_member_repairs_up_to_what_it_held()
    {
        using var dir = new TempDirectory();
        using (var store = RaftLogStore.Open(dir.Path))
        {
            store.Save(Write(new HardState(2, 1, 6), null, E(1, 1), E(2, 1), E(3, 1)));
            store.Save(Write(null, null, E(4, 2, "entry four"), E(5, 2), E(6, 2)));
            store.Save(Write(null, null, E(7, 2), E(8, 2)));
        }
        FlipBitIn(dir.Path, "entry four");
        using (var store = RaftLogStore.Open(dir.Path))
        {
            var state = store.Load()!;
            AssertEntries([E(1, 1), E(2, 1), E(3, 1)], state.Entries);
            Assert.Equal(8UL, state.RepairFloor);                   // it once held 8: it votes as that log would have
            Assert.Equal(2UL, state.RepairFloorTerm);               // (entry 8's term) and campaigns only once it holds 8 again
            Assert.Equal(new HardState(2, 1, 3), state.HardState); // the commit it wrote is beyond what is left
            var raft = new RaftNode(1, new RaftOptions(), state);
            Assert.Equal(8UL, raft.RepairFloor);
        }
        using (var store = RaftLogStore.Open(dir.Path))
        {
            // The floor outlives a second restart, when the damaged record is no longer there to see.
            Assert.Equal(8UL, store.Load()!.RepairFloor);
            store.Save(Write(null, null, E(4, 2), E(5, 2), E(6, 3), E(7, 3), E(8, 3))); // from the leader
            store.ClearRepairFloor();
        }
        using var repaired = RaftLogStore.Open(dir.Path);
        Assert.Equal(0UL, repaired.Load()!.RepairFloor);
    }

    [Fact]
    public void A_damaged_last_record_is_a_torn_tail_and_sets_no_repair_floor()
    {
        using var dir = new TempDirectory();
        using (var store = RaftLogStore.Open(dir.Path))
        {
            store.Save(Write(new HardState(2, 1, 2), null, E(1, 1), E(2, 1)));
            store.Save(Write(null, null, E(3, 2, "the last one")));
        }
        FlipBitIn(dir.Path, "the last one");
        using var reopened = RaftLogStore.Open(dir.Path);
        var state = reopened.Load()!;
        AssertEntries([E(1, 1), E(2, 1)], state.Entries);
        Assert.Equal(0UL, state.RepairFloor); // an unsynced write cut short looks the same, and was never acknowledged
    }

    [Fact]
    public void A_damaged_snapshot_starts_the_member_over_repairing()
    {
        using var dir = new TempDirectory();
        using (var store = RaftLogStore.Open(dir.Path))
        {
            store.Save(Write(new HardState(3, 2, 6), null, E(1, 1), E(2, 1), E(3, 2), E(4, 2), E(5, 2), E(6, 2)));
            store.SaveSnapshot(new Snapshot(new SnapshotMeta(4, 2, new Configuration([1, 2, 3], [])), System.Text.Encoding.UTF8.GetBytes("image of the state")));
        }
        FlipBitIn(dir.Path, "image of the state", "snapshot");
        using (var store = RaftLogStore.Open(dir.Path))
        {
            var state = store.Load()!;
            Assert.Null(state.Snapshot);
            Assert.Empty(state.Entries);
            Assert.Equal(6UL, state.RepairFloor);
            Assert.Equal(new HardState(3, 2, 0), state.HardState); // its term and vote stay: it must not vote twice in term 3
            var raft = new RaftNode(1, new RaftOptions(), state);
            Assert.Equal(0UL, raft.LastIndex);
            Assert.Equal(6UL, raft.RepairFloor);
        }
        using var again = RaftLogStore.Open(dir.Path);
        Assert.Equal(6UL, again.Load()!.RepairFloor);
    }

    [Fact]
    public void A_torn_hard_state_write_leaves_the_previous_one()
    {
        using var dir = new TempDirectory();
        using (var store = RaftLogStore.Open(dir.Path))
        {
            store.Save(Write(new HardState(3, 2, 0), null, E(1, 1)));
            store.Save(Write(new HardState(4, 0, 0)));
        }
        // Tear the newest slot (counter 2 sits in slot 0).
        var path = Path.Combine(dir.Path, "state");
        var bytes = File.ReadAllBytes(path);
        bytes[20] ^= 0xFF;
        File.WriteAllBytes(path, bytes);
        using var reopened = RaftLogStore.Open(dir.Path);
        Assert.Equal(new HardState(3, 2, 0), reopened.Load()!.HardState);
    }

    /// <summary>
    /// Seeded power cuts in the middle of Raft writes (the FileStore's log, the hard-state slots, the
    /// snapshot rename) on the power-loss file system: what a Save returned from survives, except what
    /// the interrupted Save itself was _replacing (a Raft member never acknowledged that).
    /// </summary>
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    [MemberData(nameof(MoreSeeds))]
    public void Power_cuts_lose_nothing_a_save_returned_from(int seed)
    {
        var random = new Random(seed);
        var fs = new PowerLossFileSystem(MetadataDurability.OnDirectorySync);
        const string dir = "/raft/member";
        var acked = new SortedDictionary<ulong, Entry>();
        var hard = default(HardState);
        Snapshot? snapshot = null;
        ulong term = 1;
        var cuts = 0;
        for (var cycle = 0; cycle < 60; cycle++)
        {
            RaftLogStore store;
            try
            {
                store = RaftLogStore.Open(dir, fs, preallocate: false);
            }
            catch (IOException)
            {
                fs.Crash(random);
                continue;
            }
            var state = store.Load();
            _history.Add($"cycle {cycle} open: snapshot {state?.Snapshot?.Meta.Index} entries {state?.Entries.FirstOrDefault().Index}..{state?.Entries.LastOrDefault().Index}");
            Check(state);
            // What the store holds now is what the next saves build on.
            acked.Clear();
            foreach (var e in state?.Entries ?? []) acked[e.Index] = e;
            hard = state?.HardState ?? default;
            snapshot = state?.Snapshot;
            var last = Math.Max(acked.Count > 0 ? acked.Keys.Last() : 0, snapshot?.Meta.Index ?? 0);
            var floor = snapshot?.Meta.Index ?? 0;
            fs.CutPowerAfter(random.Next(1, 40));
            try
            {
                for (var step = 0; step < 20; step++)
                {
                    Ready ready;
                    switch (random.Next(10))
                    {
                        case 0:
                            term++;
                            ready = Write(new HardState(term, (ulong)random.Next(1, 4), hard.Commit));
                            store.Save(ready);
                            hard = ready.HardState!.Value;
                            break;
                        case 1 when last > floor + 3:
                            var at = floor + 1 + (ulong)random.Next((int)(last - floor - 1));
                            var meta = new SnapshotMeta(at, acked[at].Term, new Configuration([1, 2, 3], []));
                            var compacted = new Snapshot(meta, BitConverter.GetBytes(at));
                            _history.Add($"cycle {cycle} compact at {at} (ops {fs.Operations})");
                            store.SaveSnapshot(compacted);
                            _history.Add("  returned");
                            snapshot = compacted;
                            floor = at;
                            foreach (var k in acked.Keys.Where(k => k <= at).ToList()) acked.Remove(k);
                            break;
                        case 2:
                            term++;
                            var installAt = last + (ulong)random.Next(1, 50);
                            var installed = new Snapshot(new SnapshotMeta(installAt, term, new Configuration([1, 2, 3], [])), BitConverter.GetBytes(installAt));
                            ready = Write(new HardState(term, 0, installAt), installed, E(installAt + 1, term));
                            _history.Add($"cycle {cycle} install at {installAt} (ops {fs.Operations})");
                            store.Save(ready);
                            _history.Add("  returned");
                            snapshot = installed;
                            hard = ready.HardState!.Value;
                            acked.Clear();
                            acked[installAt + 1] = ready.Entries[0];
                            floor = installAt;
                            last = installAt + 1;
                            break;
                        default:
                            // Append after the last entry, or (a new leader) overwrite a suffix.
                            var from = random.Next(4) == 0 && last > floor + 1 ? floor + 1 + (ulong)random.Next((int)(last - floor)) : last + 1;
                            var entries = Enumerable.Range(0, random.Next(1, 8)).Select(i => E(from + (ulong)i, term, $"{from + (ulong)i}/{term}/{step}/{cycle}")).ToArray();
                            _pendingFrom = from;
                            _history.Add($"cycle {cycle} save {from}..{entries[^1].Index} (ops {fs.Operations})");
                            store.Save(Write(null, null, entries));
                            _history.Add("  returned");
                            _pendingFrom = ulong.MaxValue;
                            foreach (var k in acked.Keys.Where(k => k >= from).ToList()) acked.Remove(k);
                            foreach (var e in entries) acked[e.Index] = e;
                            last = entries[^1].Index;
                            break;
                    }
                }
                fs.CancelCut();
                store.Dispose();
            }
            catch (IOException)
            {
                cuts++;
            }
            fs.Crash(random);
            _replacing = _pendingFrom;
            _pendingFrom = ulong.MaxValue;
            // The next open checks: everything acknowledged before the cut is still there.
            _expectedEntries = acked.Values.ToList();
            _expectedHard = hard;
            _expectedSnapshot = snapshot?.Meta.Index ?? 0;
        }
        Assert.True(cuts > 20, $"only {cuts} power cuts hit a save");

        void Check(PersistedState? state)
        {
            if (state is null)
            {
                Assert.True(_expectedEntries.All(e => e.Index >= _replacing), $"{_expectedEntries.Count} acknowledged entries lost with the whole state\n" + string.Join("\n", _history.TakeLast(12)));
                return;
            }
            Assert.True(state.HardState.Term >= _expectedHard.Term, $"term {state.HardState.Term} < acknowledged {_expectedHard.Term}");
            if (state.HardState.Term == _expectedHard.Term) Assert.Equal(_expectedHard.Vote, state.HardState.Vote);
            var snapIndex = state.Snapshot?.Meta.Index ?? 0;
            Assert.True(snapIndex >= _expectedSnapshot, $"snapshot {snapIndex} < acknowledged {_expectedSnapshot}\n" + string.Join("\n", _history.TakeLast(12)));
            var recovered = state.Entries.ToDictionary(e => e.Index);
            foreach (var e in _expectedEntries)
            {
                if (e.Index <= snapIndex) continue; // compacted (or replaced by a newer installed snapshot)
                if (snapIndex > _expectedSnapshot) continue; // an install replaced the log after the last acknowledgement
                if (e.Index >= _replacing && !recovered.ContainsKey(e.Index)) continue; // the interrupted save was _replacing it
                Assert.True(recovered.TryGetValue(e.Index, out var got), $"acknowledged entry {e.Index} lost (seed {seed})\n" + string.Join("\n", _history.TakeLast(12)));
                if (got.Term != e.Term || !got.Data.Span.SequenceEqual(e.Data.Span))
                {
                    // Only a suffix the interrupted save was _replacing may differ: then it holds newer entries.
                    Assert.True(got.Term >= e.Term, $"entry {e.Index} went back from term {e.Term} to {got.Term}");
                }
            }
            for (var i = 1; i < state.Entries.Count; i++)
                Assert.Equal(state.Entries[i - 1].Index + 1, state.Entries[i].Index);
        }
    }

    /// <summary>COURIER_RAFTLOG_SEEDS=N adds seeds 5..N+4 (a longer run; not in the test command).</summary>
    public static TheoryData<int> MoreSeeds()
    {
        var data = new TheoryData<int>();
        var more = int.TryParse(Environment.GetEnvironmentVariable("COURIER_RAFTLOG_SEEDS"), out var n) ? n : 0;
        for (var seed = 5; seed < 5 + more; seed++) data.Add(seed);
        if (more == 0) data.Add(5);
        return data;
    }

    private List<Entry> _expectedEntries = [];
    private readonly List<string> _history = [];
    private ulong _pendingFrom = ulong.MaxValue;
    private ulong _replacing = ulong.MaxValue;
    private HardState _expectedHard;
    private ulong _expectedSnapshot;
}
