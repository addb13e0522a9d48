using System.Text;
using Courier.Integration.Tests.Infrastructure;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// Persistent and clean sessions (clean_session 0 and 1, the session present flag, QoS 1 messages
/// kept for an offline session), with MQTTnet and a raw socket, against Courier and both references:
/// mosquitto and nats-server 2.9.10 (which keeps sessions in JetStream) behave alike here.
/// </summary>
public abstract class MqttSessionTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected MqttSessionTests(TFixture broker) => _broker = broker;

    private int Port => _broker.MqttPort;

    private static string Topic(string rest) => $"{Subjects.NewPrefix().Replace('.', '/')}/{rest}";

    private static string NewId(string prefix) => prefix + "-" + Guid.NewGuid().ToString("N")[..16];

    [Fact]
    public async Task A_persistent_session_keeps_its_subscription_across_a_reconnect_with_session_present_set()
    {
        var topic = Topic("keep");
        var id = NewId("keep");
        await using (var first = await MqttTestClient.ConnectAsync(Port, id, cleanSession: false))
        {
            Assert.False(first.SessionPresent); // a new session [MQTT-3.2.2-3]
            await first.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        }

        await using var again = await MqttTestClient.ConnectAsync(Port, id, cleanSession: false);
        Assert.True(again.SessionPresent); // [MQTT-3.2.2-2]
        await using var publisher = await MqttTestClient.ConnectAsync(Port, NewId("pub"));

        await publisher.PublishAsync(topic, "still subscribed", MqttQualityOfServiceLevel.AtLeastOnce);

        Assert.Equal(new MqttReceived(topic, "still subscribed", 1, false), await again.ReceiveAsync());
    }

    [Fact]
    public async Task Qos1_messages_published_while_a_persistent_session_is_offline_are_delivered_on_reconnect_and_qos0_ones_are_not()
    {
        var topic = Topic("offline");
        var id = NewId("offline");
        await using (var first = await MqttTestClient.ConnectAsync(Port, id, cleanSession: false))
        {
            await first.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        }

        await using (var publisher = await MqttTestClient.ConnectAsync(Port, NewId("pub")))
        {
            await publisher.PublishAsync(topic, "kept 1", MqttQualityOfServiceLevel.AtLeastOnce);
            await publisher.PublishAsync(topic, "dropped", MqttQualityOfServiceLevel.AtMostOnce);
            await publisher.PublishAsync(topic, "kept 2", MqttQualityOfServiceLevel.AtLeastOnce);
        }

        await using var again = await MqttTestClient.ConnectAsync(Port, id, cleanSession: false);

        Assert.True(again.SessionPresent);
        Assert.Equal(new MqttReceived(topic, "kept 1", 1, false), await again.ReceiveAsync());
        Assert.Equal(new MqttReceived(topic, "kept 2", 1, false), await again.ReceiveAsync());
        Assert.Empty(await again.DrainAsync(TimeSpan.FromMilliseconds(300)));
    }

    [Fact]
    public async Task A_clean_session_discards_what_a_persistent_session_kept()
    {
        var topic = Topic("discard");
        var id = NewId("discard");
        await using (var first = await MqttTestClient.ConnectAsync(Port, id, cleanSession: false))
        {
            await first.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        }

        await using (var publisher = await MqttTestClient.ConnectAsync(Port, NewId("pub")))
        {
            await publisher.PublishAsync(topic, "never seen", MqttQualityOfServiceLevel.AtLeastOnce);
        }

        await using (var clean = await MqttTestClient.ConnectAsync(Port, id, cleanSession: true))
        {
            Assert.False(clean.SessionPresent); // [MQTT-3.2.2-1]
            Assert.Empty(await clean.DrainAsync(TimeSpan.FromMilliseconds(300))); // [MQTT-3.1.2-6]
        }

        await using var persistentAgain = await MqttTestClient.ConnectAsync(Port, id, cleanSession: false);
        Assert.False(persistentAgain.SessionPresent);
        await using var publisher2 = await MqttTestClient.ConnectAsync(Port, NewId("pub"));
        await publisher2.PublishAsync(topic, "no subscription", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Empty(await persistentAgain.DrainAsync(TimeSpan.FromMilliseconds(300)));
    }

    [Fact]
    public async Task An_unacknowledged_qos1_delivery_is_sent_again_when_the_persistent_session_reconnects()
    {
        // [MQTT-4.4.0-1] asks for the resend at once; nats-server 2.9.10 resends when its JetStream
        // consumer's ack_wait expires, so the broker runs with a short one (mosquitto ignores it).
        await using var broker = await _broker.StartAnotherAsync(mqttBlockExtra: "ack_wait: \"2s\"");
        var port = broker.MqttPort;
        var topic = Topic("unacked");
        var id = NewId("unacked");
        await using (var raw = await MqttRawClient.ConnectAsync(port))
        {
            await raw.SendAsync(MqttRawClient.Connect(id, clean: false));
            Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
            await raw.SubscribeAsync(topic, qos: 1);
            await using var publisher = await MqttTestClient.ConnectAsync(port, NewId("pub"));
            await publisher.PublishAsync(topic, "ack me", MqttQualityOfServiceLevel.AtLeastOnce);

            var (first, body) = await raw.ReadPacketAsync();
            Assert.Equal(0x32, first & 0xF7); // PUBLISH QoS 1: gone without its PUBACK
            Assert.EndsWith("ack me", Encoding.UTF8.GetString(body));
        }

        await using var again = await MqttRawClient.ConnectAsync(port);
        await again.SendAsync(MqttRawClient.Connect(id, clean: false));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x01, 0x00 }, await again.ReadAsync(4));
        var (resent, resentBody) = await again.ReadPacketAsync();
        Assert.Equal(0x32, resent & 0xF7); // [MQTT-4.4.0-1]
        Assert.EndsWith("ack me", Encoding.UTF8.GetString(resentBody));
        var packetId = resentBody[(2 + topic.Length)..(4 + topic.Length)];
        await again.SendAsync([0x40, 0x02, packetId[0], packetId[1]]);
        await again.SendAsync([0xC0, 0x00]);
        Assert.Equal(0xD0, (await again.ReadPacketAsync()).First);
    }

    [Fact]
    public async Task A_delivery_sent_again_on_reconnect_keeps_its_packet_id_and_has_dup_set()
    {
        // [MQTT-4.4.0-1]: unacknowledged PUBLISHes are sent again "using their original Packet
        // Identifiers"; the third of three deliveries has an id a fresh connection would not pick first.
        await using var broker = await _broker.StartAnotherAsync(mqttBlockExtra: "ack_wait: \"2s\"");
        var port = broker.MqttPort;
        var topic = Topic("sameid");
        var id = NewId("sameid");
        byte[] originalId = [];
        await using (var raw = await MqttRawClient.ConnectAsync(port))
        {
            await raw.SendAsync(MqttRawClient.Connect(id, clean: false));
            Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
            await raw.SubscribeAsync(topic, qos: 1);
            await using var publisher = await MqttTestClient.ConnectAsync(port, NewId("pub"));
            for (var i = 1; i <= 3; i++)
            {
                await publisher.PublishAsync(topic, $"m{i}", MqttQualityOfServiceLevel.AtLeastOnce);
                var (first, body) = await raw.ReadPacketAsync();
                Assert.Equal(0x32, first);
                Assert.EndsWith($"m{i}", Encoding.UTF8.GetString(body));
                var packetId = body[(2 + topic.Length)..(4 + topic.Length)];
                if (i < 3)
                {
                    await raw.SendAsync([0x40, 0x02, packetId[0], packetId[1]]);
                }
                else
                {
                    originalId = packetId;
                }
            }
        }

        await using var again = await MqttRawClient.ConnectAsync(port);
        await again.SendAsync(MqttRawClient.Connect(id, clean: false));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x01, 0x00 }, await again.ReadAsync(4));
        var (resent, resentBody) = await again.ReadPacketAsync();
        Assert.Equal(0x3A, resent); // PUBLISH, QoS 1, DUP [MQTT-3.3.1-1]
        Assert.EndsWith("m3", Encoding.UTF8.GetString(resentBody));
        Assert.Equal(originalId, resentBody[(2 + topic.Length)..(4 + topic.Length)]);
        await again.SendAsync([0x40, 0x02, originalId[0], originalId[1]]);
        await again.SendAsync([0xC0, 0x00]);
        Assert.Equal(0xD0, (await again.ReadPacketAsync()).First); // acknowledged: nothing is sent again
    }
}

