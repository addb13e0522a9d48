using System.Text;
using static Courier.Protocols.Tests.Mqtt.MqttBytes;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>Builds MQTT 5.0 client packets and properties byte by byte, independently of the code under test.</summary>
internal static class MqttV5Bytes
{
    /// <summary>The text <see cref="MqttFeeds.Describe"/> gives <see cref="MinimalConnect"/>.</summary>
    public const string MinimalConnectText = "CONNECT level=5 flags=0x02 keepalive=60 id=\"c\"";

    /// <summary>A variable byte integer. [MQTT-1.5.5]</summary>
    public static byte[] Vbi(int value)
    {
        var bytes = new List<byte>();
        do
        {
            var b = (byte)(value % 128);
            value /= 128;
            bytes.Add(value > 0 ? (byte)(b | 0x80) : b);
        }
        while (value > 0);

        return [.. bytes];
    }

    /// <summary>A property list: its length, then the properties.</summary>
    public static byte[] Props(params byte[][] properties)
    {
        var body = properties.SelectMany(p => p).ToArray();
        return [.. Vbi(body.Length), .. body];
    }

    /// <summary>The properties' bytes as <see cref="MqttFeeds.Describe"/> shows them.</summary>
    public static string Hex(params byte[][] properties) => Convert.ToHexString(properties.SelectMany(p => p).ToArray());

    public static byte[] ByteProp(byte id, byte value) => [id, value];

    public static byte[] U16Prop(byte id, ushort value) => [id, .. U16(value)];

    public static byte[] U32Prop(byte id, uint value) => [id, (byte)(value >> 24), (byte)(value >> 16), (byte)(value >> 8), (byte)value];

    public static byte[] StrProp(byte id, string value) => [id, .. Str(value)];

    public static byte[] UserProp(string name, string value) => [0x26, .. Str(name), .. Str(value)];

    /// <summary>A 5.0 CONNECT: name, level 5, flags, keep-alive 60, properties, client id, then <paramref name="rest"/>.</summary>
    public static byte[] Connect(string clientId, byte[] properties, byte flags = 0x02, params byte[][] rest) =>
        Packet(0x10, [Str("MQTT"), [5, flags], U16(60), properties, Str(clientId), .. rest]);

    /// <summary>A minimal 5.0 CONNECT (clean start, no properties).</summary>
    public static byte[] MinimalConnect => Connect("c", Props());

    /// <summary>A 5.0 PUBLISH with properties.</summary>
    public static byte[] Publish(string topic, string payload, byte[] properties, byte qos = 0, ushort packetId = 0)
    {
        var first = (byte)(0x30 | (qos << 1));
        var bytes = Encoding.UTF8.GetBytes(payload);
        return qos > 0 ? Packet(first, Str(topic), U16(packetId), properties, bytes) : Packet(first, Str(topic), properties, bytes);
    }
}
