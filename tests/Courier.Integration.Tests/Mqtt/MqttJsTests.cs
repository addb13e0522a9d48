using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// MQTT.js (npm <c>mqtt</c>, an unmodified client) against Courier and mosquitto: the scripts in
/// js/scripts/mqtt_*.mjs use QoS 2 and MQTT's own behaviour, so nats-server 2.9.10 (no QoS 2) is
/// not a reference for them; mqtt5_*.mjs speak MQTT 5.0 (protocolVersion 5), which nats-server lacks.
/// </summary>
public abstract class MqttJsTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected MqttJsTests(TFixture broker) => _broker = broker;

    [Theory]
    [InlineData("mqtt_pub_sub")]
    [InlineData("mqtt_retained")]
    [InlineData("mqtt_session")]
    [InlineData("mqtt_will")]
    [InlineData("mqtt5_properties")]
    public Task Mqtt_js_script_passes(string script) =>
        NodeScript.RunAsync(script, $"mqtt://127.0.0.1:{_broker.MqttPort}", _broker.Broker.Diagnostics);
}

public sealed class MqttJsTests_Courier(CourierMqttFixture broker) : MqttJsTests<CourierMqttFixture>(broker);

public sealed class MqttJsTests_Mosquitto(MosquittoFixture broker) : MqttJsTests<MosquittoFixture>(broker);
