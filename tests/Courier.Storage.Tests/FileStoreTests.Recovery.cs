using Courier.Storage.FileStorage;
using Xunit;

namespace Courier.Storage.Tests;

/// <summary>FileStore restart: indexes, scans, many blocks, dead blocks and their tombstones.</summary>
public sealed partial class FileStoreTests
{
    private static void AssertSameContents(IStreamStore expected, IStreamStore actual)
    {
        var a = expected.State();
        var b = actual.State();
        // The same messages count for more bytes in a file store than in a memory store (as nats-server's).
        var bytes = a.Bytes - (a.Msgs * IStreamStore.CountedOverhead(expected.Type)) + (a.Msgs * IStreamStore.CountedOverhead(actual.Type));
        Assert.Equal(a with { Lost = null, Bytes = bytes }, b with { Lost = null });
        Assert.Equal(expected.DeletedSequences(), actual.DeletedSequences());
        Assert.Equal(expected.SubjectsState(null).OrderBy(kv => kv.Key), actual.SubjectsState(null).OrderBy(kv => kv.Key));
        for (var seq = a.FirstSeq; seq <= a.LastSeq; seq++)
        {
            var x = expected.LoadMessage(seq);
            var y = actual.LoadMessage(seq);
            Assert.Equal(x.Status, y.Status);
            if (x.Found)
            {
                Assert.Equal(x.Message!.Subject, y.Message!.Subject);
                Assert.Equal(x.Message.Timestamp, y.Message.Timestamp);
                Assert.Equal(x.Message.Payload.ToArray(), y.Message.Payload.ToArray());
                Assert.Equal(x.Message.Headers.ToArray(), y.Message.Headers.ToArray());
            }
        }
    }

    /// <summary>500 messages over many 2 KiB blocks, with interior deletes and a subject purge.</summary>
    private (FileStore Store, string Directory) Populate(FileStoreOptions? options = null)
    {
        var (store, directory) = OpenNew(options: options);
        for (var i = 1; i <= 500; i++)
        {
            Assert.True(store.Append(B($"s.{i % 7}"), i % 5 == 0 ? B("NATS/1.0\r\nx: y\r\n\r\n") : [], B($"payload-{i}"), 1_000 + i).Ok);
        }

        for (ulong seq = 10; seq <= 500; seq += 10)
        {
            store.RemoveMessage(seq);
        }

        store.Purge("s.3", 0, 0);
        store.Flush();
        return (store, directory);
    }

    [Fact]
    public void Restart_recovers_the_same_sequences_payloads_deletes_and_state_across_many_blocks()
    {
        var (store, directory) = Populate();
        Assert.True(store.BlockCount > 10, $"only {store.BlockCount} blocks");
        var reference = StreamStores.CreateMemory(new StoreConfig());
        Track(reference);
        for (ulong seq = 1; seq <= 500; seq++)
        {
            var r = store.LoadMessage(seq);
            if (r.Found)
            {
                while (reference.State().LastSeq + 1 < seq)
                {
                    reference.Append(B("gap"), [], [], 1);
                    reference.RemoveMessage(reference.State().LastSeq);
                }

                reference.Append(B(r.Message!.Subject), r.Message.Headers.Span, r.Message.Payload.Span, r.Message.Timestamp);
            }
        }

        store.Stop();
        var reopened = OpenAgain(directory);
        Assert.Empty(reopened.Warnings);
        var state = reopened.State();
        Assert.Equal(500UL - 50 - 64, state.Msgs);
        Assert.Equal(500UL, state.LastSeq);
        for (ulong seq = 1; seq <= 500; seq++)
        {
            var expected = reference.LoadMessage(seq);
            var actual = reopened.LoadMessage(seq);
            Assert.Equal(expected.Found, actual.Found);
            if (expected.Found)
            {
                Assert.Equal(S(expected.Message!.Payload), S(actual.Message!.Payload));
                Assert.Equal(expected.Message.Subject, actual.Message.Subject);
                Assert.Equal(S(expected.Message.Headers), S(actual.Message.Headers));
                Assert.Equal(expected.Message.Timestamp, actual.Message.Timestamp);
            }
        }

        Assert.Equal(501UL, reopened.Append(B("s.1"), [], B("next"), 0).Sequence);
    }

