using System.Buffers;

namespace Courier.Actors.Connections;

/// <summary>
/// One message delivered to an in-process subscription: spans of the publisher's buffers, valid only
/// during <see cref="DeliverySink.Add"/>.
/// </summary>
internal readonly ref struct InProcessMessage
{
    public InProcessMessage(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload, Connection? source = null, bool retained = false)
    {
        Subject = subject;
        ReplyTo = replyTo;
        HeaderSize = headerSize;
        Payload = payload;
        Source = source;
        Retained = retained;
    }

    /// <summary>An MQTT PUBLISH with RETAIN set (a kept session's Retain As Published keeps the flag).</summary>
    public bool Retained { get; }

    /// <summary>The connection that published it (an MQTT session's No Local compares it with its own); null when unknown.</summary>
    public Connection? Source { get; }

    /// <summary>The subject the message shows (a JetStream delivery's own subject, not its deliver subject).</summary>
    public ReadOnlySpan<byte> Subject { get; }

    /// <summary>The reply subject, or empty.</summary>
    public ReadOnlySpan<byte> ReplyTo { get; }

    /// <summary>The header block's size, -1 without headers.</summary>
    public int HeaderSize { get; }

    /// <summary>Headers and payload.</summary>
    public ReadOnlySequence<byte> Payload { get; }
}

/// <summary>
/// What an <see cref="InProcessClient"/> subscription feeds: each delivered message through
/// <see cref="Add"/>, then <see cref="Complete"/> once the publisher's batch is over. The client
/// serializes the calls (publishers deliver from many threads), so a sink sees one call at a time.
/// </summary>
internal abstract class DeliverySink
{
    /// <summary>One message; its spans are the publisher's and valid only during the call.</summary>
    public abstract void Add(in InProcessMessage message);

    /// <summary>The publisher's batch is over: hand on what was collected.</summary>
    public abstract void Complete();
}
