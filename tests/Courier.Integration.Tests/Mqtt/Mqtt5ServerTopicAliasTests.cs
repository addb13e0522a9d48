using System.Buffers.Binary;
using Courier.Integration.Tests.Infrastructure;
using MQTTnet;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// MQTT 5.0 Topic Aliases from the server (issue 39): a client whose CONNECT allows a Topic Alias Maximum
/// above 0 gets PUBLISH packets whose first one of a topic carries the topic and an alias, and later ones an
/// empty topic and the alias, never an alias above its maximum; with more topics than aliases the least
/// recently assigned alias is set again. A persistent session's redelivery on a new connection carries its
/// whole topic (aliases belong to a network connection). [MQTT-3.3.2-10], [MQTT-3.3.2-12], [MQTT-3.3.2.3.4]
/// Courier only: mosquitto 2.0 never sends aliases (nats-server 2.9.10 has no MQTT 5.0). The packets are read
/// raw and the aliases resolved here, since MQTTnet 5.2 does not resolve aliases it receives (checked below).
/// </summary>
public sealed class Mqtt5ServerTopicAliasTests(CourierMqttFixture broker) : IClassFixture<CourierMqttFixture>
{
    private int Port => broker.MqttPort;

    private static string NewTopic() => Subjects.NewPrefix().Replace('.', '/');

    private static string NewId(string role) => role + "-" + Guid.NewGuid().ToString("N");

    private static byte[] TopicAliasMaximum(ushort maximum) => [0x22, (byte)(maximum >> 8), (byte)maximum];

