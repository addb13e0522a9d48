using Courier.Storage.IO;

namespace Courier.Storage.Tests.Faults;

/// <summary>What survives of the directory entries (create, delete, rename) not yet made durable by a directory fsync.</summary>
internal enum MetadataDurability
{
    /// <summary>LazyFS's model: file data is cached, directory operations go straight to disk.</summary>
    Immediate,

    /// <summary>Stricter: a directory operation is durable after an fsync of its directory; at the crash a
    /// random prefix of the others survives (a journaling file system commits them in order).</summary>
    OnDirectorySync,
}

/// <summary>
/// An in-memory file system that loses power the way Jepsen's LazyFS makes a disk lose it: every write
/// goes to a volatile page cache; <see cref="StoreFile.Sync"/> makes a file's data durable; at
/// <see cref="Crash"/> the unsynced writes of each file are dropped, kept, torn (a prefix of them, the
/// last one cut at a random byte) or reordered (a random subset applied in a random order, leaving
/// holes of zeros). <see cref="CutPowerAfter"/> makes the n-th mutating call and every call after it
/// fail with an <see cref="IOException"/>, as a dead disk would, so the code under test stops at a
/// random point; <see cref="Crash"/> then turns the durable state plus the chosen fate of the cache into
/// the files a new instance opens. Handles from before the crash stay dead.
/// </summary>
/// <remarks>
/// It models one process and one disk: data written but not fsynced, fsync of files and directories,
/// directory operations durable at once (<see cref="MetadataDurability.Immediate"/>, as LazyFS) or only
/// after a directory fsync (<see cref="MetadataDurability.OnDirectorySync"/>). It does not model sector
/// atomicity below a byte (a torn write tears at any byte), a disk that lies about fsync, errors other
/// than the power cut, or several processes sharing files.
/// </remarks>
internal sealed class PowerLossFileSystem : StoreFileSystem
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, Inode> _names = new(StringComparer.Ordinal);
    private readonly Dictionary<string, Inode> _durableNames = new(StringComparer.Ordinal);
    private readonly List<NameOp> _pendingNames = [];
    private readonly HashSet<string> _directories = new(StringComparer.Ordinal);
    private int _epoch;
    private long _opsUntilCut = long.MaxValue;

    public PowerLossFileSystem(MetadataDurability metadata = MetadataDurability.Immediate) => Metadata = metadata;

    public MetadataDurability Metadata { get; set; }

    /// <summary>True once the power is off: every call fails until <see cref="Crash"/>.</summary>
    public bool PowerIsOff { get; private set; }

    /// <summary>Mutating calls made so far (writes, syncs, truncations, directory operations).</summary>
    public long Operations { get; private set; }

    /// <summary>What the crashes so far did to unsynced data (for the report).</summary>
    public CrashStats Stats { get; } = new();

    /// <summary>The <paramref name="n"/>-th mutating call from now (1 = the next) fails, and every call after it.</summary>
    public void CutPowerAfter(long n)
    {
        lock (_lock)
        {
            _opsUntilCut = Math.Max(1, n);
        }
    }

    /// <summary>Stops a pending <see cref="CutPowerAfter"/>.</summary>
    public void CancelCut()
    {
        lock (_lock)
        {
            _opsUntilCut = long.MaxValue;
        }
    }

    /// <summary>
    /// The crash: power goes off (if it was not yet) and comes back. Each file keeps its durable bytes
    /// plus what <paramref name="random"/> decides of its unsynced writes; directory entries likewise.
    /// Handles opened before become dead.
    /// </summary>
    public void Crash(Random random)
    {
        lock (_lock)
        {
            Stats.Crashes++;
            if (Metadata == MetadataDurability.OnDirectorySync && _pendingNames.Count > 0)
            {
                var keep = random.Next(_pendingNames.Count + 1);
                for (var i = 0; i < keep; i++)
                {
                    _pendingNames[i].ApplyTo(_durableNames);
                }

                Stats.NameOpsLost += _pendingNames.Count - keep;
            }

            _pendingNames.Clear();
            _names.Clear();
            foreach (var (path, inode) in _durableNames)
            {
                _names[path] = inode;
            }

            foreach (var inode in _names.Values.Distinct())
            {
                inode.Crash(random, Stats);
            }

            _epoch++;
            PowerIsOff = false;
            _opsUntilCut = long.MaxValue;
        }
    }

    /// <summary>A copy of a file's current bytes (what a read sees), or null.</summary>
    public byte[]? Snapshot(string path)
    {
        lock (_lock)
        {
            return _names.TryGetValue(path, out var inode) ? inode.Data.AsSpan(0, (int)inode.Length).ToArray() : null;
        }
    }

    /// <summary>The files under <paramref name="directory"/> (recursively), for tests that look at what survived.</summary>
    public IReadOnlyList<string> AllFiles(string directory)
    {
        lock (_lock)
        {
            var prefix = directory.TrimEnd('/') + "/";
            return [.. _names.Keys.Where(p => p.StartsWith(prefix, StringComparison.Ordinal)).Order(StringComparer.Ordinal)];
        }
    }

    /// <inheritdoc/>
    public override StoreFile Open(string path, FileMode mode)
    {
        lock (_lock)
        {
            CheckPower(mutating: mode != FileMode.Open);
            if (!_directories.Contains(Parent(path)))
            {
                throw new DirectoryNotFoundException(path);
            }

            if (!_names.TryGetValue(path, out var inode))
            {
                if (mode == FileMode.Open)
                {
                    throw new FileNotFoundException("no such file", path);
                }

                inode = new Inode();
                Bind(new NameOp(NameOpKind.Create, path, null, inode));
            }
            else if (mode == FileMode.Create)
            {
                inode.SetLength(0);
            }

            return new File(this, inode, _epoch);
        }
    }

    /// <inheritdoc/>
    public override byte[]? ReadAllBytes(string path)
    {
        lock (_lock)
        {
            CheckPower(mutating: false);
            return _names.TryGetValue(path, out var inode) ? inode.Data.AsSpan(0, (int)inode.Length).ToArray() : null;
        }
    }

    /// <inheritdoc/>
    public override long FileLength(string path)
    {
        lock (_lock)
        {
            CheckPower(mutating: false);
            return _names.TryGetValue(path, out var inode) ? inode.Length : throw new FileNotFoundException("no such file", path);
        }
    }

    /// <inheritdoc/>
    public override void Delete(string path)
    {
        lock (_lock)
        {
            CheckPower(mutating: true);
            if (_names.ContainsKey(path))
            {
                Bind(new NameOp(NameOpKind.Delete, path, null, null));
            }
        }
    }

    /// <inheritdoc/>
    public override void Move(string from, string to)
    {
        lock (_lock)
        {
            CheckPower(mutating: true);
            if (!_names.TryGetValue(from, out var inode))
            {
                throw new FileNotFoundException("no such file", from);
            }

            Bind(new NameOp(NameOpKind.Move, from, to, inode));
        }
    }

    /// <inheritdoc/>
    public override IReadOnlyList<string> ListFiles(string directory, string pattern)
    {
        lock (_lock)
        {
            CheckPower(mutating: false);
            if (!_directories.Contains(directory))
            {
                throw new DirectoryNotFoundException(directory);
            }

            var suffix = pattern == "*" ? "" : pattern.TrimStart('*');
            return [.. _names.Keys.Where(p => Parent(p) == directory && p.EndsWith(suffix, StringComparison.Ordinal)).Order(StringComparer.Ordinal)];
        }
    }

    /// <inheritdoc/>
    public override void CreateDirectory(string directory)
    {
        lock (_lock)
        {
            CheckPower(mutating: false);
            for (var d = directory; !string.IsNullOrEmpty(d); d = Path.GetDirectoryName(d))
            {
                _directories.Add(d.TrimEnd('/'));
            }
        }
    }

    /// <inheritdoc/>
    public override void DeleteDirectory(string directory)
    {
        lock (_lock)
        {
            CheckPower(mutating: true);
            var prefix = directory + "/";
            foreach (var path in _names.Keys.Where(p => p.StartsWith(prefix, StringComparison.Ordinal)).ToArray())
            {
                _names.Remove(path);
                _durableNames.Remove(path);
            }

            _pendingNames.RemoveAll(op => op.Path.StartsWith(prefix, StringComparison.Ordinal));
            _directories.RemoveWhere(d => d == directory || d.StartsWith(prefix, StringComparison.Ordinal));
        }
    }

    /// <inheritdoc/>
    public override void SyncDirectory(string directory)
    {
        lock (_lock)
        {
            CheckPower(mutating: true);
            for (var i = 0; i < _pendingNames.Count; i++)
            {
                var op = _pendingNames[i];
                if (Parent(op.Path) == directory)
                {
                    op.ApplyTo(_durableNames);
                    _pendingNames.RemoveAt(i--);
                }
            }
        }
    }

    private static string Parent(string path) => Path.GetDirectoryName(path) ?? "";

    private void Bind(NameOp op)
    {
        op.ApplyTo(_names);
        if (Metadata == MetadataDurability.Immediate)
        {
            op.ApplyTo(_durableNames);
        }
        else
        {
            _pendingNames.Add(op);
        }
    }

    /// <summary>Counts a call; throws once the power is off. Lock held.</summary>
    private void CheckPower(bool mutating)
    {
        if (!PowerIsOff && mutating)
        {
            Operations++;
            if (--_opsUntilCut <= 0)
            {
                PowerIsOff = true;
            }
        }

        if (PowerIsOff)
        {
            throw new IOException("power lost (fault injection)");
        }
    }

    private void CheckHandle(int epoch, bool mutating)
    {
        if (epoch != _epoch)
        {
            throw new IOException("handle from before the crash (fault injection)");
        }

        CheckPower(mutating);
    }

    /// <summary>What crashes did to unsynced writes.</summary>
    internal sealed class CrashStats
    {
        public int Crashes { get; set; }

        public int FilesDropped { get; set; }

        public int FilesKept { get; set; }

        public int FilesTorn { get; set; }

        public int FilesReordered { get; set; }

        public int NameOpsLost { get; set; }

        public override string ToString() =>
            $"{Crashes} crashes; files with unsynced writes: {FilesDropped} dropped, {FilesKept} kept, {FilesTorn} torn, {FilesReordered} reordered; {NameOpsLost} directory operations lost";
    }

    private enum NameOpKind
    {
        Create,
        Delete,
        Move,
    }

    private sealed record NameOp(NameOpKind Kind, string Path, string? To, Inode? Inode)
    {
        public void ApplyTo(Dictionary<string, Inode> names)
        {
            switch (Kind)
            {
                case NameOpKind.Create:
                    names[Path] = Inode!;
                    break;
                case NameOpKind.Delete:
                    names.Remove(Path);
                    break;
                case NameOpKind.Move:
                    if (names.Remove(Path, out var inode))
                    {
                        names[To!] = inode;
                    }

                    break;
            }
        }
    }

    /// <summary>A file's bytes: what reads see (the cache) and what is on disk (durable), with the writes in between.</summary>
    private sealed class Inode
    {
        private readonly List<(long Offset, byte[]? Bytes, long NewLength)> _pending = [];
        private byte[] _durable = [];

        public byte[] Data { get; private set; } = [];

        public long Length { get; private set; }

        public void Write(ReadOnlySpan<byte> source, long offset)
        {
            _pending.Add((offset, source.ToArray(), -1));
            Apply(source, offset);
        }

        public void SetLength(long length)
        {
            _pending.Add((0, null, length));
            Resize(length);
        }

        public void Sync()
        {
            _durable = Data.AsSpan(0, (int)Length).ToArray();
            _pending.Clear();
        }

        public void Crash(Random random, CrashStats stats)
        {
            var ops = _pending.ToArray();
            _pending.Clear();
            Data = [];
            Length = 0;
            Apply(_durable, 0);
            if (ops.Length == 0)
            {
                return;
            }

            switch (random.Next(4))
            {
                case 0: // the cache is lost
                    stats.FilesDropped++;
                    break;
                case 1: // the OS had written it all back
                    stats.FilesKept++;
                    foreach (var op in ops)
                    {
                        Replay(op);
                    }

                    break;
                case 2: // written back in order up to a point, the last write torn at a random byte
                    stats.FilesTorn++;
                    var kept = random.Next(ops.Length);
                    for (var i = 0; i < kept; i++)
                    {
                        Replay(ops[i]);
                    }

                    if (ops[kept].Bytes is { } bytes)
                    {
                        Apply(bytes.AsSpan(0, random.Next(bytes.Length + 1)), ops[kept].Offset);
                    }

                    break;
                default: // some writes reached the disk, in another order
                    stats.FilesReordered++;
                    foreach (var op in ops.Where(_ => random.Next(2) == 0).OrderBy(_ => random.Next()))
                    {
                        Replay(op);
                    }

                    break;
            }

            _durable = Data.AsSpan(0, (int)Length).ToArray();
        }

        private void Replay((long Offset, byte[]? Bytes, long NewLength) op)
        {
            if (op.Bytes is null)
            {
                Resize(op.NewLength);
            }
            else
            {
                Apply(op.Bytes, op.Offset);
            }
        }

        private void Apply(ReadOnlySpan<byte> source, long offset)
        {
            var end = offset + source.Length;
            if (end > Length)
            {
                Resize(end);
            }

            source.CopyTo(Data.AsSpan((int)offset));
        }

        private void Resize(long length)
        {
            if (length > Data.Length)
            {
                var grown = new byte[Math.Max(length, Data.Length * 2L)];
                Data.AsSpan(0, (int)Length).CopyTo(grown);
                Data = grown;
            }
            else if (length < Length)
            {
                Data.AsSpan((int)length, (int)(Length - length)).Clear(); // a later extension reads zeros
            }

            Length = length;
        }
    }

    private sealed class File(PowerLossFileSystem fs, Inode inode, int epoch) : StoreFile
    {
        public override long Length
        {
            get
            {
                lock (fs._lock)
                {
                    fs.CheckHandle(epoch, mutating: false);
                    return inode.Length;
                }
            }
        }

        public override int Read(Span<byte> destination, long offset)
        {
            lock (fs._lock)
            {
                fs.CheckHandle(epoch, mutating: false);
                if (offset >= inode.Length)
                {
                    return 0;
                }

                var n = (int)Math.Min(destination.Length, inode.Length - offset);
                inode.Data.AsSpan((int)offset, n).CopyTo(destination);
                return n;
            }
        }

        public override void Write(ReadOnlySpan<byte> source, long offset)
        {
            lock (fs._lock)
            {
                fs.CheckHandle(epoch, mutating: true);
                inode.Write(source, offset);
            }
        }

        public override void SetLength(long length)
        {
            lock (fs._lock)
            {
                fs.CheckHandle(epoch, mutating: true);
                inode.SetLength(length);
            }
        }

        public override void Sync()
        {
            lock (fs._lock)
            {
                fs.CheckHandle(epoch, mutating: true);
                inode.Sync();
            }
        }

        public override void Dispose()
        {
        }
    }
}
