namespace Courier.Actors.Server;

/// <summary>How a client connected, by nats-server's connz <c>type</c> names (clientTypeStringMap).</summary>
public static class ConnectionTypes
{
    public const string Nats = "nats";

    public const string WebSocket = "websocket";

    /// <summary>MQTT, over TCP, TLS or WebSocket alike (nats-server's MQTT type wins over WS).</summary>
    public const string Mqtt = "mqtt";
}
