using Courier.Integration.Tests.Infrastructure;
using MQTTnet;
using MQTTnet.Packets;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// MQTT 5.0 beside 3.1.1 on one listener (issue 39), the same client script against Courier and
/// mosquitto 2.0: CONNACK, publish/subscribe with properties, reason codes, subscription options,
/// session expiry, the will on DISCONNECT 0x04, and the server's refusals (DISCONNECT with a reason
/// code, CONNACK 0x8C for enhanced authentication).
/// </summary>
public abstract class Mqtt5BehaviourTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected Mqtt5BehaviourTests(TFixture broker) => _broker = broker;

    private int Port => _broker.MqttPort;

    private static string NewTopic() => Subjects.NewPrefix().Replace('.', '/');

    private static string NewId(string role) => role + "-" + Guid.NewGuid().ToString("N");

    [Fact]
    public async Task A_v5_client_with_an_empty_client_id_is_accepted_and_told_its_assigned_identifier()
    {
        await using var client = await Mqtt5TestClient.ConnectAsync(Port, "");
        var result = client.ConnectResult;
        Assert.Equal(MqttClientConnectResultCode.Success, result.ResultCode);
        Assert.False(string.IsNullOrEmpty(result.AssignedClientIdentifier));
        Assert.True(result.RetainAvailable);
        Assert.False(result.IsSessionPresent);
    }

    [Fact]
    public async Task V5_publish_and_subscribe_at_qos_0_and_1_carry_user_properties_and_the_other_publish_properties()
    {
        var topic = NewTopic();
        await using var subscriber = await Mqtt5TestClient.ConnectAsync(Port, NewId("sub"));
        Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS1, await subscriber.SubscribeAsync(f => f.WithTopic($"{topic}/#").WithAtLeastOnceQoS()));
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));

        var acked = await publisher.PublishAsync(m => m.WithTopic($"{topic}/a").WithPayload("one").WithAtLeastOnceQoS()
            .WithUser("trace", "t-1").WithUser("trace", "t-2").WithUser("region", "eu")
            .WithContentType("text/plain").WithResponseTopic($"{topic}/replies").WithCorrelationData([0, 1, 255])
            .WithPayloadFormatIndicator(MqttPayloadFormatIndicator.CharacterData));
        Assert.Equal(MqttClientPublishReasonCode.Success, acked.ReasonCode);
        await publisher.PublishAsync(m => m.WithTopic($"{topic}/b").WithPayload("two").WithUser("k", "v"));

        var first = await subscriber.ReceiveAsync();
        Assert.Equal($"{topic}/a", first.Topic);
        Assert.Equal("one", first.ConvertPayloadToString());
        Assert.Equal(MqttQualityOfServiceLevel.AtLeastOnce, first.QualityOfServiceLevel);
        Assert.Equal([("trace", "t-1"), ("trace", "t-2"), ("region", "eu")], first.UserProperties.Select(p => (p.Name, p.ReadValueAsString())));
        Assert.Equal("text/plain", first.ContentType);
        Assert.Equal($"{topic}/replies", first.ResponseTopic);
        Assert.Equal(new byte[] { 0, 1, 255 }, first.CorrelationData);
        Assert.Equal(MqttPayloadFormatIndicator.CharacterData, first.PayloadFormatIndicator);

        var second = await subscriber.ReceiveAsync();
        Assert.Equal("two", second.ConvertPayloadToString());
        Assert.Equal(MqttQualityOfServiceLevel.AtMostOnce, second.QualityOfServiceLevel);
        Assert.Equal([("k", "v")], second.UserProperties.Select(p => (p.Name, p.ReadValueAsString())));
    }

    [Fact]
    public async Task V5_and_3_1_1_clients_exchange_messages_both_ways()
    {
        var topic = NewTopic();
        await using var v5 = await Mqtt5TestClient.ConnectAsync(Port, NewId("v5"));
        await v5.SubscribeAsync(f => f.WithTopic($"{topic}/to5").WithAtLeastOnceQoS());
        await using var v311 = await MqttTestClient.ConnectAsync(Port, NewId("v311"));
        await v311.SubscribeAsync($"{topic}/to311", MqttQualityOfServiceLevel.AtLeastOnce);

        await v311.PublishAsync($"{topic}/to5", "from 3.1.1", MqttQualityOfServiceLevel.AtLeastOnce);
        var got = await v5.ReceiveAsync();
        Assert.Equal("from 3.1.1", got.ConvertPayloadToString());
        Assert.Equal(MqttQualityOfServiceLevel.AtLeastOnce, got.QualityOfServiceLevel);
        Assert.Empty(got.UserProperties ?? []);

        var acked = await v5.PublishAsync(m => m.WithTopic($"{topic}/to311").WithPayload("from 5").WithAtLeastOnceQoS().WithUser("k", "v"));
        Assert.Equal(MqttClientPublishReasonCode.Success, acked.ReasonCode);
        Assert.Equal(new MqttReceived($"{topic}/to311", "from 5", 1, false), await v311.ReceiveAsync());
    }

    [Fact]
    public async Task Suback_and_unsuback_carry_v5_reason_codes()
    {
        var topic = NewTopic();
        await using var client = await Mqtt5TestClient.ConnectAsync(Port, NewId("codes"));
        Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS0, await client.SubscribeAsync(f => f.WithTopic($"{topic}/zero").WithAtMostOnceQoS()));
        Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS1, await client.SubscribeAsync(f => f.WithTopic($"{topic}/+/one").WithAtLeastOnceQoS()));

        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        var result = await client.Client.UnsubscribeAsync(
            new MqttClientUnsubscribeOptionsBuilder().WithTopicFilter($"{topic}/zero").WithTopicFilter($"{topic}/never").Build(), cts.Token);
        Assert.Equal(
            [MqttClientUnsubscribeResultCode.Success, MqttClientUnsubscribeResultCode.NoSubscriptionExisted],
            result.Items.Select(i => i.ResultCode));
    }

    [Fact]
    public async Task A_no_local_subscription_does_not_get_its_own_publishes_but_gets_others()
    {
        var topic = NewTopic();
        await using var client = await Mqtt5TestClient.ConnectAsync(Port, NewId("nolocal"));
        await client.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS().WithNoLocal(true));
        await using var other = await Mqtt5TestClient.ConnectAsync(Port, NewId("other"));

        await client.PublishAsync(m => m.WithTopic(topic).WithPayload("mine").WithAtLeastOnceQoS());
        await other.PublishAsync(m => m.WithTopic(topic).WithPayload("theirs").WithAtLeastOnceQoS());

        Assert.Equal("theirs", (await client.ReceiveAsync()).ConvertPayloadToString());
        Assert.Empty(await client.DrainAsync(TimeSpan.FromMilliseconds(300)));
    }

    [Fact]
    public async Task A_no_local_subscription_of_a_kept_session_does_not_get_its_own_qos_1_publishes()
    {
        var topic = NewTopic();
        var id = NewId("nolocal-q1");
        await using var client = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        await client.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS().WithNoLocal(true));
        await using var other = await Mqtt5TestClient.ConnectAsync(Port, NewId("other"));

        await client.PublishAsync(m => m.WithTopic(topic).WithPayload("mine").WithAtLeastOnceQoS());
        await other.PublishAsync(m => m.WithTopic(topic).WithPayload("theirs").WithAtLeastOnceQoS());

        Assert.Equal("theirs", (await client.ReceiveAsync()).ConvertPayloadToString());
        Assert.Empty(await client.DrainAsync(TimeSpan.FromMilliseconds(300)));
        await client.DisposeAsync();
        await using var clean = await Mqtt5TestClient.ConnectAsync(Port, id); // a clean start lets the kept session go
    }

    [Fact]
    public async Task Retain_as_published_applies_to_the_qos_1_messages_of_a_kept_session()
    {
        var topic = NewTopic();
        var id = NewId("rap-kept");
        await using var client = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        await client.SubscribeAsync(f => f.WithTopic($"{topic}/rap").WithAtLeastOnceQoS().WithRetainAsPublished(true));
        await client.SubscribeAsync(f => f.WithTopic($"{topic}/plain").WithAtLeastOnceQoS());
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));

        await publisher.PublishAsync(m => m.WithTopic($"{topic}/rap").WithPayload("rap").WithAtLeastOnceQoS().WithRetainFlag());
        await publisher.PublishAsync(m => m.WithTopic($"{topic}/plain").WithPayload("plain").WithAtLeastOnceQoS().WithRetainFlag());
        var received = new[] { await client.ReceiveAsync(), await client.ReceiveAsync() };
        Assert.True(Assert.Single(received, m => m.ConvertPayloadToString() == "rap").Retain); // [MQTT-3.3.1-12]
        Assert.False(Assert.Single(received, m => m.ConvertPayloadToString() == "plain").Retain); // [MQTT-3.3.1-13]

        await publisher.PublishAsync(m => m.WithTopic($"{topic}/rap").WithPayload("").WithAtLeastOnceQoS().WithRetainFlag()); // clean up
        await publisher.PublishAsync(m => m.WithTopic($"{topic}/plain").WithPayload("").WithAtLeastOnceQoS().WithRetainFlag());
        await client.DisposeAsync();
        await using var clean = await Mqtt5TestClient.ConnectAsync(Port, id); // a clean start lets the kept session go
    }

    [Fact]
    public async Task A_kept_sessions_restored_subscription_keeps_its_no_local_option()
    {
        var topic = NewTopic();
        var id = NewId("nolocal-kept");
        var first = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        await first.SubscribeAsync(f => f.WithTopic(topic).WithAtMostOnceQoS().WithNoLocal(true));
        await first.DisposeAsync();

        await using var back = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        Assert.True(back.ConnectResult.IsSessionPresent);
        await using var other = await Mqtt5TestClient.ConnectAsync(Port, NewId("other"));
        await back.PublishAsync(m => m.WithTopic(topic).WithPayload("mine"));
        await other.PublishAsync(m => m.WithTopic(topic).WithPayload("theirs"));

        Assert.Equal("theirs", (await back.ReceiveAsync()).ConvertPayloadToString());
        Assert.Empty(await back.DrainAsync(TimeSpan.FromMilliseconds(300)));
        await back.DisposeAsync();
        await using var clean = await Mqtt5TestClient.ConnectAsync(Port, id); // a clean start lets the kept session go
    }

    [Fact]
    public async Task Retain_handling_and_retain_as_published_decide_the_retained_message_and_the_retain_flag()
    {
        var topic = NewTopic();
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("kept").WithAtLeastOnceQoS().WithRetainFlag());

        await using var never = await Mqtt5TestClient.ConnectAsync(Port, NewId("rh2"));
        await never.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS()
            .WithRetainHandling(MqttRetainHandling.DoNotSendOnSubscribe).WithRetainAsPublished(true));
        await using var always = await Mqtt5TestClient.ConnectAsync(Port, NewId("rh0"));
        await always.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS());
        var retained = await always.ReceiveAsync();
        Assert.Equal("kept", retained.ConvertPayloadToString());
        Assert.True(retained.Retain);

        // Live: Retain As Published keeps the flag; without it the flag is cleared. [MQTT-3.3.1-12], [MQTT-3.3.1-13]
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("live").WithAtLeastOnceQoS().WithRetainFlag());
        var asPublished = await never.ReceiveAsync();
        Assert.Equal("live", asPublished.ConvertPayloadToString());
        Assert.True(asPublished.Retain);
        var cleared = await always.ReceiveAsync();
        Assert.Equal("live", cleared.ConvertPayloadToString());
        Assert.False(cleared.Retain);
        Assert.Empty(await never.DrainAsync(TimeSpan.FromMilliseconds(300)));

        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("").WithAtLeastOnceQoS().WithRetainFlag()); // clean up
    }

    [Fact]
    public async Task A_session_with_an_expiry_interval_keeps_its_subscription_and_messages_and_one_without_does_not()
    {
        var topic = NewTopic();
        var id = NewId("kept");
        var client = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        await client.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS());
        await client.DisposeAsync();

        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("while away").WithAtLeastOnceQoS());

        await using var back = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        Assert.True(back.ConnectResult.IsSessionPresent);
        Assert.Equal("while away", (await back.ReceiveAsync()).ConvertPayloadToString());

        var gone = NewId("gone");
        var brief = await Mqtt5TestClient.ConnectAsync(Port, gone, b => b.WithCleanStart(false));
        await brief.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS());
        await brief.DisposeAsync();
        await using var again = await Mqtt5TestClient.ConnectAsync(Port, gone, b => b.WithCleanStart(false));
        Assert.False(again.ConnectResult.IsSessionPresent); // expiry 0: the session ended at disconnect [MQTT-3.1.2-23]
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("after").WithAtLeastOnceQoS());
        Assert.Empty(await again.DrainAsync(TimeSpan.FromMilliseconds(300)));

        // Let the kept session go (a clean start discards it).
        await using var clean = await Mqtt5TestClient.ConnectAsync(Port, id);
    }

    [Fact]
    public async Task A_message_that_expires_while_its_kept_session_is_away_is_not_delivered_and_one_that_does_not_arrives_with_the_time_it_has_left()
    {
        var topic = NewTopic();
        var id = NewId("expiry");
        var away = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        await away.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS());
        await away.DisposeAsync();

        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("short-lived").WithAtLeastOnceQoS().WithMessageExpiryInterval(1));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("long-lived").WithAtLeastOnceQoS().WithMessageExpiryInterval(100)
            .WithUser("kept", "yes").WithContentType("text/plain"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("no expiry").WithAtLeastOnceQoS());
        await Task.Delay(TimeSpan.FromSeconds(2.5)); // past the first one's second

        await using var back = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        Assert.True(back.ConnectResult.IsSessionPresent);
        var received = new[] { await back.ReceiveAsync(), await back.ReceiveAsync() };
        Assert.Empty(await back.DrainAsync(TimeSpan.FromMilliseconds(500))); // the expired one never comes [MQTT-3.3.2-5]

        var longLived = Assert.Single(received, m => m.ConvertPayloadToString() == "long-lived");
        Assert.InRange(longLived.MessageExpiryInterval, 1u, 98u); // received value minus the 2.5 s it waited [MQTT-3.3.2-6]
        Assert.Equal([("kept", "yes")], longLived.UserProperties.Select(p => (p.Name, p.ReadValueAsString()))); // a kept message keeps its properties
        Assert.Equal("text/plain", longLived.ContentType);
        var forever = Assert.Single(received, m => m.ConvertPayloadToString() == "no expiry");
        Assert.Equal(0u, forever.MessageExpiryInterval);
        await back.DisposeAsync();
        await using var clean = await Mqtt5TestClient.ConnectAsync(Port, id); // a clean start lets the kept session go
    }

    [Fact]
    public async Task A_retained_message_keeps_its_properties_and_is_not_sent_once_expired()
    {
        var topic = NewTopic();
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic($"{topic}/kept").WithPayload("kept").WithAtLeastOnceQoS().WithRetainFlag()
            .WithUser("unit", "C").WithContentType("text/plain").WithMessageExpiryInterval(100));
        await publisher.PublishAsync(m => m.WithTopic($"{topic}/gone").WithPayload("gone").WithAtLeastOnceQoS().WithRetainFlag()
            .WithMessageExpiryInterval(1));
        await Task.Delay(TimeSpan.FromSeconds(2.5));

        await using var subscriber = await Mqtt5TestClient.ConnectAsync(Port, NewId("sub"));
        await subscriber.SubscribeAsync(f => f.WithTopic($"{topic}/#").WithAtLeastOnceQoS());
        var kept = await subscriber.ReceiveAsync();
        Assert.Equal(($"{topic}/kept", "kept", true), (kept.Topic, kept.ConvertPayloadToString(), kept.Retain));
        Assert.Equal([("unit", "C")], kept.UserProperties.Select(p => (p.Name, p.ReadValueAsString())));
        Assert.Equal("text/plain", kept.ContentType);
        Assert.InRange(kept.MessageExpiryInterval, 1u, 98u); // what it has left [MQTT-3.3.2-6]
        Assert.Empty(await subscriber.DrainAsync(TimeSpan.FromMilliseconds(300))); // the expired one is not sent [MQTT-3.3.2-5]

        await publisher.PublishAsync(m => m.WithTopic($"{topic}/kept").WithPayload("").WithAtLeastOnceQoS().WithRetainFlag()); // clean up
    }

    [Fact]
    public async Task A_live_message_carries_its_message_expiry_interval()
    {
        var topic = NewTopic();
        await using var subscriber = await Mqtt5TestClient.ConnectAsync(Port, NewId("sub"));
        await subscriber.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS());
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("x").WithAtLeastOnceQoS().WithMessageExpiryInterval(60));
        Assert.InRange((await subscriber.ReceiveAsync()).MessageExpiryInterval, 59u, 60u);
    }

    [Fact]
    public async Task Clean_start_0_with_expiry_0_resumes_a_kept_session_which_then_ends_with_that_connection()
    {
        var topic = NewTopic();
        var id = NewId("resume");
        var first = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        await first.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS());
        await first.DisposeAsync();

        var resumed = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false));
        Assert.True(resumed.ConnectResult.IsSessionPresent); // [MQTT-3.2.2-2]
        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("to the resumed session").WithAtLeastOnceQoS());
        Assert.Equal("to the resumed session", (await resumed.ReceiveAsync()).ConvertPayloadToString());
        await resumed.DisposeAsync();

        await using var after = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
        Assert.False(after.ConnectResult.IsSessionPresent); // the interval 0 of the last connection ended it [MQTT-3.1.2-11]
        await after.DisposeAsync();
        await using var clean = await Mqtt5TestClient.ConnectAsync(Port, id); // a clean start lets the kept session go
    }

    [Fact]
    public async Task Disconnect_with_session_expiry_0_ends_a_kept_session()
    {
        // Raw, since MQTTnet leaves a Session Expiry Interval of 0 out of its DISCONNECT.
        var id = NewId("ending");
        byte[] kept = Mqtt5Raw.Props([0x11, 0, 0, 0x01, 0x2C]); // Session Expiry Interval 300 s
        await using (var raw = await MqttRawClient.ConnectAsync(Port))
        {
            await raw.SendAsync(Mqtt5Raw.Connect(id, kept, cleanStart: false));
            Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
            await raw.SendAsync(Mqtt5Raw.Packet(0x82, [0, 1], Mqtt5Raw.Props(), Mqtt5Raw.Str(NewTopic()), [0x01]));
            Assert.Equal(0x90, (await raw.ReadPacketAsync()).First);
            await raw.SendAsync(Mqtt5Raw.Packet(0xE0, [0x00], Mqtt5Raw.Props([0x11, 0, 0, 0, 0])));
            Assert.Empty(await raw.ReadUntilClosedAsync());
        }

        await using var again = await MqttRawClient.ConnectAsync(Port);
        await again.SendAsync(Mqtt5Raw.Connect(id, kept, cleanStart: false));
        var (first, body) = await again.ReadPacketAsync();
        Assert.Equal(0x20, first);
        Assert.Equal(0, body[1]);
        Assert.Equal(0, body[0]); // session present 0 [MQTT-3.14.2-2]

        await again.SendAsync(Mqtt5Raw.Packet(0xE0, [0x00], Mqtt5Raw.Props([0x11, 0, 0, 0, 0])));
        await again.ReadUntilClosedAsync();
    }

    [Fact]
    public async Task Disconnect_with_reason_0x04_publishes_the_will_and_a_normal_disconnect_does_not()
    {
        var topic = NewTopic();
        await using var watcher = await Mqtt5TestClient.ConnectAsync(Port, NewId("watch"));
        await watcher.SubscribeAsync(f => f.WithTopic($"{topic}/#").WithAtLeastOnceQoS());

        var normal = await Mqtt5TestClient.ConnectAsync(Port, NewId("normal"), b => b.WithWillTopic($"{topic}/normal").WithWillPayload("no"));
        await normal.Client.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().WithReason(MqttClientDisconnectOptionsReason.NormalDisconnection).Build());
        var withWill = await Mqtt5TestClient.ConnectAsync(Port, NewId("will"), b => b
            .WithWillTopic($"{topic}/will").WithWillPayload("bye").WithWillQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce)
            .WithWillContentType("text/plain").WithWillUser("why", "test"));
        await withWill.Client.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().WithReason(MqttClientDisconnectOptionsReason.DisconnectWithWillMessage).Build());

        var will = await watcher.ReceiveAsync();
        Assert.Equal($"{topic}/will", will.Topic);
        Assert.Equal("bye", will.ConvertPayloadToString());
        Assert.Equal("text/plain", will.ContentType);
        Assert.Equal([("why", "test")], will.UserProperties.Select(p => (p.Name, p.ReadValueAsString())));
        Assert.Empty(await watcher.DrainAsync(TimeSpan.FromMilliseconds(300)));
        normal.Client.Dispose();
        withWill.Client.Dispose();
    }

    [Fact]
    public async Task A_topic_alias_beyond_the_servers_maximum_gets_disconnect_0x94_and_closes_only_that_client()
    {
        var topic = NewTopic();
        await using var healthy = await Mqtt5TestClient.ConnectAsync(Port, NewId("healthy"));
        await healthy.SubscribeAsync(f => f.WithTopic(topic));

        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("alias")));
        var (reason, properties) = await Mqtt5Raw.ReadConnAckAsync(raw);
        Assert.Equal(0, reason);
        var maximum = properties.TryGetValue(0x22, out var value) ? (value[0] << 8) | value[1] : 0; // absent: 0 [MQTT-3.2.2.3.8]
        var alias = (ushort)(maximum + 1);
        await raw.SendAsync(Mqtt5Raw.Publish(topic, "aliased", Mqtt5Raw.Props([0x23, (byte)(alias >> 8), (byte)alias])));
        Assert.Equal(0x94, await Mqtt5Raw.ReadDisconnectAsync(raw));
        await raw.ReadUntilClosedAsync();

        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("still here"));
        Assert.Equal("still here", (await healthy.ReceiveAsync()).ConvertPayloadToString());
    }

    /// <summary>
    /// Whether the server sends DISCONNECT with the reason code before closing on a malformed packet or
    /// protocol error. The spec lets it (mosquitto 2.0 just closes); Courier does, as issue 39 asks. [MQTT-4.13.1-1]
    /// </summary>
    protected abstract bool SendsDisconnectOnErrors { get; }

    // Closed by the server; what it sent before is nothing or DISCONNECT with `reason` (always the DISCONNECT where it sends one).
    private Task AssertClosedWithReasonAsync(MqttRawClient raw, byte reason) => Mqtt5Raw.AssertClosedWithReasonAsync(raw, reason, SendsDisconnectOnErrors);

    [Theory]
    [InlineData("a single-instance property twice", new byte[] { 0x01, 0x00, 0x01, 0x01 }, 0x82)]
    [InlineData("an unknown property id", new byte[] { 0x7F, 0x00 }, 0x81)]
    [InlineData("a property not valid in PUBLISH", new byte[] { 0x11, 0x00, 0x00, 0x00, 0x01 }, 0x81)]
    [InlineData("a property value running past the list", new byte[] { 0x03, 0x00, 0x09, 0x61 }, 0x81)]
    public async Task Malformed_publish_properties_close_only_that_client_after_a_disconnect_with_the_reason_code(string name, byte[] properties, byte expected)
    {
        _ = name;
        var topic = NewTopic();
        await using var healthy = await Mqtt5TestClient.ConnectAsync(Port, NewId("healthy"));
        await healthy.SubscribeAsync(f => f.WithTopic(topic));
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("bad")));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
        await raw.SendAsync(Mqtt5Raw.Publish(topic, "x", [.. Mqtt5Raw.Vbi(properties.Length), .. properties]));
        await AssertClosedWithReasonAsync(raw, expected);

        await using var publisher = await Mqtt5TestClient.ConnectAsync(Port, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("fine"));
        Assert.Equal("fine", (await healthy.ReceiveAsync()).ConvertPayloadToString());
    }

    [Fact]
    public async Task A_connect_with_an_authentication_method_the_server_lacks_gets_connack_0x8c()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("auth"), Mqtt5Raw.Props([0x15, .. Mqtt5Raw.Str("SCRAM-SHA-256")])));
        Assert.Equal(0x8C, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
        Assert.Empty(await raw.ReadUntilClosedAsync());
    }

    [Fact]
    public async Task An_auth_packet_after_a_connect_without_an_authentication_method_is_a_protocol_error()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("auth")));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);

        await raw.SendAsync(Mqtt5Raw.Packet(0xF0, [0x18], Mqtt5Raw.Props())); // AUTH, Continue Authentication

        await Mqtt5Raw.AssertClosedWithReasonAsync(raw, 0x82, SendsDisconnectOnErrors); // [MQTT-4.12.0-1]
    }

    [Fact]
    public async Task A_second_connect_gets_disconnect_0x82()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("twice")));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("twice")));
        await AssertClosedWithReasonAsync(raw, 0x82);
    }

    [Fact]
    public async Task A_client_whose_id_a_newer_connect_takes_gets_disconnect_0x8e()
    {
        var id = NewId("taken");
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(id));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
        await using var newer = await Mqtt5TestClient.ConnectAsync(Port, id);
        await AssertClosedWithReasonAsync(raw, 0x8E); // [MQTT-3.1.4-3]
        Assert.True(newer.Client.IsConnected);
    }

    [Fact]
    public async Task A_silent_client_past_one_and_a_half_keep_alives_gets_disconnect_0x8d()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("silent"), keepAlive: 1));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
        await AssertClosedWithReasonAsync(raw, 0x8D); // [MQTT-3.1.2-22]
    }

    [Fact]
    public async Task Mosquitto_clients_speak_v5_through_the_server_with_user_properties()
    {
        var topic = NewTopic();
        var subscriber = await MosquittoClients.SubscribeAsync(Port, topic, 1, qos: 1, extraArgs: ["-V", "mqttv5", "-F", "%p|%P"]);
        Assert.Equal(0, await MosquittoClients.PublishAsync(Port, topic, "hello", qos: 1, extraArgs: ["-V", "mqttv5", "-D", "publish", "user-property", "colour", "blue"]));
        var lines = await subscriber.MessagesAsync();
        Assert.Equal("hello|colour:blue", Assert.Single(lines));
    }
}

public sealed class Mqtt5BehaviourTests_Courier(CourierMqttFixture broker) : Mqtt5BehaviourTests<CourierMqttFixture>(broker)
{
    protected override bool SendsDisconnectOnErrors => true;
}

public sealed class Mqtt5BehaviourTests_Mosquitto(MosquittoFixture broker) : Mqtt5BehaviourTests<MosquittoFixture>(broker)
{
    protected override bool SendsDisconnectOnErrors => false;
}
