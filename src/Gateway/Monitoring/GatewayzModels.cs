using System.Text.Json.Serialization;

namespace Courier.Gateway.Monitoring;

/// <summary>/gatewayz (nats-server 2.9's Gatewayz).</summary>
internal sealed class Gatewayz
{
    [JsonPropertyName("server_id")] public string ServerId { get; init; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; init; }
    [JsonPropertyName("name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; init; }
    [JsonPropertyName("host")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Host { get; init; }
    [JsonPropertyName("port")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; init; }
    /// <summary>Null (JSON null) when the remote gateway asked for by name has no outbound link, as nats-server's.</summary>
    [JsonPropertyName("outbound_gateways")] public Dictionary<string, RemoteGatewayz>? OutboundGateways { get; init; } = [];
    [JsonPropertyName("inbound_gateways")] public Dictionary<string, List<RemoteGatewayz>> InboundGateways { get; init; } = [];
}

/// <summary>One gateway link of /gatewayz (nats-server's RemoteGatewayz).</summary>
internal sealed class RemoteGatewayz
{
    [JsonPropertyName("configured")] public bool Configured { get; init; }
    [JsonPropertyName("connection")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ConnzConnection? Connection { get; init; }
    [JsonPropertyName("accounts")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<AccountGatewayz>? Accounts { get; init; }
}

/// <summary>
/// One account's interest mode on a gateway link (nats-server's AccountGatewayz). Courier's links are in
/// interest-only mode for every account they carry, so the mode is always <c>Interest-Only</c>.
/// </summary>
internal sealed class AccountGatewayz
{
    [JsonPropertyName("name")] public string Name { get; init; } = "";
    [JsonPropertyName("interest_mode")] public string InterestMode { get; init; } = "";
    [JsonPropertyName("no_interest_count")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int NoInterestCount { get; init; }
    [JsonPropertyName("interest_only_threshold")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int InterestOnlyThreshold { get; init; }
    [JsonPropertyName("num_subs")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int TotalSubscriptions { get; init; }
    [JsonPropertyName("num_queue_subs")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int NumQueueSubscriptions { get; init; }
}

/// <summary>
/// /gatewayz's options (nats-server's GatewayzOptions): only the remote gateway <paramref name="Name"/>;
/// with <paramref name="Accounts"/> each link's accounts, or only <paramref name="AccountName"/>'s.
/// </summary>
internal readonly record struct GatewayzQuery(string? Name = null, bool Accounts = false, string? AccountName = null);

/// <summary>The <c>gateway</c> part of /varz (nats-server's GatewayOptsVarz).</summary>
internal sealed class VarzGateway
{
    [JsonPropertyName("name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; init; }
    [JsonPropertyName("host")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Host { get; init; }
    [JsonPropertyName("port")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; init; }
    [JsonPropertyName("auth_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double AuthTimeout { get; init; }
    [JsonPropertyName("tls_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double TlsTimeout { get; init; }
    [JsonPropertyName("tls_required")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TlsRequired { get; init; }
    [JsonPropertyName("tls_verify")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TlsVerify { get; init; }
    [JsonPropertyName("connect_retries")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int ConnectRetries { get; init; }
    [JsonPropertyName("gateways")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<VarzRemoteGateway>? Gateways { get; init; }
    [JsonPropertyName("reject_unknown")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool RejectUnknown { get; init; }
}

/// <summary>One remote of /varz <c>gateway.gateways</c> (nats-server's RemoteGatewayOptsVarz).</summary>
internal sealed class VarzRemoteGateway
{
    [JsonPropertyName("name")] public string Name { get; init; } = "";
    [JsonPropertyName("tls_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double TlsTimeout { get; init; }
    [JsonPropertyName("urls")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? Urls { get; init; }
}
