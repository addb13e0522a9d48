using System.Buffers;
using System.Buffers.Binary;

namespace Courier.Protocols.Mqtt;

/// <summary>
/// The server-to-client MQTT 3.1.1 and 5.0 packets, written into an <see cref="IBufferWriter{T}"/> or a span:
/// each packet is sized once, <c>GetSpan</c> once, <c>Advance</c> once; nothing is allocated.
/// </summary>
public static class MqttPacketWriter
{
    /// <summary>The longest fixed header: the type byte and a 4-byte remaining length. Bytes.</summary>
    public const int MaxFixedHeaderLength = 5;

    /// <summary>PINGRESP: 0xD0 0x00. [MQTT-3.13]</summary>
    public static ReadOnlySpan<byte> PingResp => [0xD0, 0x00];

    /// <summary>Bytes the remaining length <paramref name="length"/> takes (1 to 4). [MQTT-2.2.3]</summary>
    public static int RemainingLengthSize(int length)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(length, MqttParser.MaxRemainingLength);
        return length < 0x80 ? 1 : length < 0x4000 ? 2 : length < 0x20_0000 ? 3 : 4;
    }

    /// <summary>Writes the remaining length: 7 bits per byte, least significant first, high bit set on all but the last. Returns the bytes written.</summary>
    public static int WriteRemainingLength(Span<byte> destination, int length)
    {
        var size = RemainingLengthSize(length);
        for (var i = 0; i < size; i++)
        {
            var b = (byte)(length & 0x7F);
            length >>= 7;
            destination[i] = length > 0 ? (byte)(b | 0x80) : b;
        }

        return size;
    }

    /// <summary>CONNACK: 0x20 0x02, session present (0 unless accepted), return code. [MQTT-3.2], [MQTT-3.2.2-4]</summary>
    public static void WriteConnAck(IBufferWriter<byte> output, bool sessionPresent, MqttConnectReturnCode code)
    {
        var span = output.GetSpan(4);
        span[0] = 0x20;
        span[1] = 0x02;
        span[2] = sessionPresent && code == MqttConnectReturnCode.Accepted ? (byte)1 : (byte)0;
        span[3] = (byte)code;
        output.Advance(4);
    }

    /// <summary>PUBACK: 0x40 0x02 packet-id. [MQTT-3.4]</summary>
    public static void WritePubAck(IBufferWriter<byte> output, ushort packetId) => WriteAck(output, 0x40, packetId);

    /// <summary>PUBREC: 0x50 0x02 packet-id. [MQTT-3.5]</summary>
    public static void WritePubRec(IBufferWriter<byte> output, ushort packetId) => WriteAck(output, 0x50, packetId);

    /// <summary>PUBREL: 0x62 0x02 packet-id (flags 0010). [MQTT-3.6.1-1]</summary>
    public static void WritePubRel(IBufferWriter<byte> output, ushort packetId) => WriteAck(output, 0x62, packetId);

    /// <summary>PUBCOMP: 0x70 0x02 packet-id. [MQTT-3.7]</summary>
    public static void WritePubComp(IBufferWriter<byte> output, ushort packetId) => WriteAck(output, 0x70, packetId);

    /// <summary>UNSUBACK: 0xB0 0x02 packet-id. [MQTT-3.11]</summary>
    public static void WriteUnsubAck(IBufferWriter<byte> output, ushort packetId) => WriteAck(output, 0xB0, packetId);

    /// <summary>PINGRESP. [MQTT-3.13]</summary>
    public static void WritePingResp(IBufferWriter<byte> output) => output.Write(PingResp);

    /// <summary>
    /// SUBACK: 0x90, remaining length, packet-id, one return code per filter in order (0, 1, 2 the
    /// granted QoS; 0x80 failure). [MQTT-3.9], [MQTT-3.9.3-1]
    /// </summary>
    public static void WriteSubAck(IBufferWriter<byte> output, ushort packetId, ReadOnlySpan<byte> returnCodes)
    {
        var remaining = 2 + returnCodes.Length;
        var total = 1 + RemainingLengthSize(remaining) + remaining;
        var span = output.GetSpan(total);
        span[0] = 0x90;
        var at = 1 + WriteRemainingLength(span[1..], remaining);
        BinaryPrimitives.WriteUInt16BigEndian(span[at..], packetId);
        returnCodes.CopyTo(span[(at + 2)..]);
        output.Advance(total);
    }

    /// <summary>Bytes of a PUBLISH's fixed and variable header (everything before the payload).</summary>
    public static int PublishHeaderLength(int topicLength, byte qos, int payloadLength)
    {
        var remaining = PublishRemainingLength(topicLength, qos, payloadLength);
        return 1 + RemainingLengthSize(remaining) + remaining - payloadLength;
    }

    /// <summary>
    /// Writes a PUBLISH's fixed and variable header: type and flags (DUP, QoS, RETAIN), remaining
    /// length, topic name, and the packet identifier when QoS &gt; 0. The payload follows it.
    /// <paramref name="destination"/> must hold <see cref="PublishHeaderLength"/> bytes. Returns the bytes written.
    /// </summary>
    /// <remarks>PUBLISH: 0x3X, remaining length, u16 topic length, topic, [u16 packet-id], payload. [MQTT-3.3]</remarks>
    public static int WritePublishHeader(Span<byte> destination, ReadOnlySpan<byte> topic, byte qos, bool retain, bool dup, ushort packetId, int payloadLength)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(qos, (byte)2);
        if (qos > 0 && packetId == 0)
        {
            throw new ArgumentOutOfRangeException(nameof(packetId), "a QoS 1 or 2 PUBLISH needs a non-zero packet identifier [MQTT-2.3.1-1]");
        }

        var remaining = PublishRemainingLength(topic.Length, qos, payloadLength);
        destination[0] = (byte)(0x30 | (dup ? 0x08 : 0) | (qos << 1) | (retain ? 0x01 : 0));
        var at = 1 + WriteRemainingLength(destination[1..], remaining);
        BinaryPrimitives.WriteUInt16BigEndian(destination[at..], (ushort)topic.Length);
        at += 2;
        topic.CopyTo(destination[at..]);
        at += topic.Length;
        if (qos > 0)
        {
            BinaryPrimitives.WriteUInt16BigEndian(destination[at..], packetId);
            at += 2;
        }

        return at;
    }

    /// <summary>Writes a whole PUBLISH (header and payload) with one <c>GetSpan</c> and one <c>Advance</c>.</summary>
    public static void WritePublish(IBufferWriter<byte> output, ReadOnlySpan<byte> topic, in ReadOnlySequence<byte> payload, byte qos, bool retain, bool dup, ushort packetId)
    {
        var payloadLength = checked((int)payload.Length);
        var header = PublishHeaderLength(topic.Length, qos, payloadLength);
        var span = output.GetSpan(header + payloadLength);
        var at = WritePublishHeader(span, topic, qos, retain, dup, packetId, payloadLength);
        payload.CopyTo(span[at..]);
        output.Advance(at + payloadLength);
    }

    /// <inheritdoc cref="WritePublish(IBufferWriter{byte}, ReadOnlySpan{byte}, in ReadOnlySequence{byte}, byte, bool, bool, ushort)"/>
    public static void WritePublish(IBufferWriter<byte> output, ReadOnlySpan<byte> topic, ReadOnlySpan<byte> payload, byte qos, bool retain, bool dup, ushort packetId)
    {
        var header = PublishHeaderLength(topic.Length, qos, payload.Length);
        var span = output.GetSpan(header + payload.Length);
        var at = WritePublishHeader(span, topic, qos, retain, dup, packetId, payload.Length);
        payload.CopyTo(span[at..]);
        output.Advance(at + payload.Length);
    }

    /// <summary>Bytes of an MQTT 5.0 PUBLISH's fixed and variable header with <paramref name="propertiesLength"/> bytes of properties.</summary>
    public static int PublishHeaderLengthV5(int topicLength, byte qos, int propertiesLength, int payloadLength)
    {
        var properties = MqttProperties.VariableByteIntegerSize(propertiesLength) + propertiesLength;
        var remaining = PublishRemainingLength(topicLength, qos, properties + payloadLength);
        return 1 + RemainingLengthSize(remaining) + remaining - payloadLength;
    }

    /// <summary>
    /// Writes an MQTT 5.0 PUBLISH's fixed and variable header: as <see cref="WritePublishHeader"/>, then
    /// the property length and <paramref name="properties"/>. <paramref name="destination"/> must hold
    /// <see cref="PublishHeaderLengthV5"/> bytes. Returns the bytes written; <paramref name="packetIdAt"/>
    /// is the packet identifier's offset (QoS &gt; 0). [MQTT-3.3.2]
    /// </summary>
    public static int WritePublishHeaderV5(Span<byte> destination, ReadOnlySpan<byte> topic, byte qos, bool retain, bool dup, ushort packetId, ReadOnlySpan<byte> properties, int payloadLength, out int packetIdAt)
    {
        var propertyBytes = MqttProperties.VariableByteIntegerSize(properties.Length) + properties.Length;
        var at = WritePublishHeader(destination, topic, qos, retain, dup, packetId, propertyBytes + payloadLength);
        packetIdAt = at - 2;
        at += MqttProperties.WriteVariableByteInteger(destination[at..], properties.Length);
        properties.CopyTo(destination[at..]);
        return at + properties.Length;
    }

    /// <summary>Writes a whole MQTT 5.0 PUBLISH (header, properties and payload) with one <c>GetSpan</c> and one <c>Advance</c>.</summary>
    public static void WritePublishV5(IBufferWriter<byte> output, ReadOnlySpan<byte> topic, in ReadOnlySequence<byte> payload, byte qos, bool retain, bool dup, ushort packetId, ReadOnlySpan<byte> properties)
    {
        var payloadLength = checked((int)payload.Length);
        var header = PublishHeaderLengthV5(topic.Length, qos, properties.Length, payloadLength);
        var span = output.GetSpan(header + payloadLength);
        var at = WritePublishHeaderV5(span, topic, qos, retain, dup, packetId, properties, payloadLength, out _);
        payload.CopyTo(span[at..]);
        output.Advance(at + payloadLength);
    }

    /// <summary>
    /// MQTT 5.0 CONNACK: 0x20, remaining length, acknowledge flags (session present, only when
    /// accepted), reason code, property length, properties. [MQTT-3.2.2], [MQTT-3.2.2-6]
    /// </summary>
    public static void WriteConnAckV5(IBufferWriter<byte> output, bool sessionPresent, MqttReasonCode code, ReadOnlySpan<byte> properties)
    {
        var remaining = 2 + MqttProperties.VariableByteIntegerSize(properties.Length) + properties.Length;
        var total = 1 + RemainingLengthSize(remaining) + remaining;
        var span = output.GetSpan(total);
        span[0] = 0x20;
        var at = 1 + WriteRemainingLength(span[1..], remaining);
        span[at++] = sessionPresent && code == MqttReasonCode.Success ? (byte)1 : (byte)0;
        span[at++] = (byte)code;
        at += MqttProperties.WriteVariableByteInteger(span[at..], properties.Length);
        properties.CopyTo(span[at..]);
        output.Advance(total);
    }

    /// <summary>
    /// MQTT 5.0 PUBACK, PUBREC, PUBREL or PUBCOMP (<paramref name="first"/> the type byte): the packet id,
    /// and the reason code unless it is Success (remaining length 2 means Success without properties). [MQTT-3.4.2.1]
    /// </summary>
    public static void WriteAckV5(IBufferWriter<byte> output, byte first, ushort packetId, MqttReasonCode code)
    {
        if (code == MqttReasonCode.Success)
        {
            WriteAck(output, first, packetId);
            return;
        }

        var span = output.GetSpan(5);
        span[0] = first;
        span[1] = 0x03;
        BinaryPrimitives.WriteUInt16BigEndian(span[2..], packetId);
        span[4] = (byte)code;
        output.Advance(5);
    }

    /// <summary>
    /// MQTT 5.0 SUBACK (0x90) or UNSUBACK (0xB0): packet id, no properties, one reason code per
    /// filter in order. [MQTT-3.9.3], [MQTT-3.11.3]
    /// </summary>
    public static void WriteSubAckV5(IBufferWriter<byte> output, bool unsubscribe, ushort packetId, ReadOnlySpan<byte> reasonCodes)
    {
        var remaining = 3 + reasonCodes.Length;
        var total = 1 + RemainingLengthSize(remaining) + remaining;
        var span = output.GetSpan(total);
        span[0] = unsubscribe ? (byte)0xB0 : (byte)0x90;
        var at = 1 + WriteRemainingLength(span[1..], remaining);
        BinaryPrimitives.WriteUInt16BigEndian(span[at..], packetId);
        span[at + 2] = 0; // property length
        reasonCodes.CopyTo(span[(at + 3)..]);
        output.Advance(total);
    }

    /// <summary>
    /// MQTT 5.0 DISCONNECT from the server: 0xE0, remaining length, reason code, and a Reason String
    /// property when <paramref name="reason"/> is not empty. [MQTT-3.14.2]
    /// </summary>
    public static void WriteDisconnect(IBufferWriter<byte> output, MqttReasonCode code, ReadOnlySpan<byte> reason)
    {
        var properties = reason.IsEmpty ? 0 : MqttProperties.StringSize(reason.Length);
        var remaining = 1 + MqttProperties.VariableByteIntegerSize(properties) + properties;
        var total = 1 + RemainingLengthSize(remaining) + remaining;
        var span = output.GetSpan(total);
        span[0] = 0xE0;
        var at = 1 + WriteRemainingLength(span[1..], remaining);
        span[at++] = (byte)code;
        at += MqttProperties.WriteVariableByteInteger(span[at..], properties);
        if (!reason.IsEmpty)
        {
            MqttProperties.WriteString(span[at..], MqttPropertyId.ReasonString, reason);
        }

        output.Advance(total);
    }

    private static int PublishRemainingLength(int topicLength, byte qos, int payloadLength)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(topicLength, ushort.MaxValue);
        var remaining = (long)2 + topicLength + (qos > 0 ? 2 : 0) + payloadLength;
        ArgumentOutOfRangeException.ThrowIfGreaterThan(remaining, MqttParser.MaxRemainingLength, nameof(payloadLength));
        return (int)remaining;
    }

    private static void WriteAck(IBufferWriter<byte> output, byte first, ushort packetId)
    {
        var span = output.GetSpan(4);
        span[0] = first;
        span[1] = 0x02;
        BinaryPrimitives.WriteUInt16BigEndian(span[2..], packetId);
        output.Advance(4);
    }
}
