using Courier.Storage.IO;

namespace Courier.Fuzz;

/// <summary>
/// The store's file seam in memory, for the filestore target: recovery reads and writes the same bytes
/// it would on disk (positional reads and writes, lengths, renames, listings) without a system call, so
/// an execution costs what recovery costs, not what creating and deleting files costs. Sync does
/// nothing: a fuzz run has no power to lose. Single-threaded, as the target is.
/// </summary>
internal sealed class MemoryFileSystem : StoreFileSystem
{
    private readonly Dictionary<string, Content> _files = new(StringComparer.Ordinal);
    private readonly HashSet<string> _directories = new(StringComparer.Ordinal);

    /// <summary>Puts a file in place before the store opens.</summary>
    public void Seed(string path, byte[] bytes)
    {
        _directories.Add(Path.GetDirectoryName(path)!);
        _files[path] = new Content { Bytes = bytes, Length = bytes.Length };
    }

    public override StoreFile Open(string path, FileMode mode)
    {
        RequireDirectory(Path.GetDirectoryName(path)!);
        var exists = _files.TryGetValue(path, out var content);
        switch (mode)
        {
            case FileMode.CreateNew when exists:
                throw new IOException($"'{path}' exists");
            case FileMode.Open or FileMode.Truncate when !exists:
                throw new FileNotFoundException(path);
            case FileMode.Create or FileMode.CreateNew or FileMode.Truncate:
                content = new Content();
                _files[path] = content;
                break;
            default:
                if (content is null)
                {
                    content = new Content();
                    _files[path] = content;
                }

                break;
        }

        return new MemoryFile(content);
    }

    public override byte[]? ReadAllBytes(string path) =>
        _files.TryGetValue(path, out var content) ? content.Bytes.AsSpan(0, (int)content.Length).ToArray() : null;

    public override long FileLength(string path) =>
        _files.TryGetValue(path, out var content) ? content.Length : throw new FileNotFoundException(path);

    public override void Delete(string path) => _files.Remove(path);

    public override void Move(string from, string to)
    {
        if (!_files.Remove(from, out var content))
        {
            throw new FileNotFoundException(from);
        }

        RequireDirectory(Path.GetDirectoryName(to)!);
        _files[to] = content;
    }

    public override IReadOnlyList<string> ListFiles(string directory, string pattern)
    {
        RequireDirectory(directory);
        var suffix = pattern == "*" ? "" : pattern.TrimStart('*');
        var found = new List<string>();
        foreach (var path in _files.Keys)
        {
            if (Path.GetDirectoryName(path) == directory && path.EndsWith(suffix, StringComparison.Ordinal))
            {
                found.Add(path);
            }
        }

        found.Sort(StringComparer.Ordinal);
        return found;
    }

    public override void CreateDirectory(string directory) => _directories.Add(directory);

    public override void DeleteDirectory(string directory)
    {
        _directories.Remove(directory);
        foreach (var path in _files.Keys.Where(p => p.StartsWith(directory + Path.DirectorySeparatorChar, StringComparison.Ordinal)).ToList())
        {
            _files.Remove(path);
        }
    }

    public override void SyncDirectory(string directory)
    {
    }

    private void RequireDirectory(string directory)
    {
        if (!_directories.Contains(directory))
        {
            throw new DirectoryNotFoundException(directory);
        }
    }

    private sealed class Content
    {
        public byte[] Bytes = [];
        public long Length;
    }

    private sealed class MemoryFile(Content content) : StoreFile
    {
        public override long Length => content.Length;

        public override int Read(Span<byte> destination, long offset)
        {
            if (offset >= content.Length)
            {
                return 0;
            }

            var count = (int)Math.Min(destination.Length, content.Length - offset);
            content.Bytes.AsSpan((int)offset, count).CopyTo(destination);
            return count;
        }

        public override void Write(ReadOnlySpan<byte> source, long offset)
        {
            var end = offset + source.Length;
            if (end > content.Bytes.Length)
            {
                Array.Resize(ref content.Bytes, (int)Math.Max(end, content.Bytes.Length * 2L));
            }

            source.CopyTo(content.Bytes.AsSpan((int)offset));
            content.Length = Math.Max(content.Length, end);
        }

        public override void SetLength(long length)
        {
            if (length > content.Bytes.Length)
            {
                Array.Resize(ref content.Bytes, (int)length);
            }
            else if (length < content.Length)
            {
                content.Bytes.AsSpan((int)length, (int)(content.Length - length)).Clear();
            }

            content.Length = length;
        }

        public override void Sync()
        {
        }

        public override void Dispose()
        {
        }
    }
}
