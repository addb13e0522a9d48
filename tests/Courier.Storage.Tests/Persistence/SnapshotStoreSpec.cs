using System.Text;
using Courier.Storage.Persistence;
using Xunit;

namespace Courier.Storage.Tests.Persistence;

/// <summary>
/// The snapshot-store contract: Akka.Persistence.TCK's <c>SnapshotStoreSpec</c> ported to the engine (the
/// TCK itself cannot be restored, NU1101). Runs against <see cref="FileSnapshotStoreSpec"/> and
/// <see cref="MemorySnapshotStoreSpec"/>. Each test starts, as the TCK does, with five snapshots
/// "s-1".."s-5" of <see cref="Pid"/> at sequence numbers 11..15, taken one second apart.
/// </summary>
public abstract class SnapshotStoreSpec : IDisposable
{
    private static int _counter;
    private ISnapshotStore? _store;
    private List<SnapshotMetadata>? _metadata;

    protected SnapshotStoreSpec() => Pid = "p-" + Interlocked.Increment(ref _counter);

    protected string Pid { get; }

    /// <summary>The store under test, with the five snapshots.</summary>
    protected ISnapshotStore Store
    {
        get
        {
            if (_store is null)
            {
                _store = CreateStore();
                _metadata = [];
                var start = new DateTime(2024, 5, 1, 12, 0, 0, DateTimeKind.Utc);
                for (var i = 1; i <= 5; i++)
                {
                    var md = new SnapshotMetadata(Pid, i + 10, start.AddSeconds(i));
                    _store.Save(md, "string", B($"s-{i}"));
                    _metadata.Add(md);
                }
            }

            return _store;
        }
    }

    /// <summary>The five snapshots' metadata, oldest first (the TCK's <c>Metadata</c>).</summary>
    protected IReadOnlyList<SnapshotMetadata> Metadata
    {
        get
        {
            _ = Store;
            return _metadata!;
        }
    }

    protected abstract ISnapshotStore CreateStore();

    /// <summary>Replaces the store under test (after a reopen).</summary>
    protected void Use(ISnapshotStore store) => _store = store;

    public virtual void Dispose()
    {
        _store?.Dispose();
        GC.SuppressFinalize(this);
    }

    protected static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    protected static string S(ReadOnlyMemory<byte> bytes) => Encoding.UTF8.GetString(bytes.Span);

    protected static void AssertSnapshot(StoredSnapshot? loaded, SnapshotMetadata expected, string payload)
    {
        Assert.NotNull(loaded);
        Assert.Equal(expected, loaded.Metadata);
        Assert.Equal(payload, S(loaded.Payload));
        Assert.Equal("string", loaded.Manifest);
    }

    // ---- The TCK's SnapshotStoreSpec ----

    [Fact]
    public void SnapshotStore_should_not_load_a_snapshot_given_an_invalid_persistence_id()
    {
        _ = Store;
        Assert.Null(Store.Load("invalid", SnapshotSelectionCriteria.Latest));
    }

    [Fact]
    public void SnapshotStore_should_not_load_a_snapshot_given_non_matching_timestamp_criteria() =>
        Assert.Null(Store.Load(Pid, new SnapshotSelectionCriteria(long.MaxValue, new DateTime(100000))));

    [Fact]
    public void SnapshotStore_should_not_load_a_snapshot_given_non_matching_sequence_number_criteria()
    {
        Assert.Null(Store.Load(Pid, new SnapshotSelectionCriteria(7)));
        Assert.Null(Store.Load(Pid, SnapshotSelectionCriteria.Latest.Limit(7)));
    }

    [Fact]
    public void SnapshotStore_should_load_the_most_recent_snapshot() =>
        AssertSnapshot(Store.Load(Pid, SnapshotSelectionCriteria.Latest), Metadata[4], "s-5");

    [Fact]
    public void SnapshotStore_should_load_the_most_recent_snapshot_matching_an_upper_sequence_number_bound()
    {
        AssertSnapshot(Store.Load(Pid, new SnapshotSelectionCriteria(13)), Metadata[2], "s-3");
        AssertSnapshot(Store.Load(Pid, SnapshotSelectionCriteria.Latest.Limit(13)), Metadata[2], "s-3");
    }

    [Fact]
    public void SnapshotStore_should_load_the_most_recent_snapshot_matching_an_upper_sequence_number_and_timestamp_bound()
    {
        AssertSnapshot(Store.Load(Pid, new SnapshotSelectionCriteria(13, Metadata[2].Timestamp)), Metadata[2], "s-3");
        AssertSnapshot(Store.Load(Pid, new SnapshotSelectionCriteria(long.MaxValue, Metadata[2].Timestamp).Limit(13)), Metadata[2], "s-3");
    }

    [Fact]
    public void SnapshotStore_should_delete_a_single_snapshot_identified_by_SequenceNr_in_snapshot_metadata()
    {
        var md = Metadata[2];
        Store.Delete(new SnapshotMetadata(md.PersistenceId, md.SequenceNr, md.Timestamp));
        AssertSnapshot(Store.Load(Pid, new SnapshotSelectionCriteria(md.SequenceNr)), Metadata[1], "s-2");
    }

    [Fact]
    public void SnapshotStore_should_delete_a_single_snapshot_identified_by_SequenceNr_in_snapshot_metadata_if_timestamp_is_MinValue()
    {
        var md = Metadata[2];
        Store.Delete(new SnapshotMetadata(md.PersistenceId, md.SequenceNr, DateTime.SpecifyKind(DateTime.MinValue, DateTimeKind.Utc)));
        AssertSnapshot(Store.Load(Pid, new SnapshotSelectionCriteria(md.SequenceNr)), Metadata[1], "s-2");
    }

