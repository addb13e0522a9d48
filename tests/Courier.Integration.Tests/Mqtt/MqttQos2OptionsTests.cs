using System.Text;
using Courier.Integration.Tests.Infrastructure;
using MQTTnet;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>Courier with <c>mqtt { reject_qos2_publish: true, downgrade_qos2_subscribe: true }</c>.</summary>
public sealed class CourierQos2OptionsFixture : IAsyncLifetime
{
    private MqttBrokerProcess? _broker;

    public MqttBrokerProcess Broker => _broker ?? throw new InvalidOperationException("the broker has not started");

    public async Task InitializeAsync() => _broker = await MqttBrokerProcess.StartAsync(
        MqttBrokerKind.Courier, mqttBlockExtra: "reject_qos2_publish: true\ndowngrade_qos2_subscribe: true");

    public async Task DisposeAsync()
    {
        if (_broker is not null)
        {
            await _broker.DisposeAsync();
        }
    }
}

/// <summary>
/// nats-server 2.10's <c>mqtt.reject_qos2_publish</c> and <c>mqtt.downgrade_qos2_subscribe</c> (issue 39).
/// Courier only: nats-server 2.9.10 (the one here) refuses both keys as unknown, and mosquitto has no such
/// options. A QoS 2 PUBLISH closes the client (MQTT 5.0: DISCONNECT 0x9B after a CONNACK that said Maximum
/// QoS 1), a QoS 2 will is refused at CONNECT, a QoS 2 subscription is granted QoS 1.
/// </summary>
public sealed class MqttQos2OptionsTests(CourierQos2OptionsFixture fixture) : IClassFixture<CourierQos2OptionsFixture>
{
    private int Port => fixture.Broker.MqttPort;

    private static string NewId(string role) => role + "-" + Guid.NewGuid().ToString("N")[..16];

    private static string NewTopic() => Subjects.NewPrefix().Replace('.', '/');

    [Fact]
    public async Task A_qos2_publish_closes_a_3_1_1_client_and_a_qos1_publish_does_not()
    {
        var topic = NewTopic();
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(MqttRawClient.Connect(NewId("q2")));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
        await raw.SendAsync(MqttRawClient.Publish(topic, "one", qos: 1, packetId: 1));
        Assert.Equal(new byte[] { 0x40, 0x02, 0x00, 0x01 }, await raw.ReadAsync(4));

        await raw.SendAsync(MqttRawClient.Publish(topic, "two", qos: 2, packetId: 2));

        Assert.Empty(await raw.ReadUntilClosedAsync()); // no PUBREC: closed
        for (var i = 0; i < 100 && !fixture.Broker.Diagnostics().Contains("QoS=2 is disabled for PUBLISH messages", StringComparison.Ordinal); i++)
        {
            await Task.Delay(100); // the log line is written as the connection closes
        }

        Assert.Contains("QoS=2 is disabled for PUBLISH messages", fixture.Broker.Diagnostics(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_v5_client_is_told_maximum_qos_1_and_its_qos2_publish_gets_disconnect_0x9b()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("q2v5")));
        var (reason, properties) = await Mqtt5Raw.ReadConnAckAsync(raw);
        Assert.Equal(0, reason);
        Assert.Equal(new byte[] { 1 }, properties[0x24]); // Maximum QoS 1 [MQTT-3.2.2-9]

        await raw.SendAsync(Mqtt5Raw.Packet(0x34, Mqtt5Raw.Str(NewTopic()), [0x00, 0x01], Mqtt5Raw.Props(), Encoding.UTF8.GetBytes("x")));

        await Mqtt5Raw.AssertClosedWithReasonAsync(raw, 0x9B, sendsDisconnect: true); // [MQTT-3.2.2-11]
    }

    [Fact]
    public async Task A_qos2_will_is_refused_at_connect_with_0x10_in_3_1_1_and_0x9b_in_5_0()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        var id = Encoding.UTF8.GetBytes(NewId("will"));
        byte[] body =
        [
            0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 4,
            0x02 | 0x04 | 0x10, // clean session, will, will QoS 2
            0, 60,
            (byte)(id.Length >> 8), (byte)id.Length, .. id,
            .. Mqtt5Raw.Str("w/t"), .. Mqtt5Raw.Str("bye"),
        ];
        await raw.SendAsync([0x10, (byte)body.Length, .. body]);
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x10 }, await raw.ReadAsync(4)); // nats-server 2.10's code
        Assert.Empty(await raw.ReadUntilClosedAsync());

        using var client = new MqttClientFactory().CreateMqttClient();
        var options = new MqttClientOptionsBuilder()
            .WithTcpServer("127.0.0.1", Port)
            .WithProtocolVersion(MQTTnet.Formatter.MqttProtocolVersion.V500)
            .WithClientId(NewId("will5"))
            .WithWillTopic("w/t").WithWillPayload("bye").WithWillQualityOfServiceLevel(MqttQualityOfServiceLevel.ExactlyOnce)
            .WithTimeout(MqttTestClient.TestTimeout)
            .Build();
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        Assert.Equal(MqttClientConnectResultCode.QoSNotSupported, (await client.ConnectAsync(options, cts.Token)).ResultCode); // [MQTT-3.2.2-12]
    }

    [Fact]
    public async Task A_qos2_subscription_is_granted_qos1_and_gets_its_messages_at_qos1()
    {
        var topic = NewTopic();
        await using var subscriber = await MqttTestClient.ConnectAsync(Port, NewId("sub"));
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        var result = await subscriber.Client.SubscribeAsync(
            new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic(topic).WithQualityOfServiceLevel(MqttQualityOfServiceLevel.ExactlyOnce)).Build(),
            cts.Token);
        Assert.Equal(MqttClientSubscribeResultCode.GrantedQoS1, Assert.Single(result.Items).ResultCode);
        await using var publisher = await MqttTestClient.ConnectAsync(Port, NewId("pub"));

        await publisher.PublishAsync(topic, "at most once twice", MqttQualityOfServiceLevel.AtLeastOnce);

        Assert.Equal(new MqttReceived(topic, "at most once twice", 1, false), await subscriber.ReceiveAsync());
    }
}
