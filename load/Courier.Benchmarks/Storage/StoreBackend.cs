namespace Courier.Benchmarks.Storage;

/// <summary>Which <see cref="Courier.Storage.IStreamStore"/> a storage benchmark runs against.</summary>
public enum StoreBackend
{
    /// <summary><c>StreamStores.CreateMemory</c>: never durable, Flush does nothing.</summary>
    Memory,

    /// <summary>FileStore with <c>SyncPolicy.Always</c>, Courier's durable default: every Flush fsyncs.</summary>
    FileAlways,

    /// <summary>FileStore with <c>SyncPolicy.Interval(1 s)</c>: Flush writes; an fsync at most once a second.</summary>
    FileInterval,
}
