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
    [JsonPropertyName("outbound_gateways")] public Dictionary<string, RemoteGatewayz> OutboundGateways { get; init; } = [];
    [JsonPropertyName("inbound_gateways")] public Dictionary<string, List<RemoteGatewayz>> InboundGateways { get; init; } = [];
}

/// <summary>One gateway link of /gatewayz (nats-server's RemoteGatewayz; per-account detail is not reported).</summary>
internal sealed class RemoteGatewayz
{
    [JsonPropertyName("configured")] public bool Configured { get; init; }
    [JsonPropertyName("connection")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public ConnzConnection? Connection { get; init; }
}

/// <summary>The <c>gateway</c> part of /varz (nats-server's GatewayOptsVarz).</summary>
internal sealed class VarzGateway
{
    [JsonPropertyName("name")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Name { get; init; }
    [JsonPropertyName("host")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Host { get; init; }
    [JsonPropertyName("port")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; init; }
    [JsonPropertyName("auth_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double AuthTimeout { get; init; }
    [JsonPropertyName("connect_retries")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int ConnectRetries { get; init; }
    [JsonPropertyName("gateways")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<VarzRemoteGateway>? Gateways { get; init; }
    [JsonPropertyName("reject_unknown")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool RejectUnknown { get; init; }
}

/// <summary>One remote of /varz <c>gateway.gateways</c> (nats-server's RemoteGatewayOptsVarz).</summary>
internal sealed class VarzRemoteGateway
{
    [JsonPropertyName("name")] public string Name { get; init; } = "";
    [JsonPropertyName("urls")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? Urls { get; init; }
}
