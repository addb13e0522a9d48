using System.Buffers;
using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Text.Unicode;

namespace Courier.Protocols.Mqtt;

/// <summary>
/// Parses the client side of MQTT 3.1.1 and 5.0, one control packet per call, from a
/// <see cref="SequenceReader{T}"/> over a pipe's buffer. One parser per connection: it also
/// enforces that the first packet is CONNECT and that no second CONNECT follows.
/// </summary>
/// <remarks>
/// Hot path: no allocation per packet. The remaining length is checked against
/// <see cref="MaxPacketSize"/> from the fixed header alone, before the parser waits for or reads the
/// body. A packet's fields are read in place when they lie in one segment, otherwise copied once
/// into a scratch buffer owned by this parser (grown to the largest such header seen, so steady state
/// allocates nothing). A PUBLISH payload is always a slice of the input, never a copy.
/// </remarks>
public sealed class MqttParser
{
    /// <summary>The largest remaining length the 4-byte encoding can carry (256 MB - 1), nats-server's default. Bytes. [MQTT-2.2.3]</summary>
    public const int MaxRemainingLength = 268_435_455;

    // Bytes the scratch buffer starts with: larger than a typical CONNECT or PUBLISH topic.
    private const int InitialScratch = 256;

    private byte[]? _scratch;

