using System.Text.Json.Serialization;

namespace Courier.Protocols.Nats;

/// <summary>Source-generated JSON for the protocol's INFO and CONNECT bodies.</summary>
[JsonSourceGenerationOptions(
    GenerationMode = JsonSourceGenerationMode.Default,
    AllowTrailingCommas = true,
    ReadCommentHandling = System.Text.Json.JsonCommentHandling.Skip,
    NumberHandling = JsonNumberHandling.AllowReadingFromString)]
[JsonSerializable(typeof(ServerInfo))]
[JsonSerializable(typeof(ConnectOptions))]
[JsonSerializable(typeof(RouteInfo))]
[JsonSerializable(typeof(RouteConnect))]
[JsonSerializable(typeof(LeafInfo))]
[JsonSerializable(typeof(LeafConnect))]
[JsonSerializable(typeof(GatewayInfo))]
[JsonSerializable(typeof(GatewayConnect))]
public sealed partial class NatsJsonContext : JsonSerializerContext;
