using System.Text.Json;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// <c>jetstream_*</c>: prometheus-nats-exporter's jsz collector (collector/jsz.go, <c>-jsz=all</c>)
/// over /jsz with accounts, streams, consumers and config: the server's totals, each account's
/// usage and limits, each stream's state and limits, its sources and mirror, each consumer's
/// positions, all gauges, with the exporter's label names in its order.
/// </summary>
internal sealed partial class PrometheusMetrics
{
    private static readonly string[] ServerLabels = ["server_id", "server_name", "cluster", "domain", "meta_leader", "is_meta_leader"];
    private static readonly string[] AccountLabels = [.. ServerLabels, "account", "account_name", "account_id"];
    private static readonly string[] StreamLabels = [.. AccountLabels, "stream_name", "stream_leader", "is_stream_leader", "stream_raft_group"];
    private static readonly string[] ConsumerLabels = [.. StreamLabels, "consumer_name", "consumer_leader", "is_consumer_leader", "consumer_desc"];
    private static readonly string[] SourceLabels = [.. StreamLabels, "source_name", "source_api", "source_deliver"];
    private static readonly string[] MirrorLabels = [.. StreamLabels, "mirror_name", "mirror_api", "mirror_deliver"];

    private async Task UpdateJetStreamAsync(string serverId)
    {
        var jsz = await _pages.JszAsync(new JszQuery(Accounts: true, Streams: true, Consumers: true, Config: true)).ConfigureAwait(false);
        if (jsz is null)
        {
            return;
        }

        // As the exporter: without a meta cluster the server is its own meta leader.
        var serverName = _broker.ServerName;
        var meta = jsz.MetaCluster;
        string[] server =
        [
            serverId, serverName, meta?.Name ?? "", jsz.Config.Domain ?? "", meta?.Leader ?? "",
            meta is null || meta.Leader == serverName ? "true" : "false",
        ];

        JetStream("server", "jetstream_disabled", "JetStream disabled or not", ServerLabels).Set(jsz.Disabled ? 1 : 0, server);
        JetStream("server", "max_memory", "JetStream Max Memory", ServerLabels).Set(jsz.Config.MaxMemory, server);
        JetStream("server", "max_storage", "JetStream Max Storage", ServerLabels).Set(jsz.Config.MaxStorage, server);
        JetStream("server", "total_streams", "Total number of streams in JetStream", ServerLabels).Set(jsz.Streams, server);
        JetStream("server", "total_consumers", "Total number of consumers in JetStream", ServerLabels).Set(jsz.Consumers, server);
        JetStream("server", "total_messages", "Total number of stored messages in JetStream", ServerLabels).Set(jsz.Messages, server);
        JetStream("server", "total_message_bytes", "Total number of bytes stored in JetStream", ServerLabels).Set(jsz.Bytes, server);

        foreach (var account in jsz.AccountDetails ?? [])
        {
            string[] accountValues = [.. server, account.Name, account.Name, account.Id];
            JetStream("account", "max_storage", "JetStream Account Max Storage in bytes", AccountLabels).Set(account.ReservedStorage, accountValues);
            JetStream("account", "max_memory", "JetStream Account Max Memory in bytes", AccountLabels).Set(account.ReservedMemory, accountValues);
            JetStream("account", "storage_used", "Total number of bytes used by JetStream storage", AccountLabels).Set(account.Storage, accountValues);
            JetStream("account", "memory_used", "Total number of bytes used by JetStream memory", AccountLabels).Set(account.Memory, accountValues);
            foreach (var stream in account.Streams ?? [])
            {
                UpdateStream(stream, accountValues, serverName, jsz.Now);
            }
        }
    }

    // The exporter's stream gauges read from a stream's state: name, help, the state's field.
    private static readonly (string Name, string Help, string Field)[] StreamStateGauges =
    [
        ("total_messages", "Total number of messages from a stream", "messages"),
        ("total_bytes", "Total stored bytes from a stream", "bytes"),
        ("first_seq", "First sequence from a stream", "first_seq"),
        ("last_seq", "Last sequence from a stream", "last_seq"),
        ("consumer_count", "Total number of consumers from a stream", "consumer_count"),
        ("subject_count", "Total number of subjects in a stream", "num_subjects"),
    ];

    // The exporter's consumer gauges: name, help, the info's part (delivered, ack_floor, or the info itself), its field.
    private static readonly (string Name, string Help, string Part, string Field)[] ConsumerGauges =
    [
        ("delivered_consumer_seq", "Latest sequence number of a stream consumer", "delivered", "consumer_seq"),
        ("delivered_stream_seq", "Latest sequence number of a stream", "delivered", "stream_seq"),
        ("num_ack_pending", "Number of pending acks from a consumer", "", "num_ack_pending"),
        ("num_redelivered", "Number of redelivered messages from a consumer", "", "num_redelivered"),
        ("num_waiting", "Number of inflight fetch requests from a pull consumer", "", "num_waiting"),
        ("num_pending", "Number of pending messages from a consumer", "", "num_pending"),
        ("ack_floor_stream_seq", "Number of ack floor stream seq from a consumer", "ack_floor", "stream_seq"),
        ("ack_floor_consumer_seq", "Number of ack floor consumer seq from a consumer", "ack_floor", "consumer_seq"),
    ];

