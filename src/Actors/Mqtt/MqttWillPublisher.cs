using System.Text;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Connections;
using Courier.Protocols.Mqtt;

namespace Courier.Actors.Mqtt;

/// <summary>
/// Publishes, for one account, a will whose session recovered it from the journal after a restart: no
/// connection is left to publish it (a will that waited in the same process goes out through its closed
/// connection's publisher, as before). The message is what that connection would have published:
/// nats-server's <c>Nmqtt-Pub</c> header with the will's QoS, its properties as headers, live MQTT
/// subscribers getting it at the lower of its QoS and theirs; a retained will is set (and journaled)
/// as the retained message of its topic. [MQTT-3.1.2-8], [MQTT-3.1.3-9]
/// </summary>
/// <remarks>
/// Its own in-process client, not the account's capture client: that one does not deliver to itself,
/// and the persistent sessions capture through it, so a will published there would never reach them. A
/// retained will is set before it is routed but not under one step with the routing (the client routes
/// on its own queue), so a SUBSCRIBE racing it may get it twice, live and retained. Rare and cold: it
/// allocates freely.
/// </remarks>
internal sealed class MqttWillPublisher(InProcessClient client, Account account, MqttRetainedMessages retained, IActorRef retainedStore)
{
    private static ReadOnlySpan<byte> NatsHeaderPrefix => "NATS/1.0\r\nNmqtt-Pub:"u8;

    public void Publish(MqttJournaledWill will)
    {
        if (will.Retain)
        {
            var key = MqttAccountScope.Key(account, Encoding.UTF8.GetString(will.Subject)); // retained messages are per account
            byte[] properties = will.HeaderLines.Length == 0 ? [] : [.. "NATS/1.0\r\n"u8, .. will.HeaderLines, .. "\r\n"u8];
            var expiresAt = MqttNatsHeaders.TryGetMessageExpiry(properties, out var seconds) ? DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() + (seconds * 1000L) : 0;
            lock (retained.Gate)
            {
                if (will.Payload.Length == 0)
                {
                    retained.Clear(key); // [MQTT-3.3.1-10]
                }
                else
                {
                    retained.Set(new MqttRetainedMessage(key, will.Topic, will.Payload, will.QoS, properties, expiresAt)); // [MQTT-3.3.1-5]
                }
            }

            retainedStore.Tell(new MqttRetainedEvent(key, will.Topic, will.Payload, will.QoS, properties, expiresAt));
        }

        // NATS/1.0\r\nNmqtt-Pub:Q\r\n[header lines]\r\n
        byte[] headers = [.. NatsHeaderPrefix, (byte)('0' + will.QoS), .. "\r\n"u8, .. will.HeaderLines, .. "\r\n"u8];
        client.Publish(Encoding.UTF8.GetString(will.Subject), null, headers, will.Payload, will.QoS);
    }
}
