using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// <c>api.total</c> and <c>api.errors</c> of $JS.API.INFO and /jsz, counted as nats-server counts
/// them (sendAPIResponse / sendAPIErrResponse): one per answer, when it is sent, so an account info
/// answer does not count itself. Pull requests and direct gets are not API answers and do not count.
/// Shared by the API actor and the stream actors, which answer their own requests.
/// </summary>
internal sealed class ApiCounters
{
    private long _total;
    private long _errors;

    public long Total => Interlocked.Read(ref _total);

    public long Errors => Interlocked.Read(ref _errors);

    /// <summary>Counts one answer; an error when it carries one.</summary>
    public void Count(object response)
    {
        Interlocked.Increment(ref _total);
        if (response is ApiResponse { Error: not null })
        {
            Interlocked.Increment(ref _errors);
        }
    }
}
