using System.Buffers;
using System.Text;
using Courier.Protocols.Mqtt;
using Xunit;
using static Courier.Protocols.Tests.Mqtt.MqttBytes;
using static Courier.Protocols.Tests.Mqtt.MqttV5Bytes;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>The MQTT 5.0 server packets byte for byte, and the property &lt;-&gt; NATS header mapping.</summary>
public sealed class MqttV5WriterTests
{
    [Fact]
    public void Connack_carries_flags_reason_code_and_properties()
    {
        var output = new ArrayBufferWriter<byte>();
        byte[] properties = [.. U16Prop(0x21, 100), .. ByteProp(0x25, 1)];
        MqttPacketWriter.WriteConnAckV5(output, sessionPresent: true, MqttReasonCode.Success, properties);
        Assert.Equal(Packet(0x20, [0x01, 0x00], Props(U16Prop(0x21, 100), ByteProp(0x25, 1))), output.WrittenSpan.ToArray());

        output.ResetWrittenCount();
        MqttPacketWriter.WriteConnAckV5(output, sessionPresent: true, MqttReasonCode.BadAuthenticationMethod, default);
        Assert.Equal(new byte[] { 0x20, 0x03, 0x00, 0x8C, 0x00 }, output.WrittenSpan.ToArray()); // no session present on a refusal [MQTT-3.2.2-6]
    }

    [Theory]
    [InlineData(0, new byte[0])]
    [InlineData(1, new byte[] { 0x0B, 0x01 })]
    [InlineData(128, new byte[] { 0x0B, 0x80, 0x01 })]
    [InlineData(268_435_455, new byte[] { 0x0B, 0xFF, 0xFF, 0xFF, 0x7F })]
    public void A_subscription_identifier_is_written_as_a_variable_byte_integer_and_0_as_nothing(int id, byte[] expected)
    {
        Span<byte> buffer = stackalloc byte[MqttProperties.MaxSubscriptionIdentifierSize];
        var written = MqttProperties.WriteSubscriptionIdentifier(buffer, id);
        Assert.Equal(expected, buffer[..written].ToArray());
        Assert.Equal(expected.Length, MqttProperties.SubscriptionIdentifierSize(id));
    }

    [Fact]
    public void The_message_expiry_of_a_header_block_is_read_and_its_property_value_replaced()
    {
        var block = "NATS/1.0\r\nNmqtt-Pub:1\r\nmqtt-message-expiry: 120\r\nX: y\r\n\r\n"u8;
        Assert.True(MqttNatsHeaders.TryGetMessageExpiry(block, out var seconds));
        Assert.Equal(120u, seconds);
        Assert.False(MqttNatsHeaders.TryGetMessageExpiry("NATS/1.0\r\nMqtt-Message-Expiry: soon\r\n\r\n"u8, out _));
        Assert.False(MqttNatsHeaders.TryGetMessageExpiry("NATS/1.0\r\nX: 1\r\n\r\n"u8, out _));

        var properties = new byte[MqttNatsHeaders.PropertiesLength(block)];
        MqttNatsHeaders.WriteProperties(block, properties);
        Assert.True(MqttProperties.TrySetUInt32(properties, MqttPropertyId.MessageExpiryInterval, 7));
        Assert.Equal(Concat(U32Prop(0x02, 7), UserProp("X", "y")), properties);
        Assert.False(MqttProperties.TrySetUInt32(UserProp("X", "y"), MqttPropertyId.MessageExpiryInterval, 7));
    }

    [Fact]
    public void A_header_block_says_whether_it_carries_a_response_topic()
    {
        Assert.True(MqttNatsHeaders.HasResponseTopic("NATS/1.0\r\nNmqtt-Pub:0\r\nMqtt-Response-Topic: a/b\r\n\r\n"u8));
        Assert.False(MqttNatsHeaders.HasResponseTopic("NATS/1.0\r\nX-Mqtt-Response-Topic: a/b\r\n\r\n"u8));
        Assert.False(MqttNatsHeaders.HasResponseTopic(default));
    }

    [Fact]
    public void Acknowledgements_omit_a_success_reason_code_and_carry_any_other()
    {
        var output = new ArrayBufferWriter<byte>();
        MqttPacketWriter.WriteAckV5(output, 0x40, 7, MqttReasonCode.Success);
        MqttPacketWriter.WriteAckV5(output, 0x40, 8, MqttReasonCode.NotAuthorized);
        Assert.Equal(new byte[] { 0x40, 0x02, 0x00, 0x07, 0x40, 0x03, 0x00, 0x08, 0x87 }, output.WrittenSpan.ToArray());
    }

