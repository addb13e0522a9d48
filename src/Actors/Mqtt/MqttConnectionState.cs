using System.Buffers;
using Courier.Protocols.Mqtt;

namespace Courier.Actors.Mqtt;

/// <summary>A will, kept from CONNECT until the connection ends. [MQTT-3.1.2-8]</summary>
/// <param name="Subject">The will topic as a NATS subject.</param>
/// <param name="Topic">The will topic.</param>
/// <param name="Payload">The will message.</param>
/// <param name="QoS">The will QoS.</param>
/// <param name="Retain">The will retain flag.</param>
/// <param name="Headers">MQTT 5.0: the will properties as NATS header lines (<see cref="MqttNatsHeaders"/>); empty otherwise.</param>
/// <param name="Delay">MQTT 5.0 Will Delay Interval, seconds: the will waits this long after the connection ends (its session holds it). [MQTT-3.1.3.2.2]</param>
internal sealed record MqttWill(byte[] Subject, byte[] Topic, byte[] Payload, byte QoS, bool Retain, byte[]? Headers = null, uint Delay = 0);

/// <summary>A CONNECT read and checked, waiting for authentication and its session.</summary>
/// <param name="ClientId">The client id (made by the server when the client sent none).</param>
/// <param name="CleanSession">3.1.1 clean session; 5.0 Clean Start.</param>
/// <param name="KeepAlive">Seconds; 0 turns keep-alive off.</param>
/// <param name="User">The user name, if any.</param>
/// <param name="Password">The password, if any.</param>
/// <param name="Will">The will, if any.</param>
/// <param name="Version">The protocol level: 4 (3.1.1) or 5 (5.0).</param>
/// <param name="SessionExpiry">MQTT 5.0: the Session Expiry Interval asked for, seconds (0: the session ends with the connection).</param>
/// <param name="AssignedId">The client sent an empty id and the server made <paramref name="ClientId"/>.</param>
/// <param name="ReceiveMaximum">MQTT 5.0: QoS 1/2 deliveries the client takes unacknowledged.</param>
/// <param name="MaxPacketSize">MQTT 5.0: the largest packet the client takes, bytes (0: no limit).</param>
/// <param name="RequestResponseInformation">MQTT 5.0: the client asked for Response Information in CONNACK.</param>
/// <param name="TopicAliasMaximum">MQTT 5.0: the highest Topic Alias the client takes on PUBLISH (0: none).</param>
internal sealed record MqttPendingConnect(
    string ClientId,
    bool CleanSession,
    ushort KeepAlive,
    string? User,
    string? Password,
    MqttWill? Will,
    byte Version = 4,
    uint SessionExpiry = 0,
    bool AssignedId = false,
    int ReceiveMaximum = ushort.MaxValue,
    int MaxPacketSize = 0,
    bool RequestResponseInformation = false,
    ushort TopicAliasMaximum = 0);

/// <summary>A SUBACK or UNSUBACK to send once the subscription changes are in the routers, and the retained messages the new subscriptions get.</summary>
/// <param name="Type">SUBSCRIBE or UNSUBSCRIBE.</param>
/// <param name="PacketId">The packet id the acknowledgement names.</param>
/// <param name="ReturnCodes">A code per filter.</param>
/// <param name="RetainedFor">The subjects whose retained messages follow a SUBACK: granted QoS and MQTT 5.0 Subscription Identifier (0: none).</param>
internal sealed record MqttPendingAck(MqttPacketType Type, ushort PacketId, byte[] ReturnCodes, IReadOnlyList<(string Subject, byte QoS, int SubscriptionId)> RetainedFor);

/// <summary>
/// The MQTT state of one <see cref="Connections.MqttConnection"/>: its parser, CONNECT state,
/// will, and the buffers its read pump reuses. Written by the read pump; <see cref="Connected"/>
/// is also read by its actor, and <see cref="Inflight"/> is used by publishers delivering to it.
/// </summary>
internal sealed class MqttConnectionState
{
    /// <summary>
    /// The header nats-server puts on a message published from MQTT, so NATS subscribers see its QoS:
    /// <c>NATS/1.0\r\nNmqtt-Pub:Q\r\n\r\n</c> (Q the digit). Bytes.
    /// </summary>
    public const int NatsHeaderLength = 25;

