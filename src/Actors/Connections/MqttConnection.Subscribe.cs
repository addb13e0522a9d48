using System.Buffers;
using System.Text;
using Courier.Actors.Mqtt;
using Courier.Actors.Routing;
using Courier.Protocols.Mqtt;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Connections;

/// <summary>An MQTT client's SUBSCRIBE and UNSUBSCRIBE: its filters' subscriptions, then SUBACK with the retained messages they match.</summary>
internal sealed partial class MqttConnection
{
    // SUBSCRIBE: one subscription per filter (two for "x/#": "x.>" and "x", as nats-server), a return
    // code per filter, SUBACK once they are in effect, then the retained messages they match.
    // MQTT 5.0: reason codes name the failure (0x8F filter, 0x87 permission, 0x9E shared subscription),
    // the options byte's No Local, Retain As Published and Retain Handling apply [MQTT-3.8.3.1], and a
    // Subscription Identifier goes with every message the subscriptions deliver. [MQTT-3.8.2.1.2]
    private MqttStep ProcessMqttSubscribe(in MqttPacket packet)
    {
        var v5 = _mqtt.Version == 5;
        var subscriptionId = 0;
        if (v5)
        {
            foreach (var property in MqttProperties.Enumerate(packet.Properties))
            {
                if (property.Id == MqttPropertyId.SubscriptionIdentifier)
                {
                    subscriptionId = (int)property.Number; // 1..268435455: the parser refused 0
                }
            }
        }

        var filters = packet.TopicFilters;
        var codes = new byte[filters.Count];
        var retained = new List<(string Subject, byte QoS, int SubscriptionId)>();
        var i = 0;
        foreach (var filter in filters)
        {
            // MQTT 5.0 shared subscription "$share/{group}/{filter}": a NATS queue group, so each message goes to
            // one member [MQTT-4.8.2]; 3.1.1 takes the filter literally, as nats-server.
            var topicFilter = filter.Filter;
            string? group = null;
            if (v5 && MqttTopics.IsSharedFilter(topicFilter))
            {
                if (!MqttTopics.TrySplitSharedFilter(filter.Filter, out var shareName, out topicFilter) || !IsValidQueue(shareName))
                {
                    codes[i++] = (byte)MqttReasonCode.TopicFilterInvalid;
                    continue;
                }

                if (filter.NoLocal)
                {
                    return MqttDisconnect(MqttReasonCode.ProtocolError, "No Local on a shared subscription"); // [MQTT-3.8.3-4]
                }

                group = Encoding.UTF8.GetString(shareName);
            }

            var subject = FilterSubject(topicFilter);
            if (subject is null)
            {
                codes[i++] = v5 ? (byte)MqttReasonCode.TopicFilterInvalid : (byte)0x80; // failure [MQTT-3.9.3]
                continue;
            }

            if (Permissions is not null && !CanSubscribeMqtt(subject))
            {
                codes[i++] = v5 ? (byte)MqttReasonCode.NotAuthorized : (byte)0x80;
                continue;
            }

            // QoS 0, 1 and 2 are granted as asked (nats-server 2.9, without QoS 2, grants 1 for 2); with
            // mqtt.downgrade_qos2_subscribe, 1 for 2, as nats-server 2.10.
            var granted = Math.Min(filter.QoS, _downgradeQos2Subscribe ? (byte)1 : (byte)2);
            var sid = Encoding.UTF8.GetString(filter.Filter);
            bool existed;
            lock (_subsLock)
            {
                existed = _subs.ContainsKey(sid);
            }

            var subjects = AddMqttFilter(sid, subject, granted, v5 && filter.NoLocal, v5 && filter.RetainAsPublished, subscriptionId, group);
            if (group is null && (!v5 || filter.RetainHandling == 0 || (filter.RetainHandling == 1 && !existed)))
            {
                // Retain Handling 1: only for a new subscription; 2: never [MQTT-3.3.1-10]; a shared subscription
                // never gets them (a member joining a group is not a new reader of the topic; mosquitto does the same).
                retained.AddRange(subjects);
            }
            if (_mqtt.Persistent)
            {
                _mqtt.SessionSubscribes.Add(new MqttSessionSubscription(sid, granted, subscriptionId, v5 && filter.NoLocal, v5 && filter.RetainAsPublished));
            }

            codes[i++] = granted;
        }

        lock (_context.Retained.Gate)
        {
            _mqtt.CollectingRetained = true; // before the subscriptions are in effect
        }

        _mqtt.PendingAcks.Add(new MqttPendingAck(MqttPacketType.Subscribe, packet.PacketId, codes, retained));
        return MqttStep.SubscriptionsChanged;
    }

    // A "x/#" filter also subscribes to "x": both must be allowed, as nats-server (whose second processSub fails otherwise).
    private bool CanSubscribeMqtt(string subject)
    {
        var permissions = Permissions!;
        if (!permissions.CanSubscribe(subject))
        {
            return false;
        }

        var bytes = Encoding.UTF8.GetBytes(subject);
        return !MqttTopics.NeedsParentLevelSubscription(bytes) || permissions.CanSubscribe(Encoding.UTF8.GetString(MqttTopics.ParentLevel(bytes)));
    }

