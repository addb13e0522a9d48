using System.Buffers;
using BenchmarkDotNet.Attributes;
using Courier.Actors.Connections;
using Courier.Benchmarks.Infrastructure;
using Courier.Testing;

namespace Courier.Benchmarks.Publish;

/// <summary>
/// The embedded core publish path without sockets (DESIGN.md §3): a publisher connection takes a
/// read batch of PUBs through its real parse, match and deliver code into its subscribers'
/// outbounds, then signals them once. Subscriptions go through the real routers (SUB sent on the
/// subscriber's read path, awaited until the shard published it). Each subscriber's write pump
/// drains into <see cref="Stream.Null"/> on the thread pool. Results are per published message.
/// Expected: 0 B allocated per message.
/// </summary>
[MemoryDiagnoser]
public class PublishPathBenchmarks
{
    private const int Batch = 100; // PUBs per read batch; results are per PUB

    private EmbeddedBroker _broker = null!;
    private ClientConnection _publisher = null!;
    private ClientConnection[] _subscribers = [];
    private ReadOnlySequence<byte> _pubNone;
    private ReadOnlySequence<byte> _pubOne;
    private ReadOnlySequence<byte> _pubFan;

    [GlobalSetup]
    public void Setup()
    {
        _broker = new EmbeddedBroker();
        _publisher = _broker.Connect();

        // One subscriber on bench.one; four on bench.fan (the first of them also on bench.one).
        _subscribers = [_broker.Connect(), _broker.Connect(), _broker.Connect(), _broker.Connect()];
        EmbeddedBroker.Run(_subscribers[0], "SUB bench.one 1\r\nSUB bench.fan 2\r\n");
        for (var i = 1; i < _subscribers.Length; i++)
        {
            EmbeddedBroker.Run(_subscribers[i], "SUB bench.fan 1\r\n");
        }

        _pubNone = new ReadOnlySequence<byte>(Frames.Repeat(Frames.Pub("bench.none", 16), Batch));
        _pubOne = new ReadOnlySequence<byte>(Frames.Repeat(Frames.Pub("bench.one", 16), Batch));
        _pubFan = new ReadOnlySequence<byte>(Frames.Repeat(Frames.Pub("bench.fan", 128), Batch));

        // Each case reaches exactly the subscribers it says it does.
        Check(_pubNone, 0, 0, 0, 0);
        Check(_pubOne, Batch, 0, 0, 0);
        Check(_pubFan, Batch, Batch, Batch, Batch);
    }

    [GlobalCleanup]
    public void Cleanup() => _broker.DisposeAsync().AsTask().GetAwaiter().GetResult();

    [Benchmark(Description = "1 pub, 0 subs, 16 B", OperationsPerInvoke = Batch)]
    public long PubNoSubscribers() => Publish(_pubNone);

    [Benchmark(Description = "1:1, 16 B", OperationsPerInvoke = Batch)]
    public long PubOneSubscriber() => Publish(_pubOne);

    [Benchmark(Description = "1:4 fan-out, 128 B", OperationsPerInvoke = Batch)]
    public long PubFanOut() => Publish(_pubFan);

    /// <summary>
    /// As <see cref="PubFanOut"/>, then waits until every subscriber's pump has written the batch, so
    /// no more than one batch of chunks is ever out of the pool. Includes the pumps' time; shows the
    /// path allocates nothing when the pumps keep up (see README, "Reading the results").
    /// </summary>
    [Benchmark(Description = "1:4 fan-out, 128 B, drained per batch", OperationsPerInvoke = Batch)]
    public long PubFanOutDrained()
    {
        var consumed = Publish(_pubFan);
        foreach (var subscriber in _subscribers)
        {
            while (subscriber.Outbound.PendingBytes > 0)
            {
                Thread.SpinWait(20);
            }
        }

        return consumed;
    }

    private long Publish(in ReadOnlySequence<byte> batch)
    {
        var pending = _publisher.ProcessBatchAsync(batch);
        if (!pending.IsCompletedSuccessfully)
        {
            ThrowNotSynchronous();
        }

        return pending.Result;
    }

    private void Check(in ReadOnlySequence<byte> batch, params long[] delivered)
    {
        var before = Array.ConvertAll(_subscribers, s => s.Outbound.OutMsgs);
        if (Publish(batch) != batch.Length)
        {
            throw new InvalidOperationException("the publisher did not consume the whole batch");
        }

        for (var i = 0; i < _subscribers.Length; i++)
        {
            var got = _subscribers[i].Outbound.OutMsgs - before[i];
            if (got != delivered[i])
            {
                throw new InvalidOperationException($"subscriber {i} got {got} messages, expected {delivered[i]}");
            }
        }
    }

    private static void ThrowNotSynchronous() =>
        throw new InvalidOperationException("a batch of PUBs waited (it should complete synchronously)");
}
