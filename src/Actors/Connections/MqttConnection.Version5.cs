using System.Buffers;
using System.Security.Cryptography;
using System.Text;
using Courier.Actors.Mqtt;
using Courier.Protocols.Mqtt;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Connections;

/// <summary>
/// What MQTT 5.0 adds to an MQTT client: CONNECT and CONNACK properties, PUBLISH properties as NATS
/// headers and back, the client's Topic Aliases, DISCONNECT both ways. What is not implemented is
/// refused where the spec lets the server say so (AUTH: bad authentication method), never ignored.
/// </summary>
internal sealed partial class MqttConnection
{
    // Receive Maximum the server announces: PUBLISHes are routed as they arrive, so any number of QoS 1/2 ones
    // may be unacknowledged at once; the packet identifier space bounds it. [MQTT-3.2.2.3.3]
    private const ushort ServerReceiveMaximum = ushort.MaxValue;

    // Topic Alias Maximum the server announces: aliases a client may set per connection, as mosquitto's
    // max_topic_alias default. Each keeps a copy of its topic, so this bounds what a client makes the server hold. [MQTT-3.2.2.3.8]
    internal const ushort ServerTopicAliasMaximum = 10;

    private const string UnrepresentableProperty = "a user property cannot be a NATS header (name not printable ASCII without ':', reserved Mqtt-/Nmqtt- prefix, or CR/LF)";

    // A CONNECT's properties as far as the server acts on them, or why it is refused.
    private readonly record struct ConnectProperties(uint SessionExpiry, int ReceiveMaximum, int MaxPacketSize, (MqttReasonCode Code, string Reason)? Refusal, bool RequestResponseInformation = false, ushort TopicAliasMaximum = 0);

    // MQTT 5.0 CONNECT properties. [MQTT-3.1.2.11]. Topic Alias Maximum: above 0, deliveries carry Topic Aliases
    // up to it (MqttInflight, at most MaxServerTopicAliases); 0 or absent, never one [MQTT-3.1.2-26], [MQTT-3.1.2-27];
    // Request Response Information 1: CONNACK carries Response Information (ConnAckProperties). Request Problem
    // Information 0 needs nothing: the server sends Reason Strings only on CONNACK and DISCONNECT and User
    // Properties only on PUBLISH, which it allows [MQTT-3.1.2-29]. User Properties carry no meaning for the server.
    private static ConnectProperties ReadConnectProperties(ReadOnlySpan<byte> properties)
    {
        var result = new ConnectProperties(0, ushort.MaxValue, 0, null);
        var authData = false;
        foreach (var property in MqttProperties.Enumerate(properties))
        {
            switch (property.Id)
            {
                case MqttPropertyId.SessionExpiryInterval:
                    result = result with { SessionExpiry = property.Number };
                    break;
                case MqttPropertyId.ReceiveMaximum:
                    result = result with { ReceiveMaximum = (int)property.Number };
                    break;
                case MqttPropertyId.MaximumPacketSize:
                    result = result with { MaxPacketSize = (int)Math.Min(property.Number, int.MaxValue) };
                    break;
                case MqttPropertyId.AuthenticationMethod:
                    // Enhanced authentication is not implemented: a clean refusal. [MQTT-4.12.0-1]
                    return result with { Refusal = (MqttReasonCode.BadAuthenticationMethod, "authentication method not supported") };
                case MqttPropertyId.AuthenticationData:
                    authData = true;
                    break;
                case MqttPropertyId.TopicAliasMaximum:
                    result = result with { TopicAliasMaximum = (ushort)property.Number };
                    break;
                case MqttPropertyId.RequestResponseInformation:
                    result = result with { RequestResponseInformation = property.Number == 1 }; // 0 or 1: the parser refused others
                    break;
            }
        }

        // Authentication Data without an Authentication Method is a Protocol Error. [MQTT-3.1.2.11.10]
        return authData ? result with { Refusal = (MqttReasonCode.ProtocolError, "Authentication Data without Authentication Method") } : result;
    }

