using Courier.Integration.Tests.Infrastructure;
using MQTTnet;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// MQTT 5.0 Topic Aliases (issue 39), the same script against Courier and mosquitto 2.0: a client sets
/// an alias with a topic and then publishes with the alias alone, within the Topic Alias Maximum the
/// server announced; alias 0 is refused with a DISCONNECT (one above the maximum: 0x94, tested in
/// <see cref="Mqtt5BehaviourTests{TFixture}"/>), an alias never set on the connection with an empty
/// topic is DISCONNECT 0x82; and a subscriber that announced no Topic Alias Maximum gets every topic
/// in full. [MQTT-3.3.2.3.4]
/// </summary>
public abstract class Mqtt5TopicAliasTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected Mqtt5TopicAliasTests(TFixture broker) => _broker = broker;

    /// <summary>Whether the server sends DISCONNECT before closing on these errors (Courier always does; the spec lets a server just close).</summary>
    protected abstract bool SendsDisconnectOnErrors { get; }

    /// <summary>
    /// The DISCONNECT reason for Topic Alias 0. The spec forbids the value [MQTT-3.3.2-8] without naming
    /// a code: Courier says 0x94 (Topic Alias invalid), as issue 39 asks; mosquitto's property reader
    /// calls it malformed (0x81).
    /// </summary>
    protected abstract byte AliasZeroReason { get; }

    private int Port => _broker.MqttPort;

    private static string NewTopic() => Subjects.NewPrefix().Replace('.', '/');

    private static string NewId(string role) => role + "-" + Guid.NewGuid().ToString("N");

    [Fact]
    public async Task A_topic_alias_set_by_a_publish_names_its_topic_in_later_publishes_until_it_is_set_again()
    {
        var topic = NewTopic();
        await using var subscriber = await Mqtt5TestClient.ConnectAsync(Port, NewId("sub"));
        await subscriber.SubscribeAsync(f => f.WithTopic($"{topic}/#").WithAtLeastOnceQoS());
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        Assert.True(publisher.ConnectResult.TopicAliasMaximum >= 2, $"Topic Alias Maximum {publisher.ConnectResult.TopicAliasMaximum}");

        await publisher.PublishAsync(m => m.WithTopic($"{topic}/first").WithTopicAlias(1).WithPayload("sets 1").WithAtLeastOnceQoS());
        await publisher.PublishAsync(m => m.WithTopic($"{topic}/second").WithTopicAlias(2).WithPayload("sets 2").WithAtLeastOnceQoS());
        await publisher.PublishAsync(m => m.WithTopicAlias(1).WithPayload("uses 1").WithAtLeastOnceQoS());
        await publisher.PublishAsync(m => m.WithTopicAlias(2).WithPayload("uses 2"));
        await publisher.PublishAsync(m => m.WithTopic($"{topic}/third").WithTopicAlias(1).WithPayload("sets 1 again").WithAtLeastOnceQoS());
        await publisher.PublishAsync(m => m.WithTopicAlias(1).WithPayload("uses 1 again").WithAtLeastOnceQoS());

        var received = new List<(string, string)>();
        for (var i = 0; i < 6; i++)
        {
            var message = await subscriber.ReceiveAsync();
            received.Add((message.Topic, message.ConvertPayloadToString()));
        }

        // QoS 0 and QoS 1 may be ordered apart, so as a set.
        Assert.Equal(
            new[] { ($"{topic}/first", "sets 1"), ($"{topic}/second", "sets 2"), ($"{topic}/first", "uses 1"), ($"{topic}/second", "uses 2"), ($"{topic}/third", "sets 1 again"), ($"{topic}/third", "uses 1 again") }.Order(),
            received.Order());
    }

    [Fact]
    public async Task Topic_alias_0_gets_a_disconnect_and_closes_only_that_client()
    {
        var topic = NewTopic();
        await using var healthy = await Mqtt5TestClient.ConnectAsync(Port, NewId("healthy"));
        await healthy.SubscribeAsync(f => f.WithTopic(topic));

        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("zero")));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
        await raw.SendAsync(Mqtt5Raw.Publish(topic, "aliased", Mqtt5Raw.Props(Mqtt5Raw.TopicAlias(0)))); // [MQTT-3.3.2-8]
        await Mqtt5Raw.AssertClosedWithReasonAsync(raw, AliasZeroReason, SendsDisconnectOnErrors);

        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("still here"));
        Assert.Equal("still here", (await healthy.ReceiveAsync()).ConvertPayloadToString());
    }

    [Fact]
    public async Task An_empty_topic_with_an_alias_this_connection_never_set_gets_disconnect_0x82()
    {
        var topic = NewTopic();
        await using var healthy = await Mqtt5TestClient.ConnectAsync(Port, NewId("healthy"));
        await healthy.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS());

        // Alias 1 set on one connection is not set on another: aliases belong to their connection. [MQTT-3.3.2-10]
        await using var setter = await MqttRawClient.ConnectAsync(Port);
        await setter.SendAsync(Mqtt5Raw.Connect(NewId("setter")));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(setter)).Reason);
        await setter.SendAsync(Mqtt5Raw.PublishQos1(topic, 1, "set", Mqtt5Raw.Props(Mqtt5Raw.TopicAlias(1))));
        Assert.Equal(0x40, (await setter.ReadPacketAsync()).First);
        Assert.Equal("set", (await healthy.ReceiveAsync()).ConvertPayloadToString());

        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("unknown")));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
        await raw.SendAsync(Mqtt5Raw.PublishQos1("", 1, "lost", Mqtt5Raw.Props(Mqtt5Raw.TopicAlias(1))));
        await Mqtt5Raw.AssertClosedWithReasonAsync(raw, 0x82, SendsDisconnectOnErrors);

        // The setter's alias still works on its own connection; the refused message went nowhere.
        await setter.SendAsync(Mqtt5Raw.PublishQos1("", 2, "by alias", Mqtt5Raw.Props(Mqtt5Raw.TopicAlias(1))));
        Assert.Equal(0x40, (await setter.ReadPacketAsync()).First);
        var byAlias = await healthy.ReceiveAsync();
        Assert.Equal((topic, "by alias"), (byAlias.Topic, byAlias.ConvertPayloadToString()));
        Assert.Empty(await healthy.DrainAsync(TimeSpan.FromMilliseconds(300)));
    }

    [Fact]
    public async Task An_empty_topic_without_a_topic_alias_gets_disconnect_0x82()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("empty")));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
        await raw.SendAsync(Mqtt5Raw.Publish("", "nowhere", Mqtt5Raw.Props()));
        await Mqtt5Raw.AssertClosedWithReasonAsync(raw, 0x82, SendsDisconnectOnErrors);
    }

    [Fact]
    public async Task A_subscriber_that_announced_no_topic_alias_maximum_gets_every_topic_in_full_and_no_alias()
    {
        var topic = NewTopic();
        await using var subscriber = await MqttRawClient.ConnectAsync(Port);
        await subscriber.SendAsync(Mqtt5Raw.Connect(NewId("noalias")));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(subscriber)).Reason);
        await subscriber.SendAsync(Mqtt5Raw.Subscribe(topic, 0x00, Mqtt5Raw.Props()));
        Assert.Equal(0x90, (await subscriber.ReadPacketAsync()).First);

        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithTopicAlias(1).WithPayload("one"));
        await publisher.PublishAsync(m => m.WithTopicAlias(1).WithPayload("two"));
        await publisher.PublishAsync(m => m.WithTopicAlias(1).WithPayload("three"));

        foreach (var expected in new[] { "one", "two", "three" })
        {
            var (first, body) = await subscriber.ReadPacketAsync();
            var publish = Mqtt5Raw.ReadPublish(first, body);
            Assert.Equal((topic, expected), (publish.Topic, publish.Payload));
            Assert.DoesNotContain(publish.Properties, p => p.Id == 0x23); // [MQTT-3.1.2-27]
        }
    }

    [Fact]
    public async Task A_subscriber_whose_topic_alias_maximum_is_0_gets_every_topic_in_full_at_qos_0_and_1()
    {
        var topic = NewTopic();
        await using var subscriber = await MqttRawClient.ConnectAsync(Port);
        await subscriber.SendAsync(Mqtt5Raw.Connect(NewId("alias0"), Mqtt5Raw.Props([0x22, 0, 0]))); // Topic Alias Maximum 0 [MQTT-3.1.2-26]
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(subscriber)).Reason);
        await subscriber.SendAsync(Mqtt5Raw.Subscribe(topic, 0x01, Mqtt5Raw.Props()));
        Assert.Equal(0x90, (await subscriber.ReadPacketAsync()).First);

        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("zero"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("one").WithAtLeastOnceQoS());
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("zero again"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("one again").WithAtLeastOnceQoS());

        var received = new List<string>();
        for (var i = 0; i < 4; i++)
        {
            var (first, body) = await subscriber.ReadPacketAsync();
            var publish = Mqtt5Raw.ReadPublish(first, body);
            Assert.Equal(topic, publish.Topic);
            Assert.DoesNotContain(publish.Properties, p => p.Id == 0x23); // [MQTT-3.1.2-27]
            received.Add(publish.Payload);
            if (publish.PacketId != 0)
            {
                await subscriber.SendAsync([0x40, 0x02, (byte)(publish.PacketId >> 8), (byte)publish.PacketId]);
            }
        }

        Assert.Equal(new[] { "one", "one again", "zero", "zero again" }, received.Order());
    }
}

public sealed class Mqtt5TopicAliasTests_Courier(CourierMqttFixture broker) : Mqtt5TopicAliasTests<CourierMqttFixture>(broker)
{
    protected override bool SendsDisconnectOnErrors => true;

    protected override byte AliasZeroReason => 0x94;
}

public sealed class Mqtt5TopicAliasTests_Mosquitto(MosquittoFixture broker) : Mqtt5TopicAliasTests<MosquittoFixture>(broker)
{
    protected override bool SendsDisconnectOnErrors => false;

    protected override byte AliasZeroReason => 0x81;
}