public sealed class MqttSessionTests_Courier(CourierMqttFixture broker) : MqttSessionTests<CourierMqttFixture>(broker);

public sealed class MqttSessionTests_Mosquitto(MosquittoFixture broker) : MqttSessionTests<MosquittoFixture>(broker);

public sealed class MqttSessionTests_NatsServer(NatsServerMqttFixture broker) : MqttSessionTests<NatsServerMqttFixture>(broker);

/// <summary>
/// A CONNECT racing the end of the same client id's clean session, against Courier and mosquitto only:
/// nats-server 2.9.10 refuses it while the old connection still holds the session's lock ("another
/// session is in use with client ID") and closes the new connection, which MQTT 3.1.1 does not ask for.
/// </summary>
public abstract class MqttSessionRaceTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected MqttSessionRaceTests(TFixture broker) => _broker = broker;

    private int Port => _broker.MqttPort;

    private static string NewId(string prefix) => prefix + "-" + Guid.NewGuid().ToString("N")[..16];

    [Fact]
    public async Task A_client_id_connecting_again_as_its_clean_session_ends_is_accepted()
    {
        // The clean session's end and the next CONNECT with its id race inside the server; neither
        // order may lose the CONNECT (a clean session once stopped with the CONNECT in its mailbox).
        var id = NewId("again");
        for (var i = 0; i < 20; i++)
        {
            await using (var clean = await MqttTestClient.ConnectAsync(Port, id, cleanSession: true))
            {
                Assert.False(clean.SessionPresent);
            }

            await using var next = await MqttTestClient.ConnectAsync(Port, id, cleanSession: i % 2 == 0);
            Assert.False(next.SessionPresent); // the clean session before it left nothing [MQTT-3.2.2-1]
        }
    }
}

public sealed class MqttSessionRaceTests_Courier(CourierMqttFixture broker) : MqttSessionRaceTests<CourierMqttFixture>(broker);

public sealed class MqttSessionRaceTests_Mosquitto(MosquittoFixture broker) : MqttSessionRaceTests<MosquittoFixture>(broker);
