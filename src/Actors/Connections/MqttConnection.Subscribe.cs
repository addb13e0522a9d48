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
    private MqttStep ProcessMqttSubscribe(in MqttPacket packet)
    {
        var filters = packet.TopicFilters;
        var codes = new byte[filters.Count];
        var retained = new List<(string Subject, byte QoS)>();
        var i = 0;
        foreach (var filter in filters)
        {
            var subject = FilterSubject(filter.Filter);
            if (subject is null || (Permissions is not null && !CanSubscribeMqtt(subject)))
            {
                codes[i++] = 0x80; // failure [MQTT-3.9.3]
                continue;
            }

            // QoS 0, 1 and 2 are granted as asked (nats-server 2.9, without QoS 2, grants 1 for 2).
            var granted = Math.Min(filter.QoS, (byte)2);
            var sid = Encoding.UTF8.GetString(filter.Filter);
            retained.AddRange(AddMqttFilter(sid, subject, granted));
            if (_mqtt.Persistent)
            {
                _mqtt.SessionSubscribes.Add((sid, granted));
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

    // A filter's subscription(s), restored from a persistent session.
    private void AddMqttFilter(string filter, byte qos)
    {
        if (FilterSubject(Encoding.UTF8.GetBytes(filter)) is { } subject)
        {
            AddMqttFilter(filter, subject, qos);
        }
    }

    // One subscription per filter, two for "x/#" ("x.>" and "x", sid "x/# fwc", as nats-server); returns their subjects.
    private List<(string Subject, byte QoS)> AddMqttFilter(string sid, string subject, byte granted)
    {
        List<(string Subject, byte QoS)> subjects = [(subject, granted)];
        AddMqttSubscription(sid, subject, granted);
        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        if (MqttTopics.NeedsParentLevelSubscription(subjectBytes))
        {
            var parent = Encoding.UTF8.GetString(MqttTopics.ParentLevel(subjectBytes));
            AddMqttSubscription(sid + ParentLevelSidSuffix, parent, granted);
            subjects.Add((parent, granted));
        }

        return subjects;
    }

    // The sid of the second subscription a "x/#" filter makes, on "x" (nats-server's mqttMultiLevelSidSuffix).
    private const string ParentLevelSidSuffix = " fwc";

    private MqttStep ProcessMqttUnsubscribe(in MqttPacket packet)
    {
        foreach (var filter in packet.TopicFilters)
        {
            var sid = Encoding.UTF8.GetString(filter.Filter);
            RemoveMqttSubscription(sid);
            RemoveMqttSubscription(sid + ParentLevelSidSuffix);
            if (_mqtt.Persistent)
            {
                _mqtt.SessionUnsubscribes.Add(sid);
            }
        }

        _mqtt.PendingAcks.Add(new MqttPendingAck(MqttPacketType.Unsubscribe, packet.PacketId, [], []));
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
    private void AddMqttSubscription(string sid, string subject, byte qos)
    {
        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        var sub = new Subscription(this, Account, subject, null, Encoding.UTF8.GetBytes(sid), Account.Space.ShardForSubscription(subjectBytes))
        {
            MqttQoS = qos,
            MqttSessionCaptured = _mqtt.Persistent && qos > 0,
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

    private void RemoveMqttSubscription(string sid)
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
            if (ack.Type == MqttPacketType.Unsubscribe)
            {
                MqttPacketWriter.WriteUnsubAck(output, ack.PacketId); // [MQTT-3.10.4-4]
                WriteOwn(output.WrittenSpan);
                continue;
            }

            MqttPacketWriter.WriteSubAck(output, ack.PacketId, ack.ReturnCodes);
            WriteOwn(output.WrittenSpan);
            foreach (var (subject, granted) in ack.RetainedFor)
            {
                foreach (var message in _context.Retained.Matching(subject))
                {
                    if (mqtt.RetainedSeenLive.Contains(message.Subject))
                    {
                        continue; // delivered live while the subscription was being made
                    }

                    var payload = new ReadOnlySequence<byte>(message.Payload);
                    var qos = Math.Min(message.QoS, granted);
                    if (qos > 0)
                    {
                        mqtt.Inflight.Send(message.Topic, payload, retain: true, qos);
                        continue;
                    }

                    output.ResetWrittenCount();
                    MqttPacketWriter.WritePublish(output, message.Topic, payload, 0, retain: true, dup: false, 0);
                    WriteOwn(output.WrittenSpan);
                }
            }
        }

        mqtt.PendingAcks.Clear();
    }
}
