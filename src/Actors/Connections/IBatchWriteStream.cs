namespace Courier.Actors.Connections;

/// <summary>
/// A stream that takes a whole write batch at once, so a framing transport (WebSocket) wraps the
/// batch in one frame and sends it with one socket send, rather than one frame per chunk.
/// </summary>
internal interface IBatchWriteStream
{
    /// <summary>Writes the chunks of <paramref name="batch"/>, in order, as one unit.</summary>
    ValueTask WriteBatchAsync(List<ArraySegment<byte>> batch);
}
