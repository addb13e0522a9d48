using System.Text;
using Courier.Integration.Tests.Infrastructure;
using MQTTnet;
using MQTTnet.Packets;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// Durability across <c>kill -9</c>: the server is killed by its process id and started again on the
/// same store folder. Courier only: nats-server 2.9.10 writes its JetStream files without fsync
/// (sync every 2 minutes) and mosquitto runs here without persistence, so neither promises this (and
/// mosquitto 2.0's persistence file, written at autosave or shutdown, does not survive kill -9 either;
/// nats-server 2.9.10 has no MQTT 5.0 wills with a delay).
/// </summary>
public sealed class MqttDurabilityTests
{
    private static string Topic(string rest) => $"{Subjects.NewPrefix().Replace('.', '/')}/{rest}";

    [Fact]
    public async Task A_persistent_session_its_unacknowledged_message_and_retained_messages_survive_kill_9()
    {
        var topic = Topic("durable");
        var retainedTopic = Topic("retained");
        var clearedTopic = Topic("cleared");
        var id = "durable-" + Guid.NewGuid().ToString("N")[..12];
        var broker = await MqttBrokerProcess.StartAsync(MqttBrokerKind.Courier);
        try
        {
            await using (var raw = await MqttRawClient.ConnectAsync(broker.MqttPort))
            {
                await raw.SendAsync(MqttRawClient.Connect(id, clean: false));
                Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
                await raw.SubscribeAsync(topic, qos: 1);
                await using var publisher = await MqttTestClient.ConnectAsync(broker.MqttPort, "pub-" + Guid.NewGuid().ToString("N"));
                await publisher.PublishAsync(retainedTopic, "kept", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);
                await publisher.PublishAsync(clearedTopic, "set", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);
                await publisher.PublishAsync(clearedTopic, "", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);
                await publisher.PublishAsync(topic, "unacked", MqttQualityOfServiceLevel.AtLeastOnce);

                // Received (so journaled: a persistent session stores before it sends), never acknowledged.
                var (first, body) = await raw.ReadPacketAsync();
                Assert.Equal(0x32, first);
                Assert.EndsWith("unacked", Encoding.UTF8.GetString(body));
                await broker.KillAsync();
            }

            await using var restarted = await MqttBrokerProcess.RestartAsync(MqttBrokerKind.Courier, broker.Directory, broker.MqttPort);
            await using var again = await MqttRawClient.ConnectAsync(restarted.MqttPort);
            await again.SendAsync(MqttRawClient.Connect(id, clean: false));
            Assert.Equal(new byte[] { 0x20, 0x02, 0x01, 0x00 }, await again.ReadAsync(4)); // session present
            var (resent, resentBody) = await again.ReadPacketAsync();
            Assert.Equal(0x32, resent & 0xF7);
            Assert.EndsWith("unacked", Encoding.UTF8.GetString(resentBody));
            var packetId = resentBody[(2 + topic.Length)..(4 + topic.Length)];
            await again.SendAsync([0x40, 0x02, packetId[0], packetId[1]]);

            // The subscription came back with the session: a new publish reaches it without SUBSCRIBE.
            await using var publisher2 = await MqttTestClient.ConnectAsync(restarted.MqttPort, "pub-" + Guid.NewGuid().ToString("N"));
            await publisher2.PublishAsync(topic, "after restart", MqttQualityOfServiceLevel.AtLeastOnce);
            var (next, nextBody) = await again.ReadPacketAsync();
            Assert.Equal(0x32, next);
            Assert.EndsWith("after restart", Encoding.UTF8.GetString(nextBody));

            // The retained message survived; the cleared one stayed cleared.
            await using var subscriber = await MqttTestClient.ConnectAsync(restarted.MqttPort, "sub-" + Guid.NewGuid().ToString("N"));
            await subscriber.SubscribeAsync(retainedTopic, MqttQualityOfServiceLevel.AtLeastOnce);
            await subscriber.SubscribeAsync(clearedTopic, MqttQualityOfServiceLevel.AtLeastOnce);
            Assert.Equal(new MqttReceived(retainedTopic, "kept", 1, true), await subscriber.ReceiveAsync());
            Assert.Empty(await subscriber.DrainAsync(TimeSpan.FromMilliseconds(300)));
        }
        finally
        {
            await broker.KillAsync();
            await broker.DisposeAsync();
        }
    }

