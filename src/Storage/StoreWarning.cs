namespace Courier.Storage;

/// <summary>Kinds of damage a store found and worked around.</summary>
public enum StoreWarningKind
{
    /// <summary>A block ended in a partial record (a torn write): the tail was cut off.</summary>
    TruncatedTail,

    /// <summary>A record failed its checksum during recovery; its message is lost.</summary>
    CorruptRecord,

    /// <summary>A record failed its checksum when read; its message is lost.</summary>
    CorruptOnRead,

    /// <summary>A block file header is damaged; the block was recovered by scanning.</summary>
    CorruptBlockHeader,

    /// <summary>An index file is damaged or does not match its block; the block was scanned instead.</summary>
    CorruptIndex,

    /// <summary>A snapshot file failed its checksum or could not be read: set aside (renamed <c>.corrupt</c>), never served.</summary>
    CorruptSnapshot,
}

/// <summary>One problem found by a store, for the log and for stream info.</summary>
/// <param name="Kind">What was found.</param>
/// <param name="Detail">Where and what, for people.</param>
/// <param name="Sequence">The sequence concerned, when known (0 otherwise).</param>
public sealed record StoreWarning(StoreWarningKind Kind, string Detail, ulong Sequence = 0)
{
    /// <inheritdoc/>
    public override string ToString() => $"{Kind}: {Detail}";
}
