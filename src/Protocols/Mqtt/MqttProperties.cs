using System.Buffers.Binary;
using System.Text.Unicode;

namespace Courier.Protocols.Mqtt;

/// <summary>MQTT 5.0 property identifiers. [MQTT-2.2.2.2]</summary>
public enum MqttPropertyId : byte
{
    PayloadFormatIndicator = 0x01,
    MessageExpiryInterval = 0x02,
    ContentType = 0x03,
    ResponseTopic = 0x08,
    CorrelationData = 0x09,
    SubscriptionIdentifier = 0x0B,
    SessionExpiryInterval = 0x11,
    AssignedClientIdentifier = 0x12,
    ServerKeepAlive = 0x13,
    AuthenticationMethod = 0x15,
    AuthenticationData = 0x16,
    RequestProblemInformation = 0x17,
    WillDelayInterval = 0x18,
    RequestResponseInformation = 0x19,
    ResponseInformation = 0x1A,
    ServerReference = 0x1C,
    ReasonString = 0x1F,
    ReceiveMaximum = 0x21,
    TopicAliasMaximum = 0x22,
    TopicAlias = 0x23,
    MaximumQoS = 0x24,
    RetainAvailable = 0x25,
    UserProperty = 0x26,
    MaximumPacketSize = 0x27,
    WildcardSubscriptionAvailable = 0x28,
    SubscriptionIdentifierAvailable = 0x29,
    SharedSubscriptionAvailable = 0x2A,
}

/// <summary>The data type of a property's value. [MQTT-1.5]</summary>
public enum MqttPropertyType : byte
{
    None,
    Byte,
    TwoByteInteger,
    FourByteInteger,
    VariableByteInteger,
    Utf8String,
    BinaryData,
    Utf8StringPair,
}

/// <summary>One property: its id and value (a number, or one or two byte strings).</summary>
public readonly ref struct MqttProperty
{
    /// <summary>Creates a property.</summary>
    public MqttProperty(MqttPropertyId id, uint number, ReadOnlySpan<byte> data, ReadOnlySpan<byte> value)
    {
        Id = id;
        Number = number;
        Data = data;
        Value = value;
    }

    /// <summary>The identifier.</summary>
    public MqttPropertyId Id { get; }

    /// <summary>Byte, two- or four-byte or variable byte integer properties: the value.</summary>
    public uint Number { get; }

    /// <summary>String and binary properties: the bytes; a user property: its name.</summary>
    public ReadOnlySpan<byte> Data { get; }

    /// <summary>A user property: its value.</summary>
    public ReadOnlySpan<byte> Value { get; }
}

/// <summary>
/// MQTT 5.0 properties: variable byte integers, the property table (type and packets each id may
/// appear in), validation of a client's property list, enumeration in place and writing. No allocation.
/// </summary>
/// <remarks>
/// A property list is a variable byte integer length, then (id, value)*. A list is validated once by
/// the parser; enumerating a validated list never fails. [MQTT-2.2.2]
/// </remarks>
public static class MqttProperties
{
    /// <summary>The largest variable byte integer (4 bytes of 7 bits). [MQTT-1.5.5]</summary>
    public const int MaxVariableByteInteger = 268_435_455;

    /// <summary>Where a property list stands, as a bit: the packet types, and bit 0 for a CONNECT's will properties.</summary>
    public const int WillProperties = 1 << 0;

    private const int Connect = 1 << 1;
    private const int ConnAck = 1 << 2;
    private const int Publish = 1 << 3;
    private const int PubAcks = (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7);
    private const int Subscribe = 1 << 8;
    private const int SubAck = 1 << 9;
    private const int Unsubscribe = 1 << 10;
    private const int UnsubAck = 1 << 11;
    private const int Disconnect = 1 << 14;
    private const int Auth = 1 << 15;

    /// <summary>The bit for property lists of <paramref name="type"/> (see <see cref="WillProperties"/>).</summary>
    public static int PlaceOf(MqttPacketType type) => 1 << (int)type;