    [Fact]
    public void A_clean_restart_loads_every_block_from_its_index_without_reading_messages()
    {
        var (store, directory) = Populate();
        var blocks = store.BlockCount;
        store.Stop();
        Assert.Equal(blocks, IndexFiles(directory).Length);

        var reopened = OpenAgain(directory);
        Assert.Equal(blocks, reopened.Recovery.BlocksFromIndex);
        Assert.Equal(0, reopened.Recovery.BlocksScanned);
        Assert.Equal(0, reopened.Recovery.BytesScanned);
        Assert.Equal(500UL, reopened.State().LastSeq);
    }

    [Fact]
    public void A_restart_after_a_crash_scans_only_what_the_indexes_do_not_cover()
    {
        var (crashed, directory) = Populate();
        var blocks = crashed.BlockCount;

        var reopened = OpenAgain(directory); // the first instance is abandoned, not stopped
        Assert.Equal(blocks - 1, reopened.Recovery.BlocksFromIndex);
        Assert.Equal(1, reopened.Recovery.BlocksScanned);
        Assert.InRange(reopened.Recovery.BytesScanned, 1, SmallBlocks + 200);
        AssertSameContents(crashed, reopened);
    }

    [Fact]
    public void Missing_indexes_fall_back_to_scanning_the_blocks()
    {
        var (store, directory) = Populate();
        var blocks = store.BlockCount;
        store.Stop();
        var before = OpenAgain(directory);
        before.Stop();
        foreach (var index in IndexFiles(directory))
        {
            File.Delete(index);
        }

        var reopened = OpenAgain(directory);
        Assert.Equal(blocks, reopened.Recovery.BlocksScanned);
        Assert.Equal(0, reopened.Recovery.BlocksFromIndex);
        Assert.Empty(reopened.Warnings);
        var reference = OpenAgain(CopyOf(directory));
        AssertSameContents(reference, reopened);
    }

    [Fact]
    public void A_corrupt_index_is_reported_and_its_block_scanned()
    {
        var (store, directory) = Populate();
        store.Stop();
        var reference = OpenAgain(CopyOf(directory));
        var index = IndexFiles(directory)[3];
        var bytes = File.ReadAllBytes(index);
        bytes[bytes.Length / 2] ^= 0x10;
        File.WriteAllBytes(index, bytes);

        var reopened = OpenAgain(directory);
        var warning = Assert.Single(reopened.Warnings);
        Assert.Equal(StoreWarningKind.CorruptIndex, warning.Kind);
        Assert.Equal(1, reopened.Recovery.BlocksScanned);
        AssertSameContents(reference, reopened);
    }

    [Fact]
    public void Verify_on_open_scans_every_block_and_ignores_indexes()
    {
        var (store, directory) = Populate();
        var blocks = store.BlockCount;
        store.Stop();
        var reopened = OpenAgain(directory, options: new FileStoreOptions { BlockSize = SmallBlocks, VerifyOnOpen = true });
        Assert.Equal(blocks, reopened.Recovery.BlocksScanned);
        Assert.Equal(0, reopened.Recovery.BlocksFromIndex);
        Assert.Equal(500UL - 50 - 64, reopened.State().Msgs);
    }

    [Fact]
    public void Blocks_left_without_messages_are_deleted()
    {
        var (store, directory) = OpenNew(new StoreConfig { MaxMsgs = 20 });
        for (var i = 0; i < 2000; i++)
        {
            store.Append(B("foo"), [], B($"payload-{i}"), 0);
            if (i % 100 == 99)
            {
                store.Flush();
            }
        }

        store.Flush();
        Assert.InRange(BlockFiles(directory).Length, 1, 3);
        Assert.Equal(store.BlockCount, BlockFiles(directory).Length);
        store.Stop();
        var reopened = OpenAgain(directory, new StoreConfig { MaxMsgs = 20 });
        var state = reopened.State();
        Assert.Equal((20UL, 1981UL, 2000UL), (state.Msgs, state.FirstSeq, state.LastSeq));
        Assert.Equal("payload-1999", S(reopened.LoadLastMessage("foo").Message!.Payload));
    }

