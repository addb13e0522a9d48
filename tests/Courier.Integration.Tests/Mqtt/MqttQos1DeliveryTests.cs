using System.Text;
using Courier.Integration.Tests.Infrastructure;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// QoS 1 towards a subscriber that is slow to PUBACK, with <c>mqtt { ack_wait, max_ack_pending }</c>,
/// against Courier and nats-server 2.9.10 (mosquitto has neither setting).
/// </summary>
public abstract class MqttQos1DeliveryTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected MqttQos1DeliveryTests(TFixture broker) => _broker = broker;

    private static string Topic() => Subjects.NewPrefix().Replace('.', '/') + "/q1";

    [Fact]
    public async Task An_unacknowledged_delivery_is_sent_again_with_dup_after_ack_wait_until_acknowledged()
    {
        await using var broker = await _broker.StartAnotherAsync(mqttBlockExtra: "ack_wait: \"1s\"");
        var topic = Topic();
        await using var raw = await MqttRawClient.ConnectAsync(broker.MqttPort);
        await raw.SendAsync(MqttRawClient.Connect("slow-" + Guid.NewGuid().ToString("N")));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
        await raw.SubscribeAsync(topic, qos: 1);
        await using var publisher = await MqttTestClient.ConnectAsync(broker.MqttPort, "pub-" + Guid.NewGuid().ToString("N"));

        await publisher.PublishAsync(topic, "hello", MqttQualityOfServiceLevel.AtLeastOnce);

        var (first, body) = await raw.ReadPacketAsync();
        Assert.Equal(0x32, first); // PUBLISH, QoS 1, no DUP
        var (again, sameBody) = await raw.ReadPacketAsync();
        Assert.Equal(0x3A, again); // PUBLISH, QoS 1, DUP [MQTT-3.3.1-1]
        Assert.Equal(body, sameBody); // same topic, packet id and payload
        Assert.EndsWith("hello", Encoding.UTF8.GetString(body));

        var id = body[(2 + topic.Length)..(4 + topic.Length)];
        await raw.SendAsync([0x40, 0x02, id[0], id[1]]);
        await raw.SendAsync([0xC0, 0x00]);
        Assert.Equal(0xD0, (await raw.ReadPacketAsync()).First); // nothing else came first
    }

    [Fact]
    public async Task Max_ack_pending_holds_further_deliveries_until_a_puback_frees_a_slot()
    {
        await using var broker = await _broker.StartAnotherAsync(mqttBlockExtra: "max_ack_pending: 2");
        var topic = Topic();
        await using var raw = await MqttRawClient.ConnectAsync(broker.MqttPort);
        await raw.SendAsync(MqttRawClient.Connect("window-" + Guid.NewGuid().ToString("N")));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
        await raw.SubscribeAsync(topic, qos: 1);
        await using var publisher = await MqttTestClient.ConnectAsync(broker.MqttPort, "pub-" + Guid.NewGuid().ToString("N"));

        for (var i = 1; i <= 3; i++)
        {
            await publisher.PublishAsync(topic, $"m{i}", MqttQualityOfServiceLevel.AtLeastOnce);
        }

        var one = await raw.ReadPacketAsync();
        var two = await raw.ReadPacketAsync();
        Assert.EndsWith("m1", Encoding.UTF8.GetString(one.Body));
        Assert.EndsWith("m2", Encoding.UTF8.GetString(two.Body));

        // The window is full: a PINGRESP comes back before any third PUBLISH.
        await raw.SendAsync([0xC0, 0x00]);
        Assert.Equal(0xD0, (await raw.ReadPacketAsync()).First);

        var id = one.Body[(2 + topic.Length)..(4 + topic.Length)];
        await raw.SendAsync([0x40, 0x02, id[0], id[1]]);
        var three = await raw.ReadPacketAsync();
        Assert.Equal(0x32, three.First);
        Assert.EndsWith("m3", Encoding.UTF8.GetString(three.Body));
    }

    [Fact]
    public async Task Overlapping_subscriptions_get_a_copy_each_one_of_them_at_the_highest_granted_qos()
    {
        // [MQTT-3.3.5-1]: a copy at the maximum QoS of the matching subscriptions; further copies, one
        // per other subscription, MAY follow. nats-server 2.9.10 sends one per subscription (here QoS 0
        // and QoS 1), and so does Courier. Not run against mosquitto 2.0: it sends one copy at the QoS
        // of the first subscription its tree walk meets ("a/b" before "a/#"), which breaks 3.3.5-1
        // when that one is the lower (checked by hand: a/# at 1 and a/b at 0 got a single QoS 0 copy).
        var prefix = Topic();
        var wide = Encoding.UTF8.GetBytes(prefix + "/#");
        var narrow = Encoding.UTF8.GetBytes(prefix + "/b");
        await using var raw = await MqttRawClient.ConnectAsync(_broker.MqttPort);
        await raw.SendAsync(MqttRawClient.Connect("overlap-" + Guid.NewGuid().ToString("N")));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
        byte[] body = [0, 1, 0, (byte)wide.Length, .. wide, 1, 0, (byte)narrow.Length, .. narrow, 0];
        await raw.SendAsync([0x82, (byte)body.Length, .. body]);
        Assert.Equal(new byte[] { 0x90, 4, 0, 1, 1, 0 }, await raw.ReadAsync(6));
        await using var publisher = await MqttTestClient.ConnectAsync(_broker.MqttPort, "pub-" + Guid.NewGuid().ToString("N"));

        await publisher.PublishAsync(prefix + "/b", "both", MqttQualityOfServiceLevel.AtLeastOnce);

        var one = await raw.ReadPacketAsync();
        var two = await raw.ReadPacketAsync();
        Assert.Equal(new byte[] { 0x30, 0x32 }, new[] { one.First, two.First }.Order().ToArray()); // QoS 0 for "a/b", QoS 1 for "a/#"
        Assert.All([one.Body, two.Body], b => Assert.EndsWith("both", Encoding.UTF8.GetString(b)));
        var qos1 = one.First == 0x32 ? one.Body : two.Body;
        await raw.SendAsync([0x40, 0x02, qos1[2 + narrow.Length], qos1[3 + narrow.Length]]);
        await raw.SendAsync([0xC0, 0x00]);
        Assert.Equal(0xD0, (await raw.ReadPacketAsync()).First); // no third copy
    }
}

public sealed class MqttQos1DeliveryTests_Courier(CourierMqttFixture broker) : MqttQos1DeliveryTests<CourierMqttFixture>(broker);

public sealed class MqttQos1DeliveryTests_NatsServer(NatsServerMqttFixture broker) : MqttQos1DeliveryTests<NatsServerMqttFixture>(broker);
