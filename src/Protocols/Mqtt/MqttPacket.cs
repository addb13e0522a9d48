using System.Buffers;

namespace Courier.Protocols.Mqtt;

/// <summary>MQTT control packet types (15, AUTH, is MQTT 5.0 only): the high nibble of the fixed header's first byte. [MQTT-2.2.1]</summary>
public enum MqttPacketType : byte
{
    Reserved0 = 0,
    Connect = 1,
    ConnAck = 2,
    Publish = 3,
    PubAck = 4,
    PubRec = 5,
    PubRel = 6,
    PubComp = 7,
    Subscribe = 8,
    SubAck = 9,
    Unsubscribe = 10,
    UnsubAck = 11,
    PingReq = 12,
    PingResp = 13,
    Disconnect = 14,
    Auth = 15,
}

/// <summary>CONNACK return codes. [MQTT-3.2.2.3]</summary>
public enum MqttConnectReturnCode : byte
{
    Accepted = 0x00,
    UnacceptableProtocolVersion = 0x01,
    IdentifierRejected = 0x02,
    ServerUnavailable = 0x03,
    BadUserNameOrPassword = 0x04,
    NotAuthorized = 0x05,

    /// <summary>Not in MQTT 3.1.1: nats-server 2.10's refusal of a QoS 2 will under <c>mqtt.reject_qos2_publish</c>.</summary>
    Qos2WillRejected = 0x10,
}

/// <summary>What <see cref="MqttParser.TryRead"/> found at the reader's position.</summary>
public enum MqttReadStatus : byte
{
    /// <summary>A whole packet was read; the reader is past it.</summary>
    Packet,

    /// <summary>The buffer holds only part of a packet; the reader is unmoved.</summary>
    NeedMoreData,

    /// <summary>The input is not a valid packet; the connection must be closed (after a CONNACK where <see cref="MqttParseErrors.ConnAckCode"/> gives one).</summary>
    Error,
}

/// <summary>Why a packet was rejected. Every one closes the connection. [MQTT-4.8.0-1]</summary>
public enum MqttParseError : byte
{
    None,

    /// <summary>The remaining length has a fifth byte, or ends early. [MQTT-2.2.3]</summary>
    MalformedRemainingLength,

    /// <summary>The remaining length is over the server's maximum packet size.</summary>
    PacketTooLarge,

    /// <summary>Packet type 0 or 15, or a type only a server sends (CONNACK, SUBACK, UNSUBACK, PINGRESP).</summary>
    UnknownPacketType,

    /// <summary>The fixed header's flag bits are not those the type requires. [MQTT-2.2.2-2]</summary>
    ReservedFlags,

    /// <summary>The first packet of a connection is not CONNECT. [MQTT-3.1.0-1]</summary>
    FirstPacketNotConnect,

    /// <summary>A second CONNECT on one connection. [MQTT-3.1.0-2]</summary>
    SecondConnect,

    /// <summary>A field runs past the packet's end, or bytes are left after the last field.</summary>
    Malformed,

    /// <summary>The CONNECT protocol name is not "MQTT" (nats-server closes without a CONNACK, "MQIsdp" included). [MQTT-3.1.2-1]</summary>
    ProtocolName,

    /// <summary>The CONNECT protocol level is not 4: CONNACK 0x01, then close. [MQTT-3.1.2-2]</summary>
    UnacceptableProtocolVersion,

    /// <summary>The CONNECT flags' reserved bit is set. [MQTT-3.1.2-3]</summary>
    ConnectReservedFlag,

    /// <summary>Will QoS or retain set without the will flag, or will QoS 3. [MQTT-3.1.2-13], [MQTT-3.1.2-14], [MQTT-3.1.2-15]</summary>
    WillFlags,

    /// <summary>The password flag is set and the user name flag is not. [MQTT-3.1.2-22]</summary>
    PasswordWithoutUserName,

    /// <summary>An empty client id without clean session, or one that is not valid UTF-8: CONNACK 0x02, then close. [MQTT-3.1.3-8]</summary>
    IdentifierRejected,

    /// <summary>The will topic is empty.</summary>
    EmptyWillTopic,

    /// <summary>A string (topic, filter, will topic, user name) is not well-formed UTF-8 or holds U+0000. [MQTT-1.5.3-1], [MQTT-1.5.3-2]</summary>
    InvalidUtf8,

    /// <summary>PUBLISH with both QoS bits set. [MQTT-3.3.1-4]</summary>
    InvalidQoS,

    /// <summary>A packet identifier of 0. [MQTT-2.3.1-1]</summary>
    PacketIdentifierZero,

    /// <summary>PUBLISH with an empty topic name. [MQTT-4.7.3-1]</summary>
    EmptyTopic,

    /// <summary>PUBLISH (or a will) whose topic name holds a wildcard. [MQTT-3.3.2-2]</summary>
    WildcardInTopicName,

    /// <summary>SUBSCRIBE or UNSUBSCRIBE without a topic filter. [MQTT-3.8.3-3], [MQTT-3.10.3-2]</summary>
    NoTopicFilters,