    [Theory]
    [InlineData(5)]   // few tombstones: carried into the write block when their block goes
    [InlineData(200)] // many: their block stays until the messages they delete are gone
    public void Tombstones_outlive_the_block_that_held_them(int deletes)
    {
        var (store, directory) = OpenNew();
        PutOk(store, "pinned", "keeps block 1 alive");
        for (var i = 0; i < 600; i++)
        {
            PutOk(store, "x", $"m{i}");
        }

        // Interior deletes of old messages: tombstones land in the current write block.
        for (var seq = 2UL; seq < 2UL + (ulong)deletes; seq++)
        {
            store.RemoveMessage(seq);
        }

        var tombstoneEnd = store.State().LastSeq;
        for (var i = 0; i < 600; i++)
        {
            PutOk(store, "y", $"n{i}");
        }

        // Everything appended after the deletes' block goes too, emptying that block.
        store.Purge("x", 0, (ulong)(600 - deletes - 5));
        store.Purge("y", 0, 0);
        store.Flush();
        var before = store.State();
        store.Stop();

        var reopened = OpenAgain(directory);
        var after = reopened.State();
        Assert.Equal(before with { Lost = null }, after with { Lost = null });
        for (var seq = 2UL; seq < 2UL + (ulong)deletes; seq++)
        {
            Assert.Equal(LoadStatus.NotFound, reopened.LoadMessage(seq).Status);
        }

        Assert.Equal("keeps block 1 alive", S(Load(reopened, 1).Payload));
        Assert.True(tombstoneEnd > 0);
    }

    [Fact]
    public void The_last_sequence_survives_when_every_message_and_block_is_gone()
    {
        var (store, directory) = OpenNew(new StoreConfig { MaxMsgs = 1 });
        for (var i = 0; i < 300; i++)
        {
            PutOk(store, "foo", $"payload-{i}");
        }

        store.RemoveMessage(300);
        store.Flush();
        store.Stop();
        var reopened = OpenAgain(directory, new StoreConfig { MaxMsgs = 1 });
        var state = reopened.State();
        Assert.Equal((0UL, 301UL, 300UL), (state.Msgs, state.FirstSeq, state.LastSeq));
        Assert.Equal(301UL, PutOk(reopened, "foo"));
    }

    [Fact]
    public void Blocks_made_obsolete_by_an_interrupted_purge_are_ignored()
    {
        var (store, directory) = OpenNew();
        for (var i = 0; i < 100; i++)
        {
            PutOk(store, "foo", $"payload-{i}");
        }

        store.Stop();
        var backup = CopyOf(directory);
        var reopened = OpenAgain(directory);
        Assert.Equal(100UL, reopened.Purge());
        reopened.Stop();

        // As if the purge crashed after writing its reset block but before deleting the old ones.
        foreach (var file in Directory.GetFiles(backup, "*.blk"))
        {
            File.Copy(file, Path.Combine(directory, Path.GetFileName(file)));
        }

        var recovered = OpenAgain(directory);
        var state = recovered.State();
        Assert.Equal((0UL, 101UL, 100UL), (state.Msgs, state.FirstSeq, state.LastSeq));
        Assert.Single(BlockFiles(directory));
    }

    [Fact]
    public void Erase_overwrites_the_message_bytes_on_disk()
    {
        var (store, directory) = OpenNew();
        PutOk(store, "foo", "first");
        PutOk(store, "foo", "SECRET-PAYLOAD-12345");
        PutOk(store, "foo", "third");
        store.Flush();
        Assert.True(store.EraseMessage(2));
        store.Stop();

        var secret = B("SECRET-PAYLOAD-12345");
        foreach (var file in Directory.GetFiles(directory))
        {
            Assert.Equal(-1, File.ReadAllBytes(file).AsSpan().IndexOf(secret));
        }

        var reopened = OpenAgain(directory);
        Assert.Equal(LoadStatus.NotFound, reopened.LoadMessage(2).Status);
        Assert.Equal((2UL, 3UL), (reopened.State().Msgs, reopened.State().LastSeq));
        Assert.Empty(reopened.Warnings);
    }

    /// <summary>A copy of a store directory (a second store can then open the same contents).</summary>
    private string CopyOf(string directory)
    {
        var copy = NewDirectory();
        Directory.CreateDirectory(copy);
        foreach (var file in Directory.GetFiles(directory))
        {
            File.Copy(file, Path.Combine(copy, Path.GetFileName(file)));
        }

        return copy;
    }
}
