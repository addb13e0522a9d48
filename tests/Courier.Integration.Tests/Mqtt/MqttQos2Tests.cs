using System.Text;
using Courier.Integration.Tests.Infrastructure;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// QoS 2 both ways (PUBLISH, PUBREC, PUBREL, PUBCOMP), against Courier and mosquitto. nats-server
/// 2.9.10 is not a reference here: it has no QoS 2 (it grants QoS 1 to a QoS 2 subscription and
/// closes a client that publishes at QoS 2), so these tests would fail on it by design.
/// </summary>
public abstract class MqttQos2Tests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected MqttQos2Tests(TFixture broker) => _broker = broker;

    private int Port => _broker.MqttPort;

    private static string Topic(string rest) => $"{Subjects.NewPrefix().Replace('.', '/')}/{rest}";

    [Fact]
    public async Task A_qos2_publish_reaches_a_qos2_subscriber_at_qos_2_and_a_qos1_subscriber_at_qos_1()
    {
        var topic = Topic("q2");
        await using var two = await MqttTestClient.ConnectAsync(Port, "s2-" + Guid.NewGuid().ToString("N"));
        await two.SubscribeAsync(topic, MqttQualityOfServiceLevel.ExactlyOnce);
        await using var one = await MqttTestClient.ConnectAsync(Port, "s1-" + Guid.NewGuid().ToString("N"));
        await one.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        await using var publisher = await MqttTestClient.ConnectAsync(Port, "pub-" + Guid.NewGuid().ToString("N"));

        await publisher.PublishAsync(topic, "exactly once", MqttQualityOfServiceLevel.ExactlyOnce);
        await publisher.PublishAsync(topic, "second", MqttQualityOfServiceLevel.ExactlyOnce);

        Assert.Equal(new MqttReceived(topic, "exactly once", 2, false), await two.ReceiveAsync());
        Assert.Equal(new MqttReceived(topic, "second", 2, false), await two.ReceiveAsync());
        Assert.Equal(new MqttReceived(topic, "exactly once", 1, false), await one.ReceiveAsync());
        Assert.Equal(new MqttReceived(topic, "second", 1, false), await one.ReceiveAsync());
    }

    [Fact]
    public async Task A_qos2_publish_sent_again_before_pubrel_is_delivered_once()
    {
        var topic = Topic("once");
        await using var subscriber = await MqttTestClient.ConnectAsync(Port, "sub-" + Guid.NewGuid().ToString("N"));
        await subscriber.SubscribeAsync(topic, MqttQualityOfServiceLevel.ExactlyOnce);
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(MqttRawClient.Connect("raw-" + Guid.NewGuid().ToString("N")));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));

        await raw.SendAsync(MqttRawClient.Publish(topic, "one", qos: 2, packetId: 7));
        Assert.Equal(new byte[] { 0x50, 0x02, 0x00, 0x07 }, await raw.ReadAsync(4)); // PUBREC
        await raw.SendAsync(MqttRawClient.Publish(topic, "one", qos: 2, packetId: 7, dup: true));
        Assert.Equal(new byte[] { 0x50, 0x02, 0x00, 0x07 }, await raw.ReadAsync(4)); // PUBREC again, no second delivery
        await raw.SendAsync([0x62, 0x02, 0x00, 0x07]); // PUBREL
        Assert.Equal(new byte[] { 0x70, 0x02, 0x00, 0x07 }, await raw.ReadAsync(4)); // PUBCOMP [MQTT-4.3.3-2]

        // The id is free again: the same id now carries a new message.
        await raw.SendAsync(MqttRawClient.Publish(topic, "two", qos: 2, packetId: 7));
        Assert.Equal(new byte[] { 0x50, 0x02, 0x00, 0x07 }, await raw.ReadAsync(4));
        await raw.SendAsync([0x62, 0x02, 0x00, 0x07]);
        Assert.Equal(new byte[] { 0x70, 0x02, 0x00, 0x07 }, await raw.ReadAsync(4));

        Assert.Equal(new MqttReceived(topic, "one", 2, false), await subscriber.ReceiveAsync());
        Assert.Equal(new MqttReceived(topic, "two", 2, false), await subscriber.ReceiveAsync());
        Assert.Empty(await subscriber.DrainAsync(TimeSpan.FromMilliseconds(300)));
    }

    [Fact]
    public async Task A_qos2_delivery_goes_publish_pubrec_pubrel_pubcomp_to_a_raw_subscriber()
    {
        var topic = Topic("flow");
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(MqttRawClient.Connect("raw-" + Guid.NewGuid().ToString("N")));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
        await raw.SubscribeAsync(topic, qos: 2);
        await using var publisher = await MqttTestClient.ConnectAsync(Port, "pub-" + Guid.NewGuid().ToString("N"));

        await publisher.PublishAsync(topic, "handshake", MqttQualityOfServiceLevel.ExactlyOnce);

        var (first, body) = await raw.ReadPacketAsync();
        Assert.Equal(0x34, first); // PUBLISH, QoS 2
        Assert.EndsWith("handshake", Encoding.UTF8.GetString(body));
        var id = body[(2 + topic.Length)..(4 + topic.Length)];
        await raw.SendAsync([0x50, 0x02, id[0], id[1]]); // PUBREC
        Assert.Equal(new byte[] { 0x62, 0x02, id[0], id[1] }, await raw.ReadAsync(4)); // PUBREL [MQTT-4.3.3-1]
        await raw.SendAsync([0x70, 0x02, id[0], id[1]]); // PUBCOMP
        await raw.SendAsync([0xC0, 0x00]);
        Assert.Equal(new byte[] { 0xD0, 0x00 }, await raw.ReadAsync(2)); // nothing sent again in between
    }

    [Fact]
    public async Task A_persistent_session_remembers_an_unreleased_qos2_publish_across_a_reconnect()
    {
        var topic = Topic("inbound");
        var id = "p2-" + Guid.NewGuid().ToString("N")[..16];
        await using var subscriber = await MqttTestClient.ConnectAsync(Port, "sub-" + Guid.NewGuid().ToString("N"));
        await subscriber.SubscribeAsync(topic, MqttQualityOfServiceLevel.ExactlyOnce);
        await using (var first = await MqttRawClient.ConnectAsync(Port))
        {
            await first.SendAsync(MqttRawClient.Connect(id, clean: false));
            Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await first.ReadAsync(4));
            await first.SendAsync(MqttRawClient.Publish(topic, "once", qos: 2, packetId: 9));
            Assert.Equal(new byte[] { 0x50, 0x02, 0x00, 0x09 }, await first.ReadAsync(4)); // PUBREC, then gone before PUBREL
        }

        await using var again = await MqttRawClient.ConnectAsync(Port);
        await again.SendAsync(MqttRawClient.Connect(id, clean: false));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x01, 0x00 }, await again.ReadAsync(4));
        await again.SendAsync(MqttRawClient.Publish(topic, "once", qos: 2, packetId: 9, dup: true)); // [MQTT-4.4.0-1]
        Assert.Equal(new byte[] { 0x50, 0x02, 0x00, 0x09 }, await again.ReadAsync(4));
        await again.SendAsync([0x62, 0x02, 0x00, 0x09]);
        Assert.Equal(new byte[] { 0x70, 0x02, 0x00, 0x09 }, await again.ReadAsync(4));

        Assert.Equal(new MqttReceived(topic, "once", 2, false), await subscriber.ReceiveAsync());
        Assert.Empty(await subscriber.DrainAsync(TimeSpan.FromMilliseconds(300)));
    }

    [Fact]
    public async Task A_persistent_session_sends_the_pubrel_of_a_qos2_delivery_again_after_a_reconnect()
    {
        var topic = Topic("outbound");
        var id = "s2-" + Guid.NewGuid().ToString("N")[..16];
        byte[] packetId;
        await using (var first = await MqttRawClient.ConnectAsync(Port))
        {
            await first.SendAsync(MqttRawClient.Connect(id, clean: false));
            Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await first.ReadAsync(4));
            await first.SubscribeAsync(topic, qos: 2);
            await using var publisher = await MqttTestClient.ConnectAsync(Port, "pub-" + Guid.NewGuid().ToString("N"));
            await publisher.PublishAsync(topic, "two step", MqttQualityOfServiceLevel.ExactlyOnce);
            var (kind, body) = await first.ReadPacketAsync();
            Assert.Equal(0x34, kind);
            packetId = body[(2 + topic.Length)..(4 + topic.Length)];
            await first.SendAsync([0x50, 0x02, packetId[0], packetId[1]]); // PUBREC
            Assert.Equal(new byte[] { 0x62, 0x02, packetId[0], packetId[1] }, await first.ReadAsync(4)); // PUBREL, then gone before PUBCOMP
        }

        await using var again = await MqttRawClient.ConnectAsync(Port);
        await again.SendAsync(MqttRawClient.Connect(id, clean: false));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x01, 0x00 }, await again.ReadAsync(4));
        Assert.Equal(new byte[] { 0x62, 0x02, packetId[0], packetId[1] }, await again.ReadAsync(4)); // the same PUBREL [MQTT-4.4.0-1]
        await again.SendAsync([0x70, 0x02, packetId[0], packetId[1]]); // PUBCOMP
        await again.SendAsync([0xC0, 0x00]);
        Assert.Equal(new byte[] { 0xD0, 0x00 }, await again.ReadAsync(2)); // the message itself is not sent again
    }
}

public sealed class MqttQos2Tests_Courier(CourierMqttFixture broker) : MqttQos2Tests<CourierMqttFixture>(broker);

public sealed class MqttQos2Tests_Mosquitto(MosquittoFixture broker) : MqttQos2Tests<MosquittoFixture>(broker);
