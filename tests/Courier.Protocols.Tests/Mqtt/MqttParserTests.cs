using System.Buffers;
using System.Text;
using Courier.Protocols.Mqtt;
using Xunit;
using static Courier.Protocols.Tests.Mqtt.MqttBytes;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>
/// The MQTT 3.1.1 client packets, each fed whole, byte by byte, split at every position and through
/// a simulated pipe (see <see cref="MqttFeeds"/>).
/// </summary>
public sealed class MqttParserTests
{
    private const string MinimalConnectText = "CONNECT level=4 flags=0x02 keepalive=60 id=\"c\"";

    private static void AssertParses(byte[] input, params string[] expected) =>
        MqttFeeds.AssertEveryFeeding(() => new MqttParser(), input, MqttOutcome.Complete(expected));

    // After a CONNECT, since every other packet needs one first.
    private static void AssertParsesAfterConnect(byte[] input, params string[] expected) =>
        AssertParses(Concat(MinimalConnect, input), [MinimalConnectText, .. expected]);

    // CONNECT: protocol name, level, flags, keep-alive, client id, [will topic, will message], [user], [password]

    [Fact]
    public void Connect_with_only_a_client_id_is_read() =>
        AssertParses(Connect("client-1", keepAlive: 30), "CONNECT level=4 flags=0x02 keepalive=30 id=\"client-1\"");

    [Fact]
    public void Connect_with_an_empty_client_id_and_clean_session_is_read() =>
        AssertParses(Connect("", keepAlive: 0), "CONNECT level=4 flags=0x02 keepalive=0 id=\"\"");

    [Fact]
    public void Connect_with_a_persistent_session_is_read() =>
        AssertParses(Connect("dev", clean: false), "CONNECT level=4 flags=0x00 keepalive=60 id=\"dev\"");

    [Fact]
    public void Connect_with_will_user_and_password_reads_every_field() =>
        AssertParses(
            Connect("dev", willTopic: "status/dev", willMessage: "gone", willQoS: 1, willRetain: true, user: "alice", password: [0x00, 0xFF, 0x41]),
            "CONNECT level=4 flags=0xee keepalive=60 id=\"dev\" will=\"status/dev\":\"gone\" q1 r1 user=\"alice\" password=00FF41");

    [Fact]
    public void Connect_with_a_user_name_and_no_password_is_read() =>
        AssertParses(Connect("dev", user: "bob"), "CONNECT level=4 flags=0x82 keepalive=60 id=\"dev\" user=\"bob\"");

    [Fact]
    public void Connect_with_an_empty_will_message_is_read() =>
        AssertParses(Connect("dev", willTopic: "t", willMessage: ""), "CONNECT level=4 flags=0x06 keepalive=60 id=\"dev\" will=\"t\":\"\" q0 r0");

    [Fact]
    public void Connect_with_a_utf8_client_id_is_read() =>
        AssertParses(Connect("capteur-é-✓"), "CONNECT level=4 flags=0x02 keepalive=60 id=\"capteur-é-✓\"");

    [Fact]
    public void Connect_reports_that_a_connect_was_received()
    {
        var parser = new MqttParser();
        Assert.False(parser.ConnectReceived);
        MqttFeeds.Run(parser, new ReadOnlySequence<byte>(MinimalConnect));
        Assert.True(parser.ConnectReceived);
    }

    // PUBLISH: topic, [packet id], payload

    [Fact]
    public void Publish_qos0_is_read_with_its_payload() =>
        AssertParsesAfterConnect(Publish("sensors/t1", "21.5"), "PUBLISH q0 r0 d0 id=0 topic=\"sensors/t1\" payload=\"21.5\"");

    [Fact]
    public void Publish_qos1_is_read_with_its_packet_id() =>
        AssertParsesAfterConnect(Publish("a/b", "x", qos: 1, packetId: 513), "PUBLISH q1 r0 d0 id=513 topic=\"a/b\" payload=\"x\"");

    [Fact]
    public void Publish_qos2_with_retain_and_dup_is_read() =>
        AssertParsesAfterConnect(Publish("a", "x", qos: 2, retain: true, dup: true, packetId: 65535), "PUBLISH q2 r1 d1 id=65535 topic=\"a\" payload=\"x\"");

    [Fact]
    public void Publish_with_an_empty_payload_is_read() =>
        AssertParsesAfterConnect(Publish("a/b", "", retain: true), "PUBLISH q0 r1 d0 id=0 topic=\"a/b\" payload=\"\"");

    [Fact]
    public void Publish_of_300_bytes_has_a_two_byte_remaining_length_and_is_read()
    {
        var payload = new string('p', 300);
        var packet = Publish("x/y", payload);
        Assert.Equal(0x80, packet[1] & 0x80);
        AssertParsesAfterConnect(packet, $"PUBLISH q0 r0 d0 id=0 topic=\"x/y\" payload=\"{payload}\"");
    }

    [Fact]
    public void Publish_of_20000_bytes_has_a_three_byte_remaining_length_and_is_read_whole_and_split()
    {
        var payload = new byte[20_000];
        Random.Shared.NextBytes(payload);
        var input = Concat(MinimalConnect, Publish("big", payload, qos: 1, packetId: 7));
        foreach (var split in new[] { 0, 1, 20, 21, 22, 23, 24, 30, 10_000, input.Length - 1 })
        {
            var reader = new SequenceReader<byte>(Nats.Sequences.SplitAt(input, split));
            var parser = new MqttParser();
            var packet = default(MqttPacket);
            Assert.Equal(MqttReadStatus.Packet, parser.TryRead(ref reader, ref packet, out _));
            Assert.Equal(MqttReadStatus.Packet, parser.TryRead(ref reader, ref packet, out _));
            Assert.Equal("big", Encoding.UTF8.GetString(packet.Topic));
            Assert.Equal(payload, packet.Payload.ToArray());
            Assert.True(reader.End);
        }
    }