    // A filter's subscription(s), restored from a persistent session (a 5.0 client's shared ones in their group).
    private void AddMqttFilter(MqttSessionSubscription subscription)
    {
        ReadOnlySpan<byte> filter = Encoding.UTF8.GetBytes(subscription.Filter);
        string? group = null;
        if (_mqtt.Version == 5 && MqttTopics.IsSharedFilter(filter))
        {
            if (!MqttTopics.TrySplitSharedFilter(filter, out var shareName, out filter))
            {
                return;
            }

            group = Encoding.UTF8.GetString(shareName);
        }

        if (FilterSubject(filter) is { } subject)
        {
            AddMqttFilter(subscription.Filter, subject, subscription.QoS, subscription.NoLocal, subscription.RetainAsPublished, subscription.SubscriptionId, group);
        }
    }

    // One subscription per filter, two for "x/#" ("x.>" and "x", sid "x/# fwc", as nats-server); returns their subjects.
    private List<(string Subject, byte QoS, int SubscriptionId)> AddMqttFilter(
        string sid, string subject, byte granted, bool noLocal = false, bool retainAsPublished = false, int subscriptionId = 0, string? group = null)
    {
        List<(string Subject, byte QoS, int SubscriptionId)> subjects = [(subject, granted, subscriptionId)];
        AddMqttSubscription(sid, subject, granted, noLocal, retainAsPublished, subscriptionId, group);
        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        if (MqttTopics.NeedsParentLevelSubscription(subjectBytes))
        {
            var parent = Encoding.UTF8.GetString(MqttTopics.ParentLevel(subjectBytes));
            AddMqttSubscription(sid + ParentLevelSidSuffix, parent, granted, noLocal, retainAsPublished, subscriptionId, group);
            subjects.Add((parent, granted, subscriptionId));
        }

        return subjects;
    }

    // The sid of the second subscription a "x/#" filter makes, on "x" (nats-server's mqttMultiLevelSidSuffix).
    private const string ParentLevelSidSuffix = " fwc";

    // UNSUBSCRIBE; MQTT 5.0's UNSUBACK says per filter whether a subscription existed (0x00) or not (0x11). [MQTT-3.11.3]
    private MqttStep ProcessMqttUnsubscribe(in MqttPacket packet)
    {
        var filters = packet.TopicFilters;
        var codes = _mqtt.Version == 5 ? new byte[filters.Count] : [];
        var i = 0;
        foreach (var filter in filters)
        {
            var sid = Encoding.UTF8.GetString(filter.Filter);
            var removed = RemoveMqttSubscription(sid);
            RemoveMqttSubscription(sid + ParentLevelSidSuffix);
            if (_mqtt.Persistent)
            {
                _mqtt.SessionUnsubscribes.Add(sid);
            }

            if (codes.Length > 0)
            {
                codes[i++] = removed ? (byte)MqttReasonCode.Success : (byte)MqttReasonCode.NoSubscriptionExisted;
            }
        }

        _mqtt.PendingAcks.Add(new MqttPendingAck(MqttPacketType.Unsubscribe, packet.PacketId, codes, []));
        return MqttStep.SubscriptionsChanged;
    }

    private static string? FilterSubject(ReadOnlySpan<byte> filter)
    {
        var buffer = new byte[MqttTopics.MaxSubjectLength(filter.Length)];
        if (MqttTopics.TryFilterToSubject(filter, buffer, out var length) != MqttTopicError.None)
        {
            return null;
        }

        var subject = buffer.AsSpan(0, length);
        return SubjectRules.IsValidSubject(subject) ? Encoding.UTF8.GetString(subject) : null;
    }

    // A SUBSCRIBE repeating a filter replaces its subscription. [MQTT-3.8.4-3]
    private void AddMqttSubscription(string sid, string subject, byte qos, bool noLocal, bool retainAsPublished, int subscriptionId, string? group)
    {
        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        var sub = new Subscription(this, Account, subject, group, Encoding.UTF8.GetBytes(sid), Account.Space.ShardForSubscription(subjectBytes))
        {
            MqttQoS = qos,
            MqttSessionCaptured = _mqtt.Persistent && qos > 0 && group is null, // a shared one is captured only while offline
            MqttNoLocal = noLocal,
            MqttRetainAsPublished = retainAsPublished,
            MqttVersion5 = _mqtt.Version == 5,
            MqttSubscriptionId = subscriptionId,
        };
        Subscription? replaced;
        lock (_subsLock)
        {
            _subs.Remove(sid, out replaced);
            _subs.Add(sid, sub);
        }

        if (replaced is not null)
        {
            _pendingChanges.Add(new SubChange(replaced, Add: false));
        }

        _pendingChanges.Add(new SubChange(sub, Add: true));
    }

