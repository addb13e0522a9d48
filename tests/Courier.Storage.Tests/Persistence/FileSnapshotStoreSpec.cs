using Courier.Storage.Persistence;
using Xunit;

namespace Courier.Storage.Tests.Persistence;

/// <summary>The snapshot-store contract against the file store, and reopening, damaged files and crashes during a save.</summary>
public sealed class FileSnapshotStoreSpec : SnapshotStoreSpec
{
    private readonly TempDirectory _temp = new();
    private readonly string _directory;

    public FileSnapshotStoreSpec() => _directory = Path.Combine(_temp.Path, "snapshots");

    protected override ISnapshotStore CreateStore() => FileSnapshotStore.Open(_directory);

    public override void Dispose()
    {
        base.Dispose();
        _temp.Dispose();
    }

    private string FileOf(SnapshotMetadata md) =>
        Directory.EnumerateFiles(_directory, $"*.{md.SequenceNr}.{md.Timestamp.Ticks}.snap").Single();

    [Fact]
    public void Snapshots_load_after_reopen()
    {
        _ = Store;
        Store.Delete(Metadata[4]);
        Store.Dispose();

        var reopened = FileSnapshotStore.Open(_directory);
        Use(reopened);
        AssertSnapshot(reopened.Load(Pid, SnapshotSelectionCriteria.Latest), Metadata[3], "s-4");
        AssertSnapshot(reopened.Load(Pid, new SnapshotSelectionCriteria(12)), Metadata[1], "s-2");
        Assert.Empty(reopened.Warnings);
    }

    [Theory]
    [InlineData("flipped payload byte")]
    [InlineData("truncated")]
    [InlineData("empty")]
    public void A_corrupt_snapshot_is_never_served_the_next_older_one_is_and_the_damage_is_reported(string damage)
    {
        var newest = FileOf(Metadata[4]);
        var bytes = File.ReadAllBytes(newest);
        switch (damage)
        {
            case "flipped payload byte":
                bytes[^6] ^= 0x01;
                break;
            case "truncated":
                bytes = bytes[..^3];
                break;
            default:
                bytes = [];
                break;
        }

        File.WriteAllBytes(newest, bytes);

        AssertSnapshot(Store.Load(Pid, SnapshotSelectionCriteria.Latest), Metadata[3], "s-4");
        var warning = Assert.Single(Store.Warnings);
        Assert.Equal(StoreWarningKind.CorruptSnapshot, warning.Kind);
        Assert.False(File.Exists(newest));
        Assert.True(File.Exists(newest + ".corrupt")); // kept for inspection, out of the way

        // Also after a restart: the damaged file stays out.
        Store.Dispose();
        var reopened = FileSnapshotStore.Open(_directory);
        Use(reopened);
        AssertSnapshot(reopened.Load(Pid, SnapshotSelectionCriteria.Latest), Metadata[3], "s-4");
    }

    [Fact]
    public void A_snapshot_file_holding_another_persistence_id_is_not_served()
    {
        // A file renamed (or hash-collided) into another id's name: the id inside decides.
        var md = new SnapshotMetadata("intruder", Metadata[4].SequenceNr + 1, Metadata[4].Timestamp);
        Store.Save(md, "string", B("not yours"));
        var intruder = FileOf(md);
        var target = Path.Combine(_directory, Path.GetFileName(FileOf(Metadata[4])).Replace(".15.", ".16.", StringComparison.Ordinal));
        File.Move(intruder, target);
        Store.Dispose();

        var reopened = FileSnapshotStore.Open(_directory);
        Use(reopened);
        AssertSnapshot(reopened.Load(Pid, SnapshotSelectionCriteria.Latest), Metadata[4], "s-5");
        Assert.Single(reopened.Warnings);
    }

    [Fact]
    public void A_save_interrupted_by_a_crash_leaves_the_old_snapshots_and_no_temporary_file()
    {
        _ = Store;
        var name = Path.GetFileName(FileOf(Metadata[4]));
        var half = Path.Combine(_directory, name.Replace(".15.", ".16.", StringComparison.Ordinal) + ".tmp");
        File.WriteAllBytes(half, [1, 2, 3]); // the crash came before the rename
        Store.Dispose();

        var reopened = FileSnapshotStore.Open(_directory);
        Use(reopened);
        AssertSnapshot(reopened.Load(Pid, SnapshotSelectionCriteria.Latest), Metadata[4], "s-5");
        Assert.False(File.Exists(half));
    }

    [Fact]
    public void A_very_long_persistence_id_is_stored_under_a_hashed_name()
    {
        _ = Store;
        var id = new string('x', 1000);
        var md = new SnapshotMetadata(id, 1, DateTime.UtcNow);
        Store.Save(md, "string", B("long"));
        Assert.All(Directory.EnumerateFiles(_directory), f => Assert.True(Path.GetFileName(f).Length < 255));
        Store.Dispose();

        var reopened = FileSnapshotStore.Open(_directory);
        Use(reopened);
        AssertSnapshot(reopened.Load(id, SnapshotSelectionCriteria.Latest), md, "long");
    }
}
