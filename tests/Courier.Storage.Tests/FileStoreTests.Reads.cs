using Xunit;

namespace Courier.Storage.Tests;

/// <summary>Reads from the files: lone reads (one record) and sequential reads (64 KiB windows) mixed.</summary>
public sealed partial class FileStoreTests
{
    [Fact]
    public void Random_sequential_and_interleaved_reads_from_the_files_return_every_record()
    {
        const int Count = 3000;
        var options = new FileStoreOptions { BlockSize = 256 * 1024 }; // several blocks, each several windows long
        var (store, directory) = OpenNew(options: options);
        for (var i = 1; i <= Count; i++)
        {
            Assert.True(store.Append(B($"r.{i % 37}"), default, Payload(i)).Ok);
        }

        store.Stop();
        var reopened = OpenAgain(directory, options: options);
        var random = new Random(7);
        var order = Enumerable.Range(1, Count).ToArray();
        random.Shuffle(order);
        foreach (var seq in order)
        {
            AssertRecord(reopened, (ulong)seq);
        }

        // A sequential reader and a random one taking turns: neither may see the other's bytes.
        for (var seq = 1; seq <= Count; seq++)
        {
            AssertRecord(reopened, (ulong)seq);
            AssertRecord(reopened, (ulong)order[seq - 1]);
        }

        for (var s = 0; s < 37; s++)
        {
            var last = reopened.LoadLastMessage($"r.{s}");
            Assert.True(last.Found);
            var expected = (ulong)(Count - ((Count - s) % 37));
            Assert.Equal(expected, last.Message!.Sequence);
            Assert.Equal(Payload((int)expected), last.Message.Payload.ToArray());
        }

        Assert.Equal((ulong)Count, reopened.LoadLastMessage("r.*").Message!.Sequence);
        Assert.Equal(LoadStatus.NotFound, reopened.LoadLastMessage("r.99").Status);

        static void AssertRecord(IStreamStore store, ulong seq)
        {
            var loaded = store.LoadMessage(seq);
            Assert.True(loaded.Found, $"seq {seq}: {loaded.Status}");
            Assert.Equal($"r.{seq % 37}", loaded.Message!.Subject);
            Assert.Equal(Payload((int)seq), loaded.Message.Payload.ToArray());
        }
    }

    /// <summary>A payload of 1-300 bytes that names its sequence.</summary>
    private static byte[] Payload(int seq)
    {
        var payload = new byte[1 + (seq * 7919 % 300)];
        for (var i = 0; i < payload.Length; i++)
        {
            payload[i] = (byte)(seq + i);
        }

        return payload;
    }
}
