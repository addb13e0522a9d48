using System.Text.Json.Serialization;

namespace Courier.Protocols.Nats;

/// <summary>The INFO JSON a server sends on connect, with nats-server's field names.</summary>
public sealed class ServerInfo
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("server_name")]
    public string ServerName { get; set; } = "";

    /// <summary>The nats-server version whose behaviour is implemented; clients gate features on it.</summary>
    [JsonPropertyName("version")]
    public string Version { get; set; } = "";

    [JsonPropertyName("proto")]
    public int Proto { get; set; } = 1;

    [JsonPropertyName("go")]
    public string Go { get; set; } = "";

    [JsonPropertyName("host")]
    public string Host { get; set; } = "";

    [JsonPropertyName("port")]
    public int Port { get; set; }

    [JsonPropertyName("headers")]
    public bool Headers { get; set; } = true;

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
    public int MaxPayload { get; set; }

    [JsonPropertyName("jetstream")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool JetStream { get; set; }

    /// <summary>Omitted when 0, as nats-server.</summary>
    [JsonPropertyName("client_id")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public ulong ClientId { get; set; }

    [JsonPropertyName("client_ip")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? ClientIp { get; set; }

    [JsonPropertyName("nonce")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Nonce { get; set; }

    /// <summary>Set only in the async INFO that announces lame duck mode.</summary>
    [JsonPropertyName("ldm")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool LameDuckMode { get; set; }

    [JsonPropertyName("connect_urls")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<string>? ConnectUrls { get; set; }

    /// <summary>Shallow copy, for the per-client fields.</summary>
    public ServerInfo Clone() => (ServerInfo)MemberwiseClone();
}
