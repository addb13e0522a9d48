using Akka.Persistence;
using Akka.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Persistence;

/// <summary>
/// Akka.Persistence.TCK's <c>SnapshotStoreSpec</c>, ported, driving Courier's snapshot-store plugin through
/// Akka's snapshot protocol (SaveSnapshot, LoadSnapshot, DeleteSnapshot(s) and their replies), against the
/// file and the memory store. The selection rules are covered case by case by the engine-level port in
/// Courier.Storage.Tests. Each test starts with snapshots "s-1".."s-5" at sequence numbers 11..15.
/// </summary>
public abstract class SnapshotStorePluginSpec : PluginSpec
{
    private static int _counter;
    private readonly TestProbe _sender;
    private readonly List<SnapshotMetadata> _metadata = [];

    protected SnapshotStorePluginSpec(bool onDisk)
        : base(onDisk, "akka.persistence.publish-plugin-commands = on")
    {
        Pid = "p-" + Interlocked.Increment(ref _counter);
        _sender = CreateTestProbe();
        var start = DateTime.UtcNow.AddMinutes(-10);
        for (var i = 1; i <= 5; i++)
        {
            var metadata = new SnapshotMetadata(Pid, i + 10, start.AddSeconds(i));
            SnapshotStore.Tell(new SaveSnapshot(metadata, $"s-{i}"), _sender.Ref);
            _metadata.Add(_sender.ExpectMsg<SaveSnapshotSuccess>().Metadata);
        }
    }

    private string Pid { get; }

    private void ExpectLoaded(LoadSnapshotResult result, int index, long toSequenceNr)
    {
        Assert.Equal(toSequenceNr, result.ToSequenceNr);
        Assert.NotNull(result.Snapshot);
        Assert.Equal(_metadata[index], result.Snapshot.Metadata);
        Assert.Equal($"s-{index + 1}", result.Snapshot.Snapshot);
    }

    [Fact]
    public void SnapshotStore_should_not_load_a_snapshot_given_an_invalid_persistence_id()
    {
        SnapshotStore.Tell(new LoadSnapshot("invalid", SnapshotSelectionCriteria.Latest, long.MaxValue), _sender.Ref);
        _sender.ExpectMsg<LoadSnapshotResult>(r => r.Snapshot is null && r.ToSequenceNr == long.MaxValue);
    }

    [Fact]
    public void SnapshotStore_should_not_load_a_snapshot_given_non_matching_timestamp_criteria()
    {
        SnapshotStore.Tell(new LoadSnapshot(Pid, new SnapshotSelectionCriteria(long.MaxValue, new DateTime(100000)), long.MaxValue), _sender.Ref);
        _sender.ExpectMsg<LoadSnapshotResult>(r => r.Snapshot is null && r.ToSequenceNr == long.MaxValue);
    }

    [Fact]
    public void SnapshotStore_should_not_load_a_snapshot_given_non_matching_sequence_number_criteria()
    {
        SnapshotStore.Tell(new LoadSnapshot(Pid, new SnapshotSelectionCriteria(7), long.MaxValue), _sender.Ref);
        _sender.ExpectMsg<LoadSnapshotResult>(r => r.Snapshot is null && r.ToSequenceNr == long.MaxValue);
        SnapshotStore.Tell(new LoadSnapshot(Pid, SnapshotSelectionCriteria.Latest, 7), _sender.Ref);
        _sender.ExpectMsg<LoadSnapshotResult>(r => r.Snapshot is null && r.ToSequenceNr == 7);
    }

    [Fact]
    public void SnapshotStore_should_load_the_most_recent_snapshot()
    {
        SnapshotStore.Tell(new LoadSnapshot(Pid, SnapshotSelectionCriteria.Latest, long.MaxValue), _sender.Ref);
        ExpectLoaded(_sender.ExpectMsg<LoadSnapshotResult>(), 4, long.MaxValue);
    }

    [Fact]
    public void SnapshotStore_should_load_the_most_recent_snapshot_matching_an_upper_sequence_number_bound()
    {
        SnapshotStore.Tell(new LoadSnapshot(Pid, new SnapshotSelectionCriteria(13), long.MaxValue), _sender.Ref);
        ExpectLoaded(_sender.ExpectMsg<LoadSnapshotResult>(), 2, long.MaxValue);
        SnapshotStore.Tell(new LoadSnapshot(Pid, SnapshotSelectionCriteria.Latest, 13), _sender.Ref);
        ExpectLoaded(_sender.ExpectMsg<LoadSnapshotResult>(), 2, 13);
    }

    [Fact]
    public void SnapshotStore_should_load_the_most_recent_snapshot_matching_upper_sequence_number_and_timestamp_bounds()
    {
        SnapshotStore.Tell(new LoadSnapshot(Pid, new SnapshotSelectionCriteria(13, _metadata[2].Timestamp), long.MaxValue), _sender.Ref);
        ExpectLoaded(_sender.ExpectMsg<LoadSnapshotResult>(), 2, long.MaxValue);
        SnapshotStore.Tell(new LoadSnapshot(Pid, new SnapshotSelectionCriteria(long.MaxValue, _metadata[2].Timestamp), 13), _sender.Ref);
        ExpectLoaded(_sender.ExpectMsg<LoadSnapshotResult>(), 2, 13);
    }

