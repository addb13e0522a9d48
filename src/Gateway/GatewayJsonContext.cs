using System.Text.Json.Serialization;
using Courier.Gateway.Monitoring;

namespace Courier.Gateway;

/// <summary>Source-generated JSON for monitoring responses and the ports file.</summary>
[JsonSourceGenerationOptions(WriteIndented = true)]
[JsonSerializable(typeof(Varz))]
[JsonSerializable(typeof(Connz))]
[JsonSerializable(typeof(Accountz))]
[JsonSerializable(typeof(Routez))]
[JsonSerializable(typeof(Leafz))]
[JsonSerializable(typeof(Gatewayz))]
[JsonSerializable(typeof(Raftz))]
[JsonSerializable(typeof(Subsz))]
[JsonSerializable(typeof(SublistStats))]
[JsonSerializable(typeof(Healthz))]
[JsonSerializable(typeof(Jsz))]
[JsonSerializable(typeof(JszAccountDetail))]
[JsonSerializable(typeof(Statsz))]
[JsonSerializable(typeof(AccountStatz))]
[JsonSerializable(typeof(ServerIdz))]
[JsonSerializable(typeof(PortsFile))]
internal sealed partial class GatewayJsonContext : JsonSerializerContext;
