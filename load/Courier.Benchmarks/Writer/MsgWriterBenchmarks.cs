using System.Buffers;
using BenchmarkDotNet.Attributes;
using Courier.Actors.Connections;
using Courier.Benchmarks.Infrastructure;
using Courier.Protocols.Nats;

namespace Courier.Benchmarks.Writer;

/// <summary>
/// The delivery side of one publish: <see cref="ProtocolWriter.TryFormatMsgTemplate"/> once, then
/// prefix + sid + suffix + payload + CRLF copied into a subscriber's <see cref="Outbound"/>.
/// </summary>
/// <remarks>
/// Each invocation writes a batch of MSGs and then signals the outbound once, as a read batch does;
/// its write pump runs on the thread pool into <see cref="Stream.Null"/> and returns the pooled
/// chunks, so memory stays bounded and a steady state is measured. Expected: 0 B allocated per MSG.
/// </remarks>
[MemoryDiagnoser]
public class MsgWriterBenchmarks
{
    private const int Batch = 100; // MSGs per invocation; results are per MSG

    private readonly byte[] _template = new byte[(4096 * 2) + 64]; // as ClientConnection's
    private readonly byte[] _subject = "orders.eu.created"u8.ToArray();
    private readonly byte[] _replyTo = "_INBOX.a1b2c3d4e5f6.42"u8.ToArray();
    private readonly byte[] _sid = "17"u8.ToArray();
    private ReadOnlySequence<byte> _payload;
    private ReadOnlySequence<byte> _headersAndPayload;
    private int _headerSize;
    private Outbound _outbound = null!;
    private Task _pump = Task.CompletedTask;

    /// <summary>Payload bytes per message.</summary>
    [Params(16, 128)]
    public int PayloadSize { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _payload = new ReadOnlySequence<byte>(Frames.Payload(PayloadSize));
        var headers = Frames.Ascii("NATS/1.0\r\nNats-Msg-Id: 1f2e3d4c\r\n\r\n");
        _headerSize = headers.Length;
        _headersAndPayload = new ReadOnlySequence<byte>(Frames.Concat(headers, Frames.Payload(PayloadSize)));
        _outbound = new Outbound(EmbeddedBroker.MaxPending);
        _pump = _outbound.RunWritePumpAsync(Stream.Null);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _outbound.Complete();
        _pump.GetAwaiter().GetResult();
    }

    [Benchmark(Description = "MSG template only", OperationsPerInvoke = Batch)]
    public int FormatTemplate()
    {
        var total = 0;
        for (var i = 0; i < Batch; i++)
        {
            ProtocolWriter.TryFormatMsgTemplate(_template, _subject, default, -1, PayloadSize, out var prefix, out var suffix);
            total += prefix + suffix;
        }

        return total;
    }

    [Benchmark(Description = "MSG template + WriteMsg", OperationsPerInvoke = Batch)]
    public long FormatAndWrite() => Write(default, -1, _payload);

    [Benchmark(Description = "MSG with reply template + WriteMsg", OperationsPerInvoke = Batch)]
    public long FormatAndWriteWithReply() => Write(_replyTo, -1, _payload);

    [Benchmark(Description = "HMSG (35 B headers) template + WriteMsg", OperationsPerInvoke = Batch)]
    public long FormatAndWriteHeaders() => Write(default, _headerSize, _headersAndPayload);

    private long Write(ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload)
    {
        var totalSize = (int)payload.Length;
        for (var i = 0; i < Batch; i++)
        {
            ProtocolWriter.TryFormatMsgTemplate(_template, _subject, replyTo, headerSize, totalSize, out var prefixLength, out var suffixLength);
            var prefix = new ReadOnlySpan<byte>(_template, 0, prefixLength);
            var suffix = new ReadOnlySpan<byte>(_template, prefixLength, suffixLength);
            if (!_outbound.WriteMsg(prefix, _sid, suffix, payload))
            {
                ThrowSlowConsumer();
            }
        }

        _outbound.Signal();
        return _outbound.OutMsgs;
    }

    private static void ThrowSlowConsumer() => throw new InvalidOperationException("the outbound reached max_pending: its pump is not draining");
}
