using Courier.Storage.Internal;
using Microsoft.Win32.SafeHandles;

namespace Courier.Storage.IO;

/// <summary>The operating system's files: <see cref="RandomAccess"/> over a <see cref="SafeFileHandle"/>.</summary>
internal sealed class OsFileSystem : StoreFileSystem
{
    public static readonly OsFileSystem Instance = new();

    private OsFileSystem()
    {
    }

    /// <inheritdoc/>
    public override StoreFile Open(string path, FileMode mode) =>
        new OsFile(File.OpenHandle(path, mode, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete));

    /// <inheritdoc/>
    public override byte[]? ReadAllBytes(string path)
    {
        try
        {
            return File.ReadAllBytes(path);
        }
        catch (FileNotFoundException)
        {
            return null;
        }
    }

    /// <inheritdoc/>
    public override long FileLength(string path) => new FileInfo(path).Length;

    /// <inheritdoc/>
    public override void Delete(string path) => File.Delete(path);

    /// <inheritdoc/>
    public override void Move(string from, string to) => File.Move(from, to, overwrite: true);

    /// <inheritdoc/>
    public override IReadOnlyList<string> ListFiles(string directory, string pattern) => Directory.GetFiles(directory, pattern);

    /// <inheritdoc/>
    public override void CreateDirectory(string directory) => Directory.CreateDirectory(directory);

    /// <inheritdoc/>
    public override void DeleteDirectory(string directory)
    {
        if (Directory.Exists(directory))
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    /// <inheritdoc/>
    public override void SyncDirectory(string directory) => DirectorySync.TrySync(directory);

    private sealed class OsFile(SafeFileHandle handle) : StoreFile
    {
        public override long Length => RandomAccess.GetLength(handle);

        public override int Read(Span<byte> destination, long offset) => RandomAccess.Read(handle, destination, offset);

        public override void Write(ReadOnlySpan<byte> source, long offset) => RandomAccess.Write(handle, source, offset);

        public override void SetLength(long length) => RandomAccess.SetLength(handle, length);

        public override void Sync()
        {
            var started = System.Diagnostics.Stopwatch.GetTimestamp();
            RandomAccess.FlushToDisk(handle);
            StoreMetrics.Fsynced(started);
        }

        public override void Dispose() => handle.Dispose();
    }
}
