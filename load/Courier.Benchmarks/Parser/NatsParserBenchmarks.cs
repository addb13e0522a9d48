using System.Buffers;
using BenchmarkDotNet.Attributes;
using Courier.Benchmarks.Infrastructure;
using Courier.Protocols.Nats;

namespace Courier.Benchmarks.Parser;

/// <summary>
/// <see cref="NatsParser.TryRead"/> on whole commands already in memory: the read pump's cost per
/// command before any routing. Expected: 0 B allocated per command.
/// </summary>
[MemoryDiagnoser]
public class NatsParserBenchmarks
{
    private const int MixedCount = 100; // PUBs in the mixed batch; results are per PUB

    private readonly NatsParser _parser = new();
    private ReadOnlySequence<byte> _ping;
    private ReadOnlySequence<byte> _pub16;
    private ReadOnlySequence<byte> _pub128;
    private ReadOnlySequence<byte> _hpub;
    private ReadOnlySequence<byte> _mixed;
    private ReadOnlySequence<byte> _split;

    [GlobalSetup]
    public void Setup()
    {
        _ping = new ReadOnlySequence<byte>("PING\r\n"u8.ToArray());
        _pub16 = new ReadOnlySequence<byte>(Frames.Pub("orders.eu.created", 16));
        _pub128 = new ReadOnlySequence<byte>(Frames.Pub("orders.eu.created", 128));
        _hpub = new ReadOnlySequence<byte>(Frames.HPub("orders.eu.created", "Nats-Msg-Id: 1f2e3d4c", 16));
        _mixed = new ReadOnlySequence<byte>(MixedBatch());

        // The payload straddles two segments: the parser slices it, never copies it.
        var pub = Frames.Pub("orders.eu.created", 128);
        var payloadStart = Array.IndexOf(pub, (byte)'\n') + 1;
        _split = BufferSegment.Split(pub, payloadStart + 64);

        if (ParseAll(_mixed) != MixedCount || ParseOne(_split) != 128 + (long)ClientOp.Pub || ParseOne(_hpub) <= 16)
        {
            throw new InvalidOperationException("the parser did not read the benchmark's input as expected");
        }
    }

    [Benchmark(Description = "PING")]
    public long Ping() => ParseOne(_ping);

    [Benchmark(Description = "PUB 16 B")]
    public long Pub16() => ParseOne(_pub16);

    [Benchmark(Description = "PUB 128 B")]
    public long Pub128() => ParseOne(_pub128);

    [Benchmark(Description = "HPUB 16 B + headers")]
    public long HPub() => ParseOne(_hpub);

    [Benchmark(Description = "100 mixed PUBs (per PUB)", OperationsPerInvoke = MixedCount)]
    public long Mixed() => ParseAll(_mixed);

    [Benchmark(Description = "PUB 128 B, payload split across 2 segments")]
    public long PubSplitPayload() => ParseOne(_split);

    // PUBs of 0 to 1024 bytes on a handful of subjects, every fifth with a reply subject.
    private static byte[] MixedBatch()
    {
        int[] sizes = [0, 3, 16, 64, 128, 256, 1024];
        var frames = new byte[MixedCount][];
        for (var i = 0; i < MixedCount; i++)
        {
            var subject = $"orders.region{i % 7}.created";
            frames[i] = Frames.Pub(subject, sizes[i % sizes.Length], i % 5 == 0 ? $"_INBOX.a1b2c3.{i}" : null);
        }

        return Frames.Concat(frames);
    }

    // One command; returns its payload length (plus the op) so nothing is optimized away.
    private long ParseOne(in ReadOnlySequence<byte> buffer)
    {
        var reader = new SequenceReader<byte>(buffer);
        var command = default(ClientCommand);
        if (_parser.TryRead(ref reader, ref command, out _) != ParseStatus.Command)
        {
            ThrowNotParsed();
        }

        return command.Payload.Length + (long)command.Op;
    }

    private long ParseAll(in ReadOnlySequence<byte> buffer)
    {
        var reader = new SequenceReader<byte>(buffer);
        var command = default(ClientCommand);
        var count = 0;
        while (_parser.TryRead(ref reader, ref command, out _) == ParseStatus.Command)
        {
            count++;
        }

        return count;
    }

    private static void ThrowNotParsed() => throw new InvalidOperationException("not a whole command");
}
