using Akka.Actor;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// The account's part of /jsz and of <c>$SYS.REQ.ACCOUNT.&lt;account&gt;.JSZ</c> (nats-server's
/// AccountDetail): its usage, and with <c>streams</c> each stream's info, with <c>consumers</c> each
/// stream's consumers' infos. Gathered off the actor, as the other answers about every stream are.
/// </summary>
internal sealed partial class JetStreamApi
{
    /// <summary>The counters this actor keeps itself; the streams' usage is added from their infos.</summary>
    private JetStreamStats NewStats() => new()
    {
        Streams = _streams.Count,
        ApiTotal = _counters.Total,
        ApiErrors = _counters.Errors,
        StoreDirectory = _settings.StoreDirectory,
        ReservedMemory = Reserved(StorageType.Memory),
        ReservedStorage = Reserved(StorageType.File),
    };

    private void OnGetDetail(Protocol.GetDetail get)
    {
        var limits = _settings.Limits;
        var detail = new JetStreamAccountDetail
        {
            Stats = NewStats(),
            MaxMemory = limits?.MaxMemory ?? -1, // the global account: nats-server's dynamic limits, -1
            MaxStorage = limits?.MaxFile ?? -1,
        };
        var streams = _streams.Values.ToArray();
        if (!get.Streams)
        {
            GatherStatsAsync(detail.Stats, streams).PipeTo(Sender, success: _ => detail);
            return;
        }

        GatherDetailAsync(detail, streams, get.Consumers).PipeTo(Sender);
    }

    /// <summary>Adds one stream's usage (its info; nothing when it did not answer) to the totals.</summary>
    private static void Count(JetStreamStats stats, StorageType storage, StreamInfoResponse? info)
    {
        var bytes = info?.State?.Bytes ?? 0;
        stats.Messages += info?.State?.Messages ?? 0;
        stats.Bytes += bytes;
        stats.Consumers += info?.State?.ConsumerCount ?? 0;
        if (storage == StorageType.Memory)
        {
            stats.Memory += bytes;
        }
        else
        {
            stats.Storage += bytes;
        }
    }

    /// <summary>
    /// Every stream's detail, asked of all at once, by name; a stream that does not answer in time is
    /// left out (as nats-server leaves out a consumer whose info is missing), and so is such a consumer.
    /// </summary>
    private static async Task<JetStreamAccountDetail> GatherDetailAsync(JetStreamAccountDetail detail, StreamEntry[] streams, bool withConsumers)
    {
        Array.Sort(streams, (a, b) => string.CompareOrdinal(a.Config.Name, b.Config.Name));
        var asks = new Task<StreamActor.Protocol.Detail>[streams.Length];
        for (var i = 0; i < streams.Length; i++)
        {
            asks[i] = streams[i].Actor.Ask<StreamActor.Protocol.Detail>(StreamActor.Protocol.GetDetail.Instance, InfoTimeout);
        }

        var details = new List<JetStreamStreamDetail>(streams.Length);
        for (var i = 0; i < streams.Length; i++)
        {
            StreamActor.Protocol.Detail stream;
            try
            {
                stream = await asks[i].ConfigureAwait(false);
            }
            catch (Exception e) when (e is AskTimeoutException or TaskCanceledException)
            {
                continue;
            }

            Count(detail.Stats, streams[i].Config.Storage, stream.Info);
            details.Add(new JetStreamStreamDetail
            {
                Info = stream.Info,
                Consumers = withConsumers ? await GatherConsumersAsync(stream.Consumers).ConfigureAwait(false) : null,
            });
        }

        detail.Streams = details;
        return detail;
    }

    private static async Task<IReadOnlyList<ConsumerInfoResponse>> GatherConsumersAsync(IReadOnlyList<IActorRef> consumers)
    {
        var asks = consumers.Select(c => c.Ask<ConsumerInfoResponse>(ConsumerActor.Protocol.GetInfo.Instance, InfoTimeout)).ToArray();
        var infos = new List<ConsumerInfoResponse>(asks.Length);
        foreach (var ask in asks)
        {
            try
            {
                infos.Add(await ask.ConfigureAwait(false));
            }
            catch (Exception e) when (e is AskTimeoutException or TaskCanceledException)
            {
                // a consumer that is going away: nats-server skips a consumer without info
            }
        }

        infos.Sort((a, b) => string.CompareOrdinal(a.Name, b.Name));
        return infos;
    }

    public static partial class Protocol
    {
        /// <summary>Asks for a <see cref="JetStreamAccountDetail"/>: with <paramref name="Streams"/> the streams' infos, with <paramref name="Consumers"/> their consumers' too.</summary>
        public sealed record GetDetail(bool Streams, bool Consumers);
    }
}

/// <summary>One account's JetStream for /jsz's <c>account_details</c> (nats-server's AccountDetail).</summary>
public sealed class JetStreamAccountDetail
{
    /// <summary>The account's usage and API counters.</summary>
    public required JetStreamStats Stats { get; init; }

    /// <summary>The account's <c>max_mem</c> limit in bytes; -1 for none (the detail's <c>reserved_memory</c>).</summary>
    public long MaxMemory { get; init; }

    /// <summary>The account's <c>max_file</c> limit in bytes; -1 for none (the detail's <c>reserved_storage</c>).</summary>
    public long MaxStorage { get; init; }

    /// <summary>The streams, by name; empty unless asked for.</summary>
    public IReadOnlyList<JetStreamStreamDetail> Streams { get; set; } = [];
}

/// <summary>One stream of <see cref="JetStreamAccountDetail"/>.</summary>
public sealed class JetStreamStreamDetail
{
    public required StreamInfoResponse Info { get; init; }

    /// <summary>The consumers' infos, by name; null unless asked for.</summary>
    public IReadOnlyList<ConsumerInfoResponse>? Consumers { get; init; }
}
