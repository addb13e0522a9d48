using System.Buffers;
using System.Text;
using Akka.Actor;
using Courier.Actors.Mqtt;
using Courier.Protocols.Mqtt;

namespace Courier.Actors.Connections;

/// <summary>
/// An MQTT client's PUBLISH (and its will): the topic as a subject, nats-server's Nmqtt-Pub header, the
/// retained message set or cleared, the message routed through the <see cref="Publisher"/>, then PUBACK or
/// PUBREC, after the journal where a persistent session or the retained store must keep it first.
/// </summary>
internal sealed partial class MqttConnection
{
    // PUBLISH: to the subject space with nats-server's Nmqtt-Pub header (and an MQTT 5.0 PUBLISH's
    // properties as more headers); PUBACK for QoS 1, PUBREC for QoS 2.
    private MqttStep ProcessMqttPublish(in MqttPacket packet, ReadOnlySpan<byte> headerLines, ReadOnlySpan<byte> replyTo = default)
    {
        var mqtt = _mqtt;
        var qos = packet.QoS;
        if (qos == 2 && mqtt.Qos2Received.Contains(packet.PacketId))
        {
            // Sent again before PUBREL: acknowledged again, not delivered again. [MQTT-4.3.3-2]
            AcknowledgePublish(0x50, packet.PacketId);
            return MqttStep.Continue;
        }

        var buffer = mqtt.SubjectBuffer(packet.Topic.Length);
        if (MqttTopics.TryTopicToSubject(packet.Topic, buffer, out var length) != MqttTopicError.None)
        {
            // nats-server's text; MQTT 5.0 says it with DISCONNECT 0x90 (Topic Name invalid).
            return mqtt.Version == 5 ? MqttDisconnect(MqttReasonCode.TopicNameInvalid, TopicNotMappable) : MqttFatal(TopicNotMappable, "Protocol Violation");
        }

        var subject = new ReadOnlySpan<byte>(buffer, 0, length);
        Task? retained = null;
        byte reason = 0;
        if (Permissions is not { } permissions || permissions.CanPublish(subject))
        {
            if (packet.Retain)
            {
                retained = RetainAndRoute(subject, packet.Topic, packet.Payload, qos, headerLines, replyTo);
            }
            else
            {
                RouteFromMqtt(subject, qos, packet.Payload, headerLines, replyTo);
            }
        }
        else if (mqtt.Version == 5)
        {
            reason = (byte)MqttReasonCode.NotAuthorized; // [MQTT-3.4.2.1]; 3.1.1 acknowledges as nats-server does
        }

        if (qos == 0)
        {
            return MqttStep.Continue;
        }

        // PUBACK / PUBREC, also after a permission violation, as nats-server.
        var ackType = qos == 1 ? (byte)0x40 : (byte)0x50;
        if (qos == 2)
        {
            mqtt.Qos2Received.Add(packet.PacketId);
            if (mqtt.Persistent && mqtt.Session is { } session)
            {
                // A persistent session journals the id before PUBREC: after a restart a re-sent PUBLISH is still a duplicate.
                Task journaled = session.Ask<MqttSessionActor.Protocol.Qos2InStored>(
                    new MqttSessionActor.Protocol.Qos2In(packet.PacketId, Received: true), StorageTimeout);
                retained = retained is null ? journaled : Task.WhenAll(retained, journaled);
            }
        }

        if (retained is not null)
        {
            mqtt.PendingAck = (retained, ackType, packet.PacketId);
            return MqttStep.AwaitJournal;
        }

        if (reason != 0 && qos == 2)
        {
            mqtt.Qos2Received.Remove(packet.PacketId); // a PUBREC with an error ends the exchange [MQTT-4.3.3]
        }

        AcknowledgePublish(ackType, packet.PacketId, reason);
        return MqttStep.Continue;
    }

