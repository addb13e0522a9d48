using System.Text;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using MQTTnet.Protocol;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// MQTT and NATS clients on one subject space (MQTTnet and NATS.Net), against Courier and
/// nats-server 2.9.10's MQTT: topic mapping both ways, nats-server's Nmqtt-Pub header, headers
/// left out towards MQTT.
/// </summary>
public abstract class MqttNatsBridgeTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected MqttNatsBridgeTests(TFixture broker) => _broker = broker;

    [Fact]
    public async Task An_mqtt_publish_reaches_a_nats_subscriber_on_the_mapped_subject_with_the_nmqtt_pub_header()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var nats = await NatsNetClient.ConnectAsync(_broker.NatsUrl!);
        await using var sub = await nats.SubscribeCoreAsync<string>($"{p}.>", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);
        await using var mqtt = await MqttTestClient.ConnectAsync(_broker.MqttPort, "m-" + Guid.NewGuid().ToString("N"));
        var topic = p.Replace('.', '/');

        await mqtt.PublishAsync($"{topic}/room1/temp", "21.5", MqttQualityOfServiceLevel.AtLeastOnce);
        await mqtt.PublishAsync($"{topic}//empty/level/", "e");

        var first = await sub.Msgs.ReadAsync(cts.Token);
        Assert.Equal($"{p}.room1.temp", first.Subject);
        Assert.Equal("21.5", first.Data);
        Assert.Equal("1", first.Headers?["Nmqtt-Pub"].ToString());
        var second = await sub.Msgs.ReadAsync(cts.Token);
        Assert.Equal($"{p}./.empty.level./", second.Subject);
        Assert.Equal("0", second.Headers?["Nmqtt-Pub"].ToString());
    }

    [Fact]
    public async Task A_nats_publish_reaches_an_mqtt_subscriber_on_the_mapped_topic_without_its_headers()
    {
        var p = Subjects.NewPrefix();
        var topic = p.Replace('.', '/');
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var mqtt = await MqttTestClient.ConnectAsync(_broker.MqttPort, "m-" + Guid.NewGuid().ToString("N"));
        await mqtt.SubscribeAsync($"{topic}/#", MqttQualityOfServiceLevel.AtLeastOnce);
        await using var nats = await NatsNetClient.ConnectAsync(_broker.NatsUrl!);

        await nats.PublishAsync($"{p}.orders.eu", "plain", cancellationToken: cts.Token);
        await nats.PublishAsync($"{p}.orders", "with header", headers: new NatsHeaders { ["X-Trace"] = "abc" }, cancellationToken: cts.Token);
        await nats.PublishAsync($"{p}./.lead", "slash", cancellationToken: cts.Token);

        // Messages from NATS arrive at QoS 0, as nats-server delivers them.
        Assert.Equal(new MqttReceived($"{topic}/orders/eu", "plain", 0, false), await mqtt.ReceiveAsync());
        Assert.Equal(new MqttReceived($"{topic}/orders", "with header", 0, false), await mqtt.ReceiveAsync());
        Assert.Equal(new MqttReceived($"{topic}//lead", "slash", 0, false), await mqtt.ReceiveAsync());
    }

    [Fact]
    public async Task A_nats_request_can_be_served_by_mqtt_and_nats_replies_reach_mqtt_subscribers()
    {
        var p = Subjects.NewPrefix();
        var topic = p.Replace('.', '/');
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var mqtt = await MqttTestClient.ConnectAsync(_broker.MqttPort, "m-" + Guid.NewGuid().ToString("N"));
        await mqtt.SubscribeAsync($"{topic}/in");
        await using var nats = await NatsNetClient.ConnectAsync(_broker.NatsUrl!);
        await using var replies = await nats.SubscribeCoreAsync<string>($"{p}.out", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);

        await nats.PublishAsync($"{p}.in", "ping", cancellationToken: cts.Token);
        var received = await mqtt.ReceiveAsync();
        await mqtt.PublishAsync($"{topic}/out", received.Payload + "-pong");

        var reply = await replies.Msgs.ReadAsync(cts.Token);
        Assert.Equal("ping-pong", reply.Data);
    }

    [Fact]
    public async Task An_mqtt_topic_with_a_dot_closes_the_publisher_and_reaches_no_one()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var nats = await NatsNetClient.ConnectAsync(_broker.NatsUrl!);
        await using var sub = await nats.SubscribeCoreAsync<string>($"{p}.>", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);

        await using var raw = await MqttRawClient.ConnectAsync(_broker.MqttPort);
        await raw.SendAsync(MqttRawClient.Connect("dot-" + Guid.NewGuid().ToString("N")));
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
        var topic = Encoding.UTF8.GetBytes(p.Replace('.', '/') + "/a.b");
        await raw.SendAsync([0x30, (byte)(2 + topic.Length + 1), 0, (byte)topic.Length, .. topic, (byte)'x']);

        Assert.Empty(await raw.ReadUntilClosedAsync());
        await nats.PublishAsync($"{p}.marker", "marker", cancellationToken: cts.Token);
        Assert.Equal($"{p}.marker", (await sub.Msgs.ReadAsync(cts.Token)).Subject);
    }

    [Fact]
    public async Task Mqtt_credentials_are_checked_and_a_bad_password_gets_connack_5()
    {
        await using var broker = await _broker.StartAnotherAsync(mqttBlockExtra: """
            authorization { username: "dev", password: "s3cret" }
            """);

        await using (var good = await MqttTestClient.ConnectAsync(broker.MqttPort, "good-" + Guid.NewGuid().ToString("N"), b => b.WithCredentials("dev", "s3cret")))
        {
            Assert.True(good.Client.IsConnected);
        }

        await using var raw = await MqttRawClient.ConnectAsync(broker.MqttPort);
        byte[] body = [0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 4, 0xC2, 0, 60, 0, 1, (byte)'c', 0, 3, (byte)'d', (byte)'e', (byte)'v', 0, 5, (byte)'w', (byte)'r', (byte)'o', (byte)'n', (byte)'g'];
        await raw.SendAsync([0x10, (byte)body.Length, .. body]);
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x05 }, await raw.ReadUntilClosedAsync());
    }

    [Fact]
    public async Task Server_users_and_their_permissions_apply_to_mqtt_clients_and_a_bad_password_gets_connack_5()
    {
        await using var broker = await _broker.StartAnotherAsync("""
            authorization { users = [ { user: "dev", password: "s3cret", permissions: { publish: "allowed.>", subscribe: ">" } } ] }
            """);

        await using (var good = await MqttTestClient.ConnectAsync(broker.MqttPort, "good-" + Guid.NewGuid().ToString("N"), b => b.WithCredentials("dev", "s3cret")))
        {
            // A denied publish reaches no one (and still gets its PUBACK, as nats-server).
            await good.SubscribeAsync("+/x");
            await good.PublishAsync("denied/x", "no", MqttQualityOfServiceLevel.AtLeastOnce);
            await good.PublishAsync("allowed/x", "yes", MqttQualityOfServiceLevel.AtLeastOnce);
            Assert.Equal(new MqttReceived("allowed/x", "yes", 0, false), await good.ReceiveAsync());
        }

        await using var raw = await MqttRawClient.ConnectAsync(broker.MqttPort);
        byte[] body = [0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 4, 0xC2, 0, 60, 0, 1, (byte)'c', 0, 3, (byte)'d', (byte)'e', (byte)'v', 0, 5, (byte)'w', (byte)'r', (byte)'o', (byte)'n', (byte)'g'];
        await raw.SendAsync([0x10, (byte)body.Length, .. body]);
        Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x05 }, await raw.ReadUntilClosedAsync());
    }

    [Fact]
    public async Task A_subscribe_to_a_denied_filter_gets_suback_0x80_for_that_filter_only_and_the_connection_stays()
    {
        await using var broker = await _broker.StartAnotherAsync("""
            authorization { users = [ { user: "dev", password: "s3cret", permissions: { publish: ">", subscribe: "open.>" } } ] }
            """);
        await using var client = await MqttTestClient.ConnectAsync(broker.MqttPort, "perm-" + Guid.NewGuid().ToString("N"), b => b.WithCredentials("dev", "s3cret"));
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);

        // QoS 0: nats-server 2.9.10 also refuses a QoS 1/2 filter unless the user may subscribe to
        // "$MQTT.sub.>", the deliver subject of the JetStream consumer it makes (Courier has none).

        var result = await client.Client.SubscribeAsync(
            new MQTTnet.MqttClientSubscribeOptionsBuilder()
                .WithTopicFilter(f => f.WithTopic("closed/x").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtMostOnce))
                .WithTopicFilter(f => f.WithTopic("open/x").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtMostOnce))
                .WithTopicFilter(f => f.WithTopic("open/#").WithQualityOfServiceLevel(MqttQualityOfServiceLevel.AtMostOnce))
                .Build(),
            cts.Token);

        // "open/#" also subscribes to "open", which "open.>" does not allow: refused as a whole.
        Assert.Equal(
            [MQTTnet.MqttClientSubscribeResultCode.UnspecifiedError, MQTTnet.MqttClientSubscribeResultCode.GrantedQoS0, MQTTnet.MqttClientSubscribeResultCode.UnspecifiedError],
            result.Items.Select(i => i.ResultCode).ToArray()); // 0x80 [MQTT-3.9.3]
        await client.PublishAsync("closed/x", "not for me", MqttQualityOfServiceLevel.AtLeastOnce);
        await client.PublishAsync("open/x", "for me", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal(new MqttReceived("open/x", "for me", 0, false), await client.ReceiveAsync());
    }

    [Fact]
    public async Task No_auth_user_admits_an_mqtt_client_without_credentials_as_that_user_with_its_permissions()
    {
        await using var broker = await _broker.StartAnotherAsync(
            """
            authorization { users = [ { user: "dev", password: "s3cret", permissions: { publish: "dev.>", subscribe: "dev.>" } } ] }
            """,
            mqttBlockExtra: "no_auth_user: dev");
        await using var client = await MqttTestClient.ConnectAsync(broker.MqttPort, "anon-" + Guid.NewGuid().ToString("N"));
        await client.SubscribeAsync("dev/+");

        await client.PublishAsync("other/x", "denied", MqttQualityOfServiceLevel.AtLeastOnce);
        await client.PublishAsync("dev/x", "allowed", MqttQualityOfServiceLevel.AtLeastOnce);

        Assert.Equal(new MqttReceived("dev/x", "allowed", 0, false), await client.ReceiveAsync());
        Assert.Empty(await client.DrainAsync(TimeSpan.FromMilliseconds(300)));
    }

    [Fact]
    public async Task A_config_reload_closes_mqtt_clients_no_longer_authorized_and_gives_the_others_their_new_permissions()
    {
        const string Before = """
            authorization { users = [
              { user: dev, password: s3cret, permissions: { publish: "open.>", subscribe: ">" } }
              { user: gone, password: g0ne }
            ] }
            """;
        const string After = """
            authorization { users = [
              { user: dev, password: s3cret, permissions: { publish: "other.>", subscribe: ">" } }
            ] }
            """;
        await using var broker = await _broker.StartAnotherAsync(Before);
        await using var dev = await MqttTestClient.ConnectAsync(broker.MqttPort, "dev-" + Guid.NewGuid().ToString("N"), b => b.WithCredentials("dev", "s3cret"));
        await using var gone = await MqttTestClient.ConnectAsync(broker.MqttPort, "gone-" + Guid.NewGuid().ToString("N"), b => b.WithCredentials("gone", "g0ne"));
        var id = Guid.NewGuid().ToString("N")[..12];
        await dev.SubscribeAsync($"+/{id}");
        await dev.PublishAsync($"open/{id}", "before", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal(new MqttReceived($"open/{id}", "before", 0, false), await dev.ReceiveAsync());

        var server = broker.Server!;
        await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), MqttBrokerProcess.NatsConfig(Path.Combine(broker.Directory, "js"), broker.MqttPort, After));
        await server.SignalAsync("HUP");
        for (var i = 0; i < 100 && (!server.Log.All().Contains("Reloaded server configuration", StringComparison.Ordinal) || gone.Client.IsConnected); i++)
        {
            await Task.Delay(100); // bounded: 10 s for the reload and the close it causes
        }

        Assert.Contains("Reloaded server configuration", server.Log.All(), StringComparison.Ordinal);
        Assert.False(gone.Client.IsConnected); // its user is gone
        await dev.PublishAsync($"open/{id}", "no longer allowed", MqttQualityOfServiceLevel.AtLeastOnce);
        await dev.PublishAsync($"other/{id}", "allowed now", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal(new MqttReceived($"other/{id}", "allowed now", 0, false), await dev.ReceiveAsync());
    }

    [Fact]
    public async Task Mqtt_without_jetstream_refuses_to_start_with_nats_servers_words()
    {
        var kind = _broker.Kind == MqttBrokerKind.Courier ? ServerKind.Courier : ServerKind.NatsServer;
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => ServerProcess.StartAsync(kind, $$"""
            server_name: no_js
            mqtt { host: 127.0.0.1, port: {{LoopbackPorts.Next()}} }
            """));
        Assert.Contains("mqtt requires JetStream to be enabled if running in standalone mode", error.Message, StringComparison.Ordinal);
    }
}

public sealed class MqttNatsBridgeTests_Courier(CourierMqttFixture broker) : MqttNatsBridgeTests<CourierMqttFixture>(broker);

public sealed class MqttNatsBridgeTests_NatsServer(NatsServerMqttFixture broker) : MqttNatsBridgeTests<NatsServerMqttFixture>(broker);
