using Xunit;

namespace Courier.Storage.Tests;

/// <summary>Damage on disk: detected on recovery and on read, reported, never served as data.</summary>
public sealed partial class FileStoreTests
{
    // Without preallocation: these tests find a crashed store's last record at the end of its file (a
    // preallocated block ends in zeros; FileStoreTests.Preallocation.cs damages those).
    private static readonly FileStoreOptions OneBlock = new() { BlockSize = FileStoreOptions.DefaultBlockSize, Preallocate = false };

    /// <summary>Appends payload-1..payload-N to "foo", flushes, and returns the abandoned (crashed) store's directory.</summary>
    private string CrashedWith(int messages, FileStoreOptions? options = null)
    {
        var (store, directory) = OpenNew(options: options ?? OneBlock);
        for (var i = 1; i <= messages; i++)
        {
            PutOk(store, "foo", $"payload-{i:D4}");
        }

        store.Flush();
        return directory;
    }

    /// <summary>Flips one bit of the first occurrence of <paramref name="marker"/> in the block files.</summary>
    private static void FlipBitIn(string directory, string marker)
    {
        foreach (var file in BlockFiles(directory))
        {
            var bytes = File.ReadAllBytes(file);
            var at = bytes.AsSpan().IndexOf(B(marker));
            if (at >= 0)
            {
                bytes[at + marker.Length - 1] ^= 0x04;
                File.WriteAllBytes(file, bytes);
                return;
            }
        }

        Assert.Fail($"'{marker}' not found");
    }

    [Fact]
    public void A_truncated_tail_is_cut_off_and_reported()
    {
        var directory = CrashedWith(20);
        var last = BlockFiles(directory)[^1];
        var length = new FileInfo(last).Length;
        using (var f = new FileStream(last, FileMode.Open, FileAccess.Write, FileShare.ReadWrite))
        {
            f.SetLength(length - 10); // a torn write: the last record is partial
        }

        var store = OpenAgain(directory, options: OneBlock);
        var warning = Assert.Single(store.Warnings);
        Assert.Equal(StoreWarningKind.TruncatedTail, warning.Kind);
        var state = store.State();
        Assert.Equal((19UL, 19UL), (state.Msgs, state.LastSeq));
        Assert.Null(state.Lost);
        Assert.True(new FileInfo(last).Length < length - 10);
        Assert.Equal(20UL, PutOk(store, "foo", "again"));
        store.Stop();

        var clean = OpenAgain(directory, options: OneBlock);
        Assert.Empty(clean.Warnings);
        Assert.Equal("again", S(Load(clean, 20).Payload));
        Assert.Equal("payload-0019", S(Load(clean, 19).Payload));
    }

    [Fact]
    public void Zeros_after_the_last_record_are_a_torn_tail()
    {
        var directory = CrashedWith(5);
        using (var f = new FileStream(BlockFiles(directory)[^1], FileMode.Append, FileAccess.Write, FileShare.ReadWrite))
        {
            f.Write(new byte[100]);
        }

        var store = OpenAgain(directory, options: OneBlock);
        Assert.Equal(StoreWarningKind.TruncatedTail, Assert.Single(store.Warnings).Kind);
        Assert.Equal(5UL, store.State().Msgs);
        Assert.Equal(6UL, PutOk(store, "foo"));
    }

    [Fact]
    public void A_flipped_bit_is_detected_on_recovery_and_the_message_reported_lost()
    {
        var directory = CrashedWith(20);
        FlipBitIn(directory, "payload-0010");

        var store = OpenAgain(directory, options: OneBlock);
        var warning = Assert.Single(store.Warnings);
        Assert.Equal(StoreWarningKind.CorruptRecord, warning.Kind);
        Assert.Equal(10UL, warning.Sequence);
        var state = store.State();
        Assert.Equal((19UL, 1UL, 20UL, 1UL), (state.Msgs, state.FirstSeq, state.LastSeq, state.NumDeleted));
        Assert.Equal([10UL], state.Lost!.Msgs);
        Assert.Equal(LoadStatus.NotFound, store.LoadMessage(10).Status);
        Assert.Equal("payload-0009", S(Load(store, 9).Payload));
        Assert.Equal("payload-0011", S(Load(store, 11).Payload));
        Assert.Equal(11UL, store.LoadNextMessage("foo", 10).Message!.Sequence);
        Assert.Equal(21UL, PutOk(store, "foo"));
    }

