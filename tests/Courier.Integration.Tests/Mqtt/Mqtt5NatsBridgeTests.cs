using Courier.Integration.Tests.Infrastructure;
using MQTTnet;
using MQTTnet.Packets;
using MQTTnet.Protocol;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// MQTT 5.0 clients and NATS.Client.Core on one subject space, Courier only (mosquitto has no NATS
/// side, nats-server no MQTT 5.0): each user property is a NATS header and each NATS header a user
/// property; the other publish properties travel as Mqtt-* headers. Also the refusals that need
/// Courier's limits (DISCONNECT 0x95) or its header rules (PUBACK 0x83), and what mosquitto 2.0.11 does not
/// do as the spec says (No Local on a shared subscription, a queued message's expiry).
/// </summary>
public sealed class Mqtt5NatsBridgeTests(CourierMqttFixture broker) : IClassFixture<CourierMqttFixture>
{
    private static string NewId(string role) => role + "-" + Guid.NewGuid().ToString("N");

    [Fact]
    public async Task User_properties_of_a_v5_publish_arrive_as_nats_headers_beside_nmqtt_pub()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var nats = await NatsNetClient.ConnectAsync(broker.NatsUrl!);
        await using var sub = await nats.SubscribeCoreAsync<string>($"{p}.>", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);
        await using var mqtt = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, NewId("v5"));

        var acked = await mqtt.PublishAsync(m => m.WithTopic($"{p.Replace('.', '/')}/orders/eu").WithPayload("order").WithAtLeastOnceQoS()
            .WithUser("Trace-Id", "abc").WithUser("Tag", "a").WithUser("Tag", "b").WithContentType("application/json"));
        Assert.Equal(MqttClientPublishReasonCode.Success, acked.ReasonCode);

        var message = await sub.Msgs.ReadAsync(cts.Token);
        Assert.Equal($"{p}.orders.eu", message.Subject);
        Assert.Equal("order", message.Data);
        var headers = message.Headers!;
        Assert.Equal("1", headers["Nmqtt-Pub"].ToString());
        Assert.Equal("abc", headers["Trace-Id"].ToString());
        Assert.Equal("a|b", string.Join("|", headers["Tag"].ToArray()));
        Assert.Equal("application/json", headers["Mqtt-Content-Type"].ToString());
    }

    [Fact]
    public async Task Nats_headers_arrive_at_a_v5_subscriber_as_user_properties_and_mqtt_headers_as_their_properties()
    {
        var p = Subjects.NewPrefix();
        var topic = p.Replace('.', '/');
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var mqtt = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, NewId("v5"));
        await mqtt.SubscribeAsync(f => f.WithTopic($"{topic}/#").WithAtLeastOnceQoS());
        await using var v311 = await MqttTestClient.ConnectAsync(broker.MqttPort, NewId("v311"));
        await v311.SubscribeAsync($"{topic}/#", MqttQualityOfServiceLevel.AtLeastOnce);
        await using var nats = await NatsNetClient.ConnectAsync(broker.NatsUrl!);

        var headers = new NatsHeaders { ["X-Trace"] = "t-9", ["Mqtt-Content-Type"] = "text/csv", ["Mqtt-Response-Topic"] = $"{topic}/reply" };
        await nats.PublishAsync($"{p}.reports", "a,b", headers: headers, cancellationToken: cts.Token);

        var received = await mqtt.ReceiveAsync();
        Assert.Equal($"{topic}/reports", received.Topic);
        Assert.Equal("a,b", received.ConvertPayloadToString());
        Assert.Equal([("X-Trace", "t-9")], received.UserProperties.Select(u => (u.Name, u.ReadValueAsString())));
        Assert.Equal("text/csv", received.ContentType);
        Assert.Equal($"{topic}/reply", received.ResponseTopic);

        // A 3.1.1 subscriber gets the same message without headers.
        Assert.Equal(new MqttReceived($"{topic}/reports", "a,b", 0, false), await v311.ReceiveAsync());
    }

    [Fact]
    public async Task A_nats_publish_without_headers_reaches_a_v5_subscriber_and_the_publisher_carries_on()
    {
        // HeaderSize is -1 for a PUB without headers; slicing with it killed the publisher's read pump.
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var mqtt = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, NewId("v5"));
        await mqtt.SubscribeAsync(f => f.WithTopic($"{p.Replace('.', '/')}/plain"));
        await using var nats = await NatsNetClient.ConnectAsync(broker.NatsUrl!);

        await nats.PublishAsync($"{p}.plain", "no headers", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);
        await nats.PublishAsync($"{p}.plain", "again", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);

        var first = await mqtt.ReceiveAsync();
        Assert.Equal("no headers", first.ConvertPayloadToString());
        Assert.Empty(first.UserProperties ?? []);
        Assert.Equal("again", (await mqtt.ReceiveAsync()).ConvertPayloadToString());
    }

    [Fact]
    public async Task A_v5_request_with_a_response_topic_is_answered_by_a_nats_service_through_its_reply_subject()
    {
        var p = Subjects.NewPrefix();
        var topic = p.Replace('.', '/');
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var nats = await NatsNetClient.ConnectAsync(broker.NatsUrl!);
        await using var service = await nats.SubscribeCoreAsync<string>($"{p}.svc.time", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);
        var served = Task.Run(
            async () =>
            {
                // An ordinary NATS service: it answers the reply subject, echoing the correlation header.
                var request = await service.Msgs.ReadAsync(cts.Token);
                var echo = new NatsHeaders { ["Mqtt-Correlation-Data"] = request.Headers!["Mqtt-Correlation-Data"] };
                await request.ReplyAsync($"answer to {request.Data}", headers: echo, cancellationToken: cts.Token);
                return request;
            },
            cts.Token);

        await using var requester = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, NewId("requester"));
        await requester.SubscribeAsync(f => f.WithTopic($"{topic}/replies/me").WithAtLeastOnceQoS());
        await requester.PublishAsync(m => m.WithTopic($"{topic}/svc/time").WithPayload("what time").WithAtLeastOnceQoS()
            .WithResponseTopic($"{topic}/replies/me").WithCorrelationData([7, 0, 255]).WithContentType("text/plain"));

        var seen = await served;
        Assert.Equal($"{p}.replies.me", seen.ReplyTo); // the Response Topic as the reply subject
        Assert.Equal($"{topic}/replies/me", seen.Headers!["Mqtt-Response-Topic"].ToString());
        Assert.Equal("text/plain", seen.Headers["Mqtt-Content-Type"].ToString());
        var response = await requester.ReceiveAsync();
        Assert.Equal(($"{topic}/replies/me", "answer to what time"), (response.Topic, response.ConvertPayloadToString()));
        Assert.Equal(new byte[] { 7, 0, 255 }, response.CorrelationData);
    }

    [Fact]
    public async Task A_nats_request_is_answered_by_a_v5_responder_through_the_response_topic_it_is_given()
    {
        var p = Subjects.NewPrefix();
        var topic = p.Replace('.', '/');
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var responder = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, NewId("responder"));
        await responder.SubscribeAsync(f => f.WithTopic($"{topic}/svc/+").WithAtLeastOnceQoS());
        var answered = Task.Run(
            async () =>
            {
                var request = await responder.ReceiveAsync();
                await responder.PublishAsync(m => m.WithTopic(request.ResponseTopic).WithPayload($"pong to {request.ConvertPayloadToString()}"));
                return request;
            },
            cts.Token);

        await using var nats = await NatsNetClient.ConnectAsync(broker.NatsUrl!);
        var reply = await nats.RequestAsync<string, string>($"{p}.svc.ping", "ping", cancellationToken: cts.Token);

        Assert.Equal("pong to ping", reply.Data);
        var request = await answered;
        Assert.StartsWith("_INBOX/", request.ResponseTopic); // the NATS reply subject as a topic
        Assert.Empty(request.UserProperties ?? []);

        // A v5 subscriber of a message with both (an MQTT 5.0 request) gets the one Response Topic it was published with.
        await using var watcher = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, NewId("watcher"));
        await watcher.SubscribeAsync(f => f.WithTopic($"{topic}/watched"));
        await using var requester = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, NewId("requester"));
        await requester.PublishAsync(m => m.WithTopic($"{topic}/watched").WithPayload("q").WithResponseTopic($"{topic}/back"));
        Assert.Equal($"{topic}/back", (await watcher.ReceiveAsync()).ResponseTopic);
    }

    [Fact]
    public async Task A_user_property_that_cannot_be_a_nats_header_is_refused_with_puback_0x83_and_not_routed()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var nats = await NatsNetClient.ConnectAsync(broker.NatsUrl!);
        await using var sub = await nats.SubscribeCoreAsync<string>($"{p}.>", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);
        await using var mqtt = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, NewId("v5"));

        var refused = await mqtt.PublishAsync(m => m.WithTopic($"{p.Replace('.', '/')}/x").WithPayload("bad").WithAtLeastOnceQoS().WithUser("has space", "v"));
        Assert.Equal(MqttClientPublishReasonCode.ImplementationSpecificError, refused.ReasonCode);
        var accepted = await mqtt.PublishAsync(m => m.WithTopic($"{p.Replace('.', '/')}/x").WithPayload("good").WithAtLeastOnceQoS());
        Assert.Equal(MqttClientPublishReasonCode.Success, accepted.ReasonCode);
        Assert.Equal("good", (await sub.Msgs.ReadAsync(cts.Token)).Data);
    }

    [Fact]
    public async Task A_packet_over_the_servers_maximum_packet_size_gets_disconnect_0x95_from_its_fixed_header()
    {
        await using var raw = await MqttRawClient.ConnectAsync(broker.MqttPort);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("big")));
        var (reason, properties) = await Mqtt5Raw.ReadConnAckAsync(raw);
        Assert.Equal(0, reason);
        var maximum = System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(properties[0x27]);
        Assert.Equal(new byte[] { 0, 10 }, properties[0x22]); // Topic Alias Maximum 10, as mosquitto
        Assert.Equal(new byte[] { 1 }, properties[0x29]); // Subscription Identifiers Available 1
        Assert.Equal(new byte[] { 1 }, properties[0x2A]); // Shared Subscriptions Available 1

        await raw.SendAsync([0x30, .. Mqtt5Raw.Vbi((int)maximum + 1)]); // only the fixed header
        Assert.Equal(0x95, await Mqtt5Raw.ReadDisconnectAsync(raw));
        await raw.ReadUntilClosedAsync();
    }

    [Fact]
    public async Task A_topic_nats_subjects_cannot_carry_gets_disconnect_0x90_as_its_will_topic_connack_0x90()
    {
        await using var raw = await MqttRawClient.ConnectAsync(broker.MqttPort);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("space")));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
        await raw.SendAsync(Mqtt5Raw.Publish("has space/x", "x", Mqtt5Raw.Props()));
        Assert.Equal(0x90, await Mqtt5Raw.ReadDisconnectAsync(raw));

        // CONNECT with the will flag (0x06: clean start, will at QoS 0), empty will properties, will topic "a.b".
        await using var will = await MqttRawClient.ConnectAsync(broker.MqttPort);
        await will.SendAsync(Mqtt5Raw.Packet(0x10, Mqtt5Raw.Str("MQTT"), [5, 0x06, 0, 60], Mqtt5Raw.Props(), Mqtt5Raw.Str(NewId("will")), Mqtt5Raw.Props(), Mqtt5Raw.Str("a.b"), Mqtt5Raw.Str("m")));
        Assert.Equal(0x90, (await Mqtt5Raw.ReadConnAckAsync(will)).Reason);
    }

    [Fact]
    public async Task A_shared_subscription_is_the_nats_queue_group_of_its_name_shared_with_nats_queue_subscribers()
    {
        var p = Subjects.NewPrefix();
        var group = "g" + Guid.NewGuid().ToString("N")[..8];
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var nats = await NatsNetClient.ConnectAsync(broker.NatsUrl!);
        await using var queue = await nats.SubscribeCoreAsync<string>($"{p}.x", queueGroup: group, cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);
        await using var mqtt = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, NewId("member"));
        Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS0, await mqtt.SubscribeAsync(f => f.WithTopic($"$share/{group}/{p.Replace('.', '/')}/x")));

        var sent = Enumerable.Range(0, 40).Select(i => $"m{i}").ToList();
        foreach (var payload in sent)
        {
            await nats.PublishAsync($"{p}.x", payload, cancellationToken: cts.Token);
        }

        await nats.PingAsync(cts.Token);
        var toMqtt = (await mqtt.DrainAsync(TimeSpan.FromMilliseconds(500))).Select(m => m.ConvertPayloadToString()).ToList();
        var toNats = new List<string>();
        while (queue.Msgs.TryRead(out var message))
        {
            toNats.Add(message.Data!);
        }

        Assert.Equal(sent.Order(), toMqtt.Concat(toNats).Order()); // one member of the one group each time
        Assert.NotEmpty(toMqtt);
        Assert.NotEmpty(toNats);
    }

    [Theory]
    [InlineData("$share//x")] // empty share name [MQTT-4.8.2-1]
    [InlineData("$share/g+/x")] // wildcard in the share name
    [InlineData("$share/g")] // no filter [MQTT-4.8.2-2]
    [InlineData("$share/g/")]
    [InlineData("$share/a b/x")] // not a NATS queue group name
    public async Task A_malformed_shared_subscription_gets_suback_0x8f(string filter)
    {
        await using var client = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, NewId("shared"));
        Assert.Equal(MqttClientSubscribeResultCode.TopicFilterInvalid, await client.SubscribeAsync(f => f.WithTopic(filter)));
        Assert.True(client.Client.IsConnected);
    }

    [Fact]
    public async Task No_local_on_a_shared_subscription_gets_disconnect_0x82()
    {
        // A Protocol Error [MQTT-3.8.3-4]; mosquitto 2.0.11 grants it, so Courier only.
        await using var raw = await MqttRawClient.ConnectAsync(broker.MqttPort);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("nolocal")));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);
        await raw.SendAsync(Mqtt5Raw.Subscribe($"$share/g/{Subjects.NewPrefix().Replace('.', '/')}", 0x05, Mqtt5Raw.Props())); // QoS 1, No Local
        await Mqtt5Raw.AssertClosedWithReasonAsync(raw, 0x82, sendsDisconnect: true);
    }

    [Fact]
    public async Task A_message_that_expires_while_it_waits_for_the_clients_receive_maximum_is_not_delivered()
    {
        // Courier only: mosquitto 2.0.11 drops the expired message but then sends nothing more to the client.
        var topic = Subjects.NewPrefix().Replace('.', '/');
        await using var subscriber = await MqttRawClient.ConnectAsync(broker.MqttPort);
        await subscriber.SendAsync(Mqtt5Raw.Connect(NewId("slow"), Mqtt5Raw.Props([0x21, 0, 1]))); // Receive Maximum 1
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(subscriber)).Reason);
        await subscriber.SendAsync(Mqtt5Raw.Subscribe(topic, 0x01, Mqtt5Raw.Props()));
        Assert.Equal(0x90, (await subscriber.ReadPacketAsync()).First);

        await using var publisher = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, NewId("pub"));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("first").WithAtLeastOnceQoS());
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("short-lived").WithAtLeastOnceQoS().WithMessageExpiryInterval(1));
        await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("long-lived").WithAtLeastOnceQoS().WithMessageExpiryInterval(100));

        var (f1, b1) = await subscriber.ReadPacketAsync();
        var first = Mqtt5Raw.ReadPublish(f1, b1);
        Assert.Equal("first", first.Payload);
        await Task.Delay(TimeSpan.FromSeconds(2.5)); // the window stays full: the next ones wait, the first expires
        await subscriber.SendAsync([0x40, 0x02, (byte)(first.PacketId >> 8), (byte)first.PacketId]);

        var (f2, b2) = await subscriber.ReadPacketAsync();
        var next = Mqtt5Raw.ReadPublish(f2, b2);
        Assert.Equal("long-lived", next.Payload); // the expired one is never sent [MQTT-3.3.2-5]
        var interval = System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(Assert.Single(next.Properties, p => p.Id == 0x02).Value);
        Assert.InRange(interval, 1u, 98u); // what it has left after waiting [MQTT-3.3.2-6]
        await subscriber.SendAsync([0x40, 0x02, (byte)(next.PacketId >> 8), (byte)next.PacketId]);
    }
}
