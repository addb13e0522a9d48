using BenchmarkDotNet.Attributes;
using Courier.Benchmarks.Infrastructure;
using Courier.Storage;

namespace Courier.Benchmarks.Storage;

/// <summary>
/// Appends to an <see cref="IStreamStore"/> the two ways a stream actor can: one message then
/// <see cref="IStreamStore.Flush"/> (a publisher waiting for each PubAck: one write, and under
/// <c>SyncPolicy.Always</c> one fsync, per message), and <see cref="IStreamStore.AppendBatch"/> of
/// 256 messages (group commit: one write and one fsync for the batch). Per message.
/// </summary>
/// <remarks>
/// The stream keeps at most <see cref="MaxMsgs"/> messages (discard old), so disk and memory stay
/// bounded however many invocations BenchmarkDotNet makes; steady state includes the front removals
/// and block deletions a limits stream does. Expected: 0 B/op per append for a known subject, apart
/// from the slot table's chunks (amortized).
/// </remarks>
[MemoryDiagnoser]
public class StoreAppendBenchmarks
{
    private const int Batch = 256;            // messages per AppendBatch; results are per message
    private const long MaxMsgs = 1_000_000;   // messages kept: ~60-175 MB on disk at most, a few blocks

    private readonly byte[] _subject = "orders.eu.created"u8.ToArray();
    private readonly StoreMessage[] _batch = new StoreMessage[Batch];
    private readonly StoreResult[] _results = new StoreResult[Batch];
    private byte[] _payload = [];
    private TempStore _store = null!;

    [ParamsAllValues]
    public StoreBackend Backend { get; set; }

    /// <summary>Payload bytes per message.</summary>
    [Params(16, 128)]
    public int PayloadSize { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _payload = Frames.Payload(PayloadSize);
        for (var i = 0; i < Batch; i++)
        {
            _batch[i] = new StoreMessage(_subject, ReadOnlyMemory<byte>.Empty, _payload);
        }

        _store = new TempStore(Backend, new StoreConfig { Name = "bench", MaxMsgs = MaxMsgs });
        AppendOne();
        AppendBatch();
        if (_store.Store.State().Msgs != Batch + 1 || !_results[Batch - 1].Ok)
        {
            throw new InvalidOperationException("the store did not take the setup's messages");
        }
    }

    [GlobalCleanup]
    public void Cleanup() => _store.Dispose();

    [Benchmark(Description = "Append + Flush (per message)")]
    public ulong AppendOne()
    {
        var store = _store.Store;
        var result = store.Append(_subject, default, _payload);
        store.Flush();
        return result.Sequence;
    }

    [Benchmark(Description = "AppendBatch x256 (per message)", OperationsPerInvoke = Batch)]
    public ulong AppendBatch()
    {
        _store.Store.AppendBatch(_batch, _results);
        return _results[Batch - 1].Sequence;
    }
}
