using System.Buffers.Binary;
using System.Text;
using System.Threading.Channels;
using MQTTnet;
using MQTTnet.Formatter;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>An MQTTnet 5.0 client that queues every application message it receives, properties included.</summary>
public sealed class Mqtt5TestClient : IAsyncDisposable
{
    private readonly Channel<MqttApplicationMessage> _received = Channel.CreateUnbounded<MqttApplicationMessage>();

    private Mqtt5TestClient(IMqttClient client)
    {
        Client = client;
        client.ApplicationMessageReceivedAsync += e =>
        {
            _received.Writer.TryWrite(e.ApplicationMessage);
            return Task.CompletedTask;
        };
    }

    public IMqttClient Client { get; }

    /// <summary>The CONNACK as MQTTnet read it.</summary>
    public MqttClientConnectResult ConnectResult { get; private set; } = null!;

    /// <summary>Connects with MQTT 5.0; <paramref name="configure"/> adds options (session expiry, will, ...).</summary>
    public static async Task<Mqtt5TestClient> ConnectAsync(int port, string clientId, Action<MqttClientOptionsBuilder>? configure = null)
    {
        var client = new MqttClientFactory().CreateMqttClient();
        var builder = new MqttClientOptionsBuilder()
            .WithTcpServer("127.0.0.1", port)
            .WithProtocolVersion(MqttProtocolVersion.V500)
            .WithClientId(clientId)
            .WithCleanStart(true)
            .WithTimeout(MqttTestClient.TestTimeout);
        configure?.Invoke(builder);
        var wrapper = new Mqtt5TestClient(client);
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        wrapper.ConnectResult = await client.ConnectAsync(builder.Build(), cts.Token);
        return wrapper;
    }

    /// <summary>SUBSCRIBE one filter; returns the SUBACK's reason code for it.</summary>
    public async Task<MqttClientSubscribeResultCode> SubscribeAsync(Action<MqttTopicFilterBuilder> filter)
    {
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        var result = await Client.SubscribeAsync(new MqttClientSubscribeOptionsBuilder().WithTopicFilter(filter).Build(), cts.Token);
        return Assert.Single(result.Items).ResultCode;
    }

    /// <summary>PUBLISH; returns the result (QoS 1: the PUBACK's reason code).</summary>
    public async Task<MqttClientPublishResult> PublishAsync(Action<MqttApplicationMessageBuilder> message)
    {
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        var builder = new MqttApplicationMessageBuilder();
        message(builder);
        return await Client.PublishAsync(builder.Build(), cts.Token);
    }

    /// <summary>The next message received, or a failure after the test timeout.</summary>
    public async Task<MqttApplicationMessage> ReceiveAsync()
    {
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        return await _received.Reader.ReadAsync(cts.Token);
    }

    /// <summary>What arrives within <paramref name="wait"/> (to show that something did not).</summary>
    public async Task<List<MqttApplicationMessage>> DrainAsync(TimeSpan wait)
    {
        await Task.Delay(wait);
        var list = new List<MqttApplicationMessage>();
        while (_received.Reader.TryRead(out var message))
        {
            list.Add(message);
        }

        return list;
    }

    public async ValueTask DisposeAsync()
    {
        if (Client.IsConnected)
        {
            try
            {
                await Client.DisconnectAsync();
            }
            catch (Exception e) when (e is MQTTnet.Exceptions.MqttCommunicationException or OperationCanceledException)
            {
            }
        }

        Client.Dispose();
    }
}

/// <summary>Shorthands for MQTTnet's builders in the 5.0 tests.</summary>
public static class Mqtt5Builders
{
    public static MqttApplicationMessageBuilder WithAtLeastOnceQoS(this MqttApplicationMessageBuilder builder) =>
        builder.WithQualityOfServiceLevel(MQTTnet.Protocol.MqttQualityOfServiceLevel.AtLeastOnce);

    /// <summary>A user property with a UTF-8 value.</summary>
    public static MqttApplicationMessageBuilder WithUser(this MqttApplicationMessageBuilder builder, string name, string value) =>
        builder.WithUserProperty(name, new ReadOnlyMemory<byte>(Encoding.UTF8.GetBytes(value)));

