using Courier.Storage.FileStorage;
using Courier.Storage.Persistence;
using Xunit;

namespace Courier.Storage.Tests.Persistence;

/// <summary>
/// The journal contract against the FileStore journal, and what only a file journal has: the group
/// commit (one write and one fsync per call), reopening, recovery after a crash and a torn tail. A
/// crash is simulated as in <see cref="FileStoreTests"/>: the journal is abandoned (no Dispose) and a
/// new instance opens its directory.
/// </summary>
public sealed class FileJournalSpec : JournalSpec
{
    private readonly TempDirectory _temp = new();
    private readonly List<IJournalStore> _opened = [];
    private int _next;

    private string _directory = "";

    // The damage tests find the last write at the end of the block file: no zeros ahead of it.
    private static readonly FileStoreOptions NoPreallocation = new() { Preallocate = false };

    protected override IJournalStore CreateJournal()
    {
        _directory = Path.Combine(_temp.Path, $"journal-{_next++}");
        return Open(_directory);
    }

    public override void Dispose()
    {
        base.Dispose();
        foreach (var journal in _opened)
        {
            journal.Dispose();
        }

        _temp.Dispose();
    }

    private FileJournalStore Open(string directory, FileStoreOptions? options = null)
    {
        var journal = FileJournalStore.Open(directory, options ?? NoPreallocation);
        _opened.Add(journal);
        return journal;
    }

    [Fact]
    public void One_write_call_of_many_actors_is_one_write_and_one_fsync()
    {
        var journal = (FileJournalStore)Journal;
        var store = (FileStore)journal.Store;
        var (writes, syncs) = (store.WriteCount, store.SyncCount);

        var batch = Enumerable.Range(1, 200).Select(i => new JournalWrite(Event(1, pid: $"consumer-{i}"))).ToArray();
        WriteAll(journal, batch);

        Assert.Equal(writes + 1, store.WriteCount);
        Assert.Equal(syncs + 1, store.SyncCount);
        Assert.Equal(1, journal.ReadHighestSequenceNr("consumer-77"));
    }

    [Fact]
    public void Everything_written_survives_a_clean_reopen()
    {
        _ = Journal;
        Journal.DeleteMessagesTo(Pid, 2);
        WriteAll(Journal, new JournalWrite(Event(1, pid: "cleaned")));
        Journal.DeleteMessagesTo("cleaned", long.MaxValue);
        Journal.Dispose();

        var reopened = Open(_directory);
        Use(reopened);
        AssertReplayed(Replay(reopened, Pid), 3, 4, 5);
        Assert.Equal(5, reopened.ReadHighestSequenceNr(Pid));
        Assert.Empty(Replay(reopened, "cleaned"));
        Assert.Equal(1, reopened.ReadHighestSequenceNr("cleaned")); // the highest survives a full delete and a restart
        Assert.Empty(reopened.Warnings);
    }

    [Fact]
    public void Everything_a_write_call_returned_for_survives_a_crash()
    {
        _ = Journal;
        WriteAll(Journal, new JournalWrite([Event(6), Event(7)]));
        Journal.DeleteMessagesTo(Pid, 1);
        // No Dispose: the process "dies" here.

        var recovered = Open(_directory);
        AssertReplayed(Replay(recovered, Pid), 2, 3, 4, 5, 6, 7);
        Assert.Equal(7, recovered.ReadHighestSequenceNr(Pid));
        WriteAll(recovered, new JournalWrite(Event(8)));
        Assert.Equal(8, recovered.ReadHighestSequenceNr(Pid));
    }

    [Fact]
    public void A_torn_last_write_is_cut_off_and_the_earlier_writes_survive()
    {
        _ = Journal;
        var block = Directory.EnumerateFiles(_directory, "*.blk").Order(StringComparer.Ordinal).Last();
        var before = new FileInfo(block).Length;
        WriteAll(Journal, new JournalWrite([Event(6), Event(7), Event(8)])); // the write that will be torn
        var after = new FileInfo(block).Length;
        Assert.True(after > before);

        // The crash tore the last write: only part of its record reached the disk.
        using (var file = new FileStream(block, FileMode.Open, FileAccess.Write))
        {
            file.SetLength(before + ((after - before) / 2));
        }

        var recovered = Open(_directory);
        AssertReplayed(Replay(recovered, Pid), 1, 2, 3, 4, 5); // the atomic write 6-8 is gone as a whole
        Assert.Equal(5, recovered.ReadHighestSequenceNr(Pid));
        Assert.Contains(recovered.Warnings, w => w.Kind == StoreWarningKind.TruncatedTail);

        WriteAll(recovered, new JournalWrite(Event(6, payload: "a-6")));
        AssertReplayed(Replay(recovered, Pid, from: 6), 6);
    }

    [Fact]
    public void A_corrupt_record_is_never_replayed()
    {
        _ = Journal;
        var block = Directory.EnumerateFiles(_directory, "*.blk").Order(StringComparer.Ordinal).Last();
        var before = new FileInfo(block).Length;
        WriteAll(Journal, new JournalWrite(Event(6, payload: "a-6-with-a-long-enough-payload")));
        var after = new FileInfo(block).Length;
        WriteAll(Journal, new JournalWrite(Event(7)));

        // Flip a byte inside event 6's payload on disk (bit rot); its record's checksum no longer matches.
        using (var file = new FileStream(block, FileMode.Open, FileAccess.ReadWrite))
        {
            var at = after - 12;
            file.Position = at;
            var b = file.ReadByte();
            file.Position = at;
            file.WriteByte((byte)(b ^ 0xFF));
        }

        var recovered = Open(_directory);
        var replayed = Replay(recovered, Pid);
        Assert.Equal(new long[] { 1, 2, 3, 4, 5, 7 }, replayed.Select(r => r.SequenceNr));
        Assert.Contains(recovered.Warnings, w => w.Kind == StoreWarningKind.CorruptRecord);
    }

    [Fact]
    public void A_deletion_survives_a_crash_together_with_the_highest_sequence_number()
    {
        _ = Journal;
        Journal.DeleteMessagesTo(Pid, long.MaxValue);
        // No Dispose.

        var recovered = Open(_directory);
        Assert.Empty(Replay(recovered, Pid));
        Assert.Equal(5, recovered.ReadHighestSequenceNr(Pid));
    }

    [Fact]
    public void Repeated_snapshot_style_deletes_keep_one_marker_and_remove_the_events()
    {
        var journal = (FileJournalStore)Journal;
        var store = journal.Store;
        for (var round = 1; round <= 20; round++)
        {
            var first = journal.ReadHighestSequenceNr("consumer") + 1;
            for (var seq = first; seq < first + 10; seq++)
            {
                WriteAll(journal, new JournalWrite(Event(seq, pid: "consumer")));
            }

            journal.DeleteMessagesTo("consumer", first + 9); // the consumer snapshotted at its last event
        }

        Assert.Equal(200, journal.ReadHighestSequenceNr("consumer"));
        Assert.Empty(Replay(journal, "consumer"));
        var subjects = store.SubjectsState(null);
        Assert.Equal(1UL, subjects.Single(s => s.Key.StartsWith("d.", StringComparison.Ordinal)).Value.Msgs); // one marker
        Assert.DoesNotContain(subjects, s => s.Key.StartsWith("j.", StringComparison.Ordinal) && s.Key != "j." + System.Buffers.Text.Base64Url.EncodeToString(B(Pid)));
    }
}
