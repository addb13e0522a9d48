using BenchmarkDotNet.Attributes;
using Courier.Benchmarks.Infrastructure;
using Courier.Storage;

namespace Courier.Benchmarks.Storage;

/// <summary>
/// Reads from a store holding 10,000 subjects x 4 revisions (128 B each), a KV bucket's shape:
/// <see cref="IStreamStore.LoadMessage"/> by sequence, in order (a consumer) and in a random order,
/// and <see cref="IStreamStore.LoadLastMessage"/> of a subject (the KV get path: DIRECT.GET /
/// MSG.GET with last_by_subj), cycling through every key. The FileStore is stopped and reopened
/// after filling, so reads come from the files (page cache), not the append buffer.
/// </summary>
[MemoryDiagnoser]
public class StoreReadBenchmarks
{
    private const int Subjects = 10_000;
    private const int Revisions = 4;
    private const int PayloadSize = 128; // bytes
    private const int Messages = Subjects * Revisions;

    private readonly ulong[] _randomSequences = new ulong[Messages];
    private readonly string[] _keys = new string[Subjects];
    private TempStore _store = null!;
    private int _next;

    /// <summary>Memory, or the FileStore (the sync policy does not matter for reads).</summary>
    [Params(StoreBackend.Memory, StoreBackend.FileAlways)]
    public StoreBackend Backend { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        var config = new StoreConfig { Name = "KV_bench", MaxMsgsPerSubject = Revisions };
        _store = new TempStore(Backend, config);
        var payload = Frames.Payload(PayloadSize);
        for (var k = 0; k < Subjects; k++)
        {
            _keys[k] = $"$KV.bench.key{k:D5}";
        }

        // Revisions of every key interleaved, as updates arrive.
        var batch = new StoreMessage[Subjects];
        var results = new StoreResult[Subjects];
        var subjects = Array.ConvertAll(_keys, k => (ReadOnlyMemory<byte>)System.Text.Encoding.UTF8.GetBytes(k));
        for (var r = 0; r < Revisions; r++)
        {
            for (var k = 0; k < Subjects; k++)
            {
                batch[k] = new StoreMessage(subjects[k], ReadOnlyMemory<byte>.Empty, payload);
            }

            _store.Store.AppendBatch(batch, results);
        }

        _store.Reopen(config);
        var random = new Random(42);
        for (var i = 0; i < Messages; i++)
        {
            _randomSequences[i] = (ulong)random.NextInt64(1, Messages + 1);
        }

        random.Shuffle(_keys);
        var state = _store.Store.State();
        var last = _store.Store.LoadLastMessage(_keys[0]);
        if (state.Msgs != Messages || !last.Found || last.Message!.Sequence <= (ulong)(Messages - Subjects))
        {
            throw new InvalidOperationException("the store does not hold what the benchmarks say");
        }
    }

    [GlobalCleanup]
    public void Cleanup() => _store.Dispose();

    [Benchmark(Description = "LoadMessage, in order")]
    public int LoadSequential()
    {
        var seq = (ulong)(_next++ % Messages) + 1;
        return _store.Store.LoadMessage(seq).Message!.Payload.Length;
    }

    [Benchmark(Description = "LoadMessage, random")]
    public int LoadRandom() =>
        _store.Store.LoadMessage(_randomSequences[_next++ % Messages]).Message!.Payload.Length;

    [Benchmark(Description = "LoadLastMessage(subject), 10k keys")]
    public int LoadLastBySubject() =>
        _store.Store.LoadLastMessage(_keys[_next++ % Subjects]).Message!.Payload.Length;
}