    /// <summary>A will user property with a UTF-8 value.</summary>
    public static MqttClientOptionsBuilder WithWillUser(this MqttClientOptionsBuilder builder, string name, string value) =>
        builder.WithWillUserProperty(name, new ReadOnlyMemory<byte>(Encoding.UTF8.GetBytes(value)));
}

/// <summary>MQTT 5.0 packets as bytes, for what a client library would never send, and reading properties back.</summary>
public static class Mqtt5Raw
{
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

    /// <summary>A packet: first byte, remaining length, body.</summary>
    public static byte[] Packet(byte first, params byte[][] parts)
    {
        var body = parts.SelectMany(p => p).ToArray();
        return [first, .. Vbi(body.Length), .. body];
    }

    /// <summary>A property list with its length prefix.</summary>
    public static byte[] Props(params byte[][] properties)
    {
        var body = properties.SelectMany(p => p).ToArray();
        return [.. Vbi(body.Length), .. body];
    }

    public static byte[] Str(string text)
    {
        var bytes = Encoding.UTF8.GetBytes(text);
        return [(byte)(bytes.Length >> 8), (byte)bytes.Length, .. bytes];
    }

    /// <summary>A 5.0 CONNECT with clean start, <paramref name="keepAlive"/> seconds and <paramref name="properties"/>.</summary>
    public static byte[] Connect(string clientId, byte[]? properties = null, byte keepAlive = 60, bool cleanStart = true) =>
        Packet(0x10, Str("MQTT"), [5, cleanStart ? (byte)0x02 : (byte)0x00, 0, keepAlive], properties ?? Props(), Str(clientId));

    /// <summary>A 5.0 PUBLISH at QoS 1 with packet id <paramref name="packetId"/> and <paramref name="properties"/>.</summary>
    public static byte[] PublishQos1(string topic, ushort packetId, string payload, byte[] properties) =>
        Packet(0x32, Str(topic), [(byte)(packetId >> 8), (byte)packetId], properties, Encoding.UTF8.GetBytes(payload));

    /// <summary>A 5.0 SUBSCRIBE of one filter with packet id 1, <paramref name="options"/> and <paramref name="properties"/>.</summary>
    public static byte[] Subscribe(string filter, byte options, byte[] properties) =>
        Packet(0x82, [0, 1], properties, Str(filter), [options]);

    /// <summary>A Topic Alias property. [MQTT-3.3.2.3.4]</summary>
    public static byte[] TopicAlias(ushort alias) => [0x23, (byte)(alias >> 8), (byte)alias];

    /// <summary>A 5.0 PUBLISH at QoS 0 with <paramref name="properties"/>.</summary>
    public static byte[] Publish(string topic, string payload, byte[] properties) =>
        Packet(0x30, Str(topic), properties, Encoding.UTF8.GetBytes(payload));

    /// <summary>Reads a CONNACK: its reason code and properties by id (user properties left out).</summary>
    public static async Task<(byte Reason, Dictionary<byte, byte[]> Properties)> ReadConnAckAsync(MqttRawClient raw)
    {
        var (first, body) = await raw.ReadPacketAsync();
        Assert.Equal(0x20, first);
        return (body[1], ReadProperties(body.AsSpan(2)));
    }

    /// <summary>
    /// Waits for the server to close <paramref name="raw"/>; what it sent before is nothing (only where
    /// <paramref name="sendsDisconnect"/> is false: the spec lets a server close without DISCONNECT, as
    /// mosquitto does for some errors) or one whole DISCONNECT with <paramref name="reason"/>. [MQTT-4.13.1-1]
    /// </summary>
    public static async Task AssertClosedWithReasonAsync(MqttRawClient raw, byte reason, bool sendsDisconnect)
    {
        var sent = await raw.ReadUntilClosedAsync();
        if (sendsDisconnect || sent.Length > 0)
        {
            // One whole DISCONNECT (remaining length under 128 here) and nothing after it.
            Assert.True(
                sent.Length >= 3 && sent[0] == 0xE0 && sent[2] == reason && sent.Length == 2 + sent[1],
                $"expected DISCONNECT 0x{reason:x2}, got {Convert.ToHexString(sent)}");
        }
    }