    [Fact]
    public void SnapshotStore_should_not_delete_snapshot_identified_by_SequenceNr_if_metadata_timestamp_is_less_than_stored_timestamp()
    {
        var md = Metadata[2];
        Store.Delete(new SnapshotMetadata(md.PersistenceId, md.SequenceNr, md.Timestamp - TimeSpan.FromSeconds(2)));
        AssertSnapshot(Store.Load(Pid, new SnapshotSelectionCriteria(md.SequenceNr)), Metadata[2], "s-3");
    }

    [Fact]
    public void SnapshotStore_should_delete_all_snapshots_matching_upper_sequence_number_and_timestamp_bounds()
    {
        var md = Metadata[2];
        Store.Delete(Pid, new SnapshotSelectionCriteria(md.SequenceNr, md.Timestamp));
        Assert.Null(Store.Load(Pid, new SnapshotSelectionCriteria(md.SequenceNr, md.Timestamp)));
        AssertSnapshot(Store.Load(Pid, new SnapshotSelectionCriteria(Metadata[3].SequenceNr, Metadata[3].Timestamp)), Metadata[3], "s-4");
    }

    [Fact]
    public void SnapshotStore_should_not_delete_snapshots_with_non_matching_upper_timestamp_bounds()
    {
        var md = Metadata[3];
        Store.Delete(Pid, new SnapshotSelectionCriteria(md.SequenceNr, md.Timestamp.Subtract(TimeSpan.FromTicks(1))));
        AssertSnapshot(Store.Load(Pid, new SnapshotSelectionCriteria(md.SequenceNr, md.Timestamp)), Metadata[3], "s-4");
    }

    [Fact]
    public void SnapshotStore_should_save_and_overwrite_snapshot_with_same_sequence_number()
    {
        var md = Metadata[4];
        Store.Save(md, "string", B("s-5-modified"));
        var loaded = Store.Load(Pid, new SnapshotSelectionCriteria(md.SequenceNr));
        Assert.NotNull(loaded);
        Assert.Equal("s-5-modified", S(loaded.Payload));
        Assert.Equal(md.SequenceNr, loaded.Metadata.SequenceNr);
    }

    [Fact]
    public void SnapshotStore_should_save_bigger_size_snapshot()
    {
        _ = Store;
        var big = new byte[10_000];
        Random.Shared.NextBytes(big);
        var md = new SnapshotMetadata(Pid, 100, DateTime.UtcNow);
        Store.Save(md, "bytes", big);
        var loaded = Store.Load(Pid, SnapshotSelectionCriteria.Latest);
        Assert.NotNull(loaded);
        Assert.Equal(md, loaded.Metadata);
        Assert.Equal(big, loaded.Payload.ToArray());
        Assert.Equal("bytes", loaded.Manifest);
    }

    // ---- Beyond the TCK ----

    [Fact]
    public void A_save_with_another_timestamp_at_the_same_sequence_number_replaces_the_snapshot()
    {
        var md = Metadata[4];
        var later = new SnapshotMetadata(Pid, md.SequenceNr, md.Timestamp.AddMinutes(1));
        Store.Save(later, "string", B("s-5-later"));
        AssertSnapshot(Store.Load(Pid, SnapshotSelectionCriteria.Latest), later, "s-5-later");

        Store.Delete(later);
        AssertSnapshot(Store.Load(Pid, SnapshotSelectionCriteria.Latest), Metadata[3], "s-4"); // the replaced one is gone too
    }

    [Fact]
    public void Lower_bounds_select_too()
    {
        AssertSnapshot(Store.Load(Pid, SnapshotSelectionCriteria.Latest with { MinSequenceNr = 14 }), Metadata[4], "s-5");
        AssertSnapshot(Store.Load(Pid, new SnapshotSelectionCriteria(13, DateTime.MaxValue, 12)), Metadata[2], "s-3");
        Assert.Null(Store.Load(Pid, new SnapshotSelectionCriteria(13, DateTime.MaxValue, 14)));
        Assert.Null(Store.Load(Pid, SnapshotSelectionCriteria.Latest with { MinTimestamp = Metadata[4].Timestamp.AddTicks(1) }));
    }

    [Fact]
    public void Deleting_everything_below_a_snapshot_keeps_it_and_the_ones_above()
    {
        Store.Delete(Pid, new SnapshotSelectionCriteria(Metadata[3].SequenceNr - 1));
        AssertSnapshot(Store.Load(Pid, SnapshotSelectionCriteria.Latest), Metadata[4], "s-5");
        AssertSnapshot(Store.Load(Pid, new SnapshotSelectionCriteria(14)), Metadata[3], "s-4");
        Assert.Null(Store.Load(Pid, new SnapshotSelectionCriteria(13)));
    }

    [Fact]
    public void Snapshots_of_other_persistence_ids_are_kept_apart()
    {
        _ = Store;
        var other = new SnapshotMetadata("other/ünï code", 11, DateTime.UtcNow);
        Store.Save(other, "", B("theirs"));
        Store.Delete(Pid, SnapshotSelectionCriteria.Latest);
        Assert.Null(Store.Load(Pid, SnapshotSelectionCriteria.Latest));
        var loaded = Store.Load(other.PersistenceId, SnapshotSelectionCriteria.Latest);
        Assert.NotNull(loaded);
        Assert.Equal(("theirs", ""), (S(loaded.Payload), loaded.Manifest));
    }
}

/// <summary>The snapshot-store contract against the memory store.</summary>
public sealed class MemorySnapshotStoreSpec : SnapshotStoreSpec
{
    protected override ISnapshotStore CreateStore() => new MemorySnapshotStore();
}
