namespace Courier.Storage.IO;

/// <summary>An open file of a <see cref="StoreFileSystem"/>: positional reads and writes, length, fsync.</summary>
internal abstract class StoreFile : IDisposable
{
    /// <summary>The file's length in bytes.</summary>
    public abstract long Length { get; }

    /// <summary>Reads up to <paramref name="destination"/>'s length at <paramref name="offset"/>; 0 at the end of the file.</summary>
    public abstract int Read(Span<byte> destination, long offset);

    /// <summary>Writes all of <paramref name="source"/> at <paramref name="offset"/> (to the OS: durable only after <see cref="Sync"/>).</summary>
    public abstract void Write(ReadOnlySpan<byte> source, long offset);

    /// <summary>Cuts or extends the file.</summary>
    public abstract void SetLength(long length);

    /// <summary>fsync: everything written so far is durable when this returns.</summary>
    public abstract void Sync();

    /// <inheritdoc/>
    public abstract void Dispose();
}
