using System.Text;
using Courier.Protocols.JetStream;
using Courier.Storage.FileStorage;
using Xunit;

namespace Courier.Storage.Tests;

/// <summary>
/// Encryption at rest in the FileStore: the whole store contract again on an encrypted store (small
/// blocks, real restarts), then what only encryption has: no plaintext in any file, the key file, a
/// wrong or missing key refused, rotation through a previous key, damage still detected.
/// </summary>
public sealed class EncryptedFileStoreTests : StreamStoreTests
{
    private const long SmallBlocks = 2048; // bytes: most tests cross block boundaries
    private const string Key = "s3cr3t-key-for-tests";
    private const string Secret = "TOPSECRET-payload-7f3a";
    private const string SecretSubject = "orders.classified.alpha";

    private static readonly StoreEncryption ChaCha = new(Key, StoreCipher.ChaCha);

    private readonly TempDirectory _temp = new();
    private readonly Dictionary<IStreamStore, (string Directory, StoreConfig Config, FileStoreOptions Options)> _opened = [];
    private int _next;

    protected override StorageType Kind => StorageType.File;

    protected override IStreamStore CreateStore(StoreConfig config) =>
        Open(NewDirectory(), config, Options(ChaCha));

    protected override IStreamStore Reopen(IStreamStore store)
    {
        var (directory, config, options) = _opened[store];
        store.Stop();
        return Track(Open(directory, config, options));
    }

    public override void Dispose()
    {
        base.Dispose();
        _temp.Dispose();
    }

    private static FileStoreOptions Options(StoreEncryption? encryption) =>
        new() { BlockSize = SmallBlocks, PreallocateInline = true, Encryption = encryption };

    private string NewDirectory() => Path.Combine(_temp.Path, $"stream-{_next++}");

    private IStreamStore Open(string directory, StoreConfig config, FileStoreOptions options)
    {
        var store = StreamStores.OpenFile(directory, config, options);
        _opened[store] = (directory, config, options);
        return store;
    }

    private IStreamStore OpenAt(string directory, StoreEncryption? encryption) =>
        Track(Open(directory, new StoreConfig { Name = "TEST" }, Options(encryption)));

    /// <summary>Writes messages with the secret subject and payload (several blocks, some deleted and erased), then stops the store.</summary>
    private static void FillAndStop(IStreamStore store, int count = 60)
    {
        for (var i = 0; i < count; i++)
        {
            Assert.True(store.Append(B(SecretSubject + "." + (i % 3)), B("Secret-Header: " + i), B(Secret + i), 0).Ok);
            if (i % 10 == 9)
            {
                store.Flush();
            }
        }

        store.Flush();
        Assert.True(store.RemoveMessage(5));
        Assert.True(store.EraseMessage(7));
        store.Stop();
    }

    private static void AssertNoPlaintext(string directory)
    {
        var files = Directory.GetFiles(directory, "*", SearchOption.AllDirectories);
        Assert.Contains(files, f => f.EndsWith(".blk", StringComparison.Ordinal));
        Assert.Contains(files, f => f.EndsWith(".idx", StringComparison.Ordinal));
        foreach (var file in files)
        {
            var bytes = File.ReadAllBytes(file);
            foreach (var needle in new[] { "TOPSECRET", "classified", "Secret-Header" })
            {
                Assert.True(bytes.AsSpan().IndexOf(Encoding.UTF8.GetBytes(needle)) < 0, $"{needle} in plaintext in {Path.GetFileName(file)}");
            }
        }
    }

    [Theory]
    [InlineData(StoreCipher.ChaCha)]
    [InlineData(StoreCipher.Aes)]
    public void Files_of_an_encrypted_store_hold_no_plaintext_and_a_restart_reads_everything(StoreCipher cipher)
    {
        var encryption = new StoreEncryption(Key, cipher);
        var directory = NewDirectory();
        FillAndStop(OpenAt(directory, encryption));

        AssertNoPlaintext(directory);
        Assert.True(File.Exists(Path.Combine(directory, "store.key")));

        var store = OpenAt(directory, encryption);
        Assert.Empty(store.Warnings);
        var state = store.State();
        Assert.Equal(60UL, state.LastSeq);
        Assert.Equal(58UL, state.Msgs);
        var m = Load(store, 60);
        Assert.Equal(SecretSubject + ".2", m.Subject);
        Assert.Equal(Secret + 59, S(m.Payload));
        Assert.Equal("Secret-Header: 59", S(m.Headers));
        Assert.Equal(LoadStatus.NotFound, store.LoadMessage(5).Status);
        Assert.Equal(LoadStatus.NotFound, store.LoadMessage(7).Status);
        Assert.Equal(Secret + 0, S(Load(store, 1).Payload));
        Assert.Equal(19UL, store.FilteredState(1, SecretSubject + ".1").Msgs);
    }

