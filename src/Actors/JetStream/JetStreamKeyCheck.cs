using Courier.Storage;
using Courier.Storage.Persistence;

namespace Courier.Actors.JetStream;

/// <summary>
/// Before JetStream starts: every stream, consumer, journal, snapshot and Raft log under
/// <c>&lt;store_dir&gt;/jetstream</c> must open with the configured key (and <c>prev_key</c>), so a wrong
/// or missing key stops the start with nats-server's error instead of leaving streams out (nats-server
/// 2.9.10 logs <c>Error decrypting our stream metafile: ...</c> and starts without the stream; issue 37
/// asks for a stop, which also keeps a client from creating a stream over the one it cannot read).
/// Files sealed under <c>prev_key</c>, and meta files written without a key, are sealed with the current
/// key on the way (the stores themselves are encrypted or re-keyed when they open).
/// </summary>
internal static class JetStreamKeyCheck
{
    private const string RaftDirectory = "_raft";
    private const string MetaFileName = "meta.json";

    /// <summary>Checks the JetStream directory <paramref name="jetStreamDirectory"/> (<c>&lt;store_dir&gt;/jetstream</c>).</summary>
    /// <exception cref="StoreKeyException">With the text to stop the start with.</exception>
    public static void Verify(string jetStreamDirectory, StoreEncryption? encryption)
    {
        if (!Directory.Exists(jetStreamDirectory))
        {
            return;
        }

        foreach (var accountDirectory in Directory.EnumerateDirectories(jetStreamDirectory))
        {
            var account = Path.GetFileName(accountDirectory);
            if (account == RaftDirectory)
            {
                foreach (var group in Directory.EnumerateDirectories(accountDirectory))
                {
                    // RaftLogStore's log and its context (the group's directory name).
                    StreamStores.VerifyKey(Path.Combine(group, "log"), encryption, "raft:" + Path.GetFileName(group));
                }

                continue;
            }

            var meta = new MetaFiles(encryption, account);
            var streams = Path.Combine(accountDirectory, "streams");
            if (Directory.Exists(streams))
            {
                foreach (var streamDirectory in Directory.EnumerateDirectories(streams))
                {
                    VerifyStream(meta, streamDirectory);
                }
            }

            StreamStores.VerifyKey(Path.Combine(accountDirectory, "journal"), encryption, "journal");
            var snapshots = Path.Combine(accountDirectory, "snapshots");
            if (Directory.Exists(snapshots))
            {
                FileSnapshotStore.Open(snapshots, encryption).Dispose();
            }
        }
    }

    /// <summary>False when the file is damaged (its checksum fails): not a key problem, so not a reason to refuse the start.</summary>
    private static bool Readable(Func<byte[]> read)
    {
        try
        {
            _ = read();
            return true;
        }
        catch (InvalidDataException)
        {
            return false;
        }
    }

    private static void VerifyStream(MetaFiles meta, string directory)
    {
        var stream = Path.GetFileName(directory);
        var file = Path.Combine(directory, MetaFileName);
        if (!File.Exists(file))
        {
            return;
        }

        // A stream written without a key is encrypted now, as nats-server does ("Encrypting stream"): its meta
        // file here, its blocks when its store opens.
        if (!Readable(() => meta.Read(file, meta.StreamContext(stream), "stream")))
        {
            return; // damaged: the stream's recovery skips it with nats-server's warning
        }

        StreamStores.VerifyKey(directory, meta.Encryption, meta.StreamContext(stream));
        var consumers = Path.Combine(directory, "obs");
        if (!Directory.Exists(consumers))
        {
            return;
        }

        foreach (var consumer in Directory.EnumerateDirectories(consumers))
        {
            var consumerMeta = Path.Combine(consumer, MetaFileName);
            if (File.Exists(consumerMeta))
            {
                _ = Readable(() => meta.Read(consumerMeta, meta.ConsumerContext(stream, Path.GetFileName(consumer)), "consumer")); // damaged: its recovery skips it
            }
        }
    }
}
