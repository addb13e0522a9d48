namespace Courier.Storage;

/// <summary>The outcome of one append: the sequence and timestamp the message got, or why it was refused.</summary>
/// <param name="Error"><see cref="StoreError.None"/> when stored.</param>
/// <param name="Sequence">The stream sequence assigned (0 when refused).</param>
/// <param name="Timestamp">The stored timestamp, Unix nanoseconds (0 when refused).</param>
public readonly record struct StoreResult(StoreError Error, ulong Sequence, long Timestamp)
{
    /// <summary>True when the message was stored.</summary>
    public bool Ok => Error == StoreError.None;

    internal static StoreResult Fail(StoreError error) => new(error, 0, 0);
}