    private static ReadOnlySpan<byte> NatsHeaderPrefix => "NATS/1.0\r\nNmqtt-Pub:"u8;

    private byte[] _subjectBuffer = [];
    private byte[] _publishBuffer = [];
    private byte[] _headerLinesBuffer = [];
    private byte[] _replyBuffer = [];
    private volatile bool _connected;

    public MqttConnectionState(int maxPacketSize)
    {
        Parser = new MqttParser(Math.Clamp(maxPacketSize, 2, MqttParser.MaxRemainingLength));
    }

    public MqttParser Parser { get; }

    /// <summary>QoS 1 deliveries waiting for PUBACK (set by the connection once its outbound exists).</summary>
    public MqttInflight Inflight { get; set; } = null!;

    /// <summary>CONNECT accepted and CONNACK 0 queued.</summary>
    public bool Connected
    {
        get => _connected;
        set => _connected = value;
    }

    /// <summary>The protocol level of the CONNECT (4: 3.1.1, 5: 5.0; 0 before it).</summary>
    public byte Version { get; set; }

    /// <summary>MQTT 5.0: the Session Expiry Interval in effect (0: the session ends with the connection).</summary>
    public uint SessionExpiry { get; set; }

    /// <summary>MQTT 5.0: the session ends with this connection although it was resumed (Session Expiry Interval 0).</summary>
    public bool EndSessionAtClose { get; set; }

    /// <summary>MQTT 5.0: the largest packet the client takes, bytes (0: no limit).</summary>
    public int ClientMaxPacketSize { get; set; }

    /// <summary>MQTT 5.0: the Topic Aliases the client set on this connection (made at its first alias).</summary>
    public MqttTopicAliases? TopicAliases { get; set; }

    /// <summary>The session's client id, once connected.</summary>
    public string? ClientId { get; set; }

    /// <summary>
    /// From SUBSCRIBE until its retained messages are read: subscriptions are being made, so retained
    /// publishes delivered live meanwhile are noted in <see cref="RetainedSeenLive"/> (both under the gate).
    /// </summary>
    public bool CollectingRetained { get; set; }

    /// <summary>Subjects of retained publishes delivered live while <see cref="CollectingRetained"/>: not sent again as retained.</summary>
    public HashSet<string> RetainedSeenLive { get; } = new(StringComparer.Ordinal);

    /// <summary>The will, until a DISCONNECT discards it or the connection ends and it is published.</summary>
    public MqttWill? Will { get; set; }

    /// <summary>The CONNECT waiting for its session.</summary>
    public MqttPendingConnect? PendingConnect { get; set; }

    /// <summary>SUBACKs and UNSUBACKs waiting for the routers.</summary>
    public List<MqttPendingAck> PendingAcks { get; } = [];

    /// <summary>The session actor (set at CONNECT).</summary>
    public Akka.Actor.IActorRef? Session { get; set; }

    /// <summary>clean_session=0: subscriptions and QoS 1/2 messages are kept by the session.</summary>
    public bool Persistent { get; set; }

    /// <summary>A persistent session's subscription changes of this read batch, journaled before SUBACK.</summary>
    public List<MqttSessionSubscription> SessionSubscribes { get; } = [];

    /// <summary>A persistent session's unsubscribed filters of this read batch, journaled before UNSUBACK.</summary>
    public List<string> SessionUnsubscribes { get; } = [];

    /// <summary>Session sequences acknowledged in this read batch (told to the session once per batch).</summary>
    public List<long> AckedSeqs { get; } = [];

    /// <summary>PUBACKs / PUBRECs (first byte, packet id, MQTT 5.0 reason code) waiting for the capture barrier, in order.</summary>
    public List<(byte Type, ushort PacketId, byte Reason)> DeferredAcks { get; } = [];

