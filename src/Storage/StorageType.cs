namespace Courier.Storage;

/// <summary>Where a stream keeps its messages (nats-server's <c>storage</c>: file or memory).</summary>
public enum StorageType
{
    /// <summary>Block files on disk (<c>FileStore</c>).</summary>
    File = 0,

    /// <summary>Process memory only; gone on restart (<c>MemoryStore</c>).</summary>
    Memory = 1,
}
