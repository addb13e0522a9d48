using System.Buffers;
using System.Text.Json;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.JetStream;
using Courier.Protocols.JetStream;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// /jsz and the account JSZ request, as nats-server 2.9.10 builds them (server/monitor.go Jsz,
/// JszAccount, accountDetail): the server's totals over every JetStream account, and the details
/// of the accounts asked for, each built only from that account's own JetStream actor.
/// </summary>
internal sealed partial class MonitoringPages
{
    /// <summary>/jsz page size of account details when none is asked for (nats-server's default limit).</summary>
    private const int DefaultJszLimit = 1024;

    /// <summary>How long /jsz waits for one account's JetStream to gather its answer.</summary>
    private static readonly TimeSpan JszTimeout = TimeSpan.FromSeconds(20);

    /// <summary>
    /// /jsz; null when the request is to be skipped (nats-server's errSkipZreq: <c>leader-only</c> on a
    /// server without JetStream, which /jsz answers with a 400 and a system request not at all).
    /// </summary>
    public async Task<Jsz?> JszAsync(JszQuery query)
    {
        // As nats-server's Jsz: consumers imply streams, streams imply accounts; limit 0 is 1024.
        var limit = query.Limit == 0 ? DefaultJszLimit : query.Limit;
        var streams = query.Streams || query.Consumers;
        var accounts = query.Accounts || streams;

        var enabled = new List<Account>();
        foreach (var account in _broker.Accounts.All)
        {
            if (account.JetStream is not null)
            {
                enabled.Add(account);
            }
        }

        if (!_broker.Options.JetStream || enabled.Count == 0)
        {
            return query.LeaderOnly ? null : new Jsz { ServerId = _broker.ServerId, Now = DateTime.UtcNow, Disabled = true };
        }

        // Sorted by name: nats-server's order is its map's, and sorted when paged with an offset.
        enabled.Sort((a, b) => string.CompareOrdinal(a.Name, b.Name));
        IReadOnlyList<Account> selected;
        if (enabled.Find(a => a.Name == query.Account) is { } one)
        {
            selected = [one];
        }
        else if (accounts)
        {
            var offset = Math.Clamp(query.Offset, 0, enabled.Count);
            selected = enabled.GetRange(offset, Math.Clamp(limit, 0, enabled.Count - offset));
        }
        else
        {
            selected = [];
        }

        var asks = new Task<JetStreamAccountDetail>[enabled.Count];
        for (var i = 0; i < enabled.Count; i++)
        {
            var detailed = selected.Contains(enabled[i]);
            asks[i] = AskDetailAsync(enabled[i], detailed && streams, detailed && query.Consumers);
        }

        var gathered = await Task.WhenAll(asks).ConfigureAwait(false);
        ulong memory = 0, storage = 0, reservedMemory = 0, reservedStorage = 0, messages = 0, bytes = 0;
        long apiTotal = 0, apiErrors = 0;
        int streamCount = 0, consumerCount = 0;
        string storeDirectory = "";
        var details = new List<JszAccountDetail>(selected.Count);
        for (var i = 0; i < enabled.Count; i++)
        {
            var stats = gathered[i].Stats;
            memory += stats.Memory;
            storage += stats.Storage;
            reservedMemory += (ulong)Math.Max(0, stats.ReservedMemory);
            reservedStorage += (ulong)Math.Max(0, stats.ReservedStorage);
            apiTotal += stats.ApiTotal;
            apiErrors += stats.ApiErrors;
            streamCount += stats.Streams;
            consumerCount += stats.Consumers;
            messages += stats.Messages;
            bytes += stats.Bytes;
            storeDirectory = stats.StoreDirectory;
            if (selected.Contains(enabled[i]))
            {
                details.Add(AccountDetailOf(enabled[i], gathered[i], query.Config));
            }
        }

        return new Jsz
        {
            ServerId = _broker.ServerId,
            Now = DateTime.UtcNow,
            Config = VarzJetStreamConfig.From(_broker.Options, storeDirectory),
            Memory = memory,
            Storage = storage,
            ReservedMemory = reservedMemory,
            ReservedStorage = reservedStorage,
            Accounts = enabled.Count,
            Api = new JszApi { Total = apiTotal, Errors = apiErrors },
            Streams = streamCount,
            Consumers = consumerCount,
            Messages = messages,
            Bytes = bytes,
            MetaCluster = _broker.JetStreamCluster?.MetaView() is { } meta
                ? new JszMetaCluster
                {
                    Name = _broker.Routes?.ClusterName,
                    Leader = meta.Leader,
                    Peer = JetStreamCluster.NameHash(meta.Leader),
                    Replicas = [.. meta.Others.Select(o => new JszPeerInfo { Name = o.Name, Current = o.Up, Offline = !o.Up, Peer = JetStreamCluster.NameHash(o.Name) })],
                    ClusterSize = meta.Size,
                }
                : null,
            AccountDetails = details.Count == 0 ? null : details,
        };
    }

