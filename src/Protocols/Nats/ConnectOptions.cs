using System.Text.Json.Serialization;

namespace Courier.Protocols.Nats;

/// <summary>The CONNECT JSON a client sends, with nats-server's field names.</summary>
public sealed class ConnectOptions
{
    /// <summary>+OK after each command. True unless the client says otherwise, as nats-server's defaults.</summary>
    [JsonPropertyName("verbose")]
    public bool Verbose { get; set; } = true;

    /// <summary>Strict subject checks. True unless the client says otherwise, as nats-server's defaults.</summary>
    [JsonPropertyName("pedantic")]
    public bool Pedantic { get; set; } = true;

    [JsonPropertyName("tls_required")]
    public bool TlsRequired { get; set; }

    [JsonPropertyName("auth_token")]
    public string? AuthToken { get; set; }

    [JsonPropertyName("user")]
    public string? User { get; set; }

    [JsonPropertyName("pass")]
    public string? Pass { get; set; }

    [JsonPropertyName("name")]
    public string? Name { get; set; }

    [JsonPropertyName("lang")]
    public string? Lang { get; set; }

    [JsonPropertyName("version")]
    public string? Version { get; set; }

    /// <summary>0: original protocol; 1: the client understands async INFO.</summary>
    [JsonPropertyName("protocol")]
    public int Protocol { get; set; }

    /// <summary>Whether the client receives its own messages; true unless it says otherwise.</summary>
    [JsonPropertyName("echo")]
    public bool Echo { get; set; } = true;

    [JsonPropertyName("headers")]
    public bool Headers { get; set; }

    [JsonPropertyName("no_responders")]
    public bool NoResponders { get; set; }

    [JsonPropertyName("jwt")]
    public string? Jwt { get; set; }

    [JsonPropertyName("nkey")]
    public string? Nkey { get; set; }

    [JsonPropertyName("sig")]
    public string? Sig { get; set; }
}
