using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.WebSocket;

/// <summary>The configuration the shared WebSocket servers run: a plain ws:// listener on loopback.</summary>
internal static class WebSocketConfig
{
    public const string Plain = "websocket { host: 127.0.0.1, port: -1, no_tls: true }";

    public const string Compressing = "websocket { host: 127.0.0.1, port: -1, no_tls: true, compression: true }";
}

/// <summary>Courier with a WebSocket listener.</summary>
public sealed class CourierWebSocketFixture : ServerFixture
{
    public CourierWebSocketFixture()
        : base(ServerKind.Courier)
    {
    }

    protected override string? ConfigText => WebSocketConfig.Plain;
}

/// <summary>nats-server 2.9.10 with a WebSocket listener.</summary>
public sealed class NatsServerWebSocketFixture : ServerFixture
{
    public NatsServerWebSocketFixture()
        : base(ServerKind.NatsServer)
    {
    }

    protected override string? ConfigText => WebSocketConfig.Plain;
}