    // PUBACK / PUBREC now, or after the capture barrier when this batch reached a persistent session (in order either way).
    private void AcknowledgePublish(byte ackType, ushort packetId, byte reason = 0)
    {
        var mqtt = _mqtt;
        if (Publisher.ReachedAckHolder || mqtt.DeferredAcks.Count > 0)
        {
            mqtt.DeferredAcks.Add((ackType, packetId, reason));
            return;
        }

        WriteAck(ackType, packetId, reason);
    }

    private void RouteFromMqtt(ReadOnlySpan<byte> subject, byte qos, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte> headerLines = default, ReadOnlySpan<byte> replyTo = default)
    {
        var mqtt = _mqtt;
        var message = mqtt.NatsMessage(qos, headerLines, payload);
        Publisher.InboundQoS = qos;
        try
        {
            Publisher.Publish(subject, subject, replyTo, MqttConnectionState.NatsHeaderLength + headerLines.Length, message);
        }
        finally
        {
            Publisher.InboundQoS = 0;
        }
    }

    // A retained PUBLISH: set (or cleared) and routed under the retained gate, so that a subscription being
    // made meanwhile gets it exactly once (WriteMqttAcks). Returns Retain's journal task.
    private Task? RetainAndRoute(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> topic, in ReadOnlySequence<byte> payload, byte qos, ReadOnlySpan<byte> headerLines = default, ReadOnlySpan<byte> replyTo = default)
    {
        var mqtt = _mqtt;
        lock (_context.Retained.Gate)
        {
            var stored = Retain(subject, topic, payload, qos, headerLines);
            Publisher.InboundRetain = true;
            try
            {
                RouteFromMqtt(subject, qos, payload, headerLines, replyTo);
            }
            finally
            {
                Publisher.InboundRetain = false;
            }

            return stored;
        }
    }

    // Sets or clears the retained message at once (subscribers read it from memory) and journals the
    // change; for QoS 1/2 the returned task completes once it is journaled (null for QoS 0). An MQTT 5.0
    // message keeps its properties (as a header block) and when its Message Expiry Interval runs out.
    private Task? Retain(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> topic, in ReadOnlySequence<byte> payload, byte qos, ReadOnlySpan<byte> headerLines)
    {
        var key = MqttAccountScope.Key(Account, Encoding.UTF8.GetString(subject)); // retained messages are per account
        byte[] headers = headerLines.IsEmpty ? [] : [.. "NATS/1.0\r\n"u8, .. headerLines, .. "\r\n"u8];
        var expiresAt = MqttNatsHeaders.TryGetMessageExpiry(headers, out var seconds) ? DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() + (seconds * 1000L) : 0;
        var change = new MqttRetainedEvent(key, topic.ToArray(), payload.ToArray(), qos, headers, expiresAt);
        if (payload.IsEmpty)
        {
            _context.Retained.Clear(key); // [MQTT-3.3.1-10]
        }
        else
        {
            _context.Retained.Set(new MqttRetainedMessage(key, change.Topic, change.Payload, qos, headers, expiresAt)); // [MQTT-3.3.1-5]
        }

        if (qos == 0)
        {
            _context.RetainedStore.Tell(change);
            return null;
        }

        return _context.RetainedStore.Ask<MqttRetainedStore.Protocol.Stored>(change, StorageTimeout);
    }

    // The will goes out when the connection ends without DISCONNECT. [MQTT-3.1.2-8]
    private void PublishWill()
    {
        var mqtt = _mqtt;
        if (mqtt.Will is not { } will || !mqtt.Connected)
        {
            return;
        }

        mqtt.Will = null;
        if (Permissions is { } permissions && !permissions.CanPublish(will.Subject))
        {
            return;
        }

        var payload = new ReadOnlySequence<byte>(will.Payload);
        if (will.Retain)
        {
            _ = RetainAndRoute(will.Subject, will.Topic, payload, will.QoS, will.Headers);
        }
        else
        {
            RouteFromMqtt(will.Subject, will.QoS, payload, will.Headers);
        }

        Publisher.Flush();
    }
}
