using System.Text;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>Builds client packets byte by byte, independently of the code under test.</summary>
internal static class MqttBytes
{
    /// <summary>PINGREQ.</summary>
    public static byte[] PingReq => [0xC0, 0x00];

    /// <summary>DISCONNECT.</summary>
    public static byte[] Disconnect => [0xE0, 0x00];

    /// <summary>A fixed header (<paramref name="first"/>, remaining length) followed by <paramref name="parts"/>.</summary>
    public static byte[] Packet(byte first, params byte[][] parts)
    {
        var body = parts.SelectMany(p => p).ToArray();
        var bytes = new List<byte> { first };
        var length = body.Length;
        do
        {
            var b = (byte)(length % 128);
            length /= 128;
            bytes.Add(length > 0 ? (byte)(b | 0x80) : b);
        }
        while (length > 0);

        bytes.AddRange(body);
        return [.. bytes];
    }

    /// <summary>A UTF-8 string field: u16 length, then the bytes. [MQTT-1.5.3]</summary>
    public static byte[] Str(string text) => Field(Encoding.UTF8.GetBytes(text));

    /// <summary>A length-prefixed field of raw bytes.</summary>
    public static byte[] Field(byte[] bytes) => [.. U16((ushort)bytes.Length), .. bytes];

    /// <summary>A big-endian u16.</summary>
    public static byte[] U16(ushort value) => [(byte)(value >> 8), (byte)value];

    /// <summary>CONNECT for MQTT 3.1.1 with the given fields; the flags follow from them.</summary>
    public static byte[] Connect(
        string clientId,
        bool clean = true,
        ushort keepAlive = 60,
        string? willTopic = null,
        string? willMessage = null,
        byte willQoS = 0,
        bool willRetain = false,
        string? user = null,
        byte[]? password = null)
    {
        var flags = (byte)((clean ? 0x02 : 0) | (willTopic is null ? 0 : 0x04 | (willQoS << 3) | (willRetain ? 0x20 : 0))
            | (user is null ? 0 : 0x80) | (password is null ? 0 : 0x40));
        var parts = new List<byte[]> { Str("MQTT"), new byte[] { 4, flags }, U16(keepAlive), Str(clientId) };
        if (willTopic is not null)
        {
            parts.Add(Str(willTopic));
            parts.Add(Str(willMessage ?? ""));
        }

        if (user is not null)
        {
            parts.Add(Str(user));
        }

        if (password is not null)
        {
            parts.Add(Field(password));
        }

        return Packet(0x10, [.. parts]);
    }

    /// <summary>A minimal CONNECT, to put a parser into the connected state.</summary>
    public static byte[] MinimalConnect => Connect("c");

    /// <summary>PUBLISH.</summary>
    public static byte[] Publish(string topic, string payload, byte qos = 0, bool retain = false, bool dup = false, ushort packetId = 0) =>
        Publish(topic, Encoding.UTF8.GetBytes(payload), qos, retain, dup, packetId);

    /// <summary>PUBLISH with a binary payload.</summary>
    public static byte[] Publish(string topic, byte[] payload, byte qos = 0, bool retain = false, bool dup = false, ushort packetId = 0)
    {
        var first = (byte)(0x30 | (dup ? 0x08 : 0) | (qos << 1) | (retain ? 1 : 0));
        return qos > 0 ? Packet(first, Str(topic), U16(packetId), payload) : Packet(first, Str(topic), payload);
    }

    /// <summary>SUBSCRIBE (flags 0010).</summary>
    public static byte[] Subscribe(ushort packetId, params (string Filter, byte QoS)[] filters) =>
        Packet(0x82, [U16(packetId), .. filters.Select(f => (byte[])[.. Str(f.Filter), f.QoS])]);

    /// <summary>UNSUBSCRIBE (flags 0010).</summary>
    public static byte[] Unsubscribe(ushort packetId, params string[] filters) =>
        Packet(0xA2, [U16(packetId), .. filters.Select(Str)]);

    /// <summary>PUBACK, PUBREC, PUBREL or PUBCOMP with its required flags.</summary>
    public static byte[] Ack(byte first, ushort packetId) => Packet(first, U16(packetId));

    /// <summary>Packets one after another, as one read might hold them.</summary>
    public static byte[] Concat(params byte[][] packets) => packets.SelectMany(p => p).ToArray();
}
