using System.Text.Json.Serialization;

namespace Courier.Gateway.Monitoring;

/// <summary>/leafz (nats-server's Leafz).</summary>
internal sealed class Leafz
{
    [JsonPropertyName("server_id")] public string ServerId { get; init; } = "";
    [JsonPropertyName("now")] public DateTime Now { get; init; }
    [JsonPropertyName("leafnodes")] public int NumLeafs { get; init; }
    /// <summary>Null (JSON null) without links, as nats-server's nil slice.</summary>
    [JsonPropertyName("leafs")] public IReadOnlyList<LeafzLeaf>? Leafs { get; init; }
}

/// <summary>One leaf node link of /leafz (nats-server's LeafInfo; <c>name</c> and <c>is_spoke</c> as 2.10 adds them).</summary>
internal sealed class LeafzLeaf
{
    [JsonPropertyName("name")] public string Name { get; init; } = "";
    [JsonPropertyName("is_spoke")] public bool IsSpoke { get; init; }
    [JsonPropertyName("account")] public string Account { get; init; } = "";
    [JsonPropertyName("ip")] public string Ip { get; init; } = "";
    [JsonPropertyName("port")] public int Port { get; init; }
    [JsonPropertyName("rtt")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Rtt { get; init; }
    [JsonPropertyName("in_msgs")] public long InMsgs { get; init; }
    [JsonPropertyName("out_msgs")] public long OutMsgs { get; init; }
    [JsonPropertyName("in_bytes")] public long InBytes { get; init; }
    [JsonPropertyName("out_bytes")] public long OutBytes { get; init; }
    [JsonPropertyName("subscriptions")] public int NumSubs { get; init; }
    [JsonPropertyName("subscriptions_list")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? Subs { get; init; }
}

/// <summary>The <c>leaf</c> part of /varz (nats-server's LeafNodeOptsVarz).</summary>
internal sealed class VarzLeaf
{
    [JsonPropertyName("host")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? Host { get; init; }
    [JsonPropertyName("port")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public int Port { get; init; }
    [JsonPropertyName("auth_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double AuthTimeout { get; init; }
    [JsonPropertyName("tls_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double TlsTimeout { get; init; }
    [JsonPropertyName("tls_required")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TlsRequired { get; init; }
    [JsonPropertyName("tls_verify")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public bool TlsVerify { get; init; }
    [JsonPropertyName("remotes")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<VarzLeafRemote>? Remotes { get; init; }
}

/// <summary>One remote of /varz <c>leaf.remotes</c> (nats-server's RemoteLeafOptsVarz).</summary>
internal sealed class VarzLeafRemote
{
    [JsonPropertyName("local_account")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public string? LocalAccount { get; init; }
    [JsonPropertyName("tls_timeout")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingDefault)] public double TlsTimeout { get; init; }
    [JsonPropertyName("urls")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? Urls { get; init; }
    [JsonPropertyName("deny")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public VarzLeafDeny? Deny { get; init; }
}

/// <summary>nats-server's DenyRules of a remote.</summary>
internal sealed class VarzLeafDeny
{
    [JsonPropertyName("exports")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? Exports { get; init; }
    [JsonPropertyName("imports")][JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] public IReadOnlyList<string>? Imports { get; init; }
}
