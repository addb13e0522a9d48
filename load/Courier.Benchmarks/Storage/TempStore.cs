using Courier.Storage;

namespace Courier.Benchmarks.Storage;

/// <summary>
/// A store for one benchmark class: a memory store, or a FileStore in a fresh directory under the
/// temp path that <see cref="Dispose"/> deletes (GlobalCleanup), so runs leave nothing behind.
/// </summary>
internal sealed class TempStore : IDisposable
{
    /// <summary>The period of <see cref="StoreBackend.FileInterval"/>: 1 s, short enough that a
    /// 150 ms iteration sees the occasional fsync, as a server under load would.</summary>
    public static readonly TimeSpan IntervalPeriod = TimeSpan.FromSeconds(1);

    private readonly string? _directory;
    private readonly FileStoreOptions _options = new();

    public TempStore(StoreBackend backend, StoreConfig config)
    {
        if (backend == StoreBackend.Memory)
        {
            Store = StreamStores.CreateMemory(config);
            return;
        }

        _directory = Path.Combine(Path.GetTempPath(), "courier-bench-" + Guid.NewGuid().ToString("N"));
        _options = new FileStoreOptions
        {
            Sync = backend == StoreBackend.FileAlways ? SyncPolicy.Always : SyncPolicy.Interval(IntervalPeriod),
        };
        Store = StreamStores.OpenFile(_directory, config, _options);
    }

    public IStreamStore Store { get; private set; }

    /// <summary>A FileStore is stopped and opened again (recovering from its index files), so reads
    /// come from the files rather than the append buffer. A memory store stays as it is.</summary>
    public void Reopen(StoreConfig config)
    {
        if (_directory is null)
        {
            return;
        }

        Store.Stop();
        Store = StreamStores.OpenFile(_directory, config, _options);
    }

    public void Dispose()
    {
        Store.Dispose();
        if (_directory is not null && Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }
}
