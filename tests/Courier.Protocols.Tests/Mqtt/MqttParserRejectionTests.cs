using Courier.Protocols.Mqtt;
using Xunit;
using static Courier.Protocols.Tests.Mqtt.MqttBytes;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>
/// Every malformed packet the parser refuses, each fed every way (see <see cref="MqttFeeds"/>): the
/// same error whatever the split, and the packets before it still read.
/// </summary>
public sealed class MqttParserRejectionTests
{
    private const string MinimalConnectText = "CONNECT level=4 flags=0x02 keepalive=60 id=\"c\"";

    private static void AssertRejected(byte[] input, MqttParseError error) =>
        MqttFeeds.AssertEveryFeeding(() => new MqttParser(), input, MqttOutcome.Rejected(error));

    private static void AssertRejectedAfterConnect(byte[] input, MqttParseError error) =>
        MqttFeeds.AssertEveryFeeding(() => new MqttParser(), Concat(MinimalConnect, input), MqttOutcome.Rejected(error, MinimalConnectText));

    // A connect body with the given flags and fields after the keep-alive.
    private static byte[] RawConnect(string name, byte level, byte flags, params byte[][] payload) =>
        Packet(0x10, [Str(name), [level, flags], U16(60), .. payload]);

    // Fixed header

    [Fact]
    public void A_first_packet_other_than_connect_is_rejected_from_its_first_byte() =>
        AssertRejected([0x30], MqttParseError.FirstPacketNotConnect);

    [Fact]
    public void A_pingreq_before_connect_is_rejected() =>
        AssertRejected(PingReq, MqttParseError.FirstPacketNotConnect);

    [Fact]
    public void An_http_request_on_the_mqtt_port_is_rejected_as_not_a_connect() =>
        AssertRejected("GET / HTTP/1.1\r\n"u8.ToArray(), MqttParseError.FirstPacketNotConnect);

    [Fact]
    public void A_second_connect_is_rejected() =>
        AssertRejectedAfterConnect(MinimalConnect, MqttParseError.SecondConnect);

    [Fact]
    public void A_remaining_length_with_a_fifth_byte_is_rejected() =>
        AssertRejectedAfterConnect([0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], MqttParseError.MalformedRemainingLength);

    [Fact]
    public void A_packet_over_the_maximum_size_is_rejected_from_its_fixed_header() =>
        MqttFeeds.AssertEveryFeeding(
            () => new MqttParser(maxPacketSize: 1024),
            Concat(MinimalConnect, [0x30, 0x81, 0x08]),
            MqttOutcome.Rejected(MqttParseError.PacketTooLarge, MinimalConnectText));

    [Fact]
    public void A_packet_of_exactly_the_maximum_size_is_read() =>
        MqttFeeds.AssertEveryFeeding(
            () => new MqttParser(maxPacketSize: 16),
            Concat(MinimalConnect, Publish("t", "1234567890123")),
            MqttOutcome.Complete(MinimalConnectText, "PUBLISH q0 r0 d0 id=0 topic=\"t\" payload=\"1234567890123\""));

    [Theory]
    [InlineData(0x00)]
    [InlineData(0xF0)]
    public void A_reserved_packet_type_is_rejected(byte first) =>
        AssertRejectedAfterConnect([first, 0x00], MqttParseError.UnknownPacketType);

    [Theory]
    [InlineData(0x20)] // CONNACK
    [InlineData(0x90)] // SUBACK
    [InlineData(0xB0)] // UNSUBACK
    [InlineData(0xD0)] // PINGRESP
    public void A_packet_only_a_server_sends_is_rejected(byte first) =>
        AssertRejectedAfterConnect([first, 0x00], MqttParseError.UnknownPacketType);

    [Theory]
    [InlineData(0x41)] // PUBACK
    [InlineData(0x58)] // PUBREC
    [InlineData(0x60)] // PUBREL without 0010
    [InlineData(0x63)]
    [InlineData(0x74)] // PUBCOMP
    [InlineData(0x80)] // SUBSCRIBE without 0010
    [InlineData(0x83)]
    [InlineData(0xA0)] // UNSUBSCRIBE without 0010
    [InlineData(0xC1)] // PINGREQ
    [InlineData(0xE2)] // DISCONNECT
    public void Reserved_flag_bits_that_are_wrong_for_the_packet_type_are_rejected(byte first) =>
        AssertRejectedAfterConnect([first, 0x02, 0x00, 0x01], MqttParseError.ReservedFlags);

    [Fact]
    public void Connect_with_reserved_flag_bits_in_the_fixed_header_is_rejected() =>
        AssertRejected([0x11, 0x00], MqttParseError.ReservedFlags);

