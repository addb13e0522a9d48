using Courier.Protocols.JetStream;
using Courier.Storage.FileStorage;
using Xunit;

namespace Courier.Storage.Tests;

/// <summary>
/// The store contract against the FileStore with 2 KiB blocks (so most tests cross many block
/// boundaries), and <see cref="StreamStoreTests.Reopen"/> as a real restart. FileStore-only tests
/// (recovery, corruption, durability) are in the other parts of this class.
/// </summary>
public sealed partial class FileStoreTests : StreamStoreTests
{
    private const long SmallBlocks = 2048; // bytes

    // Spares prepared on the appending thread: the crash tests abandon stores without stopping them, and an
    // abandoned store must not go on writing in a directory another instance has recovered (a crashed
    // process has no threads left).
    private static readonly FileStoreOptions SmallBlockOptions = new() { BlockSize = SmallBlocks, PreallocateInline = true };

    private readonly TempDirectory _temp = new();
    private readonly Dictionary<IStreamStore, (string Directory, StoreConfig Config, FileStoreOptions Options)> _opened = [];
    private int _next;

    protected override StorageType Kind => StorageType.File;

    protected override IStreamStore CreateStore(StoreConfig config) =>
        Open(NewDirectory(), config, SmallBlockOptions);

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

    private string NewDirectory() => Path.Combine(_temp.Path, $"stream-{_next++}");

    private IStreamStore Open(string directory, StoreConfig config, FileStoreOptions options)
    {
        var store = StreamStores.OpenFile(directory, config, options);
        _opened[store] = (directory, config, options);
        return store;
    }

    /// <summary>A store opened by the test itself (tracked for disposal), with its directory.</summary>
    private (FileStore Store, string Directory) OpenNew(StoreConfig? config = null, FileStoreOptions? options = null)
    {
        var directory = NewDirectory();
        var store = (FileStore)Track(Open(directory, config ?? new StoreConfig { Name = "TEST" }, options ?? SmallBlockOptions));
        return (store, directory);
    }

    /// <summary>Another instance on the same directory, as a process restarted after a crash would open it.</summary>
    private FileStore OpenAgain(string directory, StoreConfig? config = null, FileStoreOptions? options = null) =>
        (FileStore)Track(Open(directory, config ?? new StoreConfig { Name = "TEST" }, options ?? SmallBlockOptions));

    private static string[] BlockFiles(string directory) => [.. Directory.GetFiles(directory, "*.blk").Order()];

    private static string[] IndexFiles(string directory) => [.. Directory.GetFiles(directory, "*.idx").Order()];

    [Fact]
    public void File_store_reports_its_type()
    {
        var (store, _) = OpenNew();
        Assert.Equal(StorageType.File, store.Type);
    }
}
