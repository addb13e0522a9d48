using System.Buffers;
using System.Text;
using Courier.Protocols.Mqtt;
using Xunit;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>The server packets, byte for byte as MQTT 3.1.1 lays them out.</summary>
public sealed class MqttPacketWriterTests
{
    [Theory]
    [InlineData(false, MqttConnectReturnCode.Accepted, new byte[] { 0x20, 0x02, 0x00, 0x00 })]
    [InlineData(true, MqttConnectReturnCode.Accepted, new byte[] { 0x20, 0x02, 0x01, 0x00 })]
    [InlineData(false, MqttConnectReturnCode.UnacceptableProtocolVersion, new byte[] { 0x20, 0x02, 0x00, 0x01 })]
    [InlineData(false, MqttConnectReturnCode.IdentifierRejected, new byte[] { 0x20, 0x02, 0x00, 0x02 })]
    [InlineData(false, MqttConnectReturnCode.ServerUnavailable, new byte[] { 0x20, 0x02, 0x00, 0x03 })]
    [InlineData(false, MqttConnectReturnCode.BadUserNameOrPassword, new byte[] { 0x20, 0x02, 0x00, 0x04 })]
    [InlineData(true, MqttConnectReturnCode.NotAuthorized, new byte[] { 0x20, 0x02, 0x00, 0x05 })]
    public void Connack_carries_session_present_only_when_accepted(bool sessionPresent, MqttConnectReturnCode code, byte[] expected)
    {
        var output = new ArrayBufferWriter<byte>();
        MqttPacketWriter.WriteConnAck(output, sessionPresent, code);
        Assert.Equal(expected, output.WrittenSpan.ToArray());
    }

    [Fact]
    public void Acks_are_type_length_2_and_the_packet_id_big_endian()
    {
        var output = new ArrayBufferWriter<byte>();
        MqttPacketWriter.WritePubAck(output, 0x0102);
        MqttPacketWriter.WritePubRec(output, 3);
        MqttPacketWriter.WritePubRel(output, 4);
        MqttPacketWriter.WritePubComp(output, 0xFFFF);
        MqttPacketWriter.WriteUnsubAck(output, 5);
        MqttPacketWriter.WritePingResp(output);
        Assert.Equal(
            new byte[] { 0x40, 2, 1, 2, 0x50, 2, 0, 3, 0x62, 2, 0, 4, 0x70, 2, 0xFF, 0xFF, 0xB0, 2, 0, 5, 0xD0, 0 },
            output.WrittenSpan.ToArray());
    }

    [Fact]
    public void Suback_lists_one_return_code_per_filter()
    {
        var output = new ArrayBufferWriter<byte>();
        MqttPacketWriter.WriteSubAck(output, 10, [0, 1, 0x80]);
        Assert.Equal(new byte[] { 0x90, 5, 0, 10, 0, 1, 0x80 }, output.WrittenSpan.ToArray());
    }

    [Fact]
    public void Publish_qos0_has_no_packet_id()
    {
        var output = new ArrayBufferWriter<byte>();
        MqttPacketWriter.WritePublish(output, "a/b"u8, "hi"u8, qos: 0, retain: false, dup: false, packetId: 0);
        Assert.Equal(new byte[] { 0x30, 7, 0, 3, (byte)'a', (byte)'/', (byte)'b', (byte)'h', (byte)'i' }, output.WrittenSpan.ToArray());
    }

    [Fact]
    public void Publish_qos1_retained_duplicate_sets_its_flags_and_packet_id()
    {
        var output = new ArrayBufferWriter<byte>();
        MqttPacketWriter.WritePublish(output, "t"u8, new ReadOnlySequence<byte>("x"u8.ToArray()), qos: 1, retain: true, dup: true, packetId: 0x0A0B);
        Assert.Equal(new byte[] { 0x3B, 6, 0, 1, (byte)'t', 0x0A, 0x0B, (byte)'x' }, output.WrittenSpan.ToArray());
    }

    [Theory]
    [InlineData(0, new byte[] { 0x00 })]
    [InlineData(127, new byte[] { 0x7F })]
    [InlineData(128, new byte[] { 0x80, 0x01 })]
    [InlineData(16_383, new byte[] { 0xFF, 0x7F })]
    [InlineData(16_384, new byte[] { 0x80, 0x80, 0x01 })]
    [InlineData(2_097_151, new byte[] { 0xFF, 0xFF, 0x7F })]
    [InlineData(2_097_152, new byte[] { 0x80, 0x80, 0x80, 0x01 })]
    [InlineData(268_435_455, new byte[] { 0xFF, 0xFF, 0xFF, 0x7F })]
    public void Remaining_length_is_encoded_as_the_spec_table(int length, byte[] expected)
    {
        var destination = new byte[4];
        var written = MqttPacketWriter.WriteRemainingLength(destination, length);
        Assert.Equal(expected, destination[..written]);
        Assert.Equal(expected.Length, MqttPacketWriter.RemainingLengthSize(length));
    }

    [Fact]
    public void A_remaining_length_over_the_maximum_is_refused() =>
        Assert.Throws<ArgumentOutOfRangeException>(() => MqttPacketWriter.RemainingLengthSize(268_435_456));

    [Fact]
    public void A_qos1_publish_without_a_packet_id_is_refused() =>
        Assert.Throws<ArgumentOutOfRangeException>(() =>
            MqttPacketWriter.WritePublish(new ArrayBufferWriter<byte>(), "t"u8, "x"u8, qos: 1, retain: false, dup: false, packetId: 0));

    [Theory]
    [InlineData(0, 0)]
    [InlineData(1, 100)]
    [InlineData(2, 20_000)]
    [InlineData(1, 3_000_000)]
    public void A_written_publish_reads_back_through_the_parser(byte qos, int payloadLength)
    {
        var payload = new byte[payloadLength];
        Random.Shared.NextBytes(payload);
        var output = new ArrayBufferWriter<byte>();
        output.Write(MqttBytes.MinimalConnect);
        var headerStart = output.WrittenCount;
        MqttPacketWriter.WritePublish(output, "dev/é/1"u8, payload, qos, retain: true, dup: false, packetId: (ushort)(qos > 0 ? 77 : 0));
        Assert.Equal(MqttPacketWriter.PublishHeaderLength(Encoding.UTF8.GetByteCount("dev/é/1"), qos, payloadLength), output.WrittenCount - headerStart - payloadLength);

        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(output.WrittenMemory));
        var parser = new MqttParser();
        var packet = default(MqttPacket);
        Assert.Equal(MqttReadStatus.Packet, parser.TryRead(ref reader, ref packet, out _));
        Assert.Equal(MqttReadStatus.Packet, parser.TryRead(ref reader, ref packet, out _));
        Assert.Equal(MqttPacketType.Publish, packet.Type);
        Assert.Equal(qos, packet.QoS);
        Assert.True(packet.Retain);
        Assert.Equal(qos > 0 ? 77 : 0, packet.PacketId);
        Assert.Equal("dev/é/1", Encoding.UTF8.GetString(packet.Topic));
        Assert.Equal(payload, packet.Payload.ToArray());
        Assert.True(reader.End);
    }
}