    /// <summary>Reads a packet the server sends and expects a DISCONNECT: its reason code.</summary>
    public static async Task<byte> ReadDisconnectAsync(MqttRawClient raw)
    {
        var (first, body) = await raw.ReadPacketAsync();
        Assert.True(first == 0xE0, $"expected DISCONNECT, got 0x{first:x2}");
        return body.Length == 0 ? (byte)0 : body[0];
    }

    /// <summary>A property list (length prefix included) as id -> value bytes (numbers big-endian, strings with their length).</summary>
    public static Dictionary<byte, byte[]> ReadProperties(ReadOnlySpan<byte> list)
    {
        var properties = new Dictionary<byte, byte[]>();
        foreach (var (id, value) in ReadPropertyList(list))
        {
            properties[id] = value;
        }

        return properties;
    }

    /// <summary>
    /// Reads a PUBLISH the server sent (<paramref name="first"/> and <paramref name="body"/> from
    /// <see cref="MqttRawClient.ReadPacketAsync"/>): its topic, packet id (0 at QoS 0), properties in
    /// order (repeats kept, user properties left out) and payload.
    /// </summary>
    public static (string Topic, ushort PacketId, List<(byte Id, byte[] Value)> Properties, string Payload) ReadPublish(byte first, byte[] body)
    {
        Assert.True((first & 0xF0) == 0x30, $"expected PUBLISH, got 0x{first:x2}");
        var topicLength = BinaryPrimitives.ReadUInt16BigEndian(body);
        var topic = Encoding.UTF8.GetString(body, 2, topicLength);
        var at = 2 + topicLength;
        ushort packetId = 0;
        if ((first & 0x06) != 0)
        {
            packetId = BinaryPrimitives.ReadUInt16BigEndian(body.AsSpan(at));
            at += 2;
        }

        var (length, size) = ReadVbi(body.AsSpan(at));
        var properties = ReadPropertyList(body.AsSpan(at));
        return (topic, packetId, properties, Encoding.UTF8.GetString(body, at + size + length, body.Length - at - size - length));
    }

    /// <summary>A variable byte integer's value (a Subscription Identifier's bytes). [MQTT-1.5.5]</summary>
    public static int VbiValue(byte[] bytes) => ReadVbi(bytes).Value;

    /// <summary>A property list (length prefix included) as (id, value bytes) in order, repeats kept, user properties left out.</summary>
    public static List<(byte Id, byte[] Value)> ReadPropertyList(ReadOnlySpan<byte> list)
    {
        var (length, size) = ReadVbi(list);
        var rest = list.Slice(size, length);
        var properties = new List<(byte Id, byte[] Value)>();
        while (!rest.IsEmpty)
        {
            var id = rest[0];
            var valueSize = id switch
            {
                0x01 or 0x17 or 0x19 or 0x24 or 0x25 or 0x28 or 0x29 or 0x2A => 1,
                0x13 or 0x21 or 0x22 or 0x23 => 2,
                0x02 or 0x11 or 0x18 or 0x27 => 4,
                0x0B => ReadVbi(rest[1..]).Size,
                0x26 => 2 + BinaryPrimitives.ReadUInt16BigEndian(rest[1..]) + 2 + BinaryPrimitives.ReadUInt16BigEndian(rest[(3 + BinaryPrimitives.ReadUInt16BigEndian(rest[1..]))..]),
                _ => 2 + BinaryPrimitives.ReadUInt16BigEndian(rest[1..]),
            };
            if (id != 0x26)
            {
                properties.Add((id, rest.Slice(1, valueSize).ToArray()));
            }

            rest = rest[(1 + valueSize)..];
        }

        return properties;
    }

    private static (int Value, int Size) ReadVbi(ReadOnlySpan<byte> input)
    {
        var value = 0;
        for (var i = 0; ; i++)
        {
            value |= (input[i] & 0x7F) << (7 * i);
            if ((input[i] & 0x80) == 0)
            {
                return (value, i + 1);
            }
        }
    }
}
