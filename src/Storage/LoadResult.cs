namespace Courier.Storage;

/// <summary>What a load found.</summary>
public enum LoadStatus
{
    /// <summary>The message is in <see cref="LoadResult.Message"/>.</summary>
    Found = 0,

    /// <summary>No such message: deleted, purged, below the first sequence, or no match (<c>ErrStoreMsgNotFound</c>).</summary>
    NotFound,

    /// <summary>The sequence (or the start of a search) is past the last sequence (<c>ErrStoreEOF</c>).</summary>
    EndOfStream,

    /// <summary>The record failed its checksum: it is not served, counted as lost and reported in <see cref="IStreamStore.Warnings"/>.</summary>
    Corrupt,

    /// <summary>The store was stopped.</summary>
    Closed,
}

/// <summary>The result of a load: a status and, when found, the message. Not-found is a value, never an exception.</summary>
public readonly record struct LoadResult(LoadStatus Status, StoredMessage? Message)
{
    /// <summary>True when <see cref="Message"/> is set.</summary>
    public bool Found => Status == LoadStatus.Found;

    internal static LoadResult Of(StoredMessage message) => new(LoadStatus.Found, message);

    internal static LoadResult Missing(LoadStatus status) => new(status, null);
}