    private void UpdateStream(JszStreamDetail stream, string[] account, string serverName, DateTime now)
    {
        var leader = stream.Cluster?.Leader ?? "";
        string[] labels = [.. account, stream.Name, leader, stream.Cluster is null || leader == serverName ? "true" : "false", ""];
        var state = stream.State;
        foreach (var (name, help, field) in StreamStateGauges)
        {
            JetStream("stream", name, help, StreamLabels).Set(Number(state, field), labels);
        }

        if (stream.Config is { } config)
        {
            JetStream("stream", "limit_bytes", "The maximum configured storage limit (in bytes) for a JetStream stream. A value of -1 indicates no limit.", StreamLabels)
                .Set(Number(config, "max_bytes"), labels);
            JetStream("stream", "limit_messages", "The maximum number of messages allowed in a JetStream stream as per its configuration. A value of -1 indicates no limit.", StreamLabels)
                .Set(Number(config, "max_msgs"), labels);
        }

        if (stream.Sources is { ValueKind: JsonValueKind.Array } sources)
        {
            foreach (var source in sources.EnumerateArray())
            {
                string[] sourceValues = [.. labels, Text(source, "name"), External(source, "api"), External(source, "deliver")];
                JetStream("stream", "source_lag", "Number of messages a stream source is behind", SourceLabels).Set(Number(source, "lag"), sourceValues);
                JetStream("stream", "source_active_duration_ns", "Stream source active duration in nanoseconds (-1 indicates inactive)", SourceLabels)
                    .Set(Number(source, "active"), sourceValues);
            }
        }

        if (stream.Mirror is { ValueKind: JsonValueKind.Object } mirror)
        {
            string[] mirrorValues = [.. labels, Text(mirror, "name"), External(mirror, "api"), External(mirror, "deliver")];
            JetStream("stream", "mirror_lag", "Number of messages a stream mirror is behind", MirrorLabels).Set(Number(mirror, "lag"), mirrorValues);
            JetStream("stream", "mirror_active_duration_ns", "Stream mirror active duration in nanoseconds (-1 indicates inactive)", MirrorLabels)
                .Set(Number(mirror, "active"), mirrorValues);
        }

        foreach (var consumer in stream.Consumers ?? [])
        {
            UpdateConsumer(consumer, labels, new DateTimeOffset(now, TimeSpan.Zero));
        }
    }

    private void UpdateConsumer(JsonElement consumer, string[] stream, DateTimeOffset now)
    {
        // A single server's consumer has no cluster: it leads itself, as the exporter says.
        var description = consumer.TryGetProperty("config", out var config) ? Text(config, "description") : "";
        string[] labels = [.. stream, Text(consumer, "name"), "", "true", description];
        consumer.TryGetProperty("delivered", out var delivered);
        consumer.TryGetProperty("ack_floor", out var ackFloor);

        // The exporter subtracts from the info's "ts", which nats-server 2.9's /jsz (and so Courier's) lacks: the page's time instead.
        if (delivered.ValueKind == JsonValueKind.Object && delivered.TryGetProperty("last_active", out var lastDelivery) && lastDelivery.TryGetDateTimeOffset(out var deliveredAt))
        {
            JetStream("consumer", "last_delivery_seconds", "Seconds since last message delivery to consumer", ConsumerLabels).Set((now - deliveredAt).TotalSeconds, labels);
        }

        if (ackFloor.ValueKind == JsonValueKind.Object && ackFloor.TryGetProperty("last_active", out var lastAck) && lastAck.TryGetDateTimeOffset(out var ackedAt))
        {
            JetStream("consumer", "last_ack_seconds", "Seconds since last ack from consumer", ConsumerLabels).Set((now - ackedAt).TotalSeconds, labels);
        }

        foreach (var (name, help, part, field) in ConsumerGauges)
        {
            var source = part switch
            {
                "delivered" => delivered,
                "ack_floor" => ackFloor,
                _ => consumer,
            };
            JetStream("consumer", name, help, ConsumerLabels).Set(Number(source, field), labels);
        }
    }

    private ScrapedFamily JetStream(string subsystem, string name, string help, string[] labelNames) =>
        Gauge($"{JetStreamSystem}_{subsystem}_{name}", help, labelNames);

    // A field Go would decode as 0 when it is absent (omitempty), and so does the exporter.
    private static double Number(JsonElement element, string name) =>
        element.ValueKind == JsonValueKind.Object && element.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.Number ? value.GetDouble() : 0;

    private static string Text(JsonElement element, string name) =>
        element.ValueKind == JsonValueKind.Object && element.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.String ? value.GetString()! : "";

    // A source's or mirror's external API and deliver prefixes (nats-server's ExternalStream: "api", "deliver").
    private static string External(JsonElement element, string name) =>
        element.TryGetProperty("external", out var external) ? Text(external, name) : "";
}