    // CONNECT

    [Fact]
    public void Connect_with_protocol_level_6_is_refused_with_connack_code_1()
    {
        AssertRejected(RawConnect("MQTT", 6, 0x02, Str("c")), MqttParseError.UnacceptableProtocolVersion);
        Assert.Equal(MqttConnectReturnCode.UnacceptableProtocolVersion, MqttParseError.UnacceptableProtocolVersion.ConnAckCode());
    }

    [Fact]
    public void Connect_with_protocol_level_3_is_refused_with_connack_code_1() =>
        AssertRejected(RawConnect("MQTT", 3, 0x02, Str("c")), MqttParseError.UnacceptableProtocolVersion);

    [Fact]
    public void Connect_with_the_mqtt_3_1_protocol_name_is_closed_without_a_connack()
    {
        AssertRejected(RawConnect("MQIsdp", 3, 0x02, Str("c")), MqttParseError.ProtocolName);
        Assert.Null(MqttParseError.ProtocolName.ConnAckCode());
    }

    [Fact]
    public void Connect_with_another_protocol_name_is_rejected() =>
        AssertRejected(RawConnect("MQTX", 4, 0x02, Str("c")), MqttParseError.ProtocolName);

    [Fact]
    public void Connect_with_the_reserved_connect_flag_is_rejected() =>
        AssertRejected(RawConnect("MQTT", 4, 0x03, Str("c")), MqttParseError.ConnectReservedFlag);

    [Theory]
    [InlineData(0x0A)] // will QoS 1 without will flag
    [InlineData(0x22)] // will retain without will flag
    [InlineData(0x1E)] // will flag with will QoS 3
    public void Connect_with_inconsistent_will_flags_is_rejected(byte flags) =>
        AssertRejected(RawConnect("MQTT", 4, flags, Str("c"), Str("t"), Str("m")), MqttParseError.WillFlags);

    [Fact]
    public void Connect_with_a_password_and_no_user_name_is_rejected() =>
        AssertRejected(RawConnect("MQTT", 4, 0x42, Str("c"), Str("p")), MqttParseError.PasswordWithoutUserName);

    [Fact]
    public void Connect_with_an_empty_client_id_and_a_persistent_session_is_refused_with_connack_code_2()
    {
        AssertRejected(Connect("", clean: false), MqttParseError.IdentifierRejected);
        Assert.Equal(MqttConnectReturnCode.IdentifierRejected, MqttParseError.IdentifierRejected.ConnAckCode());
    }

    [Fact]
    public void Connect_with_a_client_id_that_is_not_utf8_is_refused_with_connack_code_2() =>
        AssertRejected(RawConnect("MQTT", 4, 0x02, Field([0x61, 0xC3])), MqttParseError.IdentifierRejected);

    [Fact]
    public void Connect_with_an_empty_will_topic_is_rejected() =>
        AssertRejected(Connect("c", willTopic: "", willMessage: "m"), MqttParseError.EmptyWillTopic);

    [Fact]
    public void Connect_with_a_wildcard_will_topic_is_rejected() =>
        AssertRejected(Connect("c", willTopic: "a/#", willMessage: "m"), MqttParseError.WildcardInTopicName);

    [Fact]
    public void Connect_with_a_user_name_holding_a_null_character_is_rejected() =>
        AssertRejected(Connect("c", user: "a\0b"), MqttParseError.InvalidUtf8);

    [Fact]
    public void Connect_missing_the_password_its_flag_announces_is_rejected() =>
        AssertRejected(RawConnect("MQTT", 4, 0xC2, Str("c"), Str("u")), MqttParseError.Malformed);

    [Fact]
    public void Connect_with_bytes_after_its_last_field_is_rejected() =>
        AssertRejected(RawConnect("MQTT", 4, 0x02, Str("c"), [0x00]), MqttParseError.Malformed);

    [Fact]
    public void Connect_whose_client_id_runs_past_the_packet_is_rejected() =>
        AssertRejected(RawConnect("MQTT", 4, 0x02, U16(10), [(byte)'c']), MqttParseError.Malformed);

    [Fact]
    public void Connect_cut_before_its_keep_alive_is_rejected() =>
        AssertRejected(Packet(0x10, Str("MQTT"), [4, 0x02]), MqttParseError.Malformed);

    // PUBLISH

    [Fact]
    public void Publish_with_qos_3_is_rejected_from_its_first_byte() =>
        AssertRejectedAfterConnect([0x36], MqttParseError.InvalidQoS);