    /// <summary>Creates a parser.</summary>
    /// <param name="maxPacketSize">Bytes allowed in a packet's remaining length (variable header and payload).</param>
    public MqttParser(int maxPacketSize = MaxRemainingLength)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxPacketSize, 2);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(maxPacketSize, MaxRemainingLength);
        MaxPacketSize = maxPacketSize;
    }

    /// <summary>Bytes allowed in a packet's remaining length.</summary>
    public int MaxPacketSize { get; }

    /// <summary>Whether a CONNECT has been read (a packet other than CONNECT is accepted only after it).</summary>
    public bool ConnectReceived { get; private set; }

    /// <summary>The CONNECT's protocol level once read (4: 3.1.1, 5: 5.0; 0 before): later packets are read in its form.</summary>
    public byte ProtocolVersion { get; private set; }

    // MQTT 5.0 packets carry reason codes and properties.
    private bool V5 => ProtocolVersion == 5;

    /// <summary>
    /// Reads one packet. On <see cref="MqttReadStatus.Packet"/> the reader is past it; on
    /// <see cref="MqttReadStatus.NeedMoreData"/> it is where it was; on <see cref="MqttReadStatus.Error"/>
    /// its position is undefined and the connection must be closed (after the CONNACK that
    /// <see cref="MqttParseErrors.ConnAckCode"/> names, if any).
    /// </summary>
    public MqttReadStatus TryRead(ref SequenceReader<byte> reader, ref MqttPacket packet, out MqttParseError error)
    {
        packet = default;
        error = MqttParseError.None;

        // Fixed header: type and flags, then the remaining length in 1 to 4 bytes, 7 bits each,
        // least significant first, the high bit meaning "more". [MQTT-2.2.3]
        if (!reader.TryPeek(out var first))
        {
            return MqttReadStatus.NeedMoreData;
        }

        var type = (MqttPacketType)(first >> 4);
        var flags = (byte)(first & 0x0F);
        var headerError = CheckFixedHeader(type, flags);
        if (headerError != MqttParseError.None)
        {
            return Fail(headerError, out error);
        }

        var length = 0;
        var offset = 1;
        while (true)
        {
            if (offset > 4)
            {
                return Fail(MqttParseError.MalformedRemainingLength, out error);
            }

            if (!reader.TryPeek(offset, out var b))
            {
                return MqttReadStatus.NeedMoreData;
            }

            length |= (b & 0x7F) << (7 * (offset - 1));
            offset++;
            if ((b & 0x80) == 0)
            {
                break;
            }
        }

        if (length > MaxPacketSize)
        {
            return Fail(MqttParseError.PacketTooLarge, out error);
        }

        if (reader.Remaining - offset < length)
        {
            return MqttReadStatus.NeedMoreData;
        }

        reader.Advance(offset);
        var body = reader.UnreadSequence.Slice(0, length);
        reader.Advance(length);

        packet.Type = type;
        packet.Flags = flags;
        error = type switch
        {
            MqttPacketType.Publish => ParsePublish(body, ref packet),
            MqttPacketType.PubAck or MqttPacketType.PubRec or MqttPacketType.PubRel or MqttPacketType.PubComp
                => V5 ? ParseAckV5(Contiguous(body), ref packet) : ParsePacketIdOnly(body, ref packet),
            MqttPacketType.Subscribe => ParseFilterList(Contiguous(body), withQoS: true, V5, ref packet),
            MqttPacketType.Unsubscribe => ParseFilterList(Contiguous(body), withQoS: false, V5, ref packet),
            MqttPacketType.PingReq => length == 0 ? MqttParseError.None : MqttParseError.Malformed,
            MqttPacketType.Disconnect => V5 ? ParseReasonAndProperties(Contiguous(body), ref packet) : length == 0 ? MqttParseError.None : MqttParseError.Malformed,
            MqttPacketType.Auth => ParseReasonAndProperties(Contiguous(body), ref packet),
            MqttPacketType.Connect => ParseConnect(Contiguous(body), ref packet),
            _ => MqttParseError.UnknownPacketType,
        };

        if (error != MqttParseError.None)
        {
            return MqttReadStatus.Error;
        }

        if (type == MqttPacketType.Connect)
        {
            ConnectReceived = true;
            ProtocolVersion = packet.ProtocolLevel;
        }

        return MqttReadStatus.Packet;
    }

    // The checks that need only the first byte, so a bad packet is refused before its body arrives.
    private MqttParseError CheckFixedHeader(MqttPacketType type, byte flags)
    {
        if (type == MqttPacketType.Connect)
        {
            if (ConnectReceived)
            {
                return MqttParseError.SecondConnect; // [MQTT-3.1.0-2]
            }
        }
        else if (!ConnectReceived)
        {
            return MqttParseError.FirstPacketNotConnect; // [MQTT-3.1.0-1]
        }

        switch (type)
        {
            case MqttPacketType.Publish:
                // DUP, QoS (2 bits), RETAIN; QoS 3 is malformed. [MQTT-3.3.1-4]
                return (flags & 0x06) == 0x06 ? MqttParseError.InvalidQoS : MqttParseError.None;
            case MqttPacketType.PubRel:
            case MqttPacketType.Subscribe:
            case MqttPacketType.Unsubscribe:
                // Flags 0010. [MQTT-3.6.1-1], [MQTT-3.8.1-1], [MQTT-3.10.1-1]
                return flags == 0x02 ? MqttParseError.None : MqttParseError.ReservedFlags;
            case MqttPacketType.Connect:
            case MqttPacketType.PubAck:
            case MqttPacketType.PubRec:
            case MqttPacketType.PubComp:
            case MqttPacketType.PingReq:
            case MqttPacketType.Disconnect:
                // Flags 0000. [MQTT-2.2.2-1], [MQTT-2.2.2-2]
                return flags == 0 ? MqttParseError.None : MqttParseError.ReservedFlags;
            case MqttPacketType.Auth when V5:
                return flags == 0 ? MqttParseError.None : MqttParseError.ReservedFlags; // [MQTT-3.15.1-1]
            default:
                // 0 and 15 are reserved; CONNACK, SUBACK, UNSUBACK and PINGRESP go server to client only.
                return MqttParseError.UnknownPacketType;
        }
    }

    // PUBLISH: topic name (u16 length + UTF-8), packet identifier if QoS > 0, then the payload to the end.
    private MqttParseError ParsePublish(ReadOnlySequence<byte> body, ref MqttPacket packet)
    {
        if (body.Length < 2)
        {
            return MqttParseError.Malformed;
        }

        int topicLength;
        if (body.FirstSpan.Length >= 2)
        {
            topicLength = BinaryPrimitives.ReadUInt16BigEndian(body.FirstSpan);
        }
        else
        {
            Span<byte> prefix = stackalloc byte[2];
            body.Slice(0, 2).CopyTo(prefix);
            topicLength = BinaryPrimitives.ReadUInt16BigEndian(prefix);
        }

        var qos = packet.QoS;
        var headerLength = 2 + topicLength + (qos > 0 ? 2 : 0);
        if (headerLength > body.Length)
        {
            return MqttParseError.Malformed;
        }

        var propertiesAt = headerLength;
        if (V5)
        {
            // MQTT 5.0: the property length (1 to 4 bytes) and the properties follow. [MQTT-3.3.2.3]
            Span<byte> prefix = stackalloc byte[4];
            var available = (int)Math.Min(4, body.Length - headerLength);
            body.Slice(headerLength, available).CopyTo(prefix);
            if (!MqttProperties.TryReadVariableByteInteger(prefix[..available], out var propertiesLength, out var size, out _)
                || propertiesLength > body.Length - headerLength - size)
            {
                return MqttParseError.MalformedProperties;
            }

            headerLength += size + propertiesLength;
            propertiesAt += size;
        }

        var header = Contiguous(body.Slice(0, headerLength));
        var topic = header.Slice(2, topicLength);
        if (topic.IsEmpty && !V5)
        {
            return MqttParseError.EmptyTopic; // [MQTT-4.7.3-1]
        }

        if (!IsValidString(topic))
        {
            return MqttParseError.InvalidUtf8;
        }

        if (topic.IndexOfAny((byte)'+', (byte)'#') >= 0)
        {
            return MqttParseError.WildcardInTopicName; // [MQTT-3.3.2-2]
        }

        if (qos > 0)
        {
            packet.PacketId = BinaryPrimitives.ReadUInt16BigEndian(header[(2 + topicLength)..]);
            if (packet.PacketId == 0)
            {
                return MqttParseError.PacketIdentifierZero; // [MQTT-2.3.1-1]
            }
        }

        packet.Topic = topic;
        packet.Payload = body.Slice(headerLength);
        if (V5)
        {
            packet.Properties = header[propertiesAt..];
            var error = MqttProperties.Validate(packet.Properties, MqttProperties.PlaceOf(MqttPacketType.Publish));
            if (error != MqttParseError.None || !topic.IsEmpty)
            {
                return error;
            }

            // MQTT 5.0: an empty topic name stands for the one its Topic Alias names; without one it is a Protocol Error. [MQTT-3.3.2-1], [MQTT-3.3.2.3.4]
            return MqttProperties.Contains(packet.Properties, MqttPropertyId.TopicAlias) ? MqttParseError.None : MqttParseError.EmptyTopic;
        }

        return MqttParseError.None;
    }

    // PUBACK, PUBREC, PUBREL, PUBCOMP: exactly a packet identifier.
    private static MqttParseError ParsePacketIdOnly(ReadOnlySequence<byte> body, ref MqttPacket packet)
    {
        if (body.Length != 2)
        {
            return MqttParseError.Malformed;
        }

        Span<byte> id = stackalloc byte[2];
        body.CopyTo(id);
        packet.PacketId = BinaryPrimitives.ReadUInt16BigEndian(id);
        return packet.PacketId == 0 ? MqttParseError.PacketIdentifierZero : MqttParseError.None;
    }

    // MQTT 5.0 PUBACK, PUBREC, PUBREL, PUBCOMP: packet id, then a reason code and properties, each
    // omitted when the rest is: length 2 is Success without properties. [MQTT-3.4.2.1]
    private static MqttParseError ParseAckV5(ReadOnlySpan<byte> body, ref MqttPacket packet)
    {
        var fields = new FieldReader(body);
        if (!fields.TryReadUInt16(out packet.PacketId))
        {
            return MqttParseError.Malformed;
        }

        if (packet.PacketId == 0)
        {
            return MqttParseError.PacketIdentifierZero;
        }

        var error = ParseReasonAndProperties(fields.Rest, ref packet);
        if (error != MqttParseError.None)
        {
            return error;
        }

        // PUBACK/PUBREC: 0x00, 0x10 or an error (>= 0x80); PUBREL/PUBCOMP: 0x00 or 0x92. [MQTT-3.4.2-1], [MQTT-3.6.2-1]
        var code = packet.ReasonCode;
        var valid = packet.Type is MqttPacketType.PubAck or MqttPacketType.PubRec
            ? code is 0x00 or 0x10 or 0x80 or 0x83 or 0x87 or 0x90 or 0x91 or 0x97 or 0x99
            : code is 0x00 or 0x92;
        return valid ? MqttParseError.None : MqttParseError.InvalidReasonCode;
    }

    // MQTT 5.0 DISCONNECT and AUTH (and an acknowledgement's tail): an optional reason code, then
    // optional properties; absent means 0x00 and none. [MQTT-3.14.2.1], [MQTT-3.15.2.1]
    private static MqttParseError ParseReasonAndProperties(ReadOnlySpan<byte> body, ref MqttPacket packet)
    {
        packet.ReasonCode = 0;
        packet.Properties = default;
        if (body.IsEmpty)
        {
            return MqttParseError.None;
        }

        packet.ReasonCode = body[0];
        if (body.Length == 1)
        {
            return MqttParseError.None;
        }

        var error = MqttProperties.TrySplit(body[1..], out packet.Properties, out var consumed);
        if (error != MqttParseError.None)
        {
            return error;
        }

        if (consumed != body.Length - 1)
        {
            return MqttParseError.Malformed; // bytes after the properties
        }

        return MqttProperties.Validate(packet.Properties, MqttProperties.PlaceOf(packet.Type));
    }

    // SUBSCRIBE: packet id, [5.0: properties], then (filter, options)+. UNSUBSCRIBE: packet id, [5.0: properties], then (filter)+.
    private static MqttParseError ParseFilterList(ReadOnlySpan<byte> body, bool withQoS, bool v5, ref MqttPacket packet)
    {
        var fields = new FieldReader(body);
        if (!fields.TryReadUInt16(out packet.PacketId))
        {
            return MqttParseError.Malformed;
        }

        if (packet.PacketId == 0)
        {
            return MqttParseError.PacketIdentifierZero;
        }

        if (v5)
        {
            var error = MqttProperties.TrySplit(fields.Rest, out packet.Properties, out var consumed);
            if (error != MqttParseError.None)
            {
                return error;
            }

            error = MqttProperties.Validate(packet.Properties, MqttProperties.PlaceOf(packet.Type));
            if (error != MqttParseError.None)
            {
                return error;
            }

            fields.Skip(consumed);
        }

        var list = fields.Rest;
        if (list.IsEmpty)
        {
            return MqttParseError.NoTopicFilters; // [MQTT-3.8.3-3], [MQTT-3.10.3-2]
        }

        while (!fields.Rest.IsEmpty)
        {
            if (!fields.TryReadField(out var filter))
            {
                return MqttParseError.Malformed;
            }

            if (filter.IsEmpty)
            {
                return MqttParseError.EmptyTopicFilter; // [MQTT-4.7.3-1]
            }

            if (!IsValidString(filter))
            {
                return MqttParseError.InvalidUtf8; // [MQTT-3.8.3-1], [MQTT-3.10.3-1]
            }

            if (withQoS)
            {
                if (!fields.TryReadByte(out var qos))
                {
                    return MqttParseError.Malformed;
                }

                // 3.1.1: reserved bits and QoS 3 [MQTT-3.8.3-4]. 5.0: bits 6-7 reserved, QoS 3, Retain Handling 3. [MQTT-3.8.3-5]
                if (v5 ? (qos & 0xC0) != 0 || (qos & 0x03) == 3 || (qos & 0x30) == 0x30 : qos > 2)
                {
                    return MqttParseError.InvalidSubscribeQoS;
                }
            }
        }

        packet.FilterList = list;
        return MqttParseError.None;
    }

    // CONNECT: protocol name, level, flags, keep-alive; then client id, [will topic, will message],
    // [user name], [password], in that order. [MQTT-3.1.3-1]
    private static MqttParseError ParseConnect(ReadOnlySpan<byte> body, ref MqttPacket packet)
    {
        var fields = new FieldReader(body);
        if (!fields.TryReadField(out var name))
        {
            return MqttParseError.Malformed;
        }

        if (!name.SequenceEqual("MQTT"u8))
        {
            return MqttParseError.ProtocolName; // [MQTT-3.1.2-1]; nats-server refuses 3.1's "MQIsdp" too
        }

        if (!fields.TryReadByte(out packet.ProtocolLevel))
        {
            return MqttParseError.Malformed;
        }

        if (packet.ProtocolLevel is not (4 or 5))
        {
            return MqttParseError.UnacceptableProtocolVersion; // [MQTT-3.1.2-2]
        }

        var v5 = packet.ProtocolLevel == 5;

        if (!fields.TryReadByte(out var flagsByte))
        {
            return MqttParseError.Malformed;
        }

        var flags = (MqttConnectFlags)flagsByte;
        packet.ConnectFlags = flags;
        if ((flags & MqttConnectFlags.Reserved) != 0)
        {
            return MqttParseError.ConnectReservedFlag; // [MQTT-3.1.2-3]
        }

        var willQoS = packet.WillQoS;
        if (packet.HasWill ? willQoS == 3 : willQoS != 0 || packet.WillRetain)
        {
            return MqttParseError.WillFlags; // [MQTT-3.1.2-13], [MQTT-3.1.2-14], [MQTT-3.1.2-15]
        }

        if (packet.HasPassword && !packet.HasUserName && !v5)
        {
            return MqttParseError.PasswordWithoutUserName; // [MQTT-3.1.2-22]; 5.0 allows a password alone
        }

        if (!fields.TryReadUInt16(out packet.KeepAlive))
        {
            return MqttParseError.Malformed;
        }

        if (v5 && !fields.TryReadProperties(MqttProperties.PlaceOf(MqttPacketType.Connect), out packet.Properties, out var propertiesError))
        {
            return propertiesError; // [MQTT-3.1.2.11]
        }

        if (!fields.TryReadField(out packet.ClientId))
        {
            return MqttParseError.Malformed;
        }

        // 3.1.1: an empty id needs clean session [MQTT-3.1.3-8]; 5.0: the server assigns one either way. [MQTT-3.1.3-6]
        if (packet.ClientId.IsEmpty ? !packet.CleanSession && !v5 : !IsValidString(packet.ClientId))
        {
            return MqttParseError.IdentifierRejected; // [MQTT-3.1.3-8], [MQTT-3.1.3-4]
        }

        if (packet.HasWill)
        {
            if (v5 && !fields.TryReadProperties(MqttProperties.WillProperties, out packet.WillProperties, out propertiesError))
            {
                return propertiesError; // [MQTT-3.1.3.2]
            }

            if (!fields.TryReadField(out packet.WillTopic) || !fields.TryReadField(out packet.WillMessage))
            {
                return MqttParseError.Malformed;
            }

            if (packet.WillTopic.IsEmpty)
            {
                return MqttParseError.EmptyWillTopic;
            }

            if (!IsValidString(packet.WillTopic))
            {
                return MqttParseError.InvalidUtf8;
            }

            if (packet.WillTopic.IndexOfAny((byte)'+', (byte)'#') >= 0)
            {
                return MqttParseError.WildcardInTopicName; // [MQTT-3.1.3-11] a topic name, [MQTT-3.3.2-2]
            }
        }

        if (packet.HasUserName)
        {
            if (!fields.TryReadField(out packet.UserName))
            {
                return MqttParseError.Malformed;
            }

            if (!IsValidString(packet.UserName))
            {
                return MqttParseError.InvalidUtf8; // [MQTT-3.1.3-11]
            }
        }

        if (packet.HasPassword && !fields.TryReadField(out packet.Password))
        {
            return MqttParseError.Malformed;
        }

        return fields.Rest.IsEmpty ? MqttParseError.None : MqttParseError.Malformed;
    }

    // Well-formed UTF-8 without U+0000. [MQTT-1.5.3-1], [MQTT-1.5.3-2]
    private static bool IsValidString(ReadOnlySpan<byte> text) => text.IndexOf((byte)0) < 0 && Utf8.IsValid(text);

    private ReadOnlySpan<byte> Contiguous(ReadOnlySequence<byte> bytes) =>
        bytes.IsSingleSegment ? bytes.FirstSpan : CopyToScratch(bytes);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private ReadOnlySpan<byte> CopyToScratch(ReadOnlySequence<byte> bytes)
    {
        // The bytes are already buffered and within MaxPacketSize, so the size is not a client's claim.
        var length = (int)bytes.Length;
        if (_scratch is null || _scratch.Length < length)
        {
            _scratch = new byte[Math.Max(InitialScratch, (int)BitOperations.RoundUpToPowerOf2((uint)length))];
        }

        bytes.CopyTo(_scratch);
        return _scratch.AsSpan(0, length);
    }

    private static MqttReadStatus Fail(MqttParseError reason, out MqttParseError error)
    {
        error = reason;
        return MqttReadStatus.Error;
    }

    // Reads a packet's big-endian fields from a contiguous body.
    private ref struct FieldReader
    {
        public FieldReader(ReadOnlySpan<byte> body) => Rest = body;

        public ReadOnlySpan<byte> Rest { get; private set; }

        public void Skip(int count) => Rest = Rest[count..];

        // MQTT 5.0: a property list at the reader, split and validated for `place`.
        public bool TryReadProperties(int place, out ReadOnlySpan<byte> properties, out MqttParseError error)
        {
            error = MqttProperties.TrySplit(Rest, out properties, out var consumed);
            if (error == MqttParseError.None)
            {
                error = MqttProperties.Validate(properties, place);
            }

            Skip(consumed);
            return error == MqttParseError.None;
        }

        public bool TryReadByte(out byte value)
        {
            if (Rest.IsEmpty)
            {
                value = 0;
                return false;
            }

            value = Rest[0];
            Rest = Rest[1..];
            return true;
        }

        public bool TryReadUInt16(out ushort value)
        {
            if (Rest.Length < 2)
            {
                value = 0;
                return false;
            }

            value = BinaryPrimitives.ReadUInt16BigEndian(Rest);
            Rest = Rest[2..];
            return true;
        }

        // A u16 length followed by that many bytes (UTF-8 string or binary data). [MQTT-1.5.3]
        public bool TryReadField(out ReadOnlySpan<byte> value)
        {
            value = default;
            if (!TryReadUInt16(out var length))
            {
                return false;
            }

            if (length > Rest.Length)
            {
                return false;
            }

            value = Rest[..length];
            Rest = Rest[length..];
            return true;
        }
    }
}
