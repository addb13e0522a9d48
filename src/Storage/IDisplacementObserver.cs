namespace Courier.Storage;

/// <summary>
/// Hears of the messages an append removes to keep max_msgs_per_subject (a KV bucket's history),
/// before they go. Both members run on the appending thread with the store's lock held: they must be
/// quick and must not call back into the store.
/// </summary>
public interface IDisplacementObserver
{
    /// <summary>Whether anyone still needs the message at <paramref name="sequence"/> (it is only read if so).</summary>
    bool Wants(ulong sequence);

    /// <summary>The message about to be removed.</summary>
    void Displaced(StoredMessage message);
}