    // The will's Will Delay Interval, seconds (0 when absent). [MQTT-3.1.3.2.2]
    private static uint WillDelay(ReadOnlySpan<byte> willProperties)
    {
        foreach (var property in MqttProperties.Enumerate(willProperties))
        {
            if (property.Id == MqttPropertyId.WillDelayInterval)
            {
                return property.Number;
            }
        }

        return 0;
    }

    // CONNACK's properties [MQTT-3.2.2.3]: what this server does and does not do, so a client never uses
    // what is missing. The client's Session Expiry Interval is kept as asked (the session's timer, MqttSessionActor).
    private byte[] ConnAckProperties(MqttPendingConnect connect)
    {
        var mqtt = _mqtt;
        var assigned = connect.AssignedId ? Encoding.UTF8.GetBytes(connect.ClientId) : [];
        var responseInformation = connect.RequestResponseInformation ? ResponseInformation(connect.ClientId) : [];
        var length = MqttProperties.TwoByteSize // Receive Maximum
            + MqttProperties.ByteSize // Retain Available
            + MqttProperties.FourByteSize // Maximum Packet Size
            + MqttProperties.TwoByteSize // Topic Alias Maximum
            + (3 * MqttProperties.ByteSize) // Wildcard, Subscription Identifier, Shared Subscription Available
            + (connect.SessionExpiry != mqtt.SessionExpiry ? MqttProperties.FourByteSize : 0)
            + (_rejectQos2Publish ? MqttProperties.ByteSize : 0)
            + (connect.AssignedId ? MqttProperties.StringSize(assigned.Length) : 0)
            + (connect.RequestResponseInformation ? MqttProperties.StringSize(responseInformation.Length) : 0);
        var properties = new byte[length];
        var span = properties.AsSpan();
        var at = 0;
        if (connect.SessionExpiry != mqtt.SessionExpiry)
        {
            // The server's interval replaces the client's where it differs [MQTT-3.2.2.3.2] (today it never does).
            at += MqttProperties.WriteUInt32(span[at..], MqttPropertyId.SessionExpiryInterval, mqtt.SessionExpiry);
        }

        if (connect.AssignedId)
        {
            at += MqttProperties.WriteString(span[at..], MqttPropertyId.AssignedClientIdentifier, assigned); // [MQTT-3.2.2-16]
        }

        if (connect.RequestResponseInformation)
        {
            at += MqttProperties.WriteString(span[at..], MqttPropertyId.ResponseInformation, responseInformation); // [MQTT-3.2.2.3.15]
        }

        if (_rejectQos2Publish)
        {
            at += MqttProperties.WriteByte(span[at..], MqttPropertyId.MaximumQoS, 1); // mqtt.reject_qos2_publish [MQTT-3.2.2-9]
        }

        at += MqttProperties.WriteUInt16(span[at..], MqttPropertyId.ReceiveMaximum, ServerReceiveMaximum);
        at += MqttProperties.WriteByte(span[at..], MqttPropertyId.RetainAvailable, 1);
        at += MqttProperties.WriteUInt32(span[at..], MqttPropertyId.MaximumPacketSize, (uint)mqtt.Parser.MaxPacketSize);
        at += MqttProperties.WriteUInt16(span[at..], MqttPropertyId.TopicAliasMaximum, ServerTopicAliasMaximum); // [MQTT-3.2.2-17]
        at += MqttProperties.WriteByte(span[at..], MqttPropertyId.WildcardSubscriptionAvailable, 1);
        at += MqttProperties.WriteByte(span[at..], MqttPropertyId.SubscriptionIdentifierAvailable, 1);
        MqttProperties.WriteByte(span[at..], MqttPropertyId.SharedSubscriptionAvailable, 1);
        return properties;
    }