    /// <summary>Packet ids given to the persistent session's deliveries (told to the session once per batch).</summary>
    public List<(long Seq, ushort PacketId)> AssignedIds { get; } = [];

    /// <summary>A persistent session's QoS 2 deliveries released (PUBREC) in this read batch, by packet id.</summary>
    public List<ushort> ReleasedIds { get; } = [];

    /// <summary>A persistent session's QoS 2 deliveries completed (PUBCOMP) in this read batch, by packet id.</summary>
    public List<ushort> CompletedIds { get; } = [];

    /// <summary>Packet ids of QoS 2 PUBLISHes routed and waiting for PUBREL: a re-sent one is not routed again. [MQTT-4.3.3-2]</summary>
    public HashSet<ushort> Qos2Received { get; } = [];

    /// <summary>
    /// Journal writes an acknowledgement waits for (a retained QoS 1/2 PUBLISH; a persistent session's
    /// QoS 2 packet id), and that acknowledgement: PUBACK (0x40), PUBREC (0x50) or PUBCOMP (0x70).
    /// </summary>
    public (Task Stored, byte AckType, ushort PacketId)? PendingAck { get; set; }

    /// <summary>A buffer for the NATS subject of a topic of <paramref name="topicLength"/> bytes (grown, then reused).</summary>
    public byte[] SubjectBuffer(int topicLength)
    {
        var needed = MqttTopics.MaxSubjectLength(topicLength);
        if (_subjectBuffer.Length < needed)
        {
            _subjectBuffer = new byte[Math.Max(needed, 256)];
        }

        return _subjectBuffer;
    }

    /// <summary>
    /// The message as NATS subscribers receive it: nats-server's Nmqtt-Pub header, then the payload,
    /// copied into a buffer this connection reuses (valid until the next call).
    /// </summary>
    public ReadOnlySequence<byte> NatsMessage(byte qos, in ReadOnlySequence<byte> payload) => NatsMessage(qos, default, payload);

    /// <summary>
    /// As <see cref="NatsMessage(byte, in ReadOnlySequence{byte})"/>, with more header lines
    /// (<c>Name: Value\r\n</c> each) after Nmqtt-Pub: an MQTT 5.0 PUBLISH's properties. The header
    /// block is <see cref="NatsHeaderLength"/> + <paramref name="headerLines"/> bytes.
    /// </summary>
    public ReadOnlySequence<byte> NatsMessage(byte qos, ReadOnlySpan<byte> headerLines, in ReadOnlySequence<byte> payload)
    {
        var headerLength = NatsHeaderLength + headerLines.Length;
        var needed = headerLength + (int)payload.Length;
        if (_publishBuffer.Length < needed)
        {
            _publishBuffer = new byte[Math.Max(needed, 1024)];
        }

        var span = _publishBuffer.AsSpan();
        NatsHeaderPrefix.CopyTo(span);
        var at = NatsHeaderPrefix.Length;
        span[at++] = (byte)('0' + qos);
        "\r\n"u8.CopyTo(span[at..]);
        at += 2;
        headerLines.CopyTo(span[at..]);
        at += headerLines.Length;
        "\r\n"u8.CopyTo(span[at..]);
        payload.CopyTo(span[headerLength..]);
        return new ReadOnlySequence<byte>(_publishBuffer, 0, needed);
    }

    /// <summary>A buffer for the reply subject of a Response Topic of <paramref name="topicLength"/> bytes (grown, then reused).</summary>
    public byte[] ReplyBuffer(int topicLength)
    {
        var needed = MqttTopics.MaxSubjectLength(topicLength);
        if (_replyBuffer.Length < needed)
        {
            _replyBuffer = new byte[Math.Max(needed, 256)];
        }

        return _replyBuffer;
    }

    /// <summary>A buffer for <paramref name="length"/> bytes of header lines (grown, then reused).</summary>
    public byte[] HeaderLinesBuffer(int length)
    {
        if (_headerLinesBuffer.Length < length)
        {
            _headerLinesBuffer = new byte[Math.Max(length, 256)];
        }

        return _headerLinesBuffer;
    }
}
