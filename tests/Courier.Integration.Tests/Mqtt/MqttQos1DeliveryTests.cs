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
}

public sealed class MqttQos1DeliveryTests_Courier(CourierMqttFixture broker) : MqttQos1DeliveryTests<CourierMqttFixture>(broker);

public sealed class MqttQos1DeliveryTests_NatsServer(NatsServerMqttFixture broker) : MqttQos1DeliveryTests<NatsServerMqttFixture>(broker);
