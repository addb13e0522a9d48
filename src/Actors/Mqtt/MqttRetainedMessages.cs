using System.Collections.Concurrent;
using Courier.Actors.Accounts;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Mqtt;

/// <summary>One retained message: the last retained PUBLISH on its topic. [MQTT-3.3.1-5]</summary>
/// <param name="Subject">Its NATS subject in its account (<see cref="MqttAccountScope.Key"/>): the key.</param>
/// <param name="Topic">Its MQTT topic.</param>
/// <param name="Payload">Its payload.</param>
/// <param name="QoS">The QoS it was published with.</param>
/// <param name="Headers">MQTT 5.0: its properties as a NATS header block (<see cref="Protocols.Mqtt.MqttNatsHeaders"/>); empty for none.</param>
/// <param name="ExpiresAt">MQTT 5.0: when its Message Expiry Interval runs out, Unix milliseconds; 0 for never. [MQTT-3.3.2-5]</param>
internal sealed record MqttRetainedMessage(string Subject, byte[] Topic, byte[] Payload, byte QoS, byte[]? Headers = null, long ExpiresAt = 0);

/// <summary>
/// The node's retained messages, one per account and NATS subject (so per MQTT topic). Set, replaced and
/// cleared by MQTT publishers' read pumps; read when a subscription is made. <see cref="MqttRetainedStore"/>
/// journals each change and refills this map on recovery.
/// </summary>
/// <remarks>Retained publishes are rare next to ordinary ones: each one copies its payload once.</remarks>
internal sealed class MqttRetainedMessages
{
    private readonly ConcurrentDictionary<string, MqttRetainedMessage> _bySubject = new(StringComparer.Ordinal);

    /// <summary>
    /// Held by a retained PUBLISH from setting the message until it is routed, and by a SUBSCRIBE while
    /// it reads the retained messages for its new subscriptions: a retained message published while a
    /// subscription is being made reaches it once, live or as retained, never twice or not at all
    /// (the subscriber skips what it got live meanwhile, <see cref="MqttConnectionState.RetainedSeenLive"/>).
    /// Order: this, then a client's in-flight lock, then its outbound's (LOCKS.md).
    /// </summary>
    public Lock Gate { get; } = new();

    /// <summary>Retained messages held.</summary>
    public int Count => _bySubject.Count;

    /// <summary>Keeps <paramref name="message"/>, replacing the one on its subject. [MQTT-3.3.1-5]</summary>
    public void Set(MqttRetainedMessage message) => _bySubject[message.Subject] = message;

    /// <summary>Clears the retained message on <paramref name="subject"/> (a retained PUBLISH with an empty payload). [MQTT-3.3.1-10]</summary>
    public void Clear(string subject) => _bySubject.TryRemove(subject, out _);

    /// <summary>Every retained message (for a snapshot).</summary>
    public List<MqttRetainedMessage> All() => [.. _bySubject.Values];

    /// <summary>The retained messages of <paramref name="account"/> whose subject <paramref name="filterSubject"/> matches, in subject order.</summary>
    public List<MqttRetainedMessage> Matching(Account account, string filterSubject)
    {
        var found = new List<MqttRetainedMessage>();
        foreach (var message in _bySubject.Values)
        {
            if (MqttAccountScope.InAccount(message.Subject, account, out var subject) && SubjectRules.Matches(subject, filterSubject))
            {
                found.Add(message);
            }
        }

        found.Sort((a, b) => string.CompareOrdinal(a.Subject, b.Subject));
        return found;
    }
}