    [Fact]
    public void A_flipped_bit_in_the_last_record_does_not_give_its_sequence_away()
    {
        var directory = CrashedWith(20);
        FlipBitIn(directory, "payload-0020");

        var store = OpenAgain(directory, options: OneBlock);
        Assert.Equal(StoreWarningKind.CorruptRecord, Assert.Single(store.Warnings).Kind);
        Assert.Equal([20UL], store.State().Lost!.Msgs);
        Assert.Equal((19UL, 20UL), (store.State().Msgs, store.State().LastSeq));
        store.Stop();

        var again = OpenAgain(directory, options: OneBlock);
        Assert.Equal(20UL, again.State().LastSeq);
        Assert.Equal(21UL, PutOk(again, "foo"));
    }

    [Fact]
    public void A_damaged_record_length_is_skipped_and_the_records_after_it_recovered()
    {
        var directory = CrashedWith(20);
        var file = BlockFiles(directory)[^1];
        var bytes = File.ReadAllBytes(file);
        var at = bytes.AsSpan().IndexOf(B("payload-0007"));
        var recordStart = at - 28 - 3; // fixed part, then the subject "foo"
        bytes[recordStart + 1] ^= 0x40; // the length field
        File.WriteAllBytes(file, bytes);

        var store = OpenAgain(directory, options: OneBlock);
        Assert.Equal(StoreWarningKind.CorruptRecord, Assert.Single(store.Warnings).Kind);
        Assert.Equal((19UL, 20UL), (store.State().Msgs, store.State().LastSeq));
        Assert.Equal([7UL], store.State().Lost!.Msgs);
        Assert.Equal("payload-0008", S(Load(store, 8).Payload));
    }

    [Fact]
    public void A_damaged_block_header_is_reported_and_the_block_scanned()
    {
        var directory = CrashedWith(10);
        var file = BlockFiles(directory)[^1];
        var bytes = File.ReadAllBytes(file);
        bytes[2] ^= 0xFF;
        File.WriteAllBytes(file, bytes);

        var store = OpenAgain(directory, options: OneBlock);
        Assert.Equal(StoreWarningKind.CorruptBlockHeader, Assert.Single(store.Warnings).Kind);
        Assert.Equal(10UL, store.State().Msgs);
        Assert.Equal(11UL, PutOk(store, "foo"));
    }

    [Fact]
    public void A_flipped_bit_in_an_indexed_block_is_detected_on_read_and_never_served()
    {
        var (store, directory) = OpenNew();
        for (var i = 1; i <= 200; i++)
        {
            PutOk(store, $"s.{i % 3}", $"payload-{i:D4}");
        }

        store.Stop();
        FlipBitIn(directory, "payload-0050");
        FlipBitIn(directory, "payload-0060");

        var reopened = OpenAgain(directory);
        Assert.Empty(reopened.Warnings); // the index is trusted: no message bytes are read on open
        Assert.Equal(200UL, reopened.State().Msgs);

        Assert.Equal(LoadStatus.Corrupt, reopened.LoadMessage(50).Status);
        var warning = Assert.Single(reopened.Warnings);
        Assert.Equal((StoreWarningKind.CorruptOnRead, 50UL), (warning.Kind, warning.Sequence));
        Assert.Equal(LoadStatus.NotFound, reopened.LoadMessage(50).Status);

        // Searches step over a damaged record to the next good one.
        Assert.Equal(61UL, reopened.LoadNextMessage(null, 60).Message!.Sequence);
        var state = reopened.State();
        Assert.Equal([50UL, 60UL], state.Lost!.Msgs);
        Assert.Equal((198UL, 2UL), (state.Msgs, state.NumDeleted));
        Assert.Equal("payload-0049", S(Load(reopened, 49).Payload));
        reopened.Flush();
        reopened.Stop();

        var again = OpenAgain(directory);
        Assert.Equal(LoadStatus.NotFound, again.LoadMessage(50).Status);
        Assert.Equal(198UL, again.State().Msgs);
    }
}
