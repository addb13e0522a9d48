namespace Courier.Protocols.JetStream;

/// <summary>
/// Paging of the JetStream API's list requests as nats-server pages them: the request's
/// <c>offset</c> (clamped to 0..total) is honoured, a page holds at most the API's fixed limit, and
/// the response reports <c>total</c>, <c>offset</c> and <c>limit</c>.
/// </summary>
public static class ApiPaging
{
    /// <summary>Names per page for STREAM.NAMES and CONSUMER.NAMES (nats-server's JSApiNamesLimit).</summary>
    public const int NamesLimit = 1024;

    /// <summary>Infos per page for STREAM.LIST and CONSUMER.LIST (nats-server's JSApiListLimit).</summary>
    public const int ListLimit = 256;

    /// <summary>The page of <paramref name="total"/> items that starts at <paramref name="offset"/>.</summary>
    /// <remarks>nats-server 2.9.10 panics on a negative offset; Courier reads it as 0.</remarks>
    public static (int Offset, int Count) Page(int total, int offset, int limit)
    {
        var start = Math.Clamp(offset, 0, total);
        return (start, Math.Min(limit, total - start));
    }
}
