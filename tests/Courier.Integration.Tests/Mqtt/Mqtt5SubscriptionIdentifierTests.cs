using Courier.Integration.Tests.Infrastructure;
using MQTTnet;
using MQTTnet.Packets;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// MQTT 5.0 Subscription Identifiers (issue 39), the same script against Courier and mosquitto 2.0:
/// the server announces them, each message goes with the identifier of the subscription it came
/// through (retained messages at SUBSCRIBE too), overlapping subscriptions give every identifier
/// (in one copy or one per copy, as the spec allows), a SUBSCRIBE of the same filter replaces the
/// identifier, and identifier 0 is refused. [MQTT-3.3.4-3], [MQTT-3.3.4-4], [MQTT-3.3.4-5]
/// </summary>
public abstract class Mqtt5SubscriptionIdentifierTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected Mqtt5SubscriptionIdentifierTests(TFixture broker) => _broker = broker;

    /// <summary>Whether the server sends DISCONNECT before closing on these errors (Courier always does; the spec lets a server just close).</summary>
    protected abstract bool SendsDisconnectOnErrors { get; }

    /// <summary>
    /// The DISCONNECT reason for Subscription Identifier 0: a Protocol Error (0x82) as the spec says
    /// [MQTT-3.8.2.1.2]; mosquitto's property reader calls it malformed (0x81).
    /// </summary>
    protected abstract byte ZeroIdentifierReason { get; }

    private int Port => _broker.MqttPort;

    private static string NewTopic() => Subjects.NewPrefix().Replace('.', '/');

    private static string NewId(string role) => role + "-" + Guid.NewGuid().ToString("N");

    private static async Task SubscribeAsync(Mqtt5TestClient client, string filter, uint? identifier)
    {
        var options = new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic(filter).WithAtLeastOnceQoS());
        if (identifier is { } id)
        {
            options.WithSubscriptionIdentifier(id);
        }

        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        var result = await client.Client.SubscribeAsync(options.Build(), cts.Token);
        Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS1, Assert.Single(result.Items).ResultCode);
    }

    [Fact]
    public async Task Each_message_carries_the_identifier_of_the_subscription_it_came_through()
    {
        var topic = NewTopic();
        await using var subscriber = await Mqtt5TestClient.ConnectAsync(Port, NewId("sub"));
        Assert.True(subscriber.ConnectResult.SubscriptionIdentifiersAvailable);
        await SubscribeAsync(subscriber, $"{topic}/small", 7);
        await SubscribeAsync(subscriber, $"{topic}/large/#", 268_435_455); // the largest, a 4-byte variable byte integer
        await SubscribeAsync(subscriber, $"{topic}/none", null);
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));

        await publisher.PublishAsync(m => m.WithTopic($"{topic}/small").WithPayload("s").WithAtLeastOnceQoS().WithUser("k", "v"));
        var small = await subscriber.ReceiveAsync();
        Assert.Equal("s", small.ConvertPayloadToString());
        Assert.Equal([7u], small.SubscriptionIdentifiers);
        Assert.Equal([("k", "v")], small.UserProperties.Select(p => (p.Name, p.ReadValueAsString())));

        await publisher.PublishAsync(m => m.WithTopic($"{topic}/large/x").WithPayload("l"));
        var large = await subscriber.ReceiveAsync();
        Assert.Equal("l", large.ConvertPayloadToString());
        Assert.Equal([268_435_455u], large.SubscriptionIdentifiers);

        await publisher.PublishAsync(m => m.WithTopic($"{topic}/none").WithPayload("n").WithAtLeastOnceQoS());
        var none = await subscriber.ReceiveAsync();
        Assert.Equal("n", none.ConvertPayloadToString());
        Assert.Empty(none.SubscriptionIdentifiers ?? []);
    }

    [Fact]
    public async Task Overlapping_subscriptions_give_every_matching_identifier()
    {
        var topic = NewTopic();
        await using var subscriber = await Mqtt5TestClient.ConnectAsync(Port, NewId("sub"));
        await SubscribeAsync(subscriber, $"{topic}/+", 1);
        await SubscribeAsync(subscriber, $"{topic}/#", 2);
        await SubscribeAsync(subscriber, $"{topic}/other", 3);
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));

        await publisher.PublishAsync(m => m.WithTopic($"{topic}/x").WithPayload("both").WithAtLeastOnceQoS());
        var copies = new List<MqttApplicationMessage> { await subscriber.ReceiveAsync() };
        copies.AddRange(await subscriber.DrainAsync(TimeSpan.FromMilliseconds(300)));

        // One copy with both identifiers [MQTT-3.3.4-4], or a copy per subscription with its own [MQTT-3.3.4-5].
        Assert.All(copies, c => Assert.Equal("both", c.ConvertPayloadToString()));
        var ids = copies.Select(c => string.Join(",", (c.SubscriptionIdentifiers ?? []).Order())).Order().ToArray();
        Assert.True(ids.SequenceEqual(["1,2"]) || ids.SequenceEqual(["1", "2"]), $"identifiers per copy: {string.Join(" | ", ids)}");
    }

    [Fact]
    public async Task A_subscribe_of_the_same_filter_replaces_its_identifier()
    {
        var topic = NewTopic();
        await using var subscriber = await Mqtt5TestClient.ConnectAsync(Port, NewId("sub"));
        await SubscribeAsync(subscriber, topic, 11);
        await SubscribeAsync(subscriber, topic, 12); // [MQTT-3.8.4-3]
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));

        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("x").WithAtLeastOnceQoS());
        Assert.Equal([12u], (await subscriber.ReceiveAsync()).SubscriptionIdentifiers);
        Assert.Empty(await subscriber.DrainAsync(TimeSpan.FromMilliseconds(300)));

        await SubscribeAsync(subscriber, topic, null); // a SUBSCRIBE without one leaves the subscription without one
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("y").WithAtLeastOnceQoS());
        Assert.Empty((await subscriber.ReceiveAsync()).SubscriptionIdentifiers ?? []);
    }

    [Fact]
    public async Task Retained_messages_sent_at_subscribe_carry_the_identifier()
    {
        var topic = NewTopic();
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic($"{topic}/q1").WithPayload("kept 1").WithAtLeastOnceQoS().WithRetainFlag());
        await publisher.PublishAsync(m => m.WithTopic($"{topic}/q0").WithPayload("kept 0").WithRetainFlag());

        await using var subscriber = await Mqtt5TestClient.ConnectAsync(Port, NewId("sub"));
        await SubscribeAsync(subscriber, $"{topic}/#", 42);
        var retained = new[] { await subscriber.ReceiveAsync(), await subscriber.ReceiveAsync() };
        Assert.Equal(["kept 0", "kept 1"], retained.Select(m => m.ConvertPayloadToString()).Order());
        Assert.All(retained, m => Assert.True(m.Retain));
        Assert.All(retained, m => Assert.Equal([42u], m.SubscriptionIdentifiers));

        await publisher.PublishAsync(m => m.WithTopic($"{topic}/q1").WithPayload("").WithAtLeastOnceQoS().WithRetainFlag()); // clean up
        await publisher.PublishAsync(m => m.WithTopic($"{topic}/q0").WithPayload("").WithAtLeastOnceQoS().WithRetainFlag());
    }

    [Fact]
    public async Task A_kept_session_keeps_its_identifiers_for_stored_messages_and_restored_subscriptions()
    {
        var topic = NewTopic();
        var id = NewId("kept");
        var away = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        await SubscribeAsync(away, topic, 5);
        await away.DisposeAsync();

        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("while away").WithAtLeastOnceQoS());

        await using var back = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        Assert.True(back.ConnectResult.IsSessionPresent);
        var stored = await back.ReceiveAsync();
        Assert.Equal("while away", stored.ConvertPayloadToString());
        Assert.Equal([5u], stored.SubscriptionIdentifiers); // kept with the message

        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("live 1").WithAtLeastOnceQoS());
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("live 0"));
        var live = new[] { await back.ReceiveAsync(), await back.ReceiveAsync() };
        Assert.Equal(["live 0", "live 1"], live.Select(m => m.ConvertPayloadToString()).Order());
        Assert.All(live, m => Assert.Equal([5u], m.SubscriptionIdentifiers)); // the restored subscription has it
        await back.DisposeAsync();
        await using var clean = await Mqtt5TestClient.ConnectAsync(Port, id); // a clean start lets the kept session go
    }

    [Fact]
    public async Task Subscription_identifier_0_gets_a_disconnect()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("zero")));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
        await raw.SendAsync(Mqtt5Raw.Subscribe(NewTopic(), 0x01, Mqtt5Raw.Props([0x0B, 0x00]))); // [MQTT-3.8.2.1.2]
        await Mqtt5Raw.AssertClosedWithReasonAsync(raw, ZeroIdentifierReason, SendsDisconnectOnErrors);
    }
}

public sealed class Mqtt5SubscriptionIdentifierTests_Courier(CourierMqttFixture broker) : Mqtt5SubscriptionIdentifierTests<CourierMqttFixture>(broker)
{
    protected override bool SendsDisconnectOnErrors => true;

    protected override byte ZeroIdentifierReason => 0x82;
}

public sealed class Mqtt5SubscriptionIdentifierTests_Mosquitto(MosquittoFixture broker) : Mqtt5SubscriptionIdentifierTests<MosquittoFixture>(broker)
{
    protected override bool SendsDisconnectOnErrors => false;

    protected override byte ZeroIdentifierReason => 0x81;
}