    [Fact]
    public void Publish_with_an_empty_topic_is_rejected() =>
        AssertRejectedAfterConnect(Publish("", "x"), MqttParseError.EmptyTopic);

    [Theory]
    [InlineData("a/+")]
    [InlineData("#")]
    [InlineData("a/b#")]
    public void Publish_with_a_wildcard_in_its_topic_is_rejected(string topic) =>
        AssertRejectedAfterConnect(Publish(topic, "x"), MqttParseError.WildcardInTopicName);

    [Fact]
    public void Publish_with_a_topic_that_is_not_utf8_is_rejected() =>
        AssertRejectedAfterConnect(Packet(0x30, Field([0xFF, 0x61])), MqttParseError.InvalidUtf8);

    [Fact]
    public void Publish_qos1_with_packet_id_0_is_rejected() =>
        AssertRejectedAfterConnect(Publish("a", "x", qos: 1, packetId: 0), MqttParseError.PacketIdentifierZero);

    [Fact]
    public void Publish_whose_topic_runs_past_the_packet_is_rejected() =>
        AssertRejectedAfterConnect(Packet(0x30, U16(5), [(byte)'a']), MqttParseError.Malformed);

    [Fact]
    public void Publish_qos1_without_room_for_its_packet_id_is_rejected() =>
        AssertRejectedAfterConnect(Packet(0x32, Str("a"), [0x00]), MqttParseError.Malformed);

    [Fact]
    public void Publish_with_a_one_byte_body_is_rejected() =>
        AssertRejectedAfterConnect(Packet(0x30, [0x00]), MqttParseError.Malformed);

    // PUBACK, PUBREC, PUBREL, PUBCOMP

    [Fact]
    public void Puback_with_packet_id_0_is_rejected() =>
        AssertRejectedAfterConnect(Ack(0x40, 0), MqttParseError.PacketIdentifierZero);

    [Fact]
    public void Pubrel_with_a_body_longer_than_a_packet_id_is_rejected() =>
        AssertRejectedAfterConnect(Packet(0x62, U16(1), [0]), MqttParseError.Malformed);

    [Fact]
    public void Pubcomp_with_a_one_byte_body_is_rejected() =>
        AssertRejectedAfterConnect(Packet(0x70, [1]), MqttParseError.Malformed);

    // SUBSCRIBE, UNSUBSCRIBE

    [Fact]
    public void Subscribe_without_a_filter_is_rejected() =>
        AssertRejectedAfterConnect(Packet(0x82, U16(1)), MqttParseError.NoTopicFilters);

    [Fact]
    public void Unsubscribe_without_a_filter_is_rejected() =>
        AssertRejectedAfterConnect(Packet(0xA2, U16(1)), MqttParseError.NoTopicFilters);

    [Fact]
    public void Subscribe_with_packet_id_0_is_rejected() =>
        AssertRejectedAfterConnect(Subscribe(0, ("a", 0)), MqttParseError.PacketIdentifierZero);

    [Fact]
    public void Subscribe_with_an_empty_filter_is_rejected() =>
        AssertRejectedAfterConnect(Subscribe(1, ("a", 0), ("", 0)), MqttParseError.EmptyTopicFilter);

    [Fact]
    public void Unsubscribe_with_an_empty_filter_is_rejected() =>
        AssertRejectedAfterConnect(Unsubscribe(1, ""), MqttParseError.EmptyTopicFilter);

    [Theory]
    [InlineData(3)]
    [InlineData(0x81)]
    [InlineData(0x40)]
    public void Subscribe_with_a_requested_qos_above_2_or_reserved_bits_is_rejected(byte qos) =>
        AssertRejectedAfterConnect(Subscribe(1, ("a", qos)), MqttParseError.InvalidSubscribeQoS);

    [Fact]
    public void Subscribe_missing_the_qos_of_its_last_filter_is_rejected() =>
        AssertRejectedAfterConnect(Packet(0x82, U16(1), Str("a")), MqttParseError.Malformed);

    [Fact]
    public void Subscribe_with_a_filter_that_is_not_utf8_is_rejected() =>
        AssertRejectedAfterConnect(Packet(0x82, U16(1), Field([0xF1]), [0]), MqttParseError.InvalidUtf8);

    // PINGREQ, DISCONNECT

    [Fact]
    public void Pingreq_with_a_body_is_rejected() =>
        AssertRejectedAfterConnect([0xC0, 0x01, 0x00], MqttParseError.Malformed);

    [Fact]
    public void Disconnect_with_a_body_is_rejected() =>
        AssertRejectedAfterConnect([0xE0, 0x01, 0x00], MqttParseError.Malformed);
}