    /// <summary>An empty topic filter. [MQTT-4.7.3-1]</summary>
    EmptyTopicFilter,

    /// <summary>A requested QoS above 2 in SUBSCRIBE. [MQTT-3.8.3-4]; MQTT 5.0: reserved option bits or Retain Handling 3. [MQTT-3.8.3-5]</summary>
    InvalidSubscribeQoS,

    /// <summary>MQTT 5.0: a property list that overruns its packet, an unknown property id, one not valid for the packet, or a value not of its type. [MQTT-2.2.2.2]</summary>
    MalformedProperties,

    /// <summary>MQTT 5.0: a single-instance property included twice (a Protocol Error).</summary>
    DuplicateProperty,

    /// <summary>MQTT 5.0: a property value outside its range (a Protocol Error), e.g. Receive Maximum 0.</summary>
    InvalidPropertyValue,

    /// <summary>MQTT 5.0: an acknowledgement, DISCONNECT or AUTH reason code not defined for that packet. [MQTT-3.4.2-1]</summary>
    InvalidReasonCode,

    /// <summary>MQTT 5.0: a PUBLISH with Topic Alias 0 (DISCONNECT 0x94, Topic Alias invalid). [MQTT-3.3.2-8]</summary>
    TopicAliasInvalid,
}

/// <summary>MQTT 5.0 reason codes the server sends (CONNACK, PUBACK, SUBACK, UNSUBACK, DISCONNECT). [MQTT-2.4]</summary>
public enum MqttReasonCode : byte
{
    Success = 0x00,
    GrantedQoS1 = 0x01,
    GrantedQoS2 = 0x02,
    DisconnectWithWillMessage = 0x04,
    NoMatchingSubscribers = 0x10,
    NoSubscriptionExisted = 0x11,
    UnspecifiedError = 0x80,
    MalformedPacket = 0x81,
    ProtocolError = 0x82,
    ImplementationSpecificError = 0x83,
    UnsupportedProtocolVersion = 0x84,
    ClientIdentifierNotValid = 0x85,
    BadUserNameOrPassword = 0x86,
    NotAuthorized = 0x87,
    ServerUnavailable = 0x88,
    ServerBusy = 0x89,
    BadAuthenticationMethod = 0x8C,
    KeepAliveTimeout = 0x8D,
    SessionTakenOver = 0x8E,
    TopicFilterInvalid = 0x8F,
    TopicNameInvalid = 0x90,
    PacketIdentifierInUse = 0x91,
    PacketIdentifierNotFound = 0x92,
    ReceiveMaximumExceeded = 0x93,
    TopicAliasInvalid = 0x94,
    PacketTooLarge = 0x95,
    QuotaExceeded = 0x97,
    QoSNotSupported = 0x9B,
    SharedSubscriptionsNotSupported = 0x9E,
    SubscriptionIdentifiersNotSupported = 0xA1,
}

/// <summary>Facts about <see cref="MqttParseError"/>.</summary>
public static class MqttParseErrors
{
    /// <summary>
    /// The CONNACK return code MQTT requires before closing for <paramref name="error"/>, or null
    /// when the connection is closed without one.
    /// </summary>
    public static MqttConnectReturnCode? ConnAckCode(this MqttParseError error) => error switch
    {
        MqttParseError.UnacceptableProtocolVersion => MqttConnectReturnCode.UnacceptableProtocolVersion,
        MqttParseError.IdentifierRejected => MqttConnectReturnCode.IdentifierRejected,
        _ => null,
    };

    /// <summary>
    /// The MQTT 5.0 reason code for <paramref name="error"/>: in the CONNACK that refuses a CONNECT, or
    /// the DISCONNECT sent after it. [MQTT-4.13.1-1]
    /// </summary>
    public static MqttReasonCode ReasonCode(this MqttParseError error) => error switch
    {
        MqttParseError.PacketTooLarge => MqttReasonCode.PacketTooLarge,
        MqttParseError.UnacceptableProtocolVersion or MqttParseError.ProtocolName => MqttReasonCode.UnsupportedProtocolVersion,
        MqttParseError.IdentifierRejected => MqttReasonCode.ClientIdentifierNotValid,
        MqttParseError.WildcardInTopicName => MqttReasonCode.TopicNameInvalid,
        MqttParseError.TopicAliasInvalid => MqttReasonCode.TopicAliasInvalid,
        MqttParseError.FirstPacketNotConnect or MqttParseError.SecondConnect or MqttParseError.EmptyTopic or MqttParseError.EmptyWillTopic
            or MqttParseError.NoTopicFilters or MqttParseError.EmptyTopicFilter or MqttParseError.DuplicateProperty
            or MqttParseError.InvalidPropertyValue or MqttParseError.PacketIdentifierZero => MqttReasonCode.ProtocolError,
        _ => MqttReasonCode.MalformedPacket,
    };
}