    [Fact]
    public async Task A_v5_kept_session_keeps_its_subscription_identifier_and_its_messages_properties_across_kill_9()
    {
        var topic = Topic("v5durable");
        var id = "v5durable-" + Guid.NewGuid().ToString("N")[..12];
        var broker = await MqttBrokerProcess.StartAsync(MqttBrokerKind.Courier);
        try
        {
            var away = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
            await away.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS());
            using (var cts = new CancellationTokenSource(MqttTestClient.TestTimeout))
            {
                // A second SUBSCRIBE of the filter, with an identifier: replaces the first. [MQTT-3.8.4-3]
                await away.Client.SubscribeAsync(
                    new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic(topic).WithAtLeastOnceQoS()).WithSubscriptionIdentifier(77).Build(), cts.Token);
            }

            await away.DisposeAsync();
            await using (var publisher = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, "pub-" + Guid.NewGuid().ToString("N")))
            {
                await publisher.PublishAsync(m => m.WithTopic(topic).WithPayload("kept").WithAtLeastOnceQoS()
                    .WithUser("origin", "before kill").WithMessageExpiryInterval(3600));
                await publisher.PublishAsync(m => m.WithTopic($"{topic}/retained").WithPayload("retained").WithAtLeastOnceQoS().WithRetainFlag()
                    .WithContentType("text/plain").WithMessageExpiryInterval(3600));
            }

            await broker.KillAsync(); // the PUBACK came after the session journaled it

            await using var restarted = await MqttBrokerProcess.RestartAsync(MqttBrokerKind.Courier, broker.Directory, broker.MqttPort);
            await using var back = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(300));
            Assert.True(back.ConnectResult.IsSessionPresent);
            var kept = await back.ReceiveAsync();
            Assert.Equal("kept", kept.ConvertPayloadToString());
            Assert.Equal([77u], kept.SubscriptionIdentifiers);
            Assert.Equal([("origin", "before kill")], kept.UserProperties.Select(p => (p.Name, p.ReadValueAsString())));
            Assert.InRange(kept.MessageExpiryInterval, 3000u, 3600u);

            await using var publisher2 = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, "pub-" + Guid.NewGuid().ToString("N"));
            await publisher2.PublishAsync(m => m.WithTopic(topic).WithPayload("after restart"));
            var live = await back.ReceiveAsync();
            Assert.Equal(("after restart", 77u), (live.ConvertPayloadToString(), Assert.Single(live.SubscriptionIdentifiers)));

            // A retained message kept its properties and expiry time too.
            await using var subscriber = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, "sub-" + Guid.NewGuid().ToString("N"));
            await subscriber.SubscribeAsync(f => f.WithTopic($"{topic}/retained").WithAtLeastOnceQoS());
            var retained = await subscriber.ReceiveAsync();
            Assert.Equal(("retained", "text/plain", true), (retained.ConvertPayloadToString(), retained.ContentType, retained.Retain));
            Assert.InRange(retained.MessageExpiryInterval, 3000u, 3600u);
        }
        finally
        {
            await broker.KillAsync();
            await broker.DisposeAsync();
        }
    }

    [Fact]
    public async Task Qos1_messages_acknowledged_for_an_offline_persistent_session_survive_kill_9_right_after_the_last_puback()
    {
        // A PUBACK means the server owns the message [MQTT-4.3.2]: the offline session's journal write comes first.
        const int Count = 2000; // enough that the capture path still has work when the last PUBACK goes
        var topic = Topic("owned");
        var id = "owned-" + Guid.NewGuid().ToString("N")[..12];
        // Every journal write fsynced: the session's write takes long enough that a PUBACK sent before it is seen.
        var broker = await MqttBrokerProcess.StartAsync(MqttBrokerKind.Courier, jetStreamBlockExtra: "sync_interval: always");
        try
        {
            await using (var raw = await MqttRawClient.ConnectAsync(broker.MqttPort))
            {
                await raw.SendAsync(MqttRawClient.Connect(id, clean: false));
                Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
                await raw.SubscribeAsync(topic, qos: 1);
                await raw.SendAsync([0xE0, 0x00]); // DISCONNECT: the session is offline from now on
                await raw.ReadUntilClosedAsync();
            }

            await using (var publisher = await MqttRawClient.ConnectAsync(broker.MqttPort))
            {
                await publisher.SendAsync(MqttRawClient.Connect("pub-" + Guid.NewGuid().ToString("N")));
                Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await publisher.ReadAsync(4));
                var burst = new List<byte>();
                for (var i = 1; i <= Count; i++)
                {
                    burst.AddRange(MqttRawClient.Publish(topic, $"m{i}", qos: 1, packetId: (ushort)i));
                }

                await publisher.SendAsync([.. burst]);
                for (var i = 1; i <= Count; i++)
                {
                    Assert.Equal(new byte[] { 0x40, 0x02, (byte)(i >> 8), (byte)i }, await publisher.ReadAsync(4)); // in order [MQTT-4.6.0-2]
                }

                await broker.KillAsync(); // at once: nothing after the last PUBACK
            }

            await using var restarted = await MqttBrokerProcess.RestartAsync(MqttBrokerKind.Courier, broker.Directory, broker.MqttPort);
            await using var again = await MqttRawClient.ConnectAsync(restarted.MqttPort);
            await again.SendAsync(MqttRawClient.Connect(id, clean: false));
            Assert.Equal(new byte[] { 0x20, 0x02, 0x01, 0x00 }, await again.ReadAsync(4));
            var received = new List<string>();
            for (var i = 1; i <= Count; i++)
            {
                var (first, body) = await again.ReadPacketAsync();
                Assert.Equal(0x32, first & 0xF7);
                received.Add(Encoding.UTF8.GetString(body[(4 + topic.Length)..]));
                await again.SendAsync([0x40, 0x02, body[2 + topic.Length], body[3 + topic.Length]]);
            }

            Assert.Equal(Enumerable.Range(1, Count).Select(i => $"m{i}"), received);
        }
        finally
        {
            await broker.KillAsync();
            await broker.DisposeAsync();
        }
    }

    [Fact]
    public async Task A_persistent_session_and_a_retained_message_of_an_account_survive_kill_9_in_that_account()
    {
        var topic = Topic("account");
        var id = "acc-durable-" + Guid.NewGuid().ToString("N")[..12];
        var broker = await MqttBrokerProcess.StartAsync(MqttBrokerKind.Courier, MqttAccountsFixture.Accounts);
        try
        {
            Action<MqttClientOptionsBuilder> asA = o => o.WithCredentials("a", "a");
            Action<MqttClientOptionsBuilder> asB = o => o.WithCredentials("b", "b");
            await using (var session = await MqttTestClient.ConnectAsync(broker.MqttPort, id, asA, cleanSession: false))
            {
                await session.SubscribeAsync($"{topic}/#", MqttQualityOfServiceLevel.AtLeastOnce);
            }

            await using (var publisher = await MqttTestClient.ConnectAsync(broker.MqttPort, "pub-" + Guid.NewGuid().ToString("N"), asA))
            {
                await publisher.PublishAsync($"{topic}/kept", "kept for A", MqttQualityOfServiceLevel.AtLeastOnce);
                await publisher.PublishAsync($"{topic}/retained", "retained in A", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);
            }

            await broker.KillAsync();
            await using var restarted = await MqttBrokerProcess.RestartAsync(MqttBrokerKind.Courier, broker.Directory, broker.MqttPort, MqttAccountsFixture.Accounts);

            // The session came back in A, with its subscription, the message it kept and the retained one after it.
            await using var again = await MqttTestClient.ConnectAsync(restarted.MqttPort, id, asA, cleanSession: false);
            Assert.True(again.SessionPresent);
            Assert.Equal(new MqttReceived($"{topic}/kept", "kept for A", 1, false), await again.ReceiveAsync());
            Assert.Equal(new MqttReceived($"{topic}/retained", "retained in A", 1, false), await again.ReceiveAsync());

            // B has neither the session nor the retained message: its first message is its own live one.
            await using var inB = await MqttTestClient.ConnectAsync(restarted.MqttPort, id, asB, cleanSession: false);
            Assert.False(inB.SessionPresent);
            await inB.SubscribeAsync($"{topic}/#", MqttQualityOfServiceLevel.AtLeastOnce);
            await inB.PublishAsync($"{topic}/live", "live in B", MqttQualityOfServiceLevel.AtLeastOnce);
            Assert.Equal(new MqttReceived($"{topic}/live", "live in B", 1, false), await inB.ReceiveAsync());
            await using var subscriberA = await MqttTestClient.ConnectAsync(restarted.MqttPort, "sub-" + Guid.NewGuid().ToString("N"), asA);
            await subscriberA.SubscribeAsync($"{topic}/retained", MqttQualityOfServiceLevel.AtLeastOnce);
            Assert.Equal(new MqttReceived($"{topic}/retained", "retained in A", 1, true), await subscriberA.ReceiveAsync());
        }
        finally
        {
            await broker.KillAsync();
            await broker.DisposeAsync();
        }
    }

    [Fact]
    public async Task A_session_expiry_interval_survives_kill_9_and_runs_again_from_the_restart()
    {
        var topic = Topic("expiring");
        var id = "expiring-" + Guid.NewGuid().ToString("N")[..12];
        var forever = "forever-" + Guid.NewGuid().ToString("N")[..12];
        var broker = await MqttBrokerProcess.StartAsync(MqttBrokerKind.Courier);
        try
        {
            var expiring = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(1));
            await expiring.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS());
            var kept = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, forever, b => b.WithCleanStart(false).WithSessionExpiryInterval(uint.MaxValue));
            await kept.SubscribeAsync(f => f.WithTopic(topic).WithAtLeastOnceQoS());
            await broker.KillAsync();
            expiring.Client.Dispose();
            kept.Client.Dispose();

            // One second after the restart the first session ends; the one that never expires is there.
            await using var restarted = await MqttBrokerProcess.RestartAsync(MqttBrokerKind.Courier, broker.Directory, broker.MqttPort);
            await Task.Delay(TimeSpan.FromSeconds(3));
            await using var back = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(60));
            Assert.False(back.ConnectResult.IsSessionPresent);
            await using var keptBack = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, forever, b => b.WithCleanStart(false).WithSessionExpiryInterval(uint.MaxValue));
            Assert.True(keptBack.ConnectResult.IsSessionPresent);
        }
        finally
        {
            await broker.KillAsync();
            await broker.DisposeAsync();
        }
    }

    // A will with a delay on a kept session, handed to the session by a DISCONNECT with reason 0x04.
    private static Action<MqttClientOptionsBuilder> KeptWithWill(uint sessionExpiry, string willTopic, uint willDelay) => b => b
        .WithCleanStart(false)
        .WithSessionExpiryInterval(sessionExpiry)
        .WithWillTopic(willTopic)
        .WithWillPayload("gone")
        .WithWillQualityOfServiceLevel(MqttQualityOfServiceLevel.AtLeastOnce)
        .WithWillDelayInterval(willDelay);

    private static MqttClientDisconnectOptions WithWill =>
        new MqttClientDisconnectOptionsBuilder().WithReason(MqttClientDisconnectOptionsReason.DisconnectWithWillMessage).Build();

    // The watcher is a kept session too, so a will published while it reconnects is kept for it.
    private static Action<MqttClientOptionsBuilder> Watcher => b => b.WithCleanStart(false).WithSessionExpiryInterval(uint.MaxValue);

    [Fact]
    public async Task A_will_waiting_for_its_delay_survives_kill_9_and_goes_out_once_when_the_delay_counted_from_the_disconnect_runs_out()
    {
        var willTopic = Topic("will");
        var watcherId = "watch-" + Guid.NewGuid().ToString("N")[..12];
        var broker = await MqttBrokerProcess.StartAsync(MqttBrokerKind.Courier);
        try
        {
            var watcher = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, watcherId, Watcher);
            await watcher.SubscribeAsync(f => f.WithTopic(willTopic).WithAtLeastOnceQoS());
            var client = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, "dies-" + Guid.NewGuid().ToString("N")[..12], KeptWithWill(3600, willTopic, willDelay: 8));
            await client.Client.DisconnectAsync(WithWill);
            var due = DateTimeOffset.UtcNow.AddSeconds(8);
            client.Client.Dispose();

            // The session journals the will as its connection ends; then the server dies with it pending.
            await Task.Delay(TimeSpan.FromSeconds(1));
            await broker.KillAsync();
            watcher.Client.Dispose();

            await using var restarted = await MqttBrokerProcess.RestartAsync(MqttBrokerKind.Courier, broker.Directory, broker.MqttPort);

            // A live subscriber too (clean session): it gets the will at the will's QoS, as from its client.
            await using var live = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, "live-" + Guid.NewGuid().ToString("N")[..12]);
            await live.SubscribeAsync(f => f.WithTopic(willTopic).WithAtLeastOnceQoS());
            Assert.True(DateTimeOffset.UtcNow < due, "the restart took longer than the will delay: the live subscriber came too late");
            await using var back = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, watcherId, Watcher);
            var will = await back.ReceiveAsync();
            var arrived = DateTimeOffset.UtcNow;
            Assert.Equal((willTopic, "gone"), (will.Topic, will.ConvertPayloadToString()));
            Assert.True(arrived >= due.AddMilliseconds(-500), $"the will came {(due - arrived).TotalSeconds:F1} s before its delay ran out"); // [MQTT-3.1.3-9]
            var liveWill = await live.ReceiveAsync();
            Assert.Equal((willTopic, "gone", MqttQualityOfServiceLevel.AtLeastOnce), (liveWill.Topic, liveWill.ConvertPayloadToString(), liveWill.QualityOfServiceLevel));
            Assert.Empty(await back.DrainAsync(TimeSpan.FromSeconds(1))); // once
            Assert.Empty(await live.DrainAsync(TimeSpan.Zero));
        }
        finally
        {
            await broker.KillAsync();
            await broker.DisposeAsync();
        }
    }

    [Fact]
    public async Task A_client_back_after_a_kill_9_before_its_will_delay_ran_out_sends_no_will()
    {
        var topic = Topic("returns");
        var watcherId = "watch-" + Guid.NewGuid().ToString("N")[..12];
        var id = "returns-" + Guid.NewGuid().ToString("N")[..12];
        var broker = await MqttBrokerProcess.StartAsync(MqttBrokerKind.Courier);
        try
        {
            var watcher = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, watcherId, Watcher);
            await watcher.SubscribeAsync(f => f.WithTopic($"{topic}/#").WithAtLeastOnceQoS());
            var client = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, id, KeptWithWill(3600, $"{topic}/will", willDelay: 8));
            await client.Client.DisconnectAsync(WithWill);
            var due = DateTimeOffset.UtcNow.AddSeconds(8);
            client.Client.Dispose();
            await Task.Delay(TimeSpan.FromSeconds(1));
            await broker.KillAsync();
            watcher.Client.Dispose();

            await using var restarted = await MqttBrokerProcess.RestartAsync(MqttBrokerKind.Courier, broker.Directory, broker.MqttPort);
            await using var returned = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(3600));
            Assert.True(DateTimeOffset.UtcNow < due, "the restart took longer than the will delay: the test proves nothing");
            Assert.True(returned.ConnectResult.IsSessionPresent);
            await using var back = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, watcherId, Watcher);

            // Past the due time (with a margin), a marker: it is the first thing the watcher gets. [MQTT-3.1.3-9]
            var wait = due - DateTimeOffset.UtcNow + TimeSpan.FromSeconds(2);
            await Task.Delay(wait > TimeSpan.Zero ? wait : TimeSpan.Zero);
            await returned.PublishAsync(m => m.WithTopic($"{topic}/marker").WithPayload("marker").WithAtLeastOnceQoS());
            Assert.Equal($"{topic}/marker", (await back.ReceiveAsync()).Topic);
            await returned.Client.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().WithSessionExpiryInterval(0).Build());
        }
        finally
        {
            await broker.KillAsync();
            await broker.DisposeAsync();
        }
    }

    [Fact]
    public async Task A_session_that_expires_after_a_kill_9_before_its_will_delay_publishes_its_retained_will_at_its_end()
    {
        var willTopic = Topic("ends");
        var watcherId = "watch-" + Guid.NewGuid().ToString("N")[..12];
        var id = "ends-" + Guid.NewGuid().ToString("N")[..12];
        var broker = await MqttBrokerProcess.StartAsync(MqttBrokerKind.Courier);
        try
        {
            var watcher = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, watcherId, Watcher);
            await watcher.SubscribeAsync(f => f.WithTopic(willTopic).WithAtLeastOnceQoS());
            var client = await Mqtt5TestClient.ConnectAsync(broker.MqttPort, id, b =>
            {
                KeptWithWill(3, willTopic, willDelay: 3600)(b);
                b.WithWillRetain(true);
            });
            await client.Client.DisconnectAsync(WithWill);
            client.Client.Dispose();
            await Task.Delay(TimeSpan.FromSeconds(1));
            await broker.KillAsync();
            watcher.Client.Dispose();

            // The session's expiry runs again from the restart (3 s); the will's hour never comes: the session's end sends it.
            await using var restarted = await MqttBrokerProcess.RestartAsync(MqttBrokerKind.Courier, broker.Directory, broker.MqttPort);
            await using var back = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, watcherId, Watcher);
            var will = await back.ReceiveAsync();
            Assert.Equal((willTopic, "gone"), (will.Topic, will.ConvertPayloadToString()));
            await using var returned = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, id, b => b.WithCleanStart(false).WithSessionExpiryInterval(60));
            Assert.False(returned.ConnectResult.IsSessionPresent); // [MQTT-3.2.2-3]: the session was gone

            // A retained will is the topic's retained message now. [MQTT-3.3.1-5]
            await using var late = await Mqtt5TestClient.ConnectAsync(restarted.MqttPort, "late-" + Guid.NewGuid().ToString("N")[..12]);
            await late.SubscribeAsync(f => f.WithTopic(willTopic).WithAtLeastOnceQoS());
            var retained = await late.ReceiveAsync();
            Assert.Equal((willTopic, "gone", true), (retained.Topic, retained.ConvertPayloadToString(), retained.Retain));
        }
        finally
        {
            await broker.KillAsync();
            await broker.DisposeAsync();
        }
    }
}
