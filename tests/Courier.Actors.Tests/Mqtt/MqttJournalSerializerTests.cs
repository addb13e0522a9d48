using Akka.Actor;
using Akka.Serialization;
using Courier.Actors.Hosting;
using Courier.Actors.Mqtt;
using Xunit;

namespace Courier.Actors.Tests.Mqtt;

/// <summary>
/// What the MQTT gateway journals goes through its binary serializer (bound in reference.conf, never
/// Akka's JSON fallback) and comes back equal; a damaged record is refused, not half-read.
/// </summary>
public sealed class MqttJournalSerializerTests : IDisposable
{
    private readonly ActorSystem _system = ActorSystem.Create("mqtt-serializer", ActorSystemConfig.ReferenceConfig);

    [Fact]
    public void Every_mqtt_journal_type_is_bound_to_the_binary_serializer()
    {
        object[] all =
        [
            new MqttSessionEvent(MqttSessionEventKind.Created),
            new MqttSessionSnapshot(),
            new MqttSessionIndexEvent("c", added: true),
            new MqttSessionIndexSnapshot(),
            new MqttRetainedEvent("a.b", [(byte)'a'], [], 0),
            new MqttRetainedSnapshot(),
        ];

        Assert.All(all, o => Assert.IsType<MqttJournalSerializer>(_system.Serialization.FindSerializerFor(o)));
    }

    [Fact]
    public void A_session_event_with_every_field_round_trips()
    {
        var e = new MqttSessionEvent(MqttSessionEventKind.Acked);
        e.Subscriptions.Add(new MqttSessionSubscription("a/+/c", 2, 268_435_455));
        e.Subscriptions.Add(new MqttSessionSubscription("b", 1));
        e.Filters.Add("x/#");
        e.Messages.Add(new MqttStoredMessage(42, [(byte)'t', (byte)'/', (byte)'1'], [1, 2, 3], 1));
        e.Acked.Add(41);
        e.Released.Add(7);
        e.Completed.Add(8);
        e.InReceived.Add(9);
        e.InReleased.Add(65535);

        var back = (MqttSessionEvent)RoundTrip(e);

        Assert.Equal(MqttSessionEventKind.Acked, back.Kind);
        Assert.Equal(e.Subscriptions, back.Subscriptions);
        Assert.Equal(e.Filters, back.Filters);
        var message = Assert.Single(back.Messages);
        Assert.Equal((42L, "t/1", (byte)1), (message.Seq, System.Text.Encoding.ASCII.GetString(message.Topic), message.QoS));
        Assert.Equal(new byte[] { 1, 2, 3 }, message.Payload);
        Assert.Equal(e.Acked, back.Acked);
        Assert.Equal(e.Released, back.Released);
        Assert.Equal(e.Completed, back.Completed);
        Assert.Equal(e.InReceived, back.InReceived);
        Assert.Equal(e.InReleased, back.InReleased);
    }

    [Fact]
    public void A_will_waiting_for_its_delay_round_trips_in_an_event_and_a_snapshot_and_its_absence_too()
    {
        var will = new MqttJournaledWill("a.b"u8.ToArray(), "a/b"u8.ToArray(), [1, 2], 1, Retain: true, "Mqtt-Content-Type: text\r\n"u8.ToArray(), 1_700_000_000_456);
        var e = new MqttSessionEvent(MqttSessionEventKind.Will) { Will = will };
        var snapshot = new MqttSessionSnapshot { NextSeq = 3, Will = will };

        var back = ((MqttSessionEvent)RoundTrip(e)).Will!;
        var fromSnapshot = ((MqttSessionSnapshot)RoundTrip(snapshot)).Will!;

        foreach (var w in new[] { back, fromSnapshot })
        {
            Assert.Equal(will.Subject, w.Subject);
            Assert.Equal(will.Topic, w.Topic);
            Assert.Equal(will.Payload, w.Payload);
            Assert.Equal(will.HeaderLines, w.HeaderLines);
            Assert.Equal((will.QoS, will.Retain, will.DueAt), (w.QoS, w.Retain, w.DueAt));
        }

        Assert.Null(((MqttSessionEvent)RoundTrip(new MqttSessionEvent(MqttSessionEventKind.Will))).Will);
        Assert.Null(((MqttSessionSnapshot)RoundTrip(new MqttSessionSnapshot())).Will);
    }

    [Fact]
    public void A_stored_message_keeps_its_headers_expiry_time_and_subscription_identifier()
    {
        var e = new MqttSessionEvent(MqttSessionEventKind.Stored);
        var headers = System.Text.Encoding.ASCII.GetBytes("NATS/1.0\r\nNmqtt-Pub:1\r\nMqtt-Message-Expiry: 5\r\n\r\n");
        e.Messages.Add(new MqttStoredMessage(7, [(byte)'t'], [1], 1, headers, 1_700_000_000_123, 42, Retain: true));
        e.Messages.Add(new MqttStoredMessage(8, [(byte)'t'], [2], 2));

        var back = (MqttSessionEvent)RoundTrip(e);

        Assert.Equal(headers, back.Messages[0].Headers);
        Assert.Equal(1_700_000_000_123, back.Messages[0].ExpiresAt);
        Assert.Equal((42, true), (back.Messages[0].SubscriptionId, back.Messages[0].Retain));
        Assert.False(back.Messages[1].Retain);
        Assert.Equal((8L, 0L), (back.Messages[1].Seq, back.Messages[1].ExpiresAt));
        Assert.Empty(back.Messages[1].Headers!);
    }