    [Fact]
    public void SnapshotStore_should_delete_a_single_snapshot_identified_by_SequenceNr_in_snapshot_metadata()
    {
        var md = _metadata[2];
        var command = new DeleteSnapshot(md);
        var subscriber = CreateTestProbe();
        Sys.EventStream.Subscribe(subscriber.Ref, typeof(DeleteSnapshot));
        SnapshotStore.Tell(command, _sender.Ref);
        subscriber.ExpectMsg(command);
        _sender.ExpectMsg<DeleteSnapshotSuccess>();

        SnapshotStore.Tell(new LoadSnapshot(Pid, new SnapshotSelectionCriteria(md.SequenceNr), long.MaxValue), _sender.Ref);
        ExpectLoaded(_sender.ExpectMsg<LoadSnapshotResult>(), 1, long.MaxValue);
    }

    [Fact]
    public void SnapshotStore_should_delete_all_snapshots_matching_upper_sequence_number_and_timestamp_bounds()
    {
        var md = _metadata[2];
        var command = new DeleteSnapshots(Pid, new SnapshotSelectionCriteria(md.SequenceNr, md.Timestamp));
        var subscriber = CreateTestProbe();
        Sys.EventStream.Subscribe(subscriber.Ref, typeof(DeleteSnapshots));
        SnapshotStore.Tell(command, _sender.Ref);
        subscriber.ExpectMsg(command);
        _sender.ExpectMsg<DeleteSnapshotsSuccess>(m => m.Criteria.Equals(command.Criteria));

        SnapshotStore.Tell(new LoadSnapshot(Pid, new SnapshotSelectionCriteria(md.SequenceNr, md.Timestamp), long.MaxValue), _sender.Ref);
        _sender.ExpectMsg<LoadSnapshotResult>(r => r.Snapshot is null);
        SnapshotStore.Tell(new LoadSnapshot(Pid, new SnapshotSelectionCriteria(_metadata[3].SequenceNr, _metadata[3].Timestamp), long.MaxValue), _sender.Ref);
        ExpectLoaded(_sender.ExpectMsg<LoadSnapshotResult>(), 3, long.MaxValue);
    }

    [Fact]
    public void SnapshotStore_should_save_and_overwrite_snapshot_with_same_sequence_number()
    {
        var md = _metadata[4];
        SnapshotStore.Tell(new SaveSnapshot(md, "s-5-modified"), _sender.Ref);
        Assert.Equal(md.SequenceNr, _sender.ExpectMsg<SaveSnapshotSuccess>().Metadata.SequenceNr);
        SnapshotStore.Tell(new LoadSnapshot(Pid, new SnapshotSelectionCriteria(md.SequenceNr), long.MaxValue), _sender.Ref);
        Assert.Equal("s-5-modified", _sender.ExpectMsg<LoadSnapshotResult>().Snapshot!.Snapshot);
    }

    [Fact]
    public void SnapshotStore_should_save_bigger_size_snapshot()
    {
        var big = new byte[10_000];
        Random.Shared.NextBytes(big);
        SnapshotStore.Tell(new SaveSnapshot(new SnapshotMetadata(Pid, 100, DateTime.UtcNow), big), _sender.Ref);
        _sender.ExpectMsg<SaveSnapshotSuccess>();
        SnapshotStore.Tell(new LoadSnapshot(Pid, SnapshotSelectionCriteria.Latest, long.MaxValue), _sender.Ref);
        Assert.Equal(big, (byte[])_sender.ExpectMsg<LoadSnapshotResult>().Snapshot!.Snapshot);
    }

    [Fact]
    public void A_snapshot_with_no_binary_serializer_fails_to_save_and_the_older_ones_stay()
    {
        var md = new SnapshotMetadata(Pid, 100, DateTime.UtcNow);
        SnapshotStore.Tell(new SaveSnapshot(md, new object()), _sender.Ref);
        Assert.Equal(md, _sender.ExpectMsg<SaveSnapshotFailure>().Metadata);
        SnapshotStore.Tell(new LoadSnapshot(Pid, SnapshotSelectionCriteria.Latest, long.MaxValue), _sender.Ref);
        ExpectLoaded(_sender.ExpectMsg<LoadSnapshotResult>(), 4, long.MaxValue);
    }
}

public sealed class MemorySnapshotStorePluginSpec : SnapshotStorePluginSpec
{
    public MemorySnapshotStorePluginSpec()
        : base(onDisk: false)
    {
    }
}

public sealed class FileSnapshotStorePluginSpec : SnapshotStorePluginSpec
{
    public FileSnapshotStorePluginSpec()
        : base(onDisk: true)
    {
    }
}