    // Response Information: the topic prefix "_INBOX/<token>" for the client's Response Topics (subject
    // "_INBOX.<token>.>", a NATS inbox), the token a hash of the account and client id, so one session keeps it
    // across its connections and no two sessions share it. Like a NATS inbox it is unique, not reserved: the
    // permissions decide who may subscribe to it.
    private byte[] ResponseInformation(string clientId) =>
        Encoding.ASCII.GetBytes("_INBOX/" + Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(MqttAccountScope.Key(Account, clientId))))[..ResponseTokenLength]);

    // Hex characters of the Response Information token: 96 bits of the hash.
    private const int ResponseTokenLength = 24;

    // MQTT 5.0 CONNACK; a refusal may name its reason in a Reason String. [MQTT-3.2.2.3.9]
    private void WriteConnAckV5(MqttReasonCode code, bool sessionPresent, ReadOnlySpan<byte> properties, string? reason = null)
    {
        var output = new ArrayBufferWriter<byte>(64 + properties.Length);
        if (reason is null)
        {
            MqttPacketWriter.WriteConnAckV5(output, sessionPresent, code, properties);
        }
        else
        {
            var text = Encoding.UTF8.GetBytes(reason);
            var withReason = new byte[properties.Length + MqttProperties.StringSize(text.Length)];
            properties.CopyTo(withReason);
            MqttProperties.WriteString(withReason.AsSpan(properties.Length), MqttPropertyId.ReasonString, text);
            MqttPacketWriter.WriteConnAckV5(output, sessionPresent, code, withReason);
        }

        WriteOwn(output.WrittenSpan);
    }

    // A refused CONNECT in the client's version: 3.1.1's return code, or 5.0's reason code.
    private void RefuseConnect(MqttConnectReturnCode code, MqttReasonCode reason)
    {
        if (_mqtt.Version == 5)
        {
            WriteConnAckV5(reason, sessionPresent: false, default);
        }
        else
        {
            WriteConnAck(code, sessionPresent: false);
        }
    }

    // MQTT 5.0 PUBLISH: its Topic Alias set or used, a Subscription Identifier refused, the rest of its
    // properties as NATS headers.
    private MqttStep ProcessMqttPublishV5(in MqttPacket packet)
    {
        var alias = 0;
        foreach (var property in MqttProperties.Enumerate(packet.Properties))
        {
            if (property.Id == MqttPropertyId.TopicAlias)
            {
                alias = (int)property.Number;
            }
            else if (property.Id == MqttPropertyId.SubscriptionIdentifier)
            {
                return MqttDisconnect(MqttReasonCode.ProtocolError, "a PUBLISH from a client carries no Subscription Identifier"); // [MQTT-3.3.4-6]
            }
        }

        var mqtt = _mqtt;
        if (alias != 0)
        {
            // The parser refused alias 0 and an empty topic without an alias. [MQTT-3.3.2-8]
            if (alias > ServerTopicAliasMaximum)
            {
                return MqttDisconnect(MqttReasonCode.TopicAliasInvalid, "Topic Alias above the Topic Alias Maximum"); // [MQTT-3.3.2-9]
            }

            var aliases = mqtt.TopicAliases ??= new MqttTopicAliases(ServerTopicAliasMaximum);
            if (!packet.Topic.IsEmpty)
            {
                aliases.Set(alias, packet.Topic); // [MQTT-3.3.2-12]: a topic with an alias (re)sets it
            }
            else if (aliases.TryGet(alias, out var topic))
            {
                var aliased = packet;
                aliased.Topic = topic;
                return ProcessMqttPublishV5Properties(in aliased);
            }
            else
            {
                // An empty topic with an alias this connection never set. [MQTT-3.3.2.3.4]
                return MqttDisconnect(MqttReasonCode.ProtocolError, "Topic Alias not set on this connection");
            }
        }

        return ProcessMqttPublishV5Properties(in packet);
    }

    // A v5 PUBLISH with its topic name: the properties as NATS header lines, then the 3.1.1 path.
    private MqttStep ProcessMqttPublishV5Properties(in MqttPacket packet)
    {
        var mqtt = _mqtt;
        var length = MqttNatsHeaders.HeaderLinesLength(packet.Properties);
        if (length < 0)
        {
            if (packet.QoS == 0)
            {
                return MqttDisconnect(MqttReasonCode.ImplementationSpecificError, UnrepresentableProperty);
            }

            // Not routed; the client learns why from the acknowledgement's reason code. [MQTT-3.4.2.1]
            AcknowledgePublish(packet.QoS == 1 ? (byte)0x40 : (byte)0x50, packet.PacketId, (byte)MqttReasonCode.ImplementationSpecificError);
            return MqttStep.Continue;
        }

        var lines = mqtt.HeaderLinesBuffer(length);
        MqttNatsHeaders.WriteHeaderLines(packet.Properties, lines);
        return ProcessMqttPublish(in packet, lines.AsSpan(0, length), ResponseSubject(packet.Properties));
    }

    // A Response Topic as the NATS reply subject, so that a NATS service answers an MQTT 5.0 request with
    // its usual reply (the topic also travels as the Mqtt-Response-Topic header); empty when absent or
    // not a subject (a '.' or ' ' in it). Written into a buffer the connection reuses.
    private ReadOnlySpan<byte> ResponseSubject(ReadOnlySpan<byte> properties)
    {
        foreach (var property in MqttProperties.Enumerate(properties))
        {
            if (property.Id != MqttPropertyId.ResponseTopic)
            {
                continue;
            }

            var buffer = _mqtt.ReplyBuffer(property.Data.Length);
            return MqttTopics.TryTopicToSubject(property.Data, buffer, out var length) == MqttTopicError.None && length > 0
                && SubjectRules.IsValidLiteralSubject(buffer.AsSpan(0, length))
                ? buffer.AsSpan(0, length)
                : default;
        }

        return default;
    }

    // DISCONNECT from the client. 3.1.1 and 5.0 reason 0x00 discard the will [MQTT-3.14.4-3]; 5.0 reason
    // 0x04 keeps it. A Session Expiry Interval of 0 ends a kept session now; a non-zero one after a
    // CONNECT whose interval was 0 is a Protocol Error. [MQTT-3.14.2-2]
    private MqttStep ProcessMqttDisconnect(in MqttPacket packet)
    {
        var mqtt = _mqtt;
        if (mqtt.Version == 5)
        {
            foreach (var property in MqttProperties.Enumerate(packet.Properties))
            {
                if (property.Id != MqttPropertyId.SessionExpiryInterval)
                {
                    continue;
                }

                if (mqtt.SessionExpiry == 0 && property.Number != 0)
                {
                    return MqttDisconnect(MqttReasonCode.ProtocolError, "Session Expiry Interval set at DISCONNECT after 0 at CONNECT");
                }

                if (property.Number == 0 && mqtt.Persistent)
                {
                    mqtt.EndSessionAtClose = true; // the kept session ends with this connection
                }
                else if (property.Number != 0 && mqtt.Persistent && property.Number != mqtt.SessionExpiry)
                {
                    // A new interval, counted from this close. [MQTT-3.14.2.2.2]
                    mqtt.SessionExpiry = property.Number;
                    mqtt.Session?.Tell(new MqttSessionActor.Protocol.Expiry(Owner, property.Number), Akka.Actor.ActorRefs.NoSender);
                }
            }

            if (packet.ReasonCode != (byte)MqttReasonCode.DisconnectWithWillMessage)
            {
                mqtt.Will = null;
            }

            if (mqtt.EndSessionAtClose && mqtt.Session is { } session)
            {
                // Before the close, so that a CONNECT the client sends next finds the session ended.
                session.Tell(new MqttSessionActor.Protocol.End(Owner), Akka.Actor.ActorRefs.NoSender);
            }
        }
        else
        {
            mqtt.Will = null;
        }

        CloseWith("Client Closed");
        return MqttStep.Close;
    }

    // A delivery to an MQTT 5.0 subscriber: the NATS headers become properties (Nmqtt-* left out); a NATS
    // reply subject the Response Topic (mapped back to a topic) unless a Mqtt-Response-Topic header gave
    // one; then the subscription's identifier, if it has one [MQTT-3.3.4-3]. A PUBLISH over the client's
    // Maximum Packet Size is discarded as if sent. [MQTT-3.1.2-25]
    private bool WriteMessageV5(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> body, byte qos, bool retain, int subscriptionId)
    {
        var block = headers.IsSingleSegment ? headers.FirstSpan : headers.ToArray(); // a header split across segments: rare, copied
        var headerPropertiesLength = MqttNatsHeaders.PropertiesLength(block);
        if (!replyTo.IsEmpty && (replyTo.Length > ushort.MaxValue || !SubjectRules.IsValidLiteralSubject(replyTo)
            || !MqttProperties.IsValidString(replyTo) || MqttNatsHeaders.HasResponseTopic(block)))
        {
            replyTo = default;
        }

        // Sizes are bounds until the reply is mapped (a topic is never longer than its subject).
        var replyBound = replyTo.IsEmpty ? 0 : MqttProperties.StringSize(replyTo.Length);
        var propertiesBound = headerPropertiesLength + replyBound + MqttProperties.SubscriptionIdentifierSize(subscriptionId) + MqttProperties.TwoByteSize; // a Topic Alias too
        var needed = (2 * subject.Length) + MqttPacketWriter.MaxFixedHeaderLength + 4 + 4 + (2 * propertiesBound);
        byte[]? rented = null;
        var scratch = needed <= StackScratch ? stackalloc byte[StackScratch] : (rented = ArrayPool<byte>.Shared.Rent(needed));
        try
        {
            var topicLength = MqttTopics.SubjectToTopic(subject, scratch);
            var topic = scratch[..topicLength];
            var properties = scratch.Slice(subject.Length, propertiesBound);
            var propertiesLength = MqttNatsHeaders.WriteProperties(block, properties);
            if (!replyTo.IsEmpty)
            {
                // Response Topic: id, 2-byte length, the reply subject as a topic. [MQTT-3.3.2.3.5]
                var replyTopicLength = MqttTopics.SubjectToTopic(replyTo, properties[(propertiesLength + 3)..]);
                properties[propertiesLength] = (byte)MqttPropertyId.ResponseTopic;
                properties[propertiesLength + 1] = (byte)(replyTopicLength >> 8);
                properties[propertiesLength + 2] = (byte)replyTopicLength;
                propertiesLength += 3 + replyTopicLength;
            }

            propertiesLength += MqttProperties.WriteSubscriptionIdentifier(properties[propertiesLength..], subscriptionId);
            if (qos > 0)
            {
                return _mqtt.Inflight.Send(topic, body, retain, qos, properties: properties[..propertiesLength]); // kept until PUBACK / PUBCOMP
            }

            if (_mqtt.Inflight.SendsTopicAliases)
            {
                // The alias is chosen with the frame queued, in one step with every other delivery's. [MQTT-3.3.2-12]
                return _mqtt.Inflight.WriteAliased(scratch[(subject.Length + propertiesLength + MqttProperties.TwoByteSize)..], topic, properties, propertiesLength, body, retain);
            }

            properties = properties[..propertiesLength];

            var header = scratch[(subject.Length + propertiesLength)..];
            var headerLength = MqttPacketWriter.WritePublishHeaderV5(header, topic, 0, retain, dup: false, 0, properties, (int)body.Length, out _);
            if (_mqtt.ClientMaxPacketSize > 0 && headerLength + body.Length > _mqtt.ClientMaxPacketSize)
            {
                return true;
            }

            return Outbound.WriteFrame(header[..headerLength], body);
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }

        }
    }

    /// <summary>
    /// MQTT 5.0: a DISCONNECT with <paramref name="code"/> before the server closes a connected client
    /// for its own reasons: 0x8E session taken over [MQTT-3.1.4-3], 0x8D keep-alive timeout
    /// [MQTT-3.1.2-22]. Nothing for a 3.1.1 client. Called by the connection's actor; the frame is
    /// flushed before the socket closes.
    /// </summary>
    public void WriteServerDisconnect(MqttReasonCode code)
    {
        if (_mqtt.Version != 5 || !_mqtt.Connected)
        {
            return;
        }

        var output = new ArrayBufferWriter<byte>(8);
        MqttPacketWriter.WriteDisconnect(output, code, default);
        Outbound.Write(output.WrittenSpan);
        Outbound.Signal();
    }

    // Bytes of stack a v5 delivery's topic, properties and header take before a buffer is rented.
    private const int StackScratch = 1024;
}
