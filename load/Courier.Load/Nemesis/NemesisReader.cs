using System.Globalization;
using System.Text;
using System.Text.Json;
using NATS.Client.Core;
using NATS.Client.JetStream;

namespace Courier.Load.Nemesis;

/// <summary>A stored message as one replica had it.</summary>
internal readonly record struct StoredMessage(ulong Seq, string Subject, string Data);

/// <summary>
/// Reads a stream whole from one replica: leadership is moved to that node (STREAM.LEADER.STEPDOWN until it
/// leads; both servers pick the next leader themselves), then every sequence is read with STREAM.MSG.GET,
/// which only the leader answers. So each replica's copy is compared, not only the one the leader holds.
/// </summary>
internal static class NemesisReader
{
    private const int InFlight = 32;  // MSG.GET requests outstanding

    /// <summary>What <see cref="ReadAtAsync"/> answers for a node that holds no replica of the stream (five nodes, three replicas).</summary>
    public static readonly IReadOnlyList<StoredMessage> NotAReplica = new List<StoredMessage>();

    public static async Task<IReadOnlyList<StoredMessage>?> ReadAtAsync(NatsConnection control, string stream, int node, TimeSpan limit)
    {
        var deadline = DateTime.UtcNow + limit;
        while (DateTime.UtcNow < deadline)
        {
            if (await IsReplicaAsync(control, stream, $"n{node + 1}").ConfigureAwait(false) == false)
            {
                return NotAReplica;
            }

            var leader = await NemesisFaults.LeaderAsync(control, stream).ConfigureAwait(false);
            if (leader != node)
            {
                if (leader >= 0)
                {
                    await RequestAsync(control, $"$JS.API.STREAM.LEADER.STEPDOWN.{stream}", "").ConfigureAwait(false);
                }

                await Task.Delay(1_000).ConfigureAwait(false);
                continue;
            }

            var info = await new NatsJSContext(control).GetStreamAsync(stream).ConfigureAwait(false);
            var first = info.Info.State.FirstSeq;
            var last = info.Info.State.LastSeq;
            var read = await ReadRangeAsync(control, stream, first, last).ConfigureAwait(false);
            if (read is not null && await NemesisFaults.LeaderAsync(control, stream).ConfigureAwait(false) == node)
            {
                return read; // the same leader from first read to last
            }
        }

        return null;
    }

    /// <summary>Whether the stream's leader names <paramref name="name"/> among its replicas (itself included); null when nobody answers.</summary>
    private static async Task<bool?> IsReplicaAsync(NatsConnection control, string stream, string name)
    {
        try
        {
            var cluster = (await new NatsJSContext(control).GetStreamAsync(stream).ConfigureAwait(false)).Info.Cluster;
            if (cluster?.Leader is null)
            {
                return null;
            }

            return cluster.Leader == name || (cluster.Replicas?.Any(r => r.Name == name) ?? false);
        }
        catch (Exception e) when (e is NatsException or NatsJSApiException or TimeoutException)
        {
            return null;
        }
    }

    private static async Task<IReadOnlyList<StoredMessage>?> ReadRangeAsync(NatsConnection control, string stream, ulong first, ulong last)
    {
        var result = new List<StoredMessage>();
        if (last < first || last == 0)
        {
            return result;
        }

        var subject = $"$JS.API.STREAM.MSG.GET.{stream}";
        for (var from = first; from <= last; from += InFlight)
        {
            var batch = new List<Task<string?>>();
            for (var seq = from; seq <= last && seq < from + InFlight; seq++)
            {
                batch.Add(RequestAsync(control, subject, string.Create(CultureInfo.InvariantCulture, $"{{\"seq\":{seq}}}")));
            }

            foreach (var answer in await Task.WhenAll(batch).ConfigureAwait(false))
            {
                if (answer is null)
                {
                    return null; // no answer: leadership moving; the caller tries again
                }

                using var doc = JsonDocument.Parse(answer);
                if (doc.RootElement.TryGetProperty("error", out var error))
                {
                    if (error.GetProperty("err_code").GetInt32() == 10037)
                    {
                        continue; // no message at that sequence (deleted, or never there): nothing stored
                    }

                    return null;
                }

                var message = doc.RootElement.GetProperty("message");
                var data = message.TryGetProperty("data", out var d) ? Encoding.ASCII.GetString(d.GetBytesFromBase64()) : "";
                result.Add(new StoredMessage(message.GetProperty("seq").GetUInt64(), message.GetProperty("subject").GetString()!, data));
            }
        }

        return result;
    }

    private static async Task<string?> RequestAsync(NatsConnection control, string subject, string body)
    {
        try
        {
            var reply = await control.RequestAsync<byte[], byte[]>(subject, Encoding.ASCII.GetBytes(body)).ConfigureAwait(false);
            return reply.Data is { } data ? Encoding.UTF8.GetString(data) : null;
        }
        catch (Exception e) when (e is NatsException or TimeoutException)
        {
            return null;
        }
    }
}