    [Fact]
    public void Publish_payload_is_a_slice_of_the_input_not_a_copy()
    {
        var input = Concat(MinimalConnect, Publish("t", "hello"));
        var buffer = new ReadOnlySequence<byte>(input);
        var reader = new SequenceReader<byte>(buffer);
        var parser = new MqttParser();
        var packet = default(MqttPacket);
        parser.TryRead(ref reader, ref packet, out _);
        parser.TryRead(ref reader, ref packet, out _);
        Assert.True(packet.Payload.IsSingleSegment);
        Assert.True(System.Runtime.InteropServices.MemoryMarshal.TryGetArray(packet.Payload.First, out var segment));
        Assert.Same(input, segment.Array);
        Assert.Equal(input.Length - 5, segment.Offset);
    }

    // PUBACK, PUBREC, PUBREL, PUBCOMP: packet id

    [Fact]
    public void Puback_is_read() => AssertParsesAfterConnect(Ack(0x40, 1), "PUBACK id=1");

    [Fact]
    public void Pubrec_is_read() => AssertParsesAfterConnect(Ack(0x50, 2), "PUBREC id=2");

    [Fact]
    public void Pubrel_with_flags_0010_is_read() => AssertParsesAfterConnect(Ack(0x62, 300), "PUBREL id=300");

    [Fact]
    public void Pubcomp_is_read() => AssertParsesAfterConnect(Ack(0x70, 65535), "PUBCOMP id=65535");

    // SUBSCRIBE: packet id, (filter, qos)+; UNSUBSCRIBE: packet id, (filter)+

    [Fact]
    public void Subscribe_with_one_filter_is_read() =>
        AssertParsesAfterConnect(Subscribe(10, ("a/+/c", 1)), "SUBSCRIBE id=10 \"a/+/c\":q1");

    [Fact]
    public void Subscribe_with_several_filters_reads_them_in_order() =>
        AssertParsesAfterConnect(
            Subscribe(11, ("#", 0), ("a/b", 1), ("/x/", 2)),
            "SUBSCRIBE id=11 \"#\":q0 \"a/b\":q1 \"/x/\":q2");

    [Fact]
    public void Subscribe_filters_are_counted()
    {
        var input = Concat(MinimalConnect, Subscribe(11, ("#", 0), ("a/b", 1), ("/x/", 2)));
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(input));
        var parser = new MqttParser();
        var packet = default(MqttPacket);
        parser.TryRead(ref reader, ref packet, out _);
        parser.TryRead(ref reader, ref packet, out _);
        Assert.Equal(3, packet.TopicFilters.Count);
    }

    [Fact]
    public void Unsubscribe_with_several_filters_is_read() =>
        AssertParsesAfterConnect(Unsubscribe(12, "a/b", "c/#"), "UNSUBSCRIBE id=12 \"a/b\" \"c/#\"");

    // PINGREQ, DISCONNECT

    [Fact]
    public void Pingreq_is_read() => AssertParsesAfterConnect(PingReq, "PINGREQ");

    [Fact]
    public void Disconnect_is_read() => AssertParsesAfterConnect(Disconnect, "DISCONNECT");

    // Streams of packets

    [Fact]
    public void A_session_of_every_packet_type_is_read_in_order() =>
        AssertParses(
            Concat(
                Connect("s", clean: false, user: "u", password: [1]),
                Subscribe(1, ("a/#", 1)),
                Publish("a/b", "one", qos: 1, packetId: 2),
                Ack(0x40, 9),
                Publish("a/c", "two", qos: 2, packetId: 3),
                Ack(0x50, 10),
                Ack(0x62, 3),
                Ack(0x70, 10),
                PingReq,
                Unsubscribe(4, "a/#"),
                Disconnect),
            "CONNECT level=4 flags=0xc0 keepalive=60 id=\"s\" user=\"u\" password=01",
            "SUBSCRIBE id=1 \"a/#\":q1",
            "PUBLISH q1 r0 d0 id=2 topic=\"a/b\" payload=\"one\"",
            "PUBACK id=9",
            "PUBLISH q2 r0 d0 id=3 topic=\"a/c\" payload=\"two\"",
            "PUBREC id=10",
            "PUBREL id=3",
            "PUBCOMP id=10",
            "PINGREQ",
            "UNSUBSCRIBE id=4 \"a/#\"",
            "DISCONNECT");

    [Fact]
    public void A_packet_cut_short_waits_for_the_rest_without_moving_the_reader()
    {
        var input = Concat(MinimalConnect, Publish("t/u", "payload"));
        for (var cut = MinimalConnect.Length + 1; cut < input.Length; cut++)
        {
            var outcome = MqttFeeds.Run(new MqttParser(), new ReadOnlySequence<byte>(input[..cut]));
            Assert.Equal(new MqttOutcome([MinimalConnectText], MqttReadStatus.NeedMoreData, MqttParseError.None, cut - MinimalConnect.Length), outcome);
        }
    }

    [Fact]
    public void A_remaining_length_of_four_bytes_up_to_the_maximum_waits_for_its_body()
    {
        // 0xFF 0xFF 0xFF 0x7F = 268,435,455: announced, not yet sent.
        var input = Concat(MinimalConnect, [0x30, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x01, (byte)'a']);
        var outcome = MqttFeeds.Run(new MqttParser(), new ReadOnlySequence<byte>(input));
        Assert.Equal(new MqttOutcome([MinimalConnectText], MqttReadStatus.NeedMoreData, MqttParseError.None, 8), outcome);
    }
}
