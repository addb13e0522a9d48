using System.Text.RegularExpressions;
using Courier.Storage.FileStorage;
using Xunit;

namespace Courier.Storage.Tests;

/// <summary>
/// Preallocated blocks: a store that fills blocks appends into a block file prepared ahead (zeros to the
/// block size, synced), cuts it back to its records when it is sealed or stopped, and after a crash
/// treats the zero tail as unwritten space, never as damage.
/// </summary>
public sealed partial class FileStoreTests
{
    private const int PreallocatedBlock = 16 * 1024; // bytes
    private static readonly FileStoreOptions InlineSpare = new() { BlockSize = PreallocatedBlock, PreallocateInline = true };

    /// <summary>Appends 100-byte payloads in batches of 10 (one flush each) until the store has <paramref name="blocks"/> block files.</summary>
    private static ulong FillBlocks(FileStore store, int blocks, int pauseMs = 0)
    {
        ulong last = 0;
        for (var batch = 0; store.BlockCount < blocks; batch++)
        {
            Assert.True(batch < 10_000, "the blocks never filled");
            for (var i = 0; i < 10; i++)
            {
                last = PutOk(store, "foo", Payload(last + 1));
            }

            store.Flush();
            if (pauseMs > 0)
            {
                Thread.Sleep(pauseMs);
            }
        }

        return last;
    }

    private static string Payload(ulong seq) => $"payload-{seq:D8}-" + new string('x', 83);

    private static void AssertAllThere(IStreamStore store, ulong last)
    {
        for (ulong seq = 1; seq <= last; seq++)
        {
            Assert.Equal(Payload(seq), S(Load(store, seq).Payload));
        }
    }

    /// <summary>A stopped store reopens with no warning, every block from its index, every message there.</summary>
    private void AssertCleanRestart(string directory, FileStoreOptions options, ulong last)
    {
        var reopened = OpenAgain(directory, options: options);
        Assert.Empty(reopened.Warnings);
        Assert.Equal(0, reopened.Recovery.BlocksScanned);
        AssertAllThere(reopened, last);
    }

    [Fact]
    public void A_store_that_fills_blocks_appends_into_prepared_block_files_and_cuts_them_back()
    {
        var (store, directory) = OpenNew(options: InlineSpare);
        var last = FillBlocks(store, blocks: 5);

        // Block 1 was extended ahead in place; from its half-way point on, each block's successor was prepared ahead.
        var files = BlockFiles(directory);
        Assert.Equal(5, files.Length);
        Assert.Equal(4, store.SparesTaken); // blocks 2 to 5
        Assert.Equal(PreallocatedBlock, new FileInfo(files[^1]).Length); // the write block, preallocated
        var spare = Path.Combine(directory, "spare.tmp");
        Assert.False(File.Exists(spare)); // taken by the rollover; the next one comes at half-way
        while (store.BlockCount == 5 && !File.Exists(spare))
        {
            last = PutOk(store, "foo", Payload(last + 1));
        }

        Assert.Equal(5, store.BlockCount);
        Assert.Equal(PreallocatedBlock, new FileInfo(spare).Length);
        Assert.True(new FileInfo(files[^1]).Length == PreallocatedBlock); // still the same write block
        foreach (var sealedBlock in files[..^1])
        {
            var bytes = File.ReadAllBytes(sealedBlock);
            Assert.True(bytes.Length < PreallocatedBlock, $"{Path.GetFileName(sealedBlock)}: {bytes.Length} bytes, not cut back");
            Assert.NotEqual(0, bytes[^4..].Max() | bytes[^8..^4].Max()); // ends in a record's checksum, not in zeros
        }

        AssertAllThere(store, last);
        store.Stop();

        Assert.False(File.Exists(Path.Combine(directory, "spare.tmp")));
        Assert.All(BlockFiles(directory), f => Assert.True(new FileInfo(f).Length < PreallocatedBlock));
        AssertCleanRestart(directory, InlineSpare, last);
    }

    [Fact]
    public void A_block_is_extended_ahead_of_its_records_in_steps_and_cut_back_on_stop()
    {
        const int Step = 64 * 1024; // FileStore's ExtendStep
        var options = InlineSpare with { BlockSize = 1024 * 1024 };
        var (store, directory) = OpenNew(options: options);
        var block = BlockFiles(directory).Single();
        PutOk(store, "foo", Payload(1UL));
        store.Flush();
        Assert.Equal(Step, new FileInfo(block).Length); // a small stream's first flush: one step of zeros ahead

        ulong last = 1;
        while (last < 700) // about 90 KB of records: past the first step
        {
            last = PutOk(store, "foo", Payload(last + 1));
            if (last % 10 == 0)
            {
                store.Flush();
            }
        }

        store.Flush();
        var length = new FileInfo(block).Length;
        Assert.True(length > Step && length % Step == 0, $"{length} bytes");
        AssertAllThere(store, last);
        store.Stop();

        Assert.True(new FileInfo(block).Length < length - Step / 2); // cut back to the records
        AssertCleanRestart(directory, options, last);
    }

