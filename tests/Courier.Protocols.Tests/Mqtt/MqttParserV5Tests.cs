using Courier.Protocols.Mqtt;
using Xunit;
using static Courier.Protocols.Tests.Mqtt.MqttBytes;
using static Courier.Protocols.Tests.Mqtt.MqttV5Bytes;
using V5 = Courier.Protocols.Tests.Mqtt.MqttV5Bytes;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>
/// The MQTT 5.0 client packets and their properties, each fed whole, byte by byte, split at every
/// position and through a simulated pipe (see <see cref="MqttFeeds"/>); then every malformed form refused.
/// </summary>
public sealed class MqttParserV5Tests
{
    private static void AssertParses(byte[] input, params string[] expected) =>
        MqttFeeds.AssertEveryFeeding(() => new MqttParser(), input, MqttOutcome.Complete(expected));

    private static void AssertParsesAfterConnect(byte[] input, params string[] expected) =>
        AssertParses(Concat(V5.MinimalConnect, input), [V5.MinimalConnectText, .. expected]);

    private static void AssertRejected(byte[] input, MqttParseError error) =>
        MqttFeeds.AssertEveryFeeding(() => new MqttParser(), input, MqttOutcome.Rejected(error));

    private static void AssertRejectedAfterConnect(byte[] input, MqttParseError error) =>
        MqttFeeds.AssertEveryFeeding(() => new MqttParser(), Concat(V5.MinimalConnect, input), MqttOutcome.Rejected(error, V5.MinimalConnectText));

    // CONNECT

    [Fact]
    public void Connect_with_properties_is_read_and_sets_the_parser_to_version_5()
    {
        byte[][] properties = [U32Prop(0x11, 3600), U16Prop(0x21, 10), U32Prop(0x27, 4096), UserProp("k", "v")];
        AssertParses(
            V5.Connect("dev", Props(properties)),
            $"CONNECT level=5 flags=0x02 keepalive=60 id=\"dev\" props={Hex(properties)}");

        var parser = new MqttParser();
        var reader = new System.Buffers.SequenceReader<byte>(new System.Buffers.ReadOnlySequence<byte>(V5.MinimalConnect));
        var packet = default(MqttPacket);
        Assert.Equal(MqttReadStatus.Packet, parser.TryRead(ref reader, ref packet, out _));
        Assert.Equal(5, parser.ProtocolVersion);
    }

    [Fact]
    public void Connect_with_will_properties_reads_them_apart_from_the_connect_properties()
    {
        byte[][] will = [ByteProp(0x01, 1), StrProp(0x03, "text/plain"), U32Prop(0x18, 0)];
        AssertParses(
            V5.Connect("w", Props(), 0x0E, Props(will), Str("last/will"), Str("bye")),
            $"CONNECT level=5 flags=0x0e keepalive=60 id=\"w\" will=\"last/will\":\"bye\" q1 r0 willprops={Hex(will)}");
    }

    [Fact]
    public void Connect_with_an_empty_client_id_without_clean_start_is_read_in_version_5() =>
        AssertParses(V5.Connect("", Props(), 0x00), "CONNECT level=5 flags=0x00 keepalive=60 id=\"\"");

    [Fact]
    public void Connect_with_a_password_and_no_user_name_is_read_in_version_5() =>
        AssertParses(V5.Connect("c", Props(), 0x42, Field([1, 2])), "CONNECT level=5 flags=0x42 keepalive=60 id=\"c\" password=0102");

    // PUBLISH

    [Fact]
    public void Publish_with_properties_is_read_and_its_payload_is_the_rest()
    {
        byte[][] properties = [UserProp("k", "v"), StrProp(0x03, "application/json"), UserProp("k", "w")];
        AssertParsesAfterConnect(
            V5.Publish("a/b", "hi", Props(properties), qos: 1, packetId: 7),
            $"PUBLISH q1 r0 d0 id=7 topic=\"a/b\" payload=\"hi\" props={Hex(properties)}");
    }

    [Fact]
    public void Publish_without_properties_has_a_property_length_of_zero() =>
        AssertParsesAfterConnect(V5.Publish("t", "x", Props()), "PUBLISH q0 r0 d0 id=0 topic=\"t\" payload=\"x\"");

    [Fact]
    public void Publish_with_an_empty_topic_and_a_topic_alias_is_read_for_the_connection_to_resolve() =>
        AssertParsesAfterConnect(
            V5.Publish("", "x", Props(U16Prop(0x23, 3)), qos: 1, packetId: 2),
            $"PUBLISH q1 r0 d0 id=2 topic=\"\" payload=\"x\" props={Hex([U16Prop(0x23, 3)])}");

