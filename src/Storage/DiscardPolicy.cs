namespace Courier.Storage;

/// <summary>What a full stream does with a new message, as nats-server's <c>discard</c>.</summary>
public enum DiscardPolicy
{
    /// <summary>Store the new message and remove the oldest until the stream is within its limits.</summary>
    Old = 0,

    /// <summary>Refuse the new message (<see cref="StoreError.MaxMsgs"/>, <see cref="StoreError.MaxBytes"/>).</summary>
    New = 1,
}