    private bool RemoveMqttSubscription(string sid)
    {
        Subscription? removed;
        lock (_subsLock)
        {
            _subs.Remove(sid, out removed);
        }

        if (removed is not null)
        {
            _pendingChanges.Add(new SubChange(removed, Add: false));
        }

        return removed is not null;
    }

    // After the routers applied the changes: SUBACK/UNSUBACK in order, each SUBACK followed by the
    // retained messages its filters match. [MQTT-3.3.1-6]
    private void WriteMqttAcks()
    {
        // Under the gate, no retained PUBLISH is between setting and routing: each retained message is
        // either one this client got live since SUBSCRIBE (skipped) or one it will get only from here.
        lock (_context.Retained.Gate)
        {
            WriteMqttAcksLocked();
            _mqtt.CollectingRetained = false;
            _mqtt.RetainedSeenLive.Clear();
        }
    }

    private void WriteMqttAcksLocked()
    {
        var mqtt = _mqtt;
        var output = new ArrayBufferWriter<byte>();
        foreach (var ack in mqtt.PendingAcks)
        {
            output.ResetWrittenCount();
            var v5 = mqtt.Version == 5;
            if (ack.Type == MqttPacketType.Unsubscribe)
            {
                if (v5)
                {
                    MqttPacketWriter.WriteSubAckV5(output, unsubscribe: true, ack.PacketId, ack.ReturnCodes);
                }
                else
                {
                    MqttPacketWriter.WriteUnsubAck(output, ack.PacketId); // [MQTT-3.10.4-4]
                }

                WriteOwn(output.WrittenSpan);
                continue;
            }

            if (v5)
            {
                MqttPacketWriter.WriteSubAckV5(output, unsubscribe: false, ack.PacketId, ack.ReturnCodes);
            }
            else
            {
                MqttPacketWriter.WriteSubAck(output, ack.PacketId, ack.ReturnCodes);
            }

            WriteOwn(output.WrittenSpan);
            foreach (var (subject, granted, subscriptionId) in ack.RetainedFor)
            {
                foreach (var message in _context.Retained.Matching(Account, subject))
                {
                    if (mqtt.RetainedSeenLive.Contains(MqttAccountScope.Split(message.Subject).Value))
                    {
                        continue; // delivered live while the subscription was being made
                    }

                    var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
                    if (message.ExpiresAt != 0 && now >= message.ExpiresAt)
                    {
                        continue; // past its Message Expiry Interval: not sent to anyone [MQTT-3.3.2-5]
                    }

                    // MQTT 5.0: the message's properties, its Message Expiry Interval now the time it has left
                    // [MQTT-3.3.2-6], then the subscription's identifier [MQTT-3.3.4-3].
                    ReadOnlySpan<byte> properties = v5 && (message.Headers is { Length: > 0 } || subscriptionId != 0)
                        ? RetainedProperties(message, subscriptionId, now)
                        : default;

                    var payload = new ReadOnlySequence<byte>(message.Payload);
                    var qos = Math.Min(message.QoS, granted);
                    if (qos > 0)
                    {
                        mqtt.Inflight.Send(message.Topic, payload, retain: true, qos, properties: properties);
                        continue;
                    }

                    output.ResetWrittenCount();
                    if (v5)
                    {
                        MqttPacketWriter.WritePublishV5(output, message.Topic, payload, 0, retain: true, dup: false, 0, properties);
                        if (mqtt.ClientMaxPacketSize > 0 && output.WrittenCount > mqtt.ClientMaxPacketSize)
                        {
                            continue; // over the client's Maximum Packet Size: discarded [MQTT-3.1.2-25]
                        }
                    }
                    else
                    {
                        MqttPacketWriter.WritePublish(output, message.Topic, payload, 0, retain: true, dup: false, 0);
                    }

                    WriteOwn(output.WrittenSpan);
                }
            }
        }

        mqtt.PendingAcks.Clear();
    }

    // A retained message's MQTT 5.0 properties for one subscription (at SUBSCRIBE, not per message): its own,
    // the Message Expiry Interval counted down to `now`, and the subscription's identifier.
    private static byte[] RetainedProperties(MqttRetainedMessage message, int subscriptionId, long now)
    {
        var headers = message.Headers ?? [];
        var headerProperties = MqttNatsHeaders.PropertiesLength(headers);
        var properties = new byte[headerProperties + MqttProperties.SubscriptionIdentifierSize(subscriptionId)];
        MqttNatsHeaders.WriteProperties(headers, properties);
        MqttProperties.WriteSubscriptionIdentifier(properties.AsSpan(headerProperties), subscriptionId);
        if (message.ExpiresAt != 0)
        {
            MqttProperties.TrySetUInt32(properties, MqttPropertyId.MessageExpiryInterval, (uint)((message.ExpiresAt - now + 999) / 1000));
        }

        return properties;
    }
}