    /// <summary>A property's type and where it may appear; (None, 0) for an unknown id. [MQTT-2.2.2.2]</summary>
    public static (MqttPropertyType Type, int Places) Describe(byte id) => (MqttPropertyId)id switch
    {
        MqttPropertyId.PayloadFormatIndicator => (MqttPropertyType.Byte, Publish | WillProperties),
        MqttPropertyId.MessageExpiryInterval => (MqttPropertyType.FourByteInteger, Publish | WillProperties),
        MqttPropertyId.ContentType => (MqttPropertyType.Utf8String, Publish | WillProperties),
        MqttPropertyId.ResponseTopic => (MqttPropertyType.Utf8String, Publish | WillProperties),
        MqttPropertyId.CorrelationData => (MqttPropertyType.BinaryData, Publish | WillProperties),
        MqttPropertyId.SubscriptionIdentifier => (MqttPropertyType.VariableByteInteger, Publish | Subscribe),
        MqttPropertyId.SessionExpiryInterval => (MqttPropertyType.FourByteInteger, Connect | ConnAck | Disconnect),
        MqttPropertyId.AssignedClientIdentifier => (MqttPropertyType.Utf8String, ConnAck),
        MqttPropertyId.ServerKeepAlive => (MqttPropertyType.TwoByteInteger, ConnAck),
        MqttPropertyId.AuthenticationMethod => (MqttPropertyType.Utf8String, Connect | ConnAck | Auth),
        MqttPropertyId.AuthenticationData => (MqttPropertyType.BinaryData, Connect | ConnAck | Auth),
        MqttPropertyId.RequestProblemInformation => (MqttPropertyType.Byte, Connect),
        MqttPropertyId.WillDelayInterval => (MqttPropertyType.FourByteInteger, WillProperties),
        MqttPropertyId.RequestResponseInformation => (MqttPropertyType.Byte, Connect),
        MqttPropertyId.ResponseInformation => (MqttPropertyType.Utf8String, ConnAck),
        MqttPropertyId.ServerReference => (MqttPropertyType.Utf8String, ConnAck | Disconnect),
        MqttPropertyId.ReasonString => (MqttPropertyType.Utf8String, ConnAck | PubAcks | SubAck | UnsubAck | Disconnect | Auth),
        MqttPropertyId.ReceiveMaximum => (MqttPropertyType.TwoByteInteger, Connect | ConnAck),
        MqttPropertyId.TopicAliasMaximum => (MqttPropertyType.TwoByteInteger, Connect | ConnAck),
        MqttPropertyId.TopicAlias => (MqttPropertyType.TwoByteInteger, Publish),
        MqttPropertyId.MaximumQoS => (MqttPropertyType.Byte, ConnAck),
        MqttPropertyId.RetainAvailable => (MqttPropertyType.Byte, ConnAck),
        MqttPropertyId.UserProperty => (MqttPropertyType.Utf8StringPair, -1),
        MqttPropertyId.MaximumPacketSize => (MqttPropertyType.FourByteInteger, Connect | ConnAck),
        MqttPropertyId.WildcardSubscriptionAvailable => (MqttPropertyType.Byte, ConnAck),
        MqttPropertyId.SubscriptionIdentifierAvailable => (MqttPropertyType.Byte, ConnAck),
        MqttPropertyId.SharedSubscriptionAvailable => (MqttPropertyType.Byte, ConnAck),
        _ => (MqttPropertyType.None, 0),
    };

    /// <summary>
    /// Reads a variable byte integer: 7 bits per byte, least significant first, high bit "more", at
    /// most 4 bytes. Returns false when <paramref name="input"/> ends first or a fifth byte would be
    /// needed (<paramref name="malformed"/> tells which). [MQTT-1.5.5]
    /// </summary>
    public static bool TryReadVariableByteInteger(ReadOnlySpan<byte> input, out int value, out int size, out bool malformed)
    {
        value = 0;
        malformed = false;
        for (size = 0; size < 4; size++)
        {
            if (size >= input.Length)
            {
                return false;
            }

            var b = input[size];
            value |= (b & 0x7F) << (7 * size);
            if ((b & 0x80) == 0)
            {
                size++;
                return true;
            }
        }

        malformed = true;
        return false;
    }

    /// <summary>Bytes <paramref name="value"/> takes as a variable byte integer (1 to 4). [MQTT-1.5.5]</summary>
    public static int VariableByteIntegerSize(int value) => MqttPacketWriter.RemainingLengthSize(value);

