using System.Text;
using Courier.Integration.Tests.Infrastructure;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// Pure MQTT 3.1.1 behaviour with real clients (mosquitto_pub/mosquitto_sub and MQTTnet), run
/// against Courier and the references, mosquitto and nats-server 2.9.10's MQTT: a test that fails
/// on a reference is a wrong test.
/// </summary>
public abstract class MqttBehaviourTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected MqttBehaviourTests(TFixture broker) => _broker = broker;

    private int Port => _broker.MqttPort;

    private static string Topic(string rest) => $"{Subjects.NewPrefix().Replace('.', '/')}/{rest}";

    [Fact]
    public async Task Mosquitto_pub_reaches_mosquitto_sub_at_qos_0_and_1_in_order()
    {
        var root = Topic("sensors");
        var subscriber = await MosquittoClients.SubscribeAsync(Port, $"{root}/#", count: 3, qos: 1);

        Assert.Equal(0, await MosquittoClients.PublishAsync(Port, $"{root}/t1", "21.5"));
        Assert.Equal(0, await MosquittoClients.PublishAsync(Port, $"{root}/t2", "22.0", qos: 1));
        Assert.Equal(0, await MosquittoClients.PublishAsync(Port, root, "parent level", qos: 1));

        Assert.Equal([$"{root}/t1 21.5", $"{root}/t2 22.0", $"{root} parent level"], await subscriber.MessagesAsync());
    }

    [Fact]
    public async Task Qos1_publish_is_acknowledged_and_reaches_a_qos1_subscriber_at_qos_1()
    {
        var topic = Topic("qos1");
        await using var subscriber = await MqttTestClient.ConnectAsync(Port, "sub-" + Guid.NewGuid().ToString("N"));
        await subscriber.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        await using var publisher = await MqttTestClient.ConnectAsync(Port, "pub-" + Guid.NewGuid().ToString("N"));

        await publisher.PublishAsync(topic, "one", MqttQualityOfServiceLevel.AtLeastOnce);
        await publisher.PublishAsync(topic, "zero", MqttQualityOfServiceLevel.AtMostOnce);

        // Each at its own QoS. nats-server delivers QoS 1 through JetStream and QoS 0 directly, so the
        // two may arrive in either order (MQTT orders messages of one QoS only).
        MqttReceived[] received = [await subscriber.ReceiveAsync(), await subscriber.ReceiveAsync()];
        Assert.Equal(
            [new MqttReceived(topic, "one", 1, false), new MqttReceived(topic, "zero", 0, false)],
            received.OrderBy(r => r.Payload, StringComparer.Ordinal));
    }

    [Fact]
    public async Task A_qos1_publish_reaches_a_qos0_subscriber_at_qos_0()
    {
        var topic = Topic("down");
        await using var subscriber = await MqttTestClient.ConnectAsync(Port, "sub-" + Guid.NewGuid().ToString("N"));
        await subscriber.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtMostOnce);
        await using var publisher = await MqttTestClient.ConnectAsync(Port, "pub-" + Guid.NewGuid().ToString("N"));

        await publisher.PublishAsync(topic, "x", MqttQualityOfServiceLevel.AtLeastOnce);

        Assert.Equal(new MqttReceived(topic, "x", 0, false), await subscriber.ReceiveAsync());
    }

    [Fact]
    public async Task Single_level_wildcard_matches_one_level_only()
    {
        var root = Topic("plus");
        await using var client = await MqttTestClient.ConnectAsync(Port, "c-" + Guid.NewGuid().ToString("N"));
        await client.SubscribeAsync($"{root}/+/temp");

        await client.PublishAsync($"{root}/a/b/temp", "no");
        await client.PublishAsync($"{root}/temp", "no");
        await client.PublishAsync($"{root}/room1/temp", "yes");

        Assert.Equal(new MqttReceived($"{root}/room1/temp", "yes", 0, false), await client.ReceiveAsync());
        Assert.Empty(await client.DrainAsync(TimeSpan.FromMilliseconds(300)));
    }

    [Fact]
    public async Task A_retained_message_is_delivered_on_subscribe_with_the_retain_flag_and_can_be_replaced_and_cleared()
    {
        var topic = Topic("retained");
        await using var publisher = await MqttTestClient.ConnectAsync(Port, "pub-" + Guid.NewGuid().ToString("N"));
        await publisher.PublishAsync(topic, "first", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);
        await publisher.PublishAsync(topic, "second", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);

        await using (var late = await MqttTestClient.ConnectAsync(Port, "late-" + Guid.NewGuid().ToString("N")))
        {
            await late.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
            var received = await late.ReceiveAsync();
            Assert.Equal(new MqttReceived(topic, "second", 1, true), received);
            Assert.Empty(await late.DrainAsync(TimeSpan.FromMilliseconds(300)));
        }

        // An empty retained payload clears it [MQTT-3.3.1-10].
        await publisher.PublishAsync(topic, "", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);
        await using var later = await MqttTestClient.ConnectAsync(Port, "later-" + Guid.NewGuid().ToString("N"));
        await later.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Empty(await later.DrainAsync(TimeSpan.FromMilliseconds(500)));
    }

    [Fact]
    public async Task A_will_is_published_when_the_client_vanishes_but_not_after_a_disconnect()
    {
        var topic = Topic("will");
        await using var watcher = await MqttTestClient.ConnectAsync(Port, "w-" + Guid.NewGuid().ToString("N"));
        await watcher.SubscribeAsync(topic);

        // A DISCONNECT discards the will [MQTT-3.14.4-3].
        var polite = await MqttTestClient.ConnectAsync(Port, "polite-" + Guid.NewGuid().ToString("N"), b => b.WithWillTopic(topic).WithWillPayload("polite gone"));
        await polite.DisposeAsync();

        // A client that just goes away gets its will published [MQTT-3.1.2-8].
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(ConnectWithWill("rude-" + Guid.NewGuid().ToString("N"), topic, "rude gone"));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
        await raw.DisposeAsync();

        Assert.Equal(new MqttReceived(topic, "rude gone", 0, false), await watcher.ReceiveAsync());
        Assert.Empty(await watcher.DrainAsync(TimeSpan.FromMilliseconds(300)));
    }

    [Fact]
    public async Task A_silent_client_is_closed_after_one_and_a_half_keep_alive_periods()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(MqttRawClient.Connect("ka-" + Guid.NewGuid().ToString("N"), keepAlive: 1));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));

        // Nothing more is sent: the server closes within the test timeout, having sent nothing else.
        Assert.Empty(await raw.ReadUntilClosedAsync());
    }

    [Fact]
    public async Task Pingreq_keeps_a_client_alive_and_gets_pingresp()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(MqttRawClient.Connect("ping-" + Guid.NewGuid().ToString("N"), keepAlive: 2));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));

        // 4.8 s in all, past the 3 s (1.5 x keep-alive) a silent client gets; each gap leaves 2.2 s of
        // slack, as a loaded CI machine can stretch a delay (1 s keep-alive with 0.7 s gaps was flaky there).
        for (var i = 0; i < 6; i++)
        {
            await Task.Delay(800);
            await raw.SendAsync([0xC0, 0x00]);
            Assert.Equal(new byte[] { 0xD0, 0x00 }, await raw.ReadAsync(2));
        }
    }

    [Fact]
    public async Task A_second_connect_with_the_same_client_id_takes_over_and_closes_the_first()
    {
        var id = "dup-" + Guid.NewGuid().ToString("N");
        await using var first = await MqttRawClient.ConnectAsync(Port);
        await first.SendAsync(MqttRawClient.Connect(id));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await first.ReadAsync(4));

        await using var second = await MqttRawClient.ConnectAsync(Port);
        await second.SendAsync(MqttRawClient.Connect(id));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await second.ReadAsync(4));

        Assert.Empty(await first.ReadUntilClosedAsync());
        await second.SendAsync([0xC0, 0x00]);
        Assert.Equal(new byte[] { 0xD0, 0x00 }, await second.ReadAsync(2));
    }

    [Fact]
    public async Task A_first_packet_other_than_connect_closes_the_connection_without_a_reply()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync([0xC0, 0x00]);
        Assert.Empty(await raw.ReadUntilClosedAsync());
    }

    [Fact]
    public async Task An_empty_client_id_with_a_persistent_session_is_refused_with_connack_2()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(MqttRawClient.Connect("", clean: false));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x02 }, await raw.ReadUntilClosedAsync());
    }

    [Fact]
    public async Task An_empty_client_id_with_a_clean_session_is_accepted()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(MqttRawClient.Connect(""));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
    }

    [Fact]
    public async Task A_connect_with_an_unknown_protocol_level_is_refused_with_connack_1()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(MqttRawClient.Connect("lvl-" + Guid.NewGuid().ToString("N"), level: 7));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x01 }, await raw.ReadUntilClosedAsync());
    }

    // CONNECT, clean session, keep-alive 60 s, with a QoS 0 will.
    private static byte[] ConnectWithWill(string clientId, string willTopic, string willMessage)
    {
        static byte[] Str(string s)
        {
            var b = System.Text.Encoding.UTF8.GetBytes(s);
            return [(byte)(b.Length >> 8), (byte)b.Length, .. b];
        }

        byte[] body = [0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 4, 0x06, 0, 60, .. Str(clientId), .. Str(willTopic), .. Str(willMessage)];
        return [0x10, (byte)body.Length, .. body];
    }

    [Fact]
    public async Task A_retained_message_published_while_a_subscription_is_made_arrives_exactly_once()
    {
        // SUBSCRIBE and a retained PUBLISH on its topic sent at the same moment, 100 times: each time the
        // message arrives, live or as retained. Courier (and mosquitto) send it once, never both; nats-server
        // 2.9.10 now and then sends both (seen in CI: round 61 of 100), which MQTT's at-least-once allows.
        const int Rounds = 100;
        await using var subscriber = await MqttRawClient.ConnectAsync(Port);
        await subscriber.SendAsync(MqttRawClient.Connect("race-sub-" + Guid.NewGuid().ToString("N")));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await subscriber.ReadAsync(4));
        await using var publisher = await MqttRawClient.ConnectAsync(Port);
        await publisher.SendAsync(MqttRawClient.Connect("race-pub-" + Guid.NewGuid().ToString("N")));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await publisher.ReadAsync(4));
        var prefix = Topic("race");
        for (var round = 1; round <= Rounds; round++)
        {
            var topic = Encoding.UTF8.GetBytes($"{prefix}/{round}");
            byte[] body = [(byte)(round >> 8), (byte)round, 0, (byte)topic.Length, .. topic, 0];
            await Task.WhenAll(
                subscriber.SendAsync([0x82, (byte)body.Length, .. body]),
                publisher.SendAsync(MqttRawClient.Publish($"{prefix}/{round}", $"r{round}", qos: 1, packetId: (ushort)round, retain: true)));
            Assert.Equal(new byte[] { 0x40, 0x02, (byte)(round >> 8), (byte)round }, await publisher.ReadAsync(4));

            // PUBACK came after the live copy was queued; PINGRESP after SUBACK and the retained copies.
            await subscriber.SendAsync([0xC0, 0x00]);
            var copies = 0;
            var subAcked = false;
            while (true)
            {
                var (first, packet) = await subscriber.ReadPacketAsync();
                if (first == 0xD0)
                {
                    break;
                }

                if (first == 0x90)
                {
                    subAcked = true;
                    continue;
                }

                Assert.Equal(0x30, first & 0xF0);
                Assert.EndsWith($"r{round}", Encoding.UTF8.GetString(packet));
                copies++;
            }

            Assert.True(subAcked, $"round {round}: no SUBACK before PINGRESP");
            Assert.True(copies >= 1, $"round {round}: the retained message never arrived");
            if (_broker.Kind != MqttBrokerKind.NatsServer)
            {
                Assert.True(copies == 1, $"round {round}: the retained message arrived {copies} times");
            }
        }
    }
}

public sealed class MqttBehaviourTests_Courier(CourierMqttFixture broker) : MqttBehaviourTests<CourierMqttFixture>(broker);

public sealed class MqttBehaviourTests_Mosquitto(MosquittoFixture broker) : MqttBehaviourTests<MosquittoFixture>(broker);

public sealed class MqttBehaviourTests_NatsServer(NatsServerMqttFixture broker) : MqttBehaviourTests<NatsServerMqttFixture>(broker);
