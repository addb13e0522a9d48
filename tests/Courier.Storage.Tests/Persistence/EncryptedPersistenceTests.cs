using System.Text;
using Courier.Raft;
using Courier.Storage.Persistence;
using Courier.Storage.Raft;
using Xunit;

namespace Courier.Storage.Tests.Persistence;

/// <summary>
/// Encryption at rest beyond streams: the journal (a FileStore), the snapshot store's files, a Raft
/// member's log and snapshot. Each test reads the raw files for the secret, restarts with the key,
/// and is refused with a wrong one.
/// </summary>
public sealed class EncryptedPersistenceTests : IDisposable
{
    private const string Secret = "TOPSECRET-consumer-state";
    private static readonly StoreEncryption Current = new("current-key", StoreCipher.ChaCha);
    private static readonly StoreEncryption Wrong = new("wrong-key", StoreCipher.ChaCha);

    private readonly TempDirectory _temp = new();

    public void Dispose() => _temp.Dispose();

    private static void AssertNoSecret(string directory)
    {
        var files = Directory.GetFiles(directory, "*", SearchOption.AllDirectories);
        Assert.NotEmpty(files);
        foreach (var file in files)
        {
            Assert.True(File.ReadAllBytes(file).AsSpan().IndexOf(Encoding.UTF8.GetBytes("TOPSECRET")) < 0, $"plaintext in {file}");
        }
    }

    [Fact]
    public void Journal_events_are_sealed_and_replay_after_a_restart_with_the_key()
    {
        var dir = Path.Combine(_temp.Path, "journal");
        var options = new FileStoreOptions { Encryption = Current };
        using (var journal = FileJournalStore.Open(dir, options))
        {
            var rejections = new Exception?[1];
            journal.WriteMessages([new JournalWrite(new JournalRecord("consumer-" + Secret, 1, Encoding.UTF8.GetBytes(Secret), "m"))], rejections);
            Assert.Null(rejections[0]);
        }

        AssertNoSecret(dir);
        using (var journal = FileJournalStore.Open(dir, options))
        {
            var replayed = new List<string>();
            journal.ReplayMessages("consumer-" + Secret, 1, long.MaxValue, long.MaxValue, r => replayed.Add(Encoding.UTF8.GetString(r.Payload.Span)));
            Assert.Equal([Secret], replayed);
        }

        Assert.Throws<StoreKeyException>(() => FileJournalStore.Open(dir, new FileStoreOptions { Encryption = Wrong }).Dispose());
    }

    [Fact]
    public void Snapshots_are_sealed_rotated_to_the_current_key_and_refused_with_a_wrong_one()
    {
        var dir = Path.Combine(_temp.Path, "snapshots");
        var old = new StoreEncryption("old-key", StoreCipher.Aes);
        using (var store = FileSnapshotStore.Open(dir, old))
        {
            store.Save(new SnapshotMetadata("c1", 3, new DateTime(2024, 1, 1, 0, 0, 0, DateTimeKind.Utc)), "m", Encoding.UTF8.GetBytes(Secret));
        }

        AssertNoSecret(dir);
        Assert.Throws<StoreKeyException>(() => FileSnapshotStore.Open(dir, Current));
        Assert.Throws<StoreKeyException>(() => FileSnapshotStore.Open(dir));

        // prev_key: the snapshot opens, and is sealed with the new key at once.
        using (var rotating = FileSnapshotStore.Open(dir, new StoreEncryption("current-key", StoreCipher.ChaCha, previousKey: "old-key")))
        {
            Assert.Equal(Secret, Encoding.UTF8.GetString(rotating.Load("c1", SnapshotSelectionCriteria.Latest)!.Payload.Span));
        }

        using var current = FileSnapshotStore.Open(dir, Current);
        Assert.Equal(Secret, Encoding.UTF8.GetString(current.Load("c1", SnapshotSelectionCriteria.Latest)!.Payload.Span));
        AssertNoSecret(dir);
    }

    [Fact]
    public void Raft_log_entries_and_snapshot_are_sealed_and_recovered_with_the_key()
    {
        var dir = Path.Combine(_temp.Path, "_raft", "S-group");
        var entries = new[] { new Entry(1, 1, EntryType.Normal, Encoding.UTF8.GetBytes(Secret + "-1")), new Entry(1, 2, EntryType.Normal, Encoding.UTF8.GetBytes(Secret + "-2")) };
        using (var store = RaftLogStore.Open(dir, Current))
        {
            store.Save(new Ready { HardState = new HardState(1, 1, 2), Entries = entries });
            store.SaveSnapshot(new Snapshot(new SnapshotMeta(1, 1, new Configuration([1], [])), Encoding.UTF8.GetBytes(Secret + "-snap")));
        }

        AssertNoSecret(dir);
        using (var store = RaftLogStore.Open(dir, Current))
        {
            var state = store.Load()!;
            Assert.Equal(Secret + "-snap", Encoding.UTF8.GetString(state.Snapshot!.Data.Span));
            Assert.Equal(Secret + "-2", Encoding.UTF8.GetString(Assert.Single(state.Entries).Data.Span));
        }

        Assert.Throws<StoreKeyException>(() => RaftLogStore.Open(dir, Wrong).Dispose());
    }
}