    /// <summary>Writes a variable byte integer; returns the bytes written. [MQTT-1.5.5]</summary>
    public static int WriteVariableByteInteger(Span<byte> destination, int value) => MqttPacketWriter.WriteRemainingLength(destination, value);

    /// <summary>
    /// Splits a property list (length prefix included) off the front of <paramref name="input"/>:
    /// <paramref name="properties"/> is the list's content, <paramref name="consumed"/> its length
    /// with the prefix. <see cref="MqttParseError.Malformed"/> when the length is bad or overruns the input.
    /// </summary>
    public static MqttParseError TrySplit(ReadOnlySpan<byte> input, out ReadOnlySpan<byte> properties, out int consumed)
    {
        properties = default;
        consumed = 0;
        if (!TryReadVariableByteInteger(input, out var length, out var size, out _) || length > input.Length - size)
        {
            return MqttParseError.MalformedProperties; // [MQTT-2.2.2-1] the length must fit the packet
        }

        properties = input.Slice(size, length);
        consumed = size + length;
        return MqttParseError.None;
    }

    /// <summary>
    /// Checks a client's property list for a packet at <paramref name="place"/> (<see cref="PlaceOf"/>
    /// or <see cref="WillProperties"/>): known ids allowed there, values of their type within the list,
    /// well-formed strings, no repeated single-instance property, values in their range.
    /// </summary>
    public static MqttParseError Validate(ReadOnlySpan<byte> properties, int place)
    {
        ulong seen = 0;
        var rest = properties;
        while (!rest.IsEmpty)
        {
            var id = rest[0];
            var (type, places) = Describe(id);
            if (type == MqttPropertyType.None || (places & place) == 0)
            {
                return MqttParseError.MalformedProperties; // unknown, or not valid for this packet [MQTT-2.2.2.2]
            }

            if (id != (byte)MqttPropertyId.UserProperty)
            {
                var bit = 1UL << id;
                if ((seen & bit) != 0)
                {
                    return MqttParseError.DuplicateProperty; // "a Protocol Error to include ... more than once"
                }

                seen |= bit;
            }

            if (!TryReadValue(rest[1..], type, out var number, out var data, out var value, out var size))
            {
                return MqttParseError.MalformedProperties; // the value overruns the list, or is not of its type
            }

            if (type is MqttPropertyType.Utf8String or MqttPropertyType.Utf8StringPair && (!IsValidString(data) || !IsValidString(value)))
            {
                return MqttParseError.InvalidUtf8; // [MQTT-1.5.4-1], [MQTT-1.5.4-2]
            }

            var error = CheckRange((MqttPropertyId)id, number);
            if (error != MqttParseError.None)
            {
                return error;
            }

            rest = rest[(1 + size)..];
        }

        return MqttParseError.None;
    }

    // Values outside their range are Protocol Errors.
    private static MqttParseError CheckRange(MqttPropertyId id, uint number) => id switch
    {
        MqttPropertyId.PayloadFormatIndicator or MqttPropertyId.RequestProblemInformation or MqttPropertyId.RequestResponseInformation
            or MqttPropertyId.MaximumQoS or MqttPropertyId.RetainAvailable or MqttPropertyId.WildcardSubscriptionAvailable
            or MqttPropertyId.SubscriptionIdentifierAvailable or MqttPropertyId.SharedSubscriptionAvailable
            => number > 1 ? MqttParseError.InvalidPropertyValue : MqttParseError.None, // 0 or 1 [MQTT-3.1.2.11.7]
        MqttPropertyId.ReceiveMaximum or MqttPropertyId.MaximumPacketSize or MqttPropertyId.SubscriptionIdentifier
            => number == 0 ? MqttParseError.InvalidPropertyValue : MqttParseError.None, // [MQTT-3.1.2.11.3], [MQTT-3.1.2.11.4], [MQTT-3.8.2.1.2]
        MqttPropertyId.TopicAlias => number == 0 ? MqttParseError.TopicAliasInvalid : MqttParseError.None, // [MQTT-3.3.2-8]: DISCONNECT 0x94
        _ => MqttParseError.None,
    };

    /// <summary>Bytes of the largest Subscription Identifier property: the id and a 4-byte variable byte integer.</summary>
    public const int MaxSubscriptionIdentifierSize = 5;

