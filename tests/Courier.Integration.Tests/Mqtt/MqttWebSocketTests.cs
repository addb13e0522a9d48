using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using MQTTnet;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// MQTT over WebSocket as nats-server 2.9.10 serves it: the <c>websocket { }</c> listener takes MQTT
/// clients on the <c>/mqtt</c> path (answering <c>Sec-WebSocket-Protocol: mqtt</c>), next to the
/// <c>mqtt { }</c> block that enables MQTT. MQTTnet's WebSocket transport, over ws and wss, and NATS
/// clients on the same subjects both ways. Run against Courier and nats-server.
/// </summary>
public abstract class MqttWebSocketTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private const string PlainWebSocket = "websocket { host: 127.0.0.1, port: -1, no_tls: true }";

    private readonly TFixture _broker;
    private readonly TlsCertificatesFixture _tls;

    protected MqttWebSocketTests(TFixture broker, TlsCertificatesFixture tls)
    {
        _broker = broker;
        _tls = tls;
    }

    private TestCertificates Certs => _tls.Certificates;

    [Fact]
    public async Task Connz_types_mqtt_clients_over_websocket_and_tcp_as_mqtt_with_their_client_id_and_nats_over_websocket_as_websocket()
    {
        await using var broker = await _broker.StartAnotherAsync(PlainWebSocket);
        var overWs = "ws-" + Guid.NewGuid().ToString("N");
        var overTcp = "tcp-" + Guid.NewGuid().ToString("N");
        await using var a = await MqttTestClient.ConnectAsync(OverWebSocket(broker), overWs);
        await using var b = await MqttTestClient.ConnectAsync(broker.MqttPort, overTcp);
        await using var nats = await RawWebSocket.ConnectAsync(broker.Server!);
        await nats.ExpectTextAsync("INFO ");
        await nats.SendAsync("CONNECT {\"verbose\":false}\r\nPING\r\n");
        await nats.ExpectTextAsync("PONG\r\n");
        using var monitor = new MonitorClient(broker.Server!);

        var connections = (await monitor.GetJsonAsync("/connz")).GetProperty("connections").EnumerateArray().ToList();

        string? TypeOf(string clientId) => connections.FirstOrDefault(c => c.TryGetProperty("mqtt_client", out var id) && id.GetString() == clientId) is { ValueKind: System.Text.Json.JsonValueKind.Object } c
            ? c.GetProperty("type").GetString()
            : null;
        Assert.Equal("mqtt", TypeOf(overWs));
        Assert.Equal("mqtt", TypeOf(overTcp));
        var natsOverWs = (await monitor.GetConnectionAsync(nats.LocalPort, "")).GetProperty("type").GetString();
        Assert.Equal("websocket", natsOverWs);
    }

    private static Action<MqttClientOptionsBuilder> OverWebSocket(MqttBrokerProcess broker) =>
        builder => builder.WithWebSocketServer(ws => ws.WithUri($"ws://127.0.0.1:{broker.Server!.WebSocketPort}/mqtt"));

    [Fact]
    public async Task Mqttnet_over_websocket_publishes_and_subscribes_at_qos_0_and_1()
    {
        await using var broker = await _broker.StartAnotherAsync(PlainWebSocket);
        var topic = Subjects.NewPrefix().Replace('.', '/') + "/ws";
        await using var subscriber = await MqttTestClient.ConnectAsync(OverWebSocket(broker), "sub-" + Guid.NewGuid().ToString("N"));
        await subscriber.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        await using var publisher = await MqttTestClient.ConnectAsync(OverWebSocket(broker), "pub-" + Guid.NewGuid().ToString("N"));

        await publisher.PublishAsync(topic, "over websocket", MqttQualityOfServiceLevel.AtLeastOnce);
        await publisher.PublishAsync(topic, new string('x', 70_000));

        // Both, in either order: MQTT orders messages per QoS only, and nats-server's QoS 1 path (through JetStream) is
        // overtaken by its QoS 0 one under load.
        MqttReceived[] received = [await subscriber.ReceiveAsync(), await subscriber.ReceiveAsync()];
        Assert.Contains(new MqttReceived(topic, "over websocket", 1, false), received);
        Assert.Contains(new MqttReceived(topic, new string('x', 70_000), 0, false), received);
    }

    [Fact]
    public async Task An_mqtt_over_websocket_publish_reaches_a_nats_subscriber_and_a_nats_publish_reaches_it()
    {
        await using var broker = await _broker.StartAnotherAsync(PlainWebSocket);
        var p = Subjects.NewPrefix();
        var topic = p.Replace('.', '/');
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var nats = await NatsNetClient.ConnectAsync(broker.NatsUrl!);
        await using var natsSub = await nats.SubscribeCoreAsync<string>($"{p}.from.mqtt", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);
        await using var mqtt = await MqttTestClient.ConnectAsync(OverWebSocket(broker), "m-" + Guid.NewGuid().ToString("N"));
        await mqtt.SubscribeAsync($"{topic}/from/nats");

        await mqtt.PublishAsync($"{topic}/from/mqtt", "hello nats", MqttQualityOfServiceLevel.AtLeastOnce);
        var fromMqtt = await natsSub.Msgs.ReadAsync(cts.Token);
        Assert.Equal("hello nats", fromMqtt.Data);
        Assert.Equal("1", fromMqtt.Headers?["Nmqtt-Pub"].ToString());

        await nats.PublishAsync($"{p}.from.nats", "hello mqtt", cancellationToken: cts.Token);
        Assert.Equal(new MqttReceived($"{topic}/from/nats", "hello mqtt", 0, false), await mqtt.ReceiveAsync());
    }

    [Fact]
    public async Task The_mqtt_path_is_answered_with_the_mqtt_subprotocol_and_the_root_path_still_serves_nats()
    {
        await using var broker = await _broker.StartAnotherAsync(PlainWebSocket);
        var server = broker.Server!;

        await using (var mqtt = await RawWebSocket.ConnectAsync(server, RawWebSocket.UpgradeRequest(server.WebSocketPort, "Sec-WebSocket-Protocol: mqtt\r\n", path: "/mqtt")))
        {
            Assert.Equal(101, mqtt.Status);
            Assert.Contains("Sec-Websocket-Protocol: mqtt", mqtt.ResponseHead, StringComparison.OrdinalIgnoreCase);

            // An MQTT CONNECT in a binary frame gets its CONNACK (0x20) in one, and no NATS INFO comes first.
            await mqtt.SendRawAsync(RawWebSocket.Frame(ServerFrame.Binary, MqttRawClient.Connect("raw-" + Guid.NewGuid().ToString("N"))));
            var connack = await mqtt.ReadDataFrameAsync();
            Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, connack.Payload);
        }

        await using var nats = await RawWebSocket.ConnectAsync(server);
        Assert.Equal(101, nats.Status);
        Assert.DoesNotContain("Sec-Websocket-Protocol", nats.ResponseHead, StringComparison.OrdinalIgnoreCase);
        await nats.ExpectTextAsync("INFO ");
    }

    [Fact]
    public async Task Mqttnet_over_wss_publishes_and_subscribes()
    {
        var wss = $$"""
            websocket {
              host: 127.0.0.1
              port: -1
              {{_tls.TlsBlock()}}
            }
            """;
        await using var broker = await _broker.StartAnotherAsync(wss);
        Action<MqttClientOptionsBuilder> overWss = builder => builder
            .WithWebSocketServer(ws => ws.WithUri($"wss://localhost:{broker.Server!.WebSocketPort}/mqtt"))
            .WithTlsOptions(tls => tls.UseTls().WithTargetHost("localhost").WithCertificateValidationHandler(args => _tls.TrustsServer(args.Certificate, args.SslPolicyErrors)));
        var topic = Subjects.NewPrefix().Replace('.', '/') + "/wss";
        await using var subscriber = await MqttTestClient.ConnectAsync(overWss, "sub-" + Guid.NewGuid().ToString("N"));
        await subscriber.SubscribeAsync(topic);
        await using var publisher = await MqttTestClient.ConnectAsync(overWss, "pub-" + Guid.NewGuid().ToString("N"));

        await publisher.PublishAsync(topic, "over wss", MqttQualityOfServiceLevel.AtLeastOnce);

        Assert.Equal(new MqttReceived(topic, "over wss", 0, false), await subscriber.ReceiveAsync());
    }

}

[Trait("server", "nats-server")]
public sealed class MqttWebSocketTests_NatsServer(NatsServerMqttFixture broker, TlsCertificatesFixture tls)
    : MqttWebSocketTests<NatsServerMqttFixture>(broker, tls), IClassFixture<TlsCertificatesFixture>;

[Trait("server", "courier")]
public sealed class MqttWebSocketTests_Courier(CourierMqttFixture broker, TlsCertificatesFixture tls)
    : MqttWebSocketTests<CourierMqttFixture>(broker, tls), IClassFixture<TlsCertificatesFixture>;