    [Fact]
    public void Publish_with_an_empty_topic_and_no_topic_alias_is_a_protocol_error() =>
        AssertRejectedAfterConnect(V5.Publish("", "x", Props(UserProp("k", "v"))), MqttParseError.EmptyTopic);

    [Fact]
    public void Publish_with_topic_alias_0_is_topic_alias_invalid_0x94()
    {
        AssertRejectedAfterConnect(V5.Publish("t", "x", Props(U16Prop(0x23, 0))), MqttParseError.TopicAliasInvalid);
        AssertRejectedAfterConnect(V5.Publish("", "x", Props(U16Prop(0x23, 0))), MqttParseError.TopicAliasInvalid);
        Assert.Equal(MqttReasonCode.TopicAliasInvalid, MqttParseError.TopicAliasInvalid.ReasonCode());
    }

    // Acknowledgements: reason code and properties, each omitted when the rest is.

    [Fact]
    public void Acknowledgements_are_read_in_every_length_form() =>
        AssertParsesAfterConnect(
            Concat(
                Packet(0x40, U16(1)),
                Packet(0x40, U16(2), [0x10]),
                Packet(0x50, U16(3), [0x80], Props(StrProp(0x1F, "no"))),
                Packet(0x62, U16(4), [0x92], Props()),
                Packet(0x70, U16(5), [0x00])),
            "PUBACK id=1",
            "PUBACK id=2 rc=0x10",
            $"PUBREC id=3 rc=0x80 props={Hex(StrProp(0x1F, "no"))}",
            "PUBREL id=4 rc=0x92",
            "PUBCOMP id=5");

    // SUBSCRIBE / UNSUBSCRIBE

    [Fact]
    public void Subscribe_with_properties_and_subscription_options_is_read() =>
        AssertParsesAfterConnect(
            Packet(0x82, U16(9), Props(UserProp("a", "b")), Str("x/+"), [0x1D], Str("y/#"), [0x02]),
            $"SUBSCRIBE id=9 \"x/+\":q1o1d \"y/#\":q2 props={Hex(UserProp("a", "b"))}");

    [Fact]
    public void Unsubscribe_with_properties_is_read() =>
        AssertParsesAfterConnect(
            Packet(0xA2, U16(3), Props(UserProp("a", "b")), Str("x/+")),
            $"UNSUBSCRIBE id=3 \"x/+\" props={Hex(UserProp("a", "b"))}");

    // DISCONNECT, AUTH, PINGREQ

    [Fact]
    public void Disconnect_is_read_with_and_without_reason_code_and_properties() =>
        AssertParsesAfterConnect(
            Concat(Packet(0xE0), Packet(0xE0, [0x04]), Packet(0xE0, [0x00], Props(U32Prop(0x11, 0)))),
            "DISCONNECT",
            "DISCONNECT rc=0x04",
            $"DISCONNECT props={Hex(U32Prop(0x11, 0))}");

    [Fact]
    public void Auth_and_pingreq_are_read() =>
        AssertParsesAfterConnect(
            Concat(Packet(0xF0, [0x18], Props(StrProp(0x15, "SCRAM-SHA-1"), StrProp(0x16, "data"))), PingReq),
            $"AUTH rc=0x18 props={Hex(StrProp(0x15, "SCRAM-SHA-1"), StrProp(0x16, "data"))}",
            "PINGREQ");

    // Malformed properties

    [Fact]
    public void A_single_instance_property_twice_is_a_protocol_error() =>
        AssertRejected(V5.Connect("c", Props(U32Prop(0x11, 1), U32Prop(0x11, 2))), MqttParseError.DuplicateProperty);

    [Fact]
    public void An_unknown_property_id_is_malformed() =>
        AssertRejectedAfterConnect(V5.Publish("t", "x", Props([0x7F, 0x00])), MqttParseError.MalformedProperties);

    [Fact]
    public void A_property_not_valid_for_the_packet_is_malformed() =>
        AssertRejected(V5.Connect("c", Props(StrProp(0x12, "id"))), MqttParseError.MalformedProperties);

    [Fact]
    public void A_property_value_running_past_the_list_is_malformed() =>
        AssertRejectedAfterConnect(V5.Publish("t", "x", Props([0x03, 0x00, 0x09, (byte)'a'])), MqttParseError.MalformedProperties);