    /// <summary>Bytes of a Subscription Identifier property for <paramref name="subscriptionId"/>; 0 for 0 (none).</summary>
    public static int SubscriptionIdentifierSize(int subscriptionId) => subscriptionId == 0 ? 0 : 1 + VariableByteIntegerSize(subscriptionId);

    /// <summary>Writes a Subscription Identifier property (nothing for 0); returns the bytes written. [MQTT-3.3.2.3.8]</summary>
    public static int WriteSubscriptionIdentifier(Span<byte> destination, int subscriptionId)
    {
        if (subscriptionId == 0)
        {
            return 0;
        }

        destination[0] = (byte)MqttPropertyId.SubscriptionIdentifier;
        return 1 + WriteVariableByteInteger(destination[1..], subscriptionId);
    }

    /// <summary>
    /// Replaces the value of the first four-byte integer property <paramref name="id"/> in a property list
    /// the server wrote (no length prefix); false when it holds none. The Message Expiry Interval a
    /// stored message goes out with is the time it has left. [MQTT-3.3.2-6]
    /// </summary>
    public static bool TrySetUInt32(Span<byte> properties, MqttPropertyId id, uint value)
    {
        var at = IndexOfUInt32(properties, id, out _);
        if (at < 0)
        {
            return false;
        }

        BinaryPrimitives.WriteUInt32BigEndian(properties[at..], value);
        return true;
    }

    /// <summary>
    /// Where the value of the first four-byte integer property <paramref name="id"/> of a property list
    /// (no length prefix) starts, and the value; -1 when it holds none.
    /// </summary>
    public static int IndexOfUInt32(ReadOnlySpan<byte> properties, MqttPropertyId id, out uint value)
    {
        value = 0;
        var at = 0;
        while (at < properties.Length)
        {
            var current = properties[at];
            var type = Describe(current).Type;
            if (!TryReadValue(properties[(at + 1)..], type, out var number, out _, out _, out var size))
            {
                return -1;
            }

            if (current == (byte)id && type == MqttPropertyType.FourByteInteger)
            {
                value = number;
                return at + 1;
            }

            at += 1 + size;
        }

        return -1;
    }

