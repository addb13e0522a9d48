using Courier.Integration.Tests.Infrastructure;
using MQTTnet;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// MQTT 5.0 Session Expiry Interval and Will Delay Interval (issue 39), with MQTTnet against Courier and
/// mosquitto 2.0: a kept session ends its interval after its connection, publishing a will still waiting
/// for its delay; a will with a delay goes after it while the session lives on; a client back before the
/// delay passed sends no will. Short intervals (1-2 s); waits end on what arrives, bounded by the test
/// timeout, except where an absence is shown (a marker published after the delay passed comes first).
/// </summary>
public abstract class Mqtt5SessionExpiryTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected Mqtt5SessionExpiryTests(TFixture broker) => _broker = broker;

    private int Port => _broker.MqttPort;

    private static string NewTopic() => Subjects.NewPrefix().Replace('.', '/');

    private static string NewId(string role) => role + "-" + Guid.NewGuid().ToString("N");

    private static MqttClientDisconnectOptions WithWill =>
        new MqttClientDisconnectOptionsBuilder().WithReason(MqttClientDisconnectOptionsReason.DisconnectWithWillMessage).Build();

    private static Action<MqttClientOptionsBuilder> Kept(uint sessionExpiry, string willTopic, uint willDelay) => b => b
        .WithCleanStart(false)
        .WithSessionExpiryInterval(sessionExpiry)
        .WithWillTopic(willTopic)
        .WithWillPayload("gone")
        .WithWillQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce)
        .WithWillDelayInterval(willDelay);

    [Fact]
    public async Task A_session_ends_its_expiry_interval_after_its_connection_and_publishes_the_will_still_waiting_for_its_delay()
    {
        var topic = NewTopic();
        var id = NewId("expires");
        await using var watcher = await Mqtt5TestClient.ConnectAsync(Port, NewId("watch"));
        await watcher.SubscribeAsync(f => f.WithTopic($"{topic}/will").WithAtLeastOnceQoS());
        var client = await Mqtt5TestClient.ConnectAsync(Port, id, Kept(sessionExpiry: 1, $"{topic}/will", willDelay: 3600));
        await client.SubscribeAsync(f => f.WithTopic($"{topic}/kept").WithAtLeastOnceQoS());

        await client.Client.DisconnectAsync(WithWill);
        client.Client.Dispose();

        // The will's delay is an hour: it comes because the session ended, a second after the connection.
        var will = await watcher.ReceiveAsync();
        Assert.Equal(($"{topic}/will", "gone"), (will.Topic, will.ConvertPayloadToString()));
        await using var back = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(60));
        Assert.False(back.ConnectResult.IsSessionPresent); // [MQTT-3.2.2-3]: the session was gone
    }

    [Fact]
    public async Task A_will_with_a_delay_is_published_after_it_and_the_session_lives_on()
    {
        var topic = NewTopic();
        var id = NewId("delayed");
        await using var watcher = await Mqtt5TestClient.ConnectAsync(Port, NewId("watch"));
        await watcher.SubscribeAsync(f => f.WithTopic($"{topic}/will").WithAtLeastOnceQoS());
        var client = await Mqtt5TestClient.ConnectAsync(Port, id, Kept(sessionExpiry: 3600, $"{topic}/will", willDelay: 1));
        await client.SubscribeAsync(f => f.WithTopic($"{topic}/kept").WithAtLeastOnceQoS());

        await client.Client.DisconnectAsync(WithWill);
        client.Client.Dispose();

        var will = await watcher.ReceiveAsync();
        Assert.Equal(($"{topic}/will", "gone"), (will.Topic, will.ConvertPayloadToString()));
        await using var back = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(3600));
        Assert.True(back.ConnectResult.IsSessionPresent);
        await back.Client.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().WithSessionExpiryInterval(0).Build()); // ends it
    }

    [Fact]
    public async Task A_client_back_before_its_will_delay_passed_sends_no_will()
    {
        var topic = NewTopic();
        var id = NewId("returns");
        await using var watcher = await Mqtt5TestClient.ConnectAsync(Port, NewId("watch"));
        await watcher.SubscribeAsync(f => f.WithTopic($"{topic}/#").WithAtLeastOnceQoS());
        var client = await Mqtt5TestClient.ConnectAsync(Port, id, Kept(sessionExpiry: 3600, $"{topic}/will", willDelay: 2));

        await client.Client.DisconnectAsync(WithWill);
        client.Client.Dispose();
        await using var back = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(3600));
        Assert.True(back.ConnectResult.IsSessionPresent);

        // Past the delay (with a margin), a marker: it is the first thing the watcher gets. [MQTT-3.1.3-9]
        await Task.Delay(TimeSpan.FromSeconds(3));
        await back.PublishAsync(m => m.WithTopic($"{topic}/marker").WithPayload("marker").WithAtLeastOnceQoS());
        Assert.Equal($"{topic}/marker", (await watcher.ReceiveAsync()).Topic);
        await back.Client.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().WithSessionExpiryInterval(0).Build());
    }

    [Fact]
    public async Task A_session_expiry_interval_set_at_disconnect_replaces_the_one_of_connect()
    {
        var topic = NewTopic();
        var id = NewId("shortened");
        await using var watcher = await Mqtt5TestClient.ConnectAsync(Port, NewId("watch"));
        await watcher.SubscribeAsync(f => f.WithTopic($"{topic}/will").WithAtLeastOnceQoS());
        var client = await Mqtt5TestClient.ConnectAsync(Port, id, Kept(sessionExpiry: 3600, $"{topic}/will", willDelay: 3600));

        // An hour at CONNECT, a second at DISCONNECT: the session ends a second later, and its will with it.
        await client.Client.DisconnectAsync(new MqttClientDisconnectOptionsBuilder()
            .WithReason(MqttClientDisconnectOptionsReason.DisconnectWithWillMessage).WithSessionExpiryInterval(1).Build());
        client.Client.Dispose();

        Assert.Equal($"{topic}/will", (await watcher.ReceiveAsync()).Topic);
        await using var back = await Mqtt5TestClient.ConnectAsync(Port, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(60));
        Assert.False(back.ConnectResult.IsSessionPresent);
    }
}

public sealed class Mqtt5SessionExpiryTests_Courier(CourierMqttFixture broker) : Mqtt5SessionExpiryTests<CourierMqttFixture>(broker);

public sealed class Mqtt5SessionExpiryTests_Mosquitto(MosquittoFixture broker) : Mqtt5SessionExpiryTests<MosquittoFixture>(broker);
