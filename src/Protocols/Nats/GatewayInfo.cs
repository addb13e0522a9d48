using System.Text.Json.Serialization;

namespace Courier.Protocols.Nats;

/// <summary>
/// The INFO on a gateway link (nats-server 2.9's Info as gateway.go fills it): sent by the accepting side
/// first, and by the dialling side right after its CONNECT; later ones carry a command: gossip of another
/// gateway (<see cref="GatewayCommands.Gossip"/> with its URLs), or the start and end of an account's
/// switch to interest-only mode (the account name in <see cref="CommandPayload"/>, base64 as Go's []byte).
/// </summary>
public sealed class GatewayInfo
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("server_name")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? ServerName { get; set; }

    [JsonPropertyName("version")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Version { get; set; }

    [JsonPropertyName("go")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Go { get; set; }

    [JsonPropertyName("host")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Host { get; set; }

    [JsonPropertyName("port")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int Port { get; set; }

    [JsonPropertyName("headers")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Headers { get; set; }

    [JsonPropertyName("auth_required")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool AuthRequired { get; set; }

    [JsonPropertyName("tls_required")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool TlsRequired { get; set; }

    [JsonPropertyName("tls_verify")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool TlsVerify { get; set; }

    [JsonPropertyName("max_payload")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public int MaxPayload { get; set; }

    /// <summary>The sender's gateway (cluster) name; for a gossip command, the name of the gateway gossiped.</summary>
    [JsonPropertyName("gateway")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Gateway { get; set; }

    /// <summary>The gateway URLs of that gateway's cluster.</summary>
    [JsonPropertyName("gateway_urls")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string[]? GatewayUrls { get; set; }

    /// <summary>The command (<see cref="GatewayCommands"/>); 0 for none.</summary>
    [JsonPropertyName("gateway_cmd")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public byte Command { get; set; }

    /// <summary>The command's payload: the account of an interest-only switch.</summary>
    [JsonPropertyName("gateway_cmd_payload")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public byte[]? CommandPayload { get; set; }

    /// <summary>Mapped replies use the <c>_GR_.</c> prefix (not the old <c>$GR.</c>).</summary>
    [JsonPropertyName("gateway_nrp")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool NewReplyPrefix { get; set; }

    /// <summary>The sender switches every account to interest-only mode at once (nats-server 2.9+).</summary>
    [JsonPropertyName("gateway_iom")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool InterestOnlyMode { get; set; }
}

/// <summary>nats-server's gatewayCmd codes (server/gateway.go).</summary>
public static class GatewayCommands
{
    /// <summary>gatewayCmdGossip: here is another gateway of the super-cluster.</summary>
    public const byte Gossip = 1;

    /// <summary>gatewayCmdAllSubsStart: the account switches to interest-only mode; its RS+ follow.</summary>
    public const byte AllSubsStart = 2;

    /// <summary>gatewayCmdAllSubsComplete: all of the account's RS+ were sent.</summary>
    public const byte AllSubsComplete = 3;
}

/// <summary>The CONNECT a dialling gateway sends (nats-server's sendGatewayConnect).</summary>
public sealed class GatewayConnect
{
    [JsonPropertyName("echo")]
    public bool Echo { get; set; }

    [JsonPropertyName("verbose")]
    public bool Verbose { get; set; }

    [JsonPropertyName("pedantic")]
    public bool Pedantic { get; set; }

    [JsonPropertyName("user")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? User { get; set; }

    [JsonPropertyName("pass")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Pass { get; set; }

    [JsonPropertyName("tls_required")]
    public bool TlsRequired { get; set; }

    /// <summary>The dialling server's id.</summary>
    [JsonPropertyName("name")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Name { get; set; }

    /// <summary>The dialling server's gateway name; a CONNECT without one is a client's or a route's.</summary>
    [JsonPropertyName("gateway")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Gateway { get; set; }

    /// <summary>A client's CONNECT names its language.</summary>
    [JsonPropertyName("lang")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Lang { get; set; }
}