    /// <summary>Whether validated <paramref name="properties"/> hold <paramref name="id"/>.</summary>
    public static bool Contains(ReadOnlySpan<byte> properties, MqttPropertyId id)
    {
        foreach (var property in Enumerate(properties))
        {
            if (property.Id == id)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Well-formed UTF-8 without U+0000. [MQTT-1.5.4-1], [MQTT-1.5.4-2]</summary>
    public static bool IsValidString(ReadOnlySpan<byte> text) => text.IndexOf((byte)0) < 0 && Utf8.IsValid(text);

    // One value of type `type` at the front of `input`; size is its bytes.
    private static bool TryReadValue(ReadOnlySpan<byte> input, MqttPropertyType type, out uint number, out ReadOnlySpan<byte> data, out ReadOnlySpan<byte> value, out int size)
    {
        number = 0;
        data = default;
        value = default;
        size = 0;
        switch (type)
        {
            case MqttPropertyType.Byte:
                if (input.IsEmpty)
                {
                    return false;
                }

                number = input[0];
                size = 1;
                return true;
            case MqttPropertyType.TwoByteInteger:
                if (input.Length < 2)
                {
                    return false;
                }

                number = BinaryPrimitives.ReadUInt16BigEndian(input);
                size = 2;
                return true;
            case MqttPropertyType.FourByteInteger:
                if (input.Length < 4)
                {
                    return false;
                }

                number = BinaryPrimitives.ReadUInt32BigEndian(input);
                size = 4;
                return true;
            case MqttPropertyType.VariableByteInteger:
                if (!TryReadVariableByteInteger(input, out var vbi, out size, out _))
                {
                    return false;
                }

                number = (uint)vbi;
                return true;
            case MqttPropertyType.Utf8String or MqttPropertyType.BinaryData:
                return TryReadField(input, out data, out size);
            case MqttPropertyType.Utf8StringPair:
                if (!TryReadField(input, out data, out var first) || !TryReadField(input[first..], out value, out var second))
                {
                    return false;
                }

                size = first + second;
                return true;
            default:
                return false;
        }
    }

    private static bool TryReadField(ReadOnlySpan<byte> input, out ReadOnlySpan<byte> field, out int size)
    {
        field = default;
        size = 0;
        if (input.Length < 2)
        {
            return false;
        }

        var length = BinaryPrimitives.ReadUInt16BigEndian(input);
        if (length > input.Length - 2)
        {
            return false;
        }

        field = input.Slice(2, length);
        size = 2 + length;
        return true;
    }

    /// <summary>Enumerates a validated property list in place.</summary>
    public static Enumerator Enumerate(ReadOnlySpan<byte> properties) => new(properties);

    /// <summary>Walks a validated list one property at a time.</summary>
    public ref struct Enumerator
    {
        private ReadOnlySpan<byte> _rest;
        private MqttProperty _current;

        internal Enumerator(ReadOnlySpan<byte> list)
        {
            _rest = list;
            _current = default;
        }

        /// <summary>The current property.</summary>
        public readonly MqttProperty Current => _current;

        /// <summary>Enumerates itself (for <c>foreach</c>).</summary>
        public readonly Enumerator GetEnumerator() => this;

        /// <summary>Moves to the next property.</summary>
        public bool MoveNext()
        {
            if (_rest.IsEmpty)
            {
                return false;
            }

            var id = _rest[0];
            if (!TryReadValue(_rest[1..], Describe(id).Type, out var number, out var data, out var value, out var size))
            {
                _rest = default; // not validated: stop
                return false;
            }

            _current = new MqttProperty((MqttPropertyId)id, number, data, value);
            _rest = _rest[(1 + size)..];
            return true;
        }
    }

    /// <summary>Bytes of a property with a byte value.</summary>
    public const int ByteSize = 2;

    /// <summary>Bytes of a property with a two-byte value.</summary>
    public const int TwoByteSize = 3;

    /// <summary>Bytes of a property with a four-byte value.</summary>
    public const int FourByteSize = 5;

    /// <summary>Bytes of a string or binary property of <paramref name="length"/> bytes.</summary>
    public static int StringSize(int length) => 3 + length;

    /// <summary>Bytes of a user property.</summary>
    public static int PairSize(int nameLength, int valueLength) => 5 + nameLength + valueLength;

    /// <summary>Writes a byte property; returns the bytes written.</summary>
    public static int WriteByte(Span<byte> destination, MqttPropertyId id, byte value)
    {
        destination[0] = (byte)id;
        destination[1] = value;
        return ByteSize;
    }

    /// <summary>Writes a two-byte integer property; returns the bytes written.</summary>
    public static int WriteUInt16(Span<byte> destination, MqttPropertyId id, ushort value)
    {
        destination[0] = (byte)id;
        BinaryPrimitives.WriteUInt16BigEndian(destination[1..], value);
        return TwoByteSize;
    }

    /// <summary>Writes a four-byte integer property; returns the bytes written.</summary>
    public static int WriteUInt32(Span<byte> destination, MqttPropertyId id, uint value)
    {
        destination[0] = (byte)id;
        BinaryPrimitives.WriteUInt32BigEndian(destination[1..], value);
        return FourByteSize;
    }

    /// <summary>Writes a string or binary property; returns the bytes written.</summary>
    public static int WriteString(Span<byte> destination, MqttPropertyId id, ReadOnlySpan<byte> value)
    {
        destination[0] = (byte)id;
        BinaryPrimitives.WriteUInt16BigEndian(destination[1..], checked((ushort)value.Length));
        value.CopyTo(destination[3..]);
        return StringSize(value.Length);
    }

    /// <summary>Writes a user property; returns the bytes written.</summary>
    public static int WritePair(Span<byte> destination, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        destination[0] = (byte)MqttPropertyId.UserProperty;
        BinaryPrimitives.WriteUInt16BigEndian(destination[1..], checked((ushort)name.Length));
        name.CopyTo(destination[3..]);
        var at = 3 + name.Length;
        BinaryPrimitives.WriteUInt16BigEndian(destination[at..], checked((ushort)value.Length));
        value.CopyTo(destination[(at + 2)..]);
        return PairSize(name.Length, value.Length);
    }
}
