using System.Buffers;
using Courier.Protocols.Mqtt;
using Courier.Protocols.Tests.Nats;
using Xunit;
using static Courier.Protocols.Tests.Mqtt.MqttBytes;
using static Courier.Protocols.Tests.Mqtt.MqttV5Bytes;
using V5 = Courier.Protocols.Tests.Mqtt.MqttV5Bytes;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>
/// The MQTT 5.0 codec's allocation budget: parsing and enumerating properties, writing the 5.0
/// packets and mapping properties to NATS header lines and back allocate nothing once warm.
/// </summary>
public sealed class MqttParserV5AllocationTests
{
    private const int Rounds = 100;

    private static readonly byte[] Traffic = Concat(
        V5.Publish("sensors/room1/temp", "21.5", Props(UserProp("unit", "C"), StrProp(0x03, "text/plain")), qos: 1, packetId: 9),
        V5.Publish("a", "", Props()),
        Packet(0x40, U16(9), [0x10], Props(StrProp(0x1F, "no subscribers"))),
        Packet(0x82, U16(3), Props(UserProp("k", "v")), Str("sensors/+/temp"), [0x1D]),
        Packet(0xA2, U16(4), Props(), Str("sensors/+/temp")),
        PingReq);

    private const int TrafficPackets = 6;

    [Fact]
    public void Parsing_v5_packets_and_their_properties_allocates_nothing_after_warm_up()
    {
        foreach (var buffer in new[] { new ReadOnlySequence<byte>(Traffic), Sequences.ByteByByte(Traffic) })
        {
            var parser = new MqttParser();
            MqttFeeds.Run(parser, new ReadOnlySequence<byte>(V5.MinimalConnect));
            for (var i = 0; i < 3; i++)
            {
                ParseAll(parser, buffer);
            }

            var before = GC.GetAllocatedBytesForCurrentThread();
            var packets = 0;
            for (var i = 0; i < Rounds; i++)
            {
                packets += ParseAll(parser, buffer);
            }

            Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
            Assert.Equal(Rounds * TrafficPackets, packets);
        }
    }

    [Fact]
    public void Writing_v5_packets_and_mapping_properties_to_headers_and_back_allocates_nothing()
    {
        var output = new ArrayBufferWriter<byte>(64 * 1024);
        byte[] properties = [.. UserProp("unit", "C"), .. StrProp(0x03, "text/plain"), 0x09, .. Field([1, 2, 3])];
        var lines = new byte[MqttNatsHeaders.HeaderLinesLength(properties)];
        byte[] block = [.. "NATS/1.0\r\nNmqtt-Pub:1\r\n"u8, .. new byte[lines.Length], .. "\r\n"u8];
        var back = new byte[properties.Length];
        var payload = new ReadOnlySequence<byte>(new byte[64]);
        Round();
        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < Rounds; i++)
        {
            Round();
        }

        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
        Assert.Equal(properties, back);

        void Round()
        {
            output.ResetWrittenCount();
            MqttPacketWriter.WriteConnAckV5(output, sessionPresent: false, MqttReasonCode.Success, properties.AsSpan(0, 10));
            MqttPacketWriter.WritePublishV5(output, "sensors/room1/temp"u8, payload, 1, retain: false, dup: false, 7, properties);
            MqttPacketWriter.WriteAckV5(output, 0x40, 7, MqttReasonCode.NotAuthorized);
            MqttPacketWriter.WriteSubAckV5(output, unsubscribe: false, 3, [0x01, 0x9E]);
            MqttPacketWriter.WriteDisconnect(output, MqttReasonCode.ProtocolError, "bad"u8);
            MqttNatsHeaders.WriteHeaderLines(properties, lines);
            lines.CopyTo(block.AsSpan(23));
            MqttNatsHeaders.WriteProperties(block, back);

            // What a v5 delivery adds: a subscription identifier, the Response Topic check, a message expiry.
            Span<byte> id = stackalloc byte[MqttProperties.MaxSubscriptionIdentifierSize];
            MqttProperties.WriteSubscriptionIdentifier(id, 268_435_455);
            _ = MqttNatsHeaders.HasResponseTopic(block);
            _ = MqttNatsHeaders.TryGetMessageExpiry(block, out _);
            _ = MqttProperties.TrySetUInt32(back, MqttPropertyId.MessageExpiryInterval, 1);
        }
    }

    // Reads every packet and enumerates its properties, as a connection would use them.
    private static int ParseAll(MqttParser parser, ReadOnlySequence<byte> buffer)
    {
        var reader = new SequenceReader<byte>(buffer);
        var packet = default(MqttPacket);
        var count = 0;
        while (parser.TryRead(ref reader, ref packet, out _) == MqttReadStatus.Packet)
        {
            count++;
            foreach (var property in MqttProperties.Enumerate(packet.Properties))
            {
                _ = property.Id;
            }

            foreach (var filter in packet.TopicFilters)
            {
                _ = filter.Options;
            }
        }

        return count;
    }
}