    [Fact]
    public void A_version_1_record_is_still_read_its_messages_and_subscriptions_without_what_version_2_added()
    {
        using var stream = new MemoryStream();
        using (var w = new BinaryWriter(stream))
        {
            w.Write((byte)1); // version 1: a message was seq, topic, payload, QoS
            w.Write((byte)MqttSessionEventKind.Stored);
            w.Write(1); // subscriptions: filter and QoS
            w.Write("a/b");
            w.Write((byte)2);
            w.Write(0); // filters
            w.Write(1); // messages
            w.Write(5L);
            w.Write(1);
            w.Write((byte)'t');
            w.Write(2);
            w.Write(new byte[] { 3, 4 });
            w.Write((byte)1);
            for (var i = 0; i < 5; i++)
            {
                w.Write(0); // acked, released, completed, received, released in
            }
        }

        var e = new MqttSessionEvent(MqttSessionEventKind.Stored);
        var serializer = (SerializerWithStringManifest)_system.Serialization.FindSerializerFor(e);
        var back = (MqttSessionEvent)serializer.FromBinary(stream.ToArray(), serializer.Manifest(e));

        Assert.Equal(new MqttSessionSubscription("a/b", 2, 0), Assert.Single(back.Subscriptions));
        var message = Assert.Single(back.Messages);
        Assert.Equal((5L, (byte)1, 0L, 0), (message.Seq, message.QoS, message.ExpiresAt, message.SubscriptionId));
        Assert.Equal(new byte[] { 3, 4 }, message.Payload);
        Assert.Null(message.Headers);
    }

    [Fact]
    public void A_session_expiry_interval_round_trips_in_events_and_snapshots_and_older_records_never_expire()
    {
        var e = (MqttSessionEvent)RoundTrip(new MqttSessionEvent(MqttSessionEventKind.Expiry) { ExpiryInterval = 2 });
        Assert.Equal((MqttSessionEventKind.Expiry, 2u), (e.Kind, e.ExpiryInterval));
        var snapshot = new MqttSessionSnapshot { NextSeq = 1, ExpiryInterval = 3600 };
        Assert.Equal(3600u, ((MqttSessionSnapshot)RoundTrip(snapshot)).ExpiryInterval);

        // A version 2 record (no interval at its end) is a session that never expires.
        var created = new MqttSessionEvent(MqttSessionEventKind.Created) { ExpiryInterval = 5 };
        var serializer = (SerializerWithStringManifest)_system.Serialization.FindSerializerFor(created);
        var bytes = serializer.ToBinary(created);
        bytes[0] = 2;
        var old = (MqttSessionEvent)serializer.FromBinary(bytes[..^4], "mqtt.session");
        Assert.Equal(uint.MaxValue, old.ExpiryInterval);
    }

    [Fact]
    public void Snapshots_index_and_retained_records_round_trip()
    {
        var snapshot = new MqttSessionSnapshot { NextSeq = 100 };
        snapshot.Subscriptions.Add(new MqttSessionSubscription("s", 1, 9, NoLocal: true, RetainAsPublished: true));
        snapshot.Pending.Add(new MqttStoredMessage(99, [(byte)'s'], [9], 2));
        snapshot.Released.Add(3);
        snapshot.InReceived.Add(4);
        var s2 = (MqttSessionSnapshot)RoundTrip(snapshot);
        Assert.Equal((100L, 1, 99L, 3, 4), (s2.NextSeq, s2.Subscriptions.Count, s2.Pending[0].Seq, (int)s2.Released[0], (int)s2.InReceived[0]));
        Assert.Equal(new MqttSessionSubscription("s", 1, 9, NoLocal: true, RetainAsPublished: true), s2.Subscriptions[0]);

        var index = (MqttSessionIndexEvent)RoundTrip(new MqttSessionIndexEvent("ünï", added: false));
        Assert.Equal(("ünï", false), (index.ClientId, index.Added));

        var retained = new MqttRetainedSnapshot();
        retained.Messages.Add(new MqttRetainedMessage("a.b", [(byte)'a', (byte)'/', (byte)'b'], [5, 6], 1, [1, 2], 77));
        var r2 = (MqttRetainedSnapshot)RoundTrip(retained);
        Assert.Equal(retained.Messages[0].Payload, r2.Messages[0].Payload);
        Assert.Equal(("a.b", (byte)1, 77L), (r2.Messages[0].Subject, r2.Messages[0].QoS, r2.Messages[0].ExpiresAt));
        Assert.Equal(new byte[] { 1, 2 }, r2.Messages[0].Headers);

        var change = (MqttRetainedEvent)RoundTrip(new MqttRetainedEvent("a.b", [(byte)'a'], [1], 1, [3], 88));
        Assert.Equal((88L, 3), (change.ExpiresAt, (int)change.Headers[0]));
    }

    [Fact]
    public void A_truncated_or_oversized_record_is_refused()
    {
        var e = new MqttSessionEvent(MqttSessionEventKind.Stored);
        e.Messages.Add(new MqttStoredMessage(1, [(byte)'t'], new byte[64], 1));
        var serializer = (SerializerWithStringManifest)_system.Serialization.FindSerializerFor(e);
        var bytes = serializer.ToBinary(e);

        Assert.Throws<System.Runtime.Serialization.SerializationException>(() => serializer.FromBinary(bytes[..^10], serializer.Manifest(e)));
        var lying = (byte[])bytes.Clone();
        lying[2] = 0x7F; // the first count now claims far more entries than the record holds
        Assert.Throws<System.Runtime.Serialization.SerializationException>(() => serializer.FromBinary(lying, serializer.Manifest(e)));
    }

    public void Dispose() => _system.Terminate().Wait(TimeSpan.FromSeconds(10));

    private object RoundTrip(object o)
    {
        var serializer = (SerializerWithStringManifest)_system.Serialization.FindSerializerFor(o);
        return serializer.FromBinary(serializer.ToBinary(o), serializer.Manifest(o));
    }
}
