using System.Text.Json.Serialization;

namespace Courier.Protocols.Nats;

/// <summary>
/// The INFO JSON one server sends another over a route, with nats-server 2.9's field names
/// (server.go's Info as startRouteAcceptLoop fills it). Unknown fields are ignored on read.
/// </summary>
public sealed class RouteInfo
{
    [JsonPropertyName("server_id")]
    public string ServerId { get; set; } = "";

    [JsonPropertyName("server_name")]
    public string ServerName { get; set; } = "";

    [JsonPropertyName("version")]
    public string Version { get; set; } = "";

    [JsonPropertyName("go")]
    public string Go { get; set; } = "";

    /// <summary>The route listener's host (or the advertised one).</summary>
    [JsonPropertyName("host")]
    public string Host { get; set; } = "";

    /// <summary>The route listener's port (or the advertised one).</summary>
    [JsonPropertyName("port")]
    public int Port { get; set; }

    [JsonPropertyName("headers")]
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
    public int MaxPayload { get; set; }

    [JsonPropertyName("jetstream")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool JetStream { get; set; }

    /// <summary>Route protocol version: 2 in nats-server 2.9 (RouteProtoV2, accounts in RS+/RMSG).</summary>
    [JsonPropertyName("proto")]
    public int Proto { get; set; }

    /// <summary>The clients' URLs of the sender (host:port), unless it has <c>no_advertise</c>.</summary>
    [JsonPropertyName("connect_urls")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<string>? ConnectUrls { get; set; }

    /// <summary>
    /// The route URL to dial the sender on (<c>nats-route://host:port/</c>): set with <c>cluster.advertise</c>,
    /// and by a server that forwards a new peer's INFO to its other routes (gossip).
    /// </summary>
    [JsonPropertyName("ip")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Ip { get; set; }

    [JsonPropertyName("cluster")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Cluster { get; set; }

    /// <summary>The cluster name was generated, not configured: the sender adopts a configured one.</summary>
    [JsonPropertyName("cluster_dynamic")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Dynamic { get; set; }

    /// <summary>Leafnode origin cluster support (nats-server always says true).</summary>
    [JsonPropertyName("lnoc")]
    public bool Lnoc { get; set; }

    [JsonPropertyName("nonce")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Nonce { get; set; }

    /// <summary>The sender is shutting down gracefully (lame duck mode).</summary>
    [JsonPropertyName("ldm")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool LameDuckMode { get; set; }

    /// <summary>Courier only (nats-server ignores it): the sender's Akka.Cluster address, <c>akka.tcp://system@host:port</c>.</summary>
    [JsonPropertyName("courier_akka")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? CourierAkka { get; set; }

    /// <summary>Shallow copy.</summary>
    public RouteInfo Clone() => (RouteInfo)MemberwiseClone();
}

/// <summary>The CONNECT JSON a server sends on a route it dialled (route.go's sendRouteConnect).</summary>
public sealed class RouteConnect
{
    [JsonPropertyName("echo")]
    public bool Echo { get; set; } = true;

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

    /// <summary>The sender's server id.</summary>
    [JsonPropertyName("name")]
    public string Name { get; set; } = "";

    [JsonPropertyName("headers")]
    public bool Headers { get; set; }

    [JsonPropertyName("cluster")]
    public string Cluster { get; set; } = "";

    [JsonPropertyName("cluster_dynamic")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)]
    public bool Dynamic { get; set; }

    [JsonPropertyName("lnoc")]
    public bool Lnoc { get; set; }

    /// <summary>Clients send a language; a route never does (how nats-server spots a client on the route port).</summary>
    [JsonPropertyName("lang")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Lang { get; set; }

    /// <summary>Set by a gateway connection that dialled the route port by mistake.</summary>
    [JsonPropertyName("gateway")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Gateway { get; set; }
}
