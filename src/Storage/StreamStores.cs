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

    /// <summary>
    /// Checks, without opening the store, that the file store in <paramref name="directory"/> opens with
    /// <paramref name="encryption"/> (a server checks every store before it starts, so a wrong key stops
    /// the start). A store key opened with the previous key is sealed again with the current one.
    /// Nothing happens when there is no such directory.
    /// </summary>
    /// <param name="directory">The store's directory.</param>
    /// <param name="encryption">The configured encryption; null: none.</param>
    /// <param name="context">The store's <see cref="FileStoreOptions.EncryptionContext"/> (or its name).</param>
    /// <exception cref="StoreKeyException">The store is encrypted and the key is missing or wrong.</exception>
    public static void VerifyKey(string directory, StoreEncryption? encryption, string context)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        if (!Directory.Exists(directory))
        {
            return;
        }

        var fs = IO.StoreFileSystem.Os;
        var full = Path.GetFullPath(directory);
        Encryption.StoreKeyFile.Load(fs, full, encryption, context, create: false)?.Dispose(); // a plaintext store is encrypted when it opens
    }
}