/// <summary>CONNECT flags byte. [MQTT-3.1.2.3]</summary>
[Flags]
public enum MqttConnectFlags : byte
{
    None = 0,
    Reserved = 0x01,
    CleanSession = 0x02,
    Will = 0x04,
    WillQoS = 0x18,
    WillRetain = 0x20,
    Password = 0x40,
    UserName = 0x80,
}

/// <summary>
/// One parsed client packet. Spans point into the read buffer, or into the parser's scratch buffer
/// when the packet's fields spanned segments, and are valid until the next
/// <see cref="MqttParser.TryRead"/> call or until the buffer is advanced past them. A PUBLISH
/// payload is a slice of the read buffer, never a copy.
/// </summary>
public ref struct MqttPacket
{
    /// <summary>The packet type.</summary>
    public MqttPacketType Type;

    /// <summary>The fixed header's low nibble.</summary>
    public byte Flags;

    /// <summary>PUBLISH (QoS &gt; 0), PUBACK, PUBREC, PUBREL, PUBCOMP, SUBSCRIBE, UNSUBSCRIBE: the packet identifier; 0 otherwise.</summary>
    public ushort PacketId;

    /// <summary>PUBLISH: the topic name.</summary>
    public ReadOnlySpan<byte> Topic;

    /// <summary>PUBLISH: the application message (may be empty).</summary>
    public ReadOnlySequence<byte> Payload;

    /// <summary>MQTT 5.0: the packet's properties (length prefix excluded), validated; enumerate with <see cref="MqttProperties.Enumerate"/>.</summary>
    public ReadOnlySpan<byte> Properties;

    /// <summary>MQTT 5.0 CONNECT with the will flag: the will properties, validated.</summary>
    public ReadOnlySpan<byte> WillProperties;

    /// <summary>MQTT 5.0 PUBACK, PUBREC, PUBREL, PUBCOMP, DISCONNECT, AUTH: the reason code (0 when omitted).</summary>
    public byte ReasonCode;

    /// <summary>CONNECT: the protocol level (4 for 3.1.1, 5 for 5.0).</summary>
    public byte ProtocolLevel;

    /// <summary>CONNECT: the connect flags.</summary>
    public MqttConnectFlags ConnectFlags;

    /// <summary>CONNECT: the keep-alive interval in seconds; 0 turns keep-alive off.</summary>
    public ushort KeepAlive;

    /// <summary>CONNECT: the client identifier (may be empty with clean session).</summary>
    public ReadOnlySpan<byte> ClientId;

    /// <summary>CONNECT with the will flag: the will topic.</summary>
    public ReadOnlySpan<byte> WillTopic;

    /// <summary>CONNECT with the will flag: the will message.</summary>
    public ReadOnlySpan<byte> WillMessage;

    /// <summary>CONNECT with the user name flag: the user name.</summary>
    public ReadOnlySpan<byte> UserName;

    /// <summary>CONNECT with the password flag: the password (binary data).</summary>
    public ReadOnlySpan<byte> Password;

    /// <summary>SUBSCRIBE/UNSUBSCRIBE: the topic filter list, validated; enumerate with <see cref="TopicFilters"/>.</summary>
    public ReadOnlySpan<byte> FilterList;

    /// <summary>PUBLISH: the QoS level (0, 1 or 2).</summary>
    public readonly byte QoS => (byte)((Flags >> 1) & 0x03);

    /// <summary>PUBLISH: the retain flag.</summary>
    public readonly bool Retain => (Flags & 0x01) != 0;

    /// <summary>PUBLISH: the DUP flag.</summary>
    public readonly bool Dup => (Flags & 0x08) != 0;

    /// <summary>CONNECT: the clean session flag.</summary>
    public readonly bool CleanSession => (ConnectFlags & MqttConnectFlags.CleanSession) != 0;

    /// <summary>CONNECT: whether a will is present.</summary>
    public readonly bool HasWill => (ConnectFlags & MqttConnectFlags.Will) != 0;

    /// <summary>CONNECT: the will's QoS.</summary>
    public readonly byte WillQoS => (byte)(((byte)ConnectFlags >> 3) & 0x03);

    /// <summary>CONNECT: the will's retain flag.</summary>
    public readonly bool WillRetain => (ConnectFlags & MqttConnectFlags.WillRetain) != 0;

    /// <summary>CONNECT: whether a user name is present.</summary>
    public readonly bool HasUserName => (ConnectFlags & MqttConnectFlags.UserName) != 0;

    /// <summary>CONNECT: whether a password is present.</summary>
    public readonly bool HasPassword => (ConnectFlags & MqttConnectFlags.Password) != 0;

    /// <summary>SUBSCRIBE (with requested QoS) or UNSUBSCRIBE (QoS 0) topic filters, in order.</summary>
    public readonly MqttTopicFilters TopicFilters => new(FilterList, Type == MqttPacketType.Subscribe);

    /// <summary>MQTT 5.0 CONNECT: Clean Start (the same bit as 3.1.1's clean session). [MQTT-3.1.2-4]</summary>
    public readonly bool CleanStart => CleanSession;
}
