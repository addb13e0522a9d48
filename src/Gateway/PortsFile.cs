using System.Text.Json;
using System.Text.Json.Serialization;

namespace Courier.Gateway;

/// <summary>
/// The <c>--ports_file_dir</c> file: <c>&lt;dir&gt;/nats-server_&lt;pid&gt;.ports</c> with nats-server's
/// JSON, so tools that launch nats-server find Courier's ports the same way.
/// </summary>
internal sealed class PortsFile
{
    [JsonPropertyName("nats")]
    public IReadOnlyList<string>? Client { get; init; }

    [JsonPropertyName("monitoring")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<string>? Monitoring { get; init; }

    [JsonPropertyName("websocket")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<string>? WebSocket { get; init; }

    [JsonPropertyName("cluster")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<string>? Cluster { get; init; }

    [JsonPropertyName("leafnodes")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<string>? LeafNodes { get; init; }

    /// <summary>Writes the file and returns its path.</summary>
    public string Write(string directory)
    {
        var path = PathFor(directory);
        var temp = path + ".tmp";
        File.WriteAllBytes(temp, JsonSerializer.SerializeToUtf8Bytes(this, GatewayJsonContext.Default.PortsFile));
        File.Move(temp, path, overwrite: true);
        return path;
    }

    public static string PathFor(string directory) => Path.Combine(directory, $"nats-server_{Environment.ProcessId}.ports");
}