    [Fact]
    public void A_property_length_running_past_the_packet_is_malformed() =>
        AssertRejectedAfterConnect(Packet(0xE0, [0x00], [0x0A, 0x11]), MqttParseError.MalformedProperties);

    [Fact]
    public void A_property_length_of_five_bytes_is_malformed() =>
        AssertRejectedAfterConnect(Packet(0x30, Str("t"), [0xFF, 0xFF, 0xFF, 0xFF, 0x01]), MqttParseError.MalformedProperties);

    [Fact]
    public void A_property_with_a_value_out_of_range_is_a_protocol_error()
    {
        AssertRejected(V5.Connect("c", Props(U16Prop(0x21, 0))), MqttParseError.InvalidPropertyValue); // Receive Maximum 0
        AssertRejectedAfterConnect(V5.Publish("t", "x", Props(ByteProp(0x01, 2))), MqttParseError.InvalidPropertyValue); // payload format 2
    }

    [Fact]
    public void A_user_property_that_is_not_utf8_is_malformed() =>
        AssertRejectedAfterConnect(V5.Publish("t", "x", Props([0x26, 0x00, 0x01, 0xFF, 0x00, 0x00])), MqttParseError.InvalidUtf8);

    [Fact]
    public void Bad_will_properties_are_refused() =>
        AssertRejected(V5.Connect("w", Props(), 0x06, Props(U32Prop(0x11, 1)), Str("t"), Str("m")), MqttParseError.MalformedProperties);

    // Other 5.0 rules

    [Theory]
    [InlineData(0x41)] // reserved bit 6
    [InlineData(0x80)] // reserved bit 7
    [InlineData(0x30)] // Retain Handling 3
    [InlineData(0x03)] // QoS 3
    public void Subscription_options_with_reserved_values_are_refused(byte options) =>
        AssertRejectedAfterConnect(Packet(0x82, U16(1), Props(), Str("a"), [options]), MqttParseError.InvalidSubscribeQoS);

    [Fact]
    public void An_acknowledgement_reason_code_not_defined_for_it_is_refused()
    {
        AssertRejectedAfterConnect(Packet(0x40, U16(1), [0x05]), MqttParseError.InvalidReasonCode);
        AssertRejectedAfterConnect(Packet(0x70, U16(1), [0x80]), MqttParseError.InvalidReasonCode);
    }

    [Fact]
    public void Bytes_after_the_disconnect_properties_are_malformed() =>
        AssertRejectedAfterConnect(Packet(0xE0, [0x00], Props(), [0x01]), MqttParseError.Malformed);

    [Fact]
    public void Auth_is_an_unknown_packet_type_in_version_3_1_1() =>
        MqttFeeds.AssertEveryFeeding(
            () => new MqttParser(),
            Concat(MqttBytes.MinimalConnect, [0xF0, 0x00]),
            MqttOutcome.Rejected(MqttParseError.UnknownPacketType, "CONNECT level=4 flags=0x02 keepalive=60 id=\"c\""));

    [Fact]
    public void A_packet_over_the_maximum_size_is_refused_from_its_fixed_header_with_reason_0x95()
    {
        MqttFeeds.AssertEveryFeeding(
            () => new MqttParser(maxPacketSize: 1024),
            Concat(V5.MinimalConnect, [0x30, 0x81, 0x08]),
            MqttOutcome.Rejected(MqttParseError.PacketTooLarge, V5.MinimalConnectText));
        Assert.Equal(MqttReasonCode.PacketTooLarge, MqttParseError.PacketTooLarge.ReasonCode());
    }

    [Fact]
    public void Parse_errors_map_to_malformed_packet_or_protocol_error_reason_codes()
    {
        Assert.Equal(MqttReasonCode.MalformedPacket, MqttParseError.MalformedProperties.ReasonCode());
        Assert.Equal(MqttReasonCode.MalformedPacket, MqttParseError.Malformed.ReasonCode());
        Assert.Equal(MqttReasonCode.ProtocolError, MqttParseError.DuplicateProperty.ReasonCode());
        Assert.Equal(MqttReasonCode.ProtocolError, MqttParseError.InvalidPropertyValue.ReasonCode());
        Assert.Equal(MqttReasonCode.ProtocolError, MqttParseError.SecondConnect.ReasonCode());
        Assert.Equal(MqttReasonCode.ClientIdentifierNotValid, MqttParseError.IdentifierRejected.ReasonCode());
    }
}
