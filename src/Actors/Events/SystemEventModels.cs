using System.Text.Json.Serialization;

namespace Courier.Actors.Events;

/// <summary>The server an event or a system-account answer comes from (nats-server's events.go ServerInfo).</summary>
internal sealed class EventServer
{
    [JsonPropertyName("name")] public string Name { get; init; } = "";
    [JsonPropertyName("host")] public string Host { get; init; } = "";
    [JsonPropertyName("id")] public string Id { get; init; } = "";
    [JsonPropertyName("cluster")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Cluster { get; init; }
    [JsonPropertyName("domain")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Domain { get; init; }
    [JsonPropertyName("ver")] public string Version { get; init; } = "";
    [JsonPropertyName("seq")] public ulong Seq { get; init; }
    [JsonPropertyName("jetstream")] public bool JetStream { get; init; }
    [JsonPropertyName("time")] public DateTime Time { get; init; }
}

/// <summary>A client as connect and disconnect events describe it (nats-server's ClientInfo).</summary>
internal sealed class EventClient
{
    [JsonPropertyName("start")] public DateTime Start { get; init; }
    [JsonPropertyName("host")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Host { get; init; }
    [JsonPropertyName("id")] public ulong Id { get; init; }
    [JsonPropertyName("acc")] public string Account { get; init; } = "";
    [JsonPropertyName("user")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? User { get; init; }
    [JsonPropertyName("name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; init; }
    [JsonPropertyName("lang")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Lang { get; init; }
    [JsonPropertyName("ver")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Version { get; init; }
    [JsonPropertyName("rtt")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public long Rtt { get; init; } // nanoseconds, as Go's time.Duration
    [JsonPropertyName("stop")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public DateTime? Stop { get; init; }
    [JsonPropertyName("jwt")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Jwt { get; init; }
    [JsonPropertyName("kind")] public string Kind { get; init; } = "Client";
    [JsonPropertyName("client_type")] public string ClientType { get; init; } = "nats";
    [JsonPropertyName("client_id")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? MqttClient { get; init; }
}

/// <summary>Messages and bytes, one way.</summary>
internal sealed class DataStats
{
    [JsonPropertyName("msgs")] public long Msgs { get; init; }
    [JsonPropertyName("bytes")] public long Bytes { get; init; }
}

/// <summary><c>$SYS.ACCOUNT.&lt;account&gt;.CONNECT</c> (nats-server's ConnectEventMsg).</summary>
internal sealed class ConnectEvent
{
    public const string EventType = "io.nats.server.advisory.v1.client_connect";

    [JsonPropertyName("type")] public string Type { get; init; } = EventType;
    [JsonPropertyName("id")] public string Id { get; init; } = "";
    [JsonPropertyName("timestamp")] public DateTime Timestamp { get; init; }
    [JsonPropertyName("server")] public EventServer Server { get; init; } = new();
    [JsonPropertyName("client")] public EventClient Client { get; init; } = new();
}

/// <summary><c>$SYS.ACCOUNT.&lt;account&gt;.DISCONNECT</c> (nats-server's DisconnectEventMsg).</summary>
internal sealed class DisconnectEvent
{
    public const string EventType = "io.nats.server.advisory.v1.client_disconnect";

    [JsonPropertyName("type")] public string Type { get; init; } = EventType;
    [JsonPropertyName("id")] public string Id { get; init; } = "";
    [JsonPropertyName("timestamp")] public DateTime Timestamp { get; init; }
    [JsonPropertyName("server")] public EventServer Server { get; init; } = new();
    [JsonPropertyName("client")] public EventClient Client { get; init; } = new();
    [JsonPropertyName("sent")] public DataStats Sent { get; init; } = new();
    [JsonPropertyName("received")] public DataStats Received { get; init; } = new();
    [JsonPropertyName("reason")] public string Reason { get; init; } = "";
}

/// <summary>
/// <c>$SYS.ACCOUNT.&lt;account&gt;.SERVER.CONNS</c> and the answer to <c>$SYS.REQ.ACCOUNT.&lt;account&gt;.CONNS</c>
/// (nats-server's AccountNumConns).
/// </summary>
internal sealed class AccountConnections
{
    public const string EventType = "io.nats.server.advisory.v1.account_connections";

    [JsonPropertyName("type")] public string Type { get; init; } = EventType;
    [JsonPropertyName("id")] public string Id { get; init; } = "";
    [JsonPropertyName("timestamp")] public DateTime Timestamp { get; init; }
    [JsonPropertyName("server")] public EventServer Server { get; init; } = new();
    [JsonPropertyName("acc")] public string Account { get; init; } = "";
    [JsonPropertyName("conns")] public int Connections { get; init; }
    [JsonPropertyName("leafnodes")] public int LeafNodes { get; init; }
    [JsonPropertyName("total_conns")] public int TotalConnections { get; init; }
    [JsonPropertyName("sent")] public DataStats Sent { get; init; } = new();
    [JsonPropertyName("received")] public DataStats Received { get; init; } = new();
    [JsonPropertyName("slow_consumers")] public long SlowConsumers { get; init; }
}

/// <summary>An error of a system-account answer (<c>{"code":...,"description":...}</c>).</summary>
internal sealed class EventError
{
    [JsonPropertyName("code")] public int Code { get; init; }
    [JsonPropertyName("description")] public string Description { get; init; } = "";
}

/// <summary>The answer to a JWT push (<c>$SYS.REQ.CLAIMS.UPDATE</c>): its data or its error part.</summary>
internal sealed class ClaimsUpdateResult
{
    [JsonPropertyName("account")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Account { get; init; }
    [JsonPropertyName("code")] public int Code { get; init; }
    [JsonPropertyName("message")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Message { get; init; }
    [JsonPropertyName("description")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Description { get; init; }
}

/// <summary><c>{"server":...,"data"|"error":...}</c> of a JWT push answer.</summary>
internal sealed class ClaimsUpdateResponse
{
    [JsonPropertyName("server")] public EventServer Server { get; init; } = new();
    [JsonPropertyName("data")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ClaimsUpdateResult? Data { get; init; }
    [JsonPropertyName("error")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ClaimsUpdateResult? Error { get; init; }
}

[JsonSerializable(typeof(EventServer))]
[JsonSerializable(typeof(ConnectEvent))]
[JsonSerializable(typeof(DisconnectEvent))]
[JsonSerializable(typeof(AccountConnections))]
[JsonSerializable(typeof(EventError))]
[JsonSerializable(typeof(ClaimsUpdateResponse))]
internal sealed partial class EventsJsonContext : JsonSerializerContext;
