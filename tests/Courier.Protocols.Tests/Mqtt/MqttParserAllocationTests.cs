using System.Buffers;
using Courier.Protocols.Mqtt;
using Courier.Protocols.Tests.Nats;
using Xunit;
using static Courier.Protocols.Tests.Mqtt.MqttBytes;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>
/// The MQTT codec's allocation budget, measured with <see cref="GC.GetAllocatedBytesForCurrentThread"/>:
/// nothing per packet once warm, and nothing sized by what a hostile client announces.
/// </summary>
public sealed class MqttParserAllocationTests
{
    // How often the measured loop parses the buffer, so that a stray allocation anywhere shows.
    private const int Rounds = 100;

    // A hostile header may cost a few bytes of bookkeeping, never anything sized by its claim. Bytes.
    private const long HostileBudget = 1024;

    private static readonly byte[] Traffic = Concat(
        Publish("sensors/room1/temp", "21.5"),
        Publish("sensors/room1/temp", new byte[300], qos: 1, packetId: 9),
        Publish("a", "", retain: true),
        Ack(0x40, 9),
        Ack(0x50, 10),
        Ack(0x62, 10),
        Ack(0x70, 10),
        Subscribe(3, ("sensors/+/temp", 1), ("alerts/#", 0)),
        Unsubscribe(4, "alerts/#"),
        PingReq);

    private const int TrafficPackets = 10;

    [Fact]
    public void Parsing_packets_in_a_single_segment_allocates_nothing_after_warm_up() =>
        AssertParsesWithoutAllocating(new ReadOnlySequence<byte>(Traffic));

    [Fact]
    public void Parsing_packets_split_byte_by_byte_over_segments_allocates_nothing_after_warm_up() =>
        AssertParsesWithoutAllocating(Sequences.ByteByByte(Traffic));

    [Fact]
    public void Parsing_packets_split_into_chunks_allocates_nothing_after_warm_up() =>
        AssertParsesWithoutAllocating(Sequences.FromChunks(Sequences.Chunk(Traffic, 7)));

    [Fact]
    public void A_publish_announcing_256_megabytes_waits_without_allocating_for_it()
    {
        var parser = Connected();
        var buffer = Sequences.SplitAt([0x30, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x01, (byte)'a', 1, 2, 3], 6);
        TryReadOnce(parser, buffer, out _, out _);

        var before = GC.GetAllocatedBytesForCurrentThread();
        var status = TryReadOnce(parser, buffer, out var error, out var consumed);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(MqttReadStatus.NeedMoreData, status);
        Assert.Equal(MqttParseError.None, error);
        Assert.Equal(0, consumed);
        Assert.InRange(allocated, 0, HostileBudget);
    }

    [Fact]
    public void A_publish_over_the_limit_is_rejected_without_allocating_for_it()
    {
        var parser = new MqttParser(maxPacketSize: 1024 * 1024);
        MqttFeeds.Run(parser, new ReadOnlySequence<byte>(MinimalConnect));
        var buffer = new ReadOnlySequence<byte>(new byte[] { 0x30, 0xFF, 0xFF, 0xFF, 0x7F });

        var before = GC.GetAllocatedBytesForCurrentThread();
        var status = TryReadOnce(parser, buffer, out var error, out _);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(MqttReadStatus.Error, status);
        Assert.Equal(MqttParseError.PacketTooLarge, error);
        Assert.InRange(allocated, 0, HostileBudget);
    }

    [Fact]
    public void Writing_packets_into_a_warm_buffer_allocates_nothing()
    {
        var output = new ArrayBufferWriter<byte>(64 * 1024);
        var payload = new ReadOnlySequence<byte>(new byte[128]);
        WriteAll(output, payload);
        output.ResetWrittenCount();

        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < Rounds; i++)
        {
            WriteAll(output, payload);
            output.ResetWrittenCount();
        }

        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }

    private static void WriteAll(ArrayBufferWriter<byte> output, in ReadOnlySequence<byte> payload)
    {
        MqttPacketWriter.WriteConnAck(output, sessionPresent: false, MqttConnectReturnCode.Accepted);
        MqttPacketWriter.WritePublish(output, "sensors/room1/temp"u8, payload, qos: 0, retain: false, dup: false, packetId: 0);
        MqttPacketWriter.WritePublish(output, "sensors/room1/temp"u8, payload.FirstSpan, qos: 1, retain: true, dup: true, packetId: 7);
        MqttPacketWriter.WritePubAck(output, 7);
        MqttPacketWriter.WriteSubAck(output, 3, [1, 0x80]);
        MqttPacketWriter.WriteUnsubAck(output, 4);
        MqttPacketWriter.WritePingResp(output);
    }

    private static MqttParser Connected()
    {
        var parser = new MqttParser();
        MqttFeeds.Run(parser, new ReadOnlySequence<byte>(MinimalConnect));
        return parser;
    }

    private static void AssertParsesWithoutAllocating(ReadOnlySequence<byte> buffer)
    {
        var parser = Connected();
        for (var i = 0; i < 3; i++)
        {
            ParseAll(parser, buffer, out _);
        }

        var before = GC.GetAllocatedBytesForCurrentThread();
        var packets = 0;
        long work = 0;
        for (var i = 0; i < Rounds; i++)
        {
            packets += ParseAll(parser, buffer, out var sum);
            work += sum;
        }

        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(Rounds * TrafficPackets, packets);
        Assert.Equal(Rounds * (4 + 300 + 0 + 18 + 18 + 1 + 14 + 8 + 8), work);
        Assert.Equal(0, allocated);
    }

    // Reads every packet and sums payload, topic and filter sizes, as a connection would use them.
    private static int ParseAll(MqttParser parser, ReadOnlySequence<byte> buffer, out long work)
    {
        var reader = new SequenceReader<byte>(buffer);
        var packet = default(MqttPacket);
        var count = 0;
        work = 0;
        while (parser.TryRead(ref reader, ref packet, out _) == MqttReadStatus.Packet)
        {
            count++;
            work += packet.Payload.Length + packet.Topic.Length;
            foreach (var filter in packet.TopicFilters)
            {
                work += filter.Filter.Length;
            }
        }

        return count;
    }

    private static MqttReadStatus TryReadOnce(MqttParser parser, ReadOnlySequence<byte> buffer, out MqttParseError error, out long consumed)
    {
        var reader = new SequenceReader<byte>(buffer);
        var packet = default(MqttPacket);
        var status = parser.TryRead(ref reader, ref packet, out error);
        consumed = reader.Consumed;
        return status;
    }
}