    [Fact]
    public void Suback_and_unsuback_carry_an_empty_property_list_and_a_reason_code_per_filter()
    {
        var output = new ArrayBufferWriter<byte>();
        MqttPacketWriter.WriteSubAckV5(output, unsubscribe: false, 5, [0x01, 0x9E]);
        MqttPacketWriter.WriteSubAckV5(output, unsubscribe: true, 6, [0x00, 0x11]);
        Assert.Equal(new byte[] { 0x90, 0x05, 0x00, 0x05, 0x00, 0x01, 0x9E, 0xB0, 0x05, 0x00, 0x06, 0x00, 0x00, 0x11 }, output.WrittenSpan.ToArray());
    }

    [Fact]
    public void Disconnect_carries_its_reason_code_and_reason_string()
    {
        var output = new ArrayBufferWriter<byte>();
        MqttPacketWriter.WriteDisconnect(output, MqttReasonCode.TopicAliasInvalid, "no"u8);
        Assert.Equal(Packet(0xE0, [0x94], Props(StrProp(0x1F, "no"))), output.WrittenSpan.ToArray());
        output.ResetWrittenCount();
        MqttPacketWriter.WriteDisconnect(output, MqttReasonCode.MalformedPacket, default);
        Assert.Equal(new byte[] { 0xE0, 0x02, 0x81, 0x00 }, output.WrittenSpan.ToArray());
    }

    [Fact]
    public void Publish_header_places_the_properties_after_the_packet_id_and_reads_back()
    {
        byte[] properties = UserProp("k", "v");
        var length = MqttPacketWriter.PublishHeaderLengthV5(3, 1, properties.Length, 2);
        var frame = new byte[length + 2];
        var at = MqttPacketWriter.WritePublishHeaderV5(frame, "a/b"u8, 1, retain: false, dup: false, 9, properties, 2, out var idAt);
        "hi"u8.CopyTo(frame.AsSpan(at));
        Assert.Equal(length, at);
        Assert.Equal(V5Publish(), frame);
        Assert.Equal(7, idAt); // 0x32, length, u16 + "a/b": the id follows the topic

        static byte[] V5Publish() => MqttV5Bytes.Publish("a/b", "hi", Props(UserProp("k", "v")), qos: 1, packetId: 9);
    }

    [Fact]
    public void Publish_properties_become_nats_headers_and_come_back_as_the_same_properties()
    {
        byte[] properties =
        [
            .. UserProp("trace-id", "42"), .. ByteProp(0x01, 1), .. U32Prop(0x02, 30), .. StrProp(0x03, "text/plain"),
            .. StrProp(0x08, "replies/here"), 0x09, .. Field([0x00, 0xFF, 0x10]), .. UserProp("trace-id", "43"),
        ];
        Assert.Equal(MqttParseError.None, MqttProperties.Validate(properties, MqttProperties.PlaceOf(MqttPacketType.Publish)));

        var lines = new byte[MqttNatsHeaders.HeaderLinesLength(properties)];
        Assert.Equal(lines.Length, MqttNatsHeaders.WriteHeaderLines(properties, lines));
        Assert.Equal(
            "trace-id: 42\r\nMqtt-Payload-Format: 1\r\nMqtt-Message-Expiry: 30\r\nMqtt-Content-Type: text/plain\r\n"
            + "Mqtt-Response-Topic: replies/here\r\nMqtt-Correlation-Data: AP8Q\r\ntrace-id: 43\r\n",
            Encoding.UTF8.GetString(lines));

        byte[] block = [.. "NATS/1.0\r\nNmqtt-Pub:1\r\n"u8, .. lines, .. "\r\n"u8];
        var back = new byte[MqttNatsHeaders.PropertiesLength(block)];
        Assert.Equal(back.Length, MqttNatsHeaders.WriteProperties(block, back));
        Assert.Equal(properties, back);
    }

    [Theory]
    [InlineData("a b", "v")]
    [InlineData("a:b", "v")]
    [InlineData("Mqtt-Content-Type", "v")]
    [InlineData("Nmqtt-Pub", "2")]
    [InlineData("k", "line\r\nbreak")]
    public void A_user_property_that_cannot_be_a_nats_header_is_unrepresentable(string name, string value) =>
        Assert.Equal(-1, MqttNatsHeaders.HeaderLinesLength(UserProp(name, value)));

    [Fact]
    public void Nats_headers_from_a_nats_client_become_user_properties_and_the_status_line_does_not()
    {
        var block = "NATS/1.0\r\nOrder: 7\r\nNmqtt-Pub: 1\r\nMqtt-Correlation-Data: not base64!\r\n\r\n"u8;
        var properties = new byte[MqttNatsHeaders.PropertiesLength(block)];
        MqttNatsHeaders.WriteProperties(block, properties);
        Assert.Equal(UserProp("Order", "7"), properties);
    }
}