    /// <summary>
    /// <c>$SYS.REQ.ACCOUNT.&lt;account&gt;.JSZ</c>'s data (nats-server's JszAccount): that account's detail
    /// alone, its options taken as given (no implied streams). The account has JetStream.
    /// </summary>
    public async Task<JszAccountDetail> JszAccountAsync(Account account, JszQuery query)
    {
        var detail = await AskDetailAsync(account, query.Streams, query.Consumers).ConfigureAwait(false);
        return AccountDetailOf(account, detail, query.Config);
    }

    private static Task<JetStreamAccountDetail> AskDetailAsync(Account account, bool streams, bool consumers) =>
        account.JetStream!.Ask<JetStreamAccountDetail>(new JetStreamApi.Protocol.GetDetail(streams, consumers), JszTimeout);

    private JszAccountDetail AccountDetailOf(Account account, JetStreamAccountDetail detail, bool withConfig)
    {
        List<JszStreamDetail>? streams = null;
        foreach (var stream in detail.Streams)
        {
            (streams ??= []).Add(StreamDetailOf(stream, withConfig));
        }

        return new JszAccountDetail
        {
            Name = account.Options?.NameTag ?? account.Name, // nats-server: the JWT's name when there is one
            Id = account.Name,
            Memory = detail.Stats.Memory,
            Storage = detail.Stats.Storage,
            ReservedMemory = unchecked((ulong)detail.MaxMemory), // Go's uint64(-1) for no limit
            ReservedStorage = unchecked((ulong)detail.MaxStorage),
            Api = new JszApi { Total = detail.Stats.ApiTotal, Errors = detail.Stats.ApiErrors },
            Streams = streams,
        };
    }

    private JszStreamDetail StreamDetailOf(JetStreamStreamDetail stream, bool withConfig)
    {
        var info = JsonSerializer.SerializeToElement(stream.Info, JetStreamJsonContext.Default.StreamInfoResponse);
        List<JsonElement>? consumers = null;
        foreach (var consumer in stream.Consumers ?? [])
        {
            (consumers ??= []).Add(ConsumerDetailOf(consumer, withConfig));
        }

        return new JszStreamDetail
        {
            Name = stream.Info.Config?.Name ?? "",
            Created = stream.Info.Created,
            Cluster = stream.Info.Cluster is { } cluster
                ? new JszClusterInfo
                {
                    Name = cluster.Name,
                    Leader = cluster.Leader,
                    Replicas = cluster.Replicas is { Count: > 0 } replicas
                        ? [.. replicas.Select(r => new JszPeerInfo { Name = r.Name, Current = r.Current, Offline = r.Offline, Active = r.Active, Lag = r.Lag, Peer = r.Peer })]
                        : null,
                }
                : ClusterInfo(),
            Config = withConfig && info.TryGetProperty("config", out var config) ? config : null,
            State = info.GetProperty("state"),
            Consumers = consumers,
            Mirror = info.TryGetProperty("mirror", out var mirror) ? mirror : null,
            Sources = info.TryGetProperty("sources", out var sources) ? sources : null,
        };
    }

    // A single server's ClusterInfo for a stream: its cluster's name (none without one), itself as leader.
    private JszClusterInfo ClusterInfo() => new()
    {
        Name = _broker.Routes?.ClusterName is { Length: > 0 } cluster ? cluster : null,
        Leader = _broker.ServerName,
    };

    /// <summary>
    /// A consumer as nats-server 2.9.10's consumer info() gives it to /jsz: CONSUMER.INFO's JSON without
    /// the response's <c>type</c> and Courier's <c>ts</c> (2.9.10's ConsumerInfo has neither), with no
    /// <c>cluster</c> (only the API's reply path adds it), and the config only with <c>config</c>.
    /// </summary>
    private static JsonElement ConsumerDetailOf(ConsumerInfoResponse consumer, bool withConfig)
    {
        var source = JsonSerializer.SerializeToElement(consumer, ConsumerJsonContext.Default.ConsumerInfoResponse);
        var buffer = new ArrayBufferWriter<byte>();
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            foreach (var property in source.EnumerateObject())
            {
                if (!property.NameEquals("type") && !property.NameEquals("error") && !property.NameEquals("ts") && (withConfig || !property.NameEquals("config")))
                {
                    property.WriteTo(writer);
                }
            }

            writer.WriteEndObject();
        }

        using var document = JsonDocument.Parse(buffer.WrittenMemory);
        return document.RootElement.Clone();
    }
}
