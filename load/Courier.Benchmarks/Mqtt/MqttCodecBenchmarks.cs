using System.Buffers;
using BenchmarkDotNet.Attributes;
using Courier.Benchmarks.Infrastructure;
using Courier.Protocols.Mqtt;

namespace Courier.Benchmarks.Mqtt;

/// <summary>
/// The MQTT codec on packets already in memory: <see cref="MqttParser.TryRead"/> of a PUBLISH
/// (QoS 0 and 1, 128 B), topic to subject mapping, and <see cref="MqttPacketWriter"/> writing a
/// PUBLISH. Expected: 0 B allocated per packet.
/// </summary>
[MemoryDiagnoser]
public class MqttCodecBenchmarks
{
    private const int PayloadSize = 128; // bytes, the mqtt row of the side-by-side table
    private const int BatchCount = 100; // PUBLISHes in the batch benchmark; results are per PUBLISH

    private static readonly byte[] Topic = "sensors/building-7/floor-3/temperature"u8.ToArray();

    private readonly MqttParser _parser = new();
    private readonly byte[] _subject = new byte[MqttTopics.MaxSubjectLength(Topic.Length)];
    private readonly ArrayBufferWriter<byte> _output = new(64 * 1024);
    private readonly byte[] _payload = new byte[PayloadSize];
    private ReadOnlySequence<byte> _qos0;
    private ReadOnlySequence<byte> _qos1;
    private ReadOnlySequence<byte> _batch;
    private ReadOnlySequence<byte> _split;

    [GlobalSetup]
    public void Setup()
    {
        // The parser accepts nothing before a CONNECT.
        var connect = new byte[] { 0x10, 0x0D, 0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 4, 0x02, 0, 60, 0, 1, (byte)'b' };
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(connect));
        var packet = default(MqttPacket);
        if (_parser.TryRead(ref reader, ref packet, out _) != MqttReadStatus.Packet)
        {
            throw new InvalidOperationException("the benchmark's CONNECT did not parse");
        }

        var qos0 = Publish(qos: 0);
        var qos1 = Publish(qos: 1);
        _qos0 = new ReadOnlySequence<byte>(qos0);
        _qos1 = new ReadOnlySequence<byte>(qos1);
        _batch = new ReadOnlySequence<byte>(Enumerable.Range(0, BatchCount).SelectMany(i => i % 2 == 0 ? qos0 : qos1).ToArray());

        // The topic straddles two segments: the parser copies the variable header, slices the payload.
        _split = BufferSegment.Split(qos1, 10);

        if (ParseOne(_qos0) != PayloadSize || ParseOne(_qos1) != PayloadSize + 1 || ParseOne(_split) != PayloadSize + 1 || ParseAll(_batch) != BatchCount)
        {
            throw new InvalidOperationException("the parser did not read the benchmark's input as expected");
        }
    }

    [Benchmark(Description = "parse PUBLISH QoS 0, 128 B")]
    public long ParseQos0() => ParseOne(_qos0);

    [Benchmark(Description = "parse PUBLISH QoS 1, 128 B")]
    public long ParseQos1() => ParseOne(_qos1);

    [Benchmark(Description = "parse 100 PUBLISH QoS 0/1 (per PUBLISH)", OperationsPerInvoke = BatchCount)]
    public long ParseBatch() => ParseAll(_batch);

    [Benchmark(Description = "parse PUBLISH QoS 1, topic split across 2 segments")]
    public long ParseSplit() => ParseOne(_split);

    [Benchmark(Description = "map topic to subject")]
    public int MapTopic()
    {
        MqttTopics.TryTopicToSubject(Topic, _subject, out var written);
        return written;
    }

    [Benchmark(Description = "write PUBLISH QoS 0, 128 B")]
    public int WriteQos0()
    {
        _output.ResetWrittenCount();
        MqttPacketWriter.WritePublish(_output, Topic, _payload, qos: 0, retain: false, dup: false, packetId: 0);
        return _output.WrittenCount;
    }

    [Benchmark(Description = "write PUBLISH QoS 1, 128 B")]
    public int WriteQos1()
    {
        _output.ResetWrittenCount();
        MqttPacketWriter.WritePublish(_output, Topic, _payload, qos: 1, retain: false, dup: false, packetId: 4242);
        return _output.WrittenCount;
    }

    private byte[] Publish(byte qos)
    {
        var output = new ArrayBufferWriter<byte>();
        MqttPacketWriter.WritePublish(output, Topic, _payload, qos, retain: false, dup: false, packetId: (ushort)(qos > 0 ? 1 : 0));
        return output.WrittenSpan.ToArray();
    }

    // One packet; returns its payload length plus its packet id so nothing is optimized away.
    private long ParseOne(in ReadOnlySequence<byte> buffer)
    {
        var reader = new SequenceReader<byte>(buffer);
        var packet = default(MqttPacket);
        if (_parser.TryRead(ref reader, ref packet, out _) != MqttReadStatus.Packet)
        {
            ThrowNotParsed();
        }

        return packet.Payload.Length + packet.PacketId;
    }

    private long ParseAll(in ReadOnlySequence<byte> buffer)
    {
        var reader = new SequenceReader<byte>(buffer);
        var packet = default(MqttPacket);
        var count = 0;
        while (_parser.TryRead(ref reader, ref packet, out _) == MqttReadStatus.Packet)
        {
            count++;
        }

        return count;
    }

    private static void ThrowNotParsed() => throw new InvalidOperationException("not a whole packet");
}
