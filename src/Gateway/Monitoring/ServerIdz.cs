using System.Text.Json.Serialization;

namespace Courier.Gateway.Monitoring;

/// <summary>The answer to <c>$SYS.REQ.SERVER.*.IDZ</c>: the server's static identity, no envelope (nats-server 2.10's ServerID).</summary>
internal sealed class ServerIdz
{
    [JsonPropertyName("name")] public string Name { get; init; } = "";
    [JsonPropertyName("host")] public string Host { get; init; } = "";
    [JsonPropertyName("id")] public string Id { get; init; } = "";
}