    [Fact]
    public void After_a_crash_the_zeros_ahead_of_an_extended_block_are_no_damage()
    {
        var options = InlineSpare with { BlockSize = 1024 * 1024 };
        var (store, directory) = OpenNew(options: options);
        ulong last = 0;
        for (var i = 0; i < 30; i++)
        {
            last = PutOk(store, "foo", Payload(last + 1));
            store.Flush();
        }

        Assert.Equal(64 * 1024, new FileInfo(BlockFiles(directory).Single()).Length);

        // Abandoned without a stop.
        var reopened = OpenAgain(directory, options: options);
        Assert.Empty(reopened.Warnings);
        Assert.Null(reopened.State().Lost);
        AssertAllThere(reopened, last);
        Assert.True(new FileInfo(BlockFiles(directory).Single()).Length < 64 * 1024);
        Assert.Equal(last + 1, PutOk(reopened, "foo", Payload(last + 1)));
    }

    [Fact]
    public void Without_preallocation_no_block_file_is_prepared()
    {
        var (store, directory) = OpenNew(options: InlineSpare with { Preallocate = false });
        var last = FillBlocks(store, blocks: 5);

        Assert.False(File.Exists(Path.Combine(directory, "spare.tmp")));
        var bytes = File.ReadAllBytes(BlockFiles(directory)[^1]);
        Assert.NotEqual(0, bytes[^4..].Max() | bytes[^8..^4].Max()); // the write block ends in its last record, nothing ahead
        Assert.All(BlockFiles(directory), f => Assert.True(new FileInfo(f).Length < PreallocatedBlock));
        AssertAllThere(store, last);
    }

    [Fact]
    public void After_a_crash_the_zero_tail_of_a_preallocated_write_block_is_no_damage()
    {
        var (store, directory) = OpenNew(options: InlineSpare);
        var last = FillBlocks(store, blocks: 4);
        Assert.Equal(PreallocatedBlock, new FileInfo(BlockFiles(directory)[^1]).Length);

        // Abandoned without a stop: the write block keeps its zero tail and has no index.
        var reopened = OpenAgain(directory, options: InlineSpare);
        Assert.Empty(reopened.Warnings);
        Assert.Null(reopened.State().Lost);
        AssertAllThere(reopened, last);
        Assert.True(new FileInfo(BlockFiles(directory)[^1]).Length < PreallocatedBlock); // cut back to its records
        Assert.False(File.Exists(Path.Combine(directory, "spare.tmp"))); // a temp file: recovery removed it

        Assert.Equal(last + 1, PutOk(reopened, "foo", Payload(last + 1)));
        reopened.Stop();
        var clean = OpenAgain(directory, options: InlineSpare);
        Assert.Empty(clean.Warnings);
        AssertAllThere(clean, last + 1);
    }

    [Fact]
    public void A_spare_renamed_into_place_by_a_rollover_that_never_flushed_is_removed_quietly()
    {
        var (store, directory) = OpenNew(options: InlineSpare);
        var last = FillBlocks(store, blocks: 3);
        store.Stop();
        var next = Path.Combine(directory, $"{BlockFiles(directory).Length + 1:D10}.blk");
        File.WriteAllBytes(next, new byte[PreallocatedBlock]); // what such a crash leaves: the spare's zeros

        var reopened = OpenAgain(directory, options: InlineSpare);
        Assert.Empty(reopened.Warnings);
        Assert.False(File.Exists(next));
        AssertAllThere(reopened, last);
        Assert.Equal(last + 1, PutOk(reopened, "foo", Payload(last + 1)));
    }

    [Fact]
    public void A_torn_record_in_a_preallocated_block_is_a_torn_tail_of_its_own_bytes()
    {
        var (store, directory) = OpenNew(options: InlineSpare);
        var last = FillBlocks(store, blocks: 4);
        var write = BlockFiles(directory)[^1];
        var bytes = File.ReadAllBytes(write);
        Assert.Equal(PreallocatedBlock, bytes.Length);
        var end = bytes.AsSpan().LastIndexOfAnyExcept((byte)0) + 1;
        bytes.AsSpan(end + 8, 20).Fill(0xAB); // part of a record that the power cut tore
        File.WriteAllBytes(write, bytes);

        var reopened = OpenAgain(directory, options: InlineSpare);
        var warning = Assert.Single(reopened.Warnings);
        Assert.Equal(StoreWarningKind.TruncatedTail, warning.Kind);
        var cut = int.Parse(Regex.Match(warning.Detail, @"(\d+) bytes of partial record").Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
        Assert.InRange(cut, 20, 40); // the torn bytes (and the few zeros before them), not the whole zero tail
        AssertAllThere(reopened, last);
        Assert.Equal(last + 1, PutOk(reopened, "foo", Payload(last + 1)));
    }

    [Fact]
    public void The_spare_is_prepared_in_the_background_and_gone_with_the_store()
    {
        var (store, directory) = OpenNew(options: new FileStoreOptions { BlockSize = PreallocatedBlock });
        ulong last = 0;
        for (var blocks = 3; blocks < 40 && store.SparesTaken == 0; blocks++)
        {
            last = FillBlocks(store, blocks, pauseMs: 5);
        }

        Assert.True(store.SparesTaken > 0, "no rollover took a spare prepared in the background");
        AssertAllThere(store, last);

        // Past half of the write block the next spare is being prepared; deleting the store waits for it
        // and leaves nothing behind.
        var spare = Path.Combine(directory, "spare.tmp");
        for (var i = 0; i < 200 && !File.Exists(spare); i++)
        {
            last = PutOk(store, "foo", Payload(last + 1));
        }

        Assert.True(File.Exists(spare));
        store.Delete();
        Assert.False(Directory.Exists(directory));
        Thread.Sleep(100);
        Assert.False(Directory.Exists(directory));
    }
}