    [Fact]
    public void The_same_messages_without_a_key_are_plaintext_on_disk()
    {
        // The check above can fail: without encryption the raw files do show the payload.
        var directory = NewDirectory();
        FillAndStop(OpenAt(directory, encryption: null));
        var blocks = Directory.GetFiles(directory, "*.blk").Select(File.ReadAllBytes).ToList();
        Assert.Contains(blocks, b => b.AsSpan().IndexOf(Encoding.UTF8.GetBytes("TOPSECRET")) >= 0);
        Assert.False(File.Exists(Path.Combine(directory, "store.key")));
    }

    [Fact]
    public void A_wrong_key_fails_the_open_with_nats_servers_error()
    {
        var directory = NewDirectory();
        FillAndStop(OpenAt(directory, ChaCha));

        var e = Assert.Throws<StoreKeyException>(() => OpenAt(directory, new StoreEncryption("another-key", StoreCipher.ChaCha)));
        Assert.Equal("cipher: message authentication failed", e.Message);
        var aes = Assert.Throws<StoreKeyException>(() => OpenAt(directory, new StoreEncryption("another-key", StoreCipher.Aes)));
        Assert.Equal("chacha20poly1305: message authentication failed", aes.Message);

        // Nothing was changed by the failed opens: the right key still reads everything.
        Assert.Equal(58UL, OpenAt(directory, ChaCha).State().Msgs);
    }

    [Fact]
    public void An_encrypted_store_opened_without_a_key_fails_with_nats_servers_error()
    {
        var directory = NewDirectory();
        FillAndStop(OpenAt(directory, ChaCha));

        var e = Assert.Throws<StoreKeyException>(() => OpenAt(directory, encryption: null));
        Assert.Equal("encrypted store encountered with no main key", e.Message);
    }

    [Fact]
    public void A_plaintext_store_opened_with_a_key_is_encrypted_as_nats_server_does()
    {
        var directory = NewDirectory();
        FillAndStop(OpenAt(directory, encryption: null));
        // A conversion that crashed before its key file: its leftovers are discarded and it starts over.
        File.WriteAllBytes(Path.Combine(directory, "0000000001.sealed"), [1, 2, 3]);

        var store = OpenAt(directory, ChaCha);
        Assert.Empty(store.Warnings);
        Assert.Equal(58UL, store.State().Msgs);
        Assert.Equal(60UL, store.State().LastSeq);
        Assert.Equal(Secret + 59, S(Load(store, 60).Payload));
        Assert.Equal(LoadStatus.NotFound, store.LoadMessage(7).Status); // erased stays gone
        Assert.True(store.Append(B(SecretSubject + ".after"), [], B(Secret + "after"), 0).Ok);
        store.Stop();

        AssertNoPlaintext(directory);
        Assert.Empty(Directory.GetFiles(directory, "*.sealed"));
        Assert.Throws<StoreKeyException>(() => OpenAt(directory, encryption: null));
        var reopened = OpenAt(directory, ChaCha);
        Assert.Equal(59UL, reopened.State().Msgs);
        Assert.Equal(Secret + "after", S(Load(reopened, 61).Payload));
    }

    [Fact]
    public void An_encryption_that_crashed_after_its_key_file_is_finished_by_the_next_open()
    {
        // The state a crash leaves between the key file (the commit) and the renames: plaintext blocks and
        // index files, store.key, and the sealed blocks beside them.
        var plain = NewDirectory();
        FillAndStop(OpenAt(plain, encryption: null));
        var converted = NewDirectory();
        CopyDirectory(plain, converted);
        OpenAt(converted, ChaCha).Stop();
        foreach (var block in Directory.GetFiles(converted, "*.blk"))
        {
            File.Copy(block, Path.Combine(plain, Path.GetFileNameWithoutExtension(block) + ".sealed"));
        }

        File.Copy(Path.Combine(converted, "store.key"), Path.Combine(plain, "store.key"));

        var store = OpenAt(plain, ChaCha);
        Assert.Equal(58UL, store.State().Msgs);
        Assert.Equal(Secret + 59, S(Load(store, 60).Payload));
        store.Stop();
        AssertNoPlaintext(plain);
    }

    private static void CopyDirectory(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (var file in Directory.GetFiles(from))
        {
            File.Copy(file, Path.Combine(to, Path.GetFileName(file)));
        }
    }

