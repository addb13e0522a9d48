namespace Courier.Protocols.WebSocket;

/// <summary>Close frame status codes (RFC 6455 §7.4.1) that nats-server sends.</summary>
internal static class WebSocketCloseStatus
{
    public const ushort NormalClosure = 1000;
    public const ushort GoingAway = 1001;
    public const ushort ProtocolError = 1002;
    public const ushort NoStatusReceived = 1005;
    public const ushort AbnormalClosure = 1006;
    public const ushort InvalidPayloadData = 1007;
    public const ushort PolicyViolation = 1008;
    public const ushort MessageTooBig = 1009;
    public const ushort InternalServerError = 1011;
}
