using System.Buffers;

namespace Courier.Actors.Connections;

/// <summary>
/// A subscription of an in-process client (<see cref="InProcessClient"/>) that takes its messages as
/// calls on the publisher's thread: no MSG line formatted, nothing written or parsed. Deliveries to it are batched as frames are: <see cref="Deliver"/> per
/// message, then <see cref="Complete"/> once the publisher's read batch is over (Outbound.Signal).
/// It counts its own deliveries under the lock it takes anyway, so a delivery takes no other lock:
/// the outbound is told once per batch (when <c>first</c>) and adds the counts at completion.
/// </summary>
/// <remarks>Publishers call it from many threads at once: an implementation serializes its own calls.</remarks>
internal interface IDirectSubscriber
{
    /// <summary>
    /// One message; the spans and payload are the publisher's and valid only during the call.
    /// <paramref name="first"/>: the first delivery since the last <see cref="Complete"/>, so the caller
    /// notes the subscriber for it (Outbound.AddDirectPending). <paramref name="from"/>: the publisher
    /// (its connection, and whether an MQTT PUBLISH had RETAIN). False when the subscriber is closed (unsubscribed).
    /// </summary>
    bool Deliver(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload, Publisher from, out bool first);

    /// <summary>
    /// The publisher's batch is over: hand on what was delivered (nothing when nothing is pending), and
    /// report the messages and payload bytes delivered by <see cref="Deliver"/> since the last report
    /// (the connection's messages out).
    /// </summary>
    void Complete(out long messages, out long bytes);
}