    [Fact]
    public void Sealing_on_the_flush_path_allocates_nothing_per_message_beyond_the_plaintext_store()
    {
        static long Allocated(IStreamStore store)
        {
            var subject = B("orders.alloc");
            var payload = new byte[128];
            for (var i = 0; i < 1_000; i++) // warm-up: buffers grown, code compiled
            {
                store.Append(subject, [], payload, 0);
            }

            store.Flush();
            var before = GC.GetAllocatedBytesForCurrentThread();
            for (var batch = 0; batch < 40; batch++)
            {
                for (var i = 0; i < 50; i++)
                {
                    store.Append(subject, [], payload, 0);
                }

                store.Flush();
            }

            return GC.GetAllocatedBytesForCurrentThread() - before;
        }

        var options = new FileStoreOptions { BlockSize = 4 * 1024 * 1024, PreallocateInline = true };
        var plain = Allocated(Track(Open(NewDirectory(), new StoreConfig { Name = "TEST" }, options)));
        var sealedStore = Allocated(Track(Open(NewDirectory(), new StoreConfig { Name = "TEST" }, options with { Encryption = ChaCha })));

        // 2,000 messages: one object per message (24 bytes or more) would be 48 KB; the slack is for buffers
        // the two stores grow at different moments.
        Assert.True(sealedStore <= plain + (16 * 1024), $"encrypted: {sealedStore} B, plaintext: {plain} B for 2,000 appends in 40 flushes");
    }

    [Fact]
    public void A_previous_key_opens_the_store_and_the_new_key_alone_opens_it_afterwards()
    {
        var directory = NewDirectory();
        FillAndStop(OpenAt(directory, new StoreEncryption("old-key", StoreCipher.Aes)));
        var oldKeyFile = File.ReadAllBytes(Path.Combine(directory, "store.key"));

        // Without prev_key the new key cannot open it.
        Assert.Throws<StoreKeyException>(() => OpenAt(directory, new StoreEncryption("new-key", StoreCipher.Aes)));

        var rotated = OpenAt(directory, new StoreEncryption("new-key", StoreCipher.Aes, previousKey: "old-key"));
        Assert.Equal(58UL, rotated.State().Msgs);
        Assert.True(rotated.Append(B(SecretSubject + ".new"), [], B(Secret + "after-rotation"), 0).Ok);
        rotated.Stop();
        Assert.NotEqual(oldKeyFile, File.ReadAllBytes(Path.Combine(directory, "store.key")));

        var reopened = OpenAt(directory, new StoreEncryption("new-key", StoreCipher.Aes));
        Assert.Equal(59UL, reopened.State().Msgs);
        Assert.Equal(Secret + "after-rotation", S(Load(reopened, 61).Payload));
        Assert.Equal(Secret + 0, S(Load(reopened, 1).Payload));
        reopened.Stop();
        Assert.Throws<StoreKeyException>(() => OpenAt(directory, new StoreEncryption("old-key", StoreCipher.Aes)));
        AssertNoPlaintext(directory);
    }

    [Fact]
    public void A_store_keeps_the_cipher_it_was_created_with()
    {
        var directory = NewDirectory();
        FillAndStop(OpenAt(directory, new StoreEncryption(Key, StoreCipher.Aes)));
        var store = OpenAt(directory, ChaCha);
        Assert.Equal(Secret + 59, S(Load(store, 60).Payload));
    }

    [Fact]
    public void A_flipped_bit_in_a_sealed_record_is_never_served()
    {
        var directory = NewDirectory();
        var store = OpenAt(directory, ChaCha);
        for (var i = 0; i < 3; i++)
        {
            Assert.True(store.Append(B("a.b"), [], B(Secret + i), 0).Ok);
        }

        store.Flush();
        store.Stop();
        var block = Directory.GetFiles(directory, "*.blk").Order().First();
        var bytes = File.ReadAllBytes(block);
        const int Sealed = 32 + 3 + 23 + 32; // bytes of each message on disk: record overhead, subject, payload, seal
        var at = bytes.Length - Sealed - (Sealed / 2); // inside the second message's ciphertext (the third ends the file)
        bytes[at] ^= 0x10;
        File.WriteAllBytes(block, bytes);
        File.Delete(Path.ChangeExtension(block, ".idx")); // force a scan

        var reopened = OpenAt(directory, ChaCha);
        Assert.Equal(2UL, reopened.State().Msgs);
        Assert.Contains(reopened.Warnings, w => w.Kind == StoreWarningKind.CorruptRecord);
        Assert.Equal(Secret + 0, S(Load(reopened, 1).Payload));
        Assert.Equal(Secret + 2, S(Load(reopened, 3).Payload));
        Assert.Equal(LoadStatus.NotFound, reopened.LoadMessage(2).Status);
    }

    [Fact]
    public void A_crash_without_stop_recovers_every_flushed_message()
    {
        var directory = NewDirectory();
        var store = OpenAt(directory, ChaCha);
        for (var i = 0; i < 40; i++)
        {
            Assert.True(store.Append(B("a.b"), [], B(Secret + i), 0).Ok);
        }

        store.Flush(); // no Stop: the write block has no index, its tail is scanned and decrypted
        var again = (FileStore)OpenAt(directory, ChaCha);
        Assert.Equal(40UL, again.State().Msgs);
        Assert.Equal(Secret + 39, S(Load(again, 40).Payload));
        Assert.Empty(again.Warnings);
    }
}