    [Fact]
    public async Task A_client_with_topic_alias_maximum_2_gets_every_message_on_its_topic_across_five_topics_with_aliases_at_most_2()
    {
        var topic = NewTopic();
        await using var subscriber = await MqttRawClient.ConnectAsync(Port);
        await subscriber.SendAsync(Mqtt5Raw.Connect(NewId("alias2"), Mqtt5Raw.Props(TopicAliasMaximum(2))));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(subscriber)).Reason);
        await subscriber.SendAsync(Mqtt5Raw.Subscribe($"{topic}/#", 0x01, Mqtt5Raw.Props()));
        Assert.Equal(0x90, (await subscriber.ReadPacketAsync()).First);

        // Topics 0..4 in an order that reuses aliases and replaces them; every third message at QoS 1.
        int[] order = [0, 0, 1, 0, 2, 2, 3, 4, 0, 1, 1, 4, 3, 3, 0];
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        var expected = new List<(string Topic, string Payload)>();
        for (var i = 0; i < order.Length; i++)
        {
            var (name, payload) = ($"{topic}/t{order[i]}", $"m{i}");
            expected.Add((name, payload));
            var qos1 = i % 3 == 2;
            await publisher.PublishAsync(m =>
            {
                m.WithTopic(name).WithPayload(payload);
                if (qos1)
                {
                    m.WithAtLeastOnceQoS();
                }
            });
        }

        var aliases = new Dictionary<ushort, string>();
        var received = new List<(string Topic, string Payload)>();
        var empties = 0;
        for (var i = 0; i < order.Length; i++)
        {
            var (first, body) = await subscriber.ReadPacketAsync();
            var publish = Mqtt5Raw.ReadPublish(first, body);
            var alias = publish.Properties.Where(p => p.Id == 0x23).Select(p => BinaryPrimitives.ReadUInt16BigEndian(p.Value)).ToList();
            var one = Assert.Single(alias); // every PUBLISH to this client carries one alias
            Assert.InRange(one, (ushort)1, (ushort)2); // never above the client's maximum [MQTT-3.3.2-10]
            string resolved;
            if (publish.Topic.Length > 0)
            {
                aliases[one] = publish.Topic; // sets (or sets again) the alias
                resolved = publish.Topic;
            }
            else
            {
                empties++;
                Assert.True(aliases.TryGetValue(one, out resolved!), $"alias {one} used before it was set");
            }

            received.Add((resolved, publish.Payload));
            if (publish.PacketId != 0)
            {
                await subscriber.SendAsync([0x40, 0x02, (byte)(publish.PacketId >> 8), (byte)publish.PacketId]);
            }
        }

        Assert.Equal(expected.Order(), received.Order());
        Assert.True(empties >= 3, $"only {empties} PUBLISH packets used an alias alone"); // 0,0 / 2,2 / 1,1 / 3,3 repeat at once
    }

    [Fact]
    public async Task A_repeated_topic_goes_as_an_empty_topic_and_the_alias_the_first_publish_set()
    {
        var topic = NewTopic();
        await using var subscriber = await MqttRawClient.ConnectAsync(Port);
        await subscriber.SendAsync(Mqtt5Raw.Connect(NewId("alias10"), Mqtt5Raw.Props(TopicAliasMaximum(10))));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(subscriber)).Reason);
        await subscriber.SendAsync(Mqtt5Raw.Subscribe(topic, 0x00, Mqtt5Raw.Props()));
        Assert.Equal(0x90, (await subscriber.ReadPacketAsync()).First);

        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("first"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("second"));

        var (first, body) = await subscriber.ReadPacketAsync();
        var setting = Mqtt5Raw.ReadPublish(first, body);
        Assert.Equal((topic, "first"), (setting.Topic, setting.Payload));
        var alias = Assert.Single(setting.Properties, p => p.Id == 0x23).Value;

        // The raw bytes: a zero-length topic name, then the alias property. [MQTT-3.3.2-12]
        (first, body) = await subscriber.ReadPacketAsync();
        Assert.Equal(new byte[] { 0, 0 }, body[..2]);
        var using_ = Mqtt5Raw.ReadPublish(first, body);
        Assert.Equal(("", "second"), (using_.Topic, using_.Payload));
        Assert.Equal(alias, Assert.Single(using_.Properties, p => p.Id == 0x23).Value);
    }

    [Fact]
    public async Task A_qos_1_message_sent_again_on_a_new_connection_carries_its_whole_topic()
    {
        var topic = NewTopic();
        var id = NewId("resume");
        byte[] properties = Mqtt5Raw.Props(TopicAliasMaximum(5), [0x11, 0, 0, 0x0E, 0x10]); // Session Expiry Interval 3600 s
        await using (var first = await MqttRawClient.ConnectAsync(Port))
        {
            await first.SendAsync(Mqtt5Raw.Connect(id, properties, cleanStart: true));
            Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(first)).Reason);
            await first.SendAsync(Mqtt5Raw.Subscribe(topic, 0x01, Mqtt5Raw.Props()));
            Assert.Equal(0x90, (await first.ReadPacketAsync()).First);

            await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
            await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("a").WithAtLeastOnceQoS());
            await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("b").WithAtLeastOnceQoS());

            // Received, never acknowledged: the second on this connection by its alias alone.
            var (f1, b1) = await first.ReadPacketAsync();
            Assert.Equal(topic, Mqtt5Raw.ReadPublish(f1, b1).Topic);
            var (f2, b2) = await first.ReadPacketAsync();
            Assert.Equal("", Mqtt5Raw.ReadPublish(f2, b2).Topic);
        }

        await using var second = await MqttRawClient.ConnectAsync(Port);
        await second.SendAsync(Mqtt5Raw.Connect(id, properties, cleanStart: false));
        var (connAckFirst, connAck) = await second.ReadPacketAsync();
        Assert.Equal(0x20, connAckFirst);
        Assert.Equal(1, connAck[0] & 0x01); // session present

        var again = new List<string>();
        for (var i = 0; i < 2; i++)
        {
            var (first, body) = await second.ReadPacketAsync();
            Assert.True((first & 0x08) != 0, "sent again with DUP");
            var publish = Mqtt5Raw.ReadPublish(first, body);
            Assert.Equal(topic, publish.Topic); // not the last connection's alias
            Assert.DoesNotContain(publish.Properties, p => p.Id == 0x23);
            again.Add(publish.Payload);
            await second.SendAsync([0x40, 0x02, (byte)(publish.PacketId >> 8), (byte)publish.PacketId]);
        }

        Assert.Equal(new[] { "a", "b" }, again.Order());
    }

    [Fact]
    public async Task A_publish_that_fits_the_clients_maximum_packet_size_only_without_an_alias_goes_in_full_without_one()
    {
        var topic = NewTopic();
        const string Payload = "fits";

        // Exactly the size of the PUBLISH with its topic and no properties: 2 + (2 + topic + 1 + payload). [MQTT-3.1.2-25]
        var size = 2 + 2 + System.Text.Encoding.UTF8.GetByteCount(topic) + 1 + Payload.Length;
        await using var subscriber = await MqttRawClient.ConnectAsync(Port);
        await subscriber.SendAsync(Mqtt5Raw.Connect(NewId("tight"), Mqtt5Raw.Props(TopicAliasMaximum(5), [0x27, 0, 0, (byte)(size >> 8), (byte)size])));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(subscriber)).Reason);
        await subscriber.SendAsync(Mqtt5Raw.Subscribe(topic, 0x00, Mqtt5Raw.Props()));
        Assert.Equal(0x90, (await subscriber.ReadPacketAsync()).First);

        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload(Payload));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload(Payload));
        for (var i = 0; i < 2; i++)
        {
            var (first, body) = await subscriber.ReadPacketAsync();
            Assert.Equal(size, 2 + body.Length);
            var publish = Mqtt5Raw.ReadPublish(first, body);
            Assert.Equal((topic, Payload), (publish.Topic, publish.Payload));
            Assert.Empty(publish.Properties);
        }
    }

    [Fact]
    public async Task Mqttnet_5_2_does_not_resolve_the_aliases_it_receives()
    {
        // Why the tests above read raw packets: MQTTnet hands the application the empty topic of a PUBLISH
        // that named its topic by alias. Should a later MQTTnet resolve them, this fails and the tests can use it.
        var topic = NewTopic();
        await using var subscriber = await Mqtt5TestClient.ConnectAsync(Port, NewId("mqttnet"), o => o.WithTopicAliasMaximum(5));
        await subscriber.SubscribeAsync(f => f.WithTopic(topic));
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("first"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("second"));

        var first = await subscriber.ReceiveAsync();
        var second = await subscriber.ReceiveAsync();
        Assert.Equal((topic, "first"), (first.Topic, first.ConvertPayloadToString()));
        Assert.Equal("second", second.ConvertPayloadToString());
        Assert.NotEqual(topic, second.Topic);
    }
}
