namespace Courier.Storage.IO;

/// <summary>
/// The file operations the stores make (FileStore, its index files, the journal on it, the snapshot
/// store). Production code uses <see cref="Os"/>, the plain .NET calls; tests hand a store a
/// fault-injecting implementation (power loss, corruption) through <see cref="FileStoreOptions"/>.
/// </summary>
/// <remarks>
/// Chosen once, when a store is opened. The hot path touches it only through <see cref="StoreFile"/>:
/// one virtual call per flush write, per fsync, and per read that misses the read windows, next to a
/// system call each, so the seam costs nothing measurable (load/Courier.Benchmarks StoreAppendBenchmarks).
/// Paths are full paths. Semantics are those of <see cref="File"/> and <see cref="Directory"/>: deleting a
/// missing file is not an error; a move replaces its target.
/// </remarks>
internal abstract class StoreFileSystem
{
    /// <summary>The operating system's file system.</summary>
    public static StoreFileSystem Os => OsFileSystem.Instance;

    /// <summary>Opens a file for reading and writing, shared (a crashed instance's handles never block a new one).</summary>
    /// <param name="path">The file.</param>
    /// <param name="mode"><see cref="FileMode.Open"/> (must exist), <see cref="FileMode.OpenOrCreate"/> or <see cref="FileMode.Create"/> (emptied).</param>
    public abstract StoreFile Open(string path, FileMode mode);

    /// <summary>The whole content of a file; null when there is no such file.</summary>
    public abstract byte[]? ReadAllBytes(string path);

    /// <summary>The length of a file in bytes.</summary>
    public abstract long FileLength(string path);

    /// <summary>Deletes a file; nothing happens when it does not exist.</summary>
    public abstract void Delete(string path);

    /// <summary>Renames a file, replacing <paramref name="to"/> if it exists.</summary>
    public abstract void Move(string from, string to);

    /// <summary>The full paths of the files in <paramref name="directory"/> matching <paramref name="pattern"/> (<c>*</c> or <c>*.ext</c>).</summary>
    public abstract IReadOnlyList<string> ListFiles(string directory, string pattern);

    /// <summary>Creates a directory and its parents if missing.</summary>
    public abstract void CreateDirectory(string directory);

    /// <summary>Deletes a directory and everything in it, if it exists.</summary>
    public abstract void DeleteDirectory(string directory);

    /// <summary>fsync of a directory: files created, renamed or deleted in it are durable (best effort where the OS cannot).</summary>
    public abstract void SyncDirectory(string directory);
}
