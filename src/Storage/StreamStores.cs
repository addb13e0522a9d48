using Courier.Storage.FileStorage;

namespace Courier.Storage;

/// <summary>Creates stores. The store classes themselves are internal; callers hold <see cref="IStreamStore"/>.</summary>
public static class StreamStores
{
    /// <summary>A new, empty memory store.</summary>
    public static IStreamStore CreateMemory(StoreConfig config) => new MemoryStore(config);

    /// <summary>
    /// Opens (recovering) or creates the file store in <paramref name="directory"/>. Damage found on
    /// the way is repaired and listed in <see cref="IStreamStore.Warnings"/>; only I/O failures throw.
    /// </summary>
    public static IStreamStore OpenFile(string directory, StoreConfig config, FileStoreOptions? options = null) =>
        FileStore.Open(directory, config, options ?? new FileStoreOptions());
}
