using System.Globalization;
using System.Text;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Load.Soak;

/// <summary>
/// The soak's JetStream load through NATS.Net (a real client that reconnects by itself): per file
/// stream one publisher waiting for each PubAck and one durable pull consumer fetching and acking
/// with double acks. It remembers every acknowledged publish and every confirmed ack, and after
/// each restart checks them against what the server recovered.
/// </summary>
internal sealed class SoakJetStream : IAsyncDisposable
{
    private const string Durable = "soak";
    private static readonly TimeSpan CheckBound = TimeSpan.FromMinutes(2); // one post-restart check, per stream

    private readonly NatsConnection _nats;
    private readonly NatsJSContext _js;
    private readonly StreamLedger[] _streams;
    private readonly int _ratePerStream;

    public SoakJetStream(int port, int streams, int totalRate)
    {
        _nats = new NatsConnection(new NatsOpts
        {
            Url = $"nats://127.0.0.1:{port}",
            Name = "soak-js",
            RequestTimeout = TimeSpan.FromSeconds(10),
            CommandTimeout = TimeSpan.FromSeconds(10),
        });
        _js = new NatsJSContext(_nats);
        _streams = [.. Enumerable.Range(0, streams).Select(i => new StreamLedger($"SOAK_{i}", $"soak.js.{i}"))];
        _ratePerStream = Math.Max(1, totalRate / streams);
    }

    public long Acked => _streams.Sum(s => s.AckedCount);

    public long Consumed => _streams.Sum(s => s.ConsumedCount);

    public long PublishFailures => _streams.Sum(s => Interlocked.Read(ref s.PublishFailures));

    public async Task SetupAsync(CancellationToken token)
    {
        await _nats.ConnectAsync().ConfigureAwait(false);
        foreach (var s in _streams)
        {
            await _js.CreateStreamAsync(new StreamConfig(s.Name, [s.Subject]) { Storage = StreamConfigStorage.File }, token).ConfigureAwait(false);
            await _js.CreateOrUpdateConsumerAsync(s.Name, new ConsumerConfig(Durable) { AckPolicy = ConsumerConfigAckPolicy.Explicit }, token).ConfigureAwait(false);
        }
    }

    public Task RunAsync(CancellationToken stop) =>
        Task.WhenAll(_streams.SelectMany(s => new[] { PublishAsync(s, stop), ConsumeAsync(s, stop) }));

    private async Task PublishAsync(StreamLedger s, CancellationToken stop)
    {
        var interval = TimeSpan.FromSeconds(1.0 / _ratePerStream);
        var next = DateTime.UtcNow;
        while (!stop.IsCancellationRequested)
        {
            next += interval;
            var wait = next - DateTime.UtcNow;
            try
            {
                if (wait > TimeSpan.Zero)
                {
                    await Task.Delay(wait, stop).ConfigureAwait(false);
                }
                else if (wait < -TimeSpan.FromSeconds(1))
                {
                    next = DateTime.UtcNow; // behind (a kill): no burst to catch up
                }

                var n = Interlocked.Increment(ref s.Counter);
                var ack = await _js.PublishAsync(s.Subject, Payload(s.Name, n), cancellationToken: stop).ConfigureAwait(false);
                ack.EnsureSuccess();
                s.Acknowledged(ack.Seq, n);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is NatsException or TimeoutException or OperationCanceledException)
            {
                Interlocked.Increment(ref s.PublishFailures); // no PubAck: in flight at a kill, may or may not be stored
                await Pause(stop).ConfigureAwait(false);
            }
        }
    }

    private async Task ConsumeAsync(StreamLedger s, CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            try
            {
                var consumer = await _js.GetConsumerAsync(s.Name, Durable, stop).ConfigureAwait(false);
                while (!stop.IsCancellationRequested)
                {
                    await foreach (var msg in consumer.FetchAsync<byte[]>(new NatsJSFetchOpts { MaxMsgs = 100, Expires = TimeSpan.FromSeconds(2) }, cancellationToken: stop).ConfigureAwait(false))
                    {
                        await msg.AckAsync(new AckOpts { DoubleAck = true }, stop).ConfigureAwait(false);
                        s.AckConfirmed(msg.Metadata!.Value.Sequence.Stream);
                    }
                }
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is NatsException or TimeoutException or OperationCanceledException)
            {
                Interlocked.Increment(ref s.ConsumeFailures);
                await Pause(stop).ConfigureAwait(false);
            }
        }
    }

    private static async Task Pause(CancellationToken stop)
    {
        try
        {
            await Task.Delay(250, stop).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // Stopping.
        }
    }

    private static byte[] Payload(string stream, long n) => Encoding.ASCII.GetBytes($"soak {stream} {n.ToString(CultureInfo.InvariantCulture)}");

    /// <summary>What was acknowledged up to now (taken just before a kill -9).</summary>
    public IReadOnlyList<StreamSnapshot> Snapshot() => [.. _streams.Select(s => s.Snapshot())];

    /// <summary>
    /// After a restart: every publish acknowledged before the kill is in the stream with its payload,
    /// the sequences have no gaps, and the consumer's ack floor is not behind the acks confirmed.
    /// </summary>
    public async Task<IReadOnlyList<string>> CheckAsync(IReadOnlyList<StreamSnapshot> before, CancellationToken stop)
    {
        var problems = new List<string>();
        var lines = new List<string>();
        foreach (var snap in before)
        {
            using var bound = CancellationTokenSource.CreateLinkedTokenSource(stop);
            bound.CancelAfter(CheckBound);
            try
            {
                lines.Add(await CheckStreamAsync(snap, problems, bound.Token).ConfigureAwait(false));
            }
            catch (Exception e) when (e is NatsException or TimeoutException or OperationCanceledException)
            {
                problems.Add($"{snap.Name}: check did not finish ({e.GetType().Name}: {e.Message})");
            }
        }

        lines.AddRange(problems.Select(p => $"PROBLEM {p}"));
        return lines;
    }

    private async Task<string> CheckStreamAsync(StreamSnapshot snap, List<string> problems, CancellationToken token)
    {
        var info = await Retry(() => _js.GetStreamAsync(snap.Name, cancellationToken: token).AsTask(), token).ConfigureAwait(false);
        var state = info.Info.State;
        if (state.LastSeq < snap.MaxAckedSeq)
        {
            problems.Add($"{snap.Name}: last_seq {state.LastSeq} behind the highest acknowledged {snap.MaxAckedSeq}");
        }

        if (state.FirstSeq != 1 || state.NumDeleted != 0 || (ulong)state.Messages != state.LastSeq)
        {
            problems.Add($"{snap.Name}: sequences have gaps (first {state.FirstSeq}, last {state.LastSeq}, messages {state.Messages}, deleted {state.NumDeleted})");
        }

        // Read 1..highest acknowledged back in order and compare with what each PubAck promised.
        var seen = 0L;
        var mismatched = 0L;
        var expected = 1UL;
        if (snap.MaxAckedSeq > 0)
        {
            var reader = await _js.CreateOrderedConsumerAsync(snap.Name, new NatsJSOrderedConsumerOpts { DeliverPolicy = ConsumerConfigDeliverPolicy.All }, token).ConfigureAwait(false);
            await foreach (var msg in reader.ConsumeAsync<byte[]>(cancellationToken: token).ConfigureAwait(false))
            {
                var seq = msg.Metadata!.Value.Sequence.Stream;
                if (seq != expected)
                {
                    problems.Add($"{snap.Name}: read sequence {seq} where {expected} was next");
                }

                expected = seq + 1;
                if (snap.Acked.TryGetValue(seq, out var n))
                {
                    seen++;
                    if (!msg.Data.AsSpan().SequenceEqual(Payload(snap.Name, n)))
                    {
                        mismatched++;
                    }
                }

                if (seq >= snap.MaxAckedSeq)
                {
                    break;
                }
            }
        }

        var missing = snap.Acked.Count - seen;
        if (missing != 0 || mismatched != 0)
        {
            problems.Add($"{snap.Name}: {missing} acknowledged messages missing, {mismatched} with another payload");
        }

        var consumer = await Retry(() => _js.GetConsumerAsync(snap.Name, Durable, token).AsTask(), token).ConfigureAwait(false);
        var floor = consumer.Info.AckFloor?.StreamSeq ?? 0;
        if (floor < snap.ConfirmedAckFloor)
        {
            problems.Add($"{snap.Name}: consumer ack floor {floor} behind the confirmed acks {snap.ConfirmedAckFloor}");
        }
        else
        {
            // An ack sent just before the kill whose confirmation never came is a hole in the client's
            // contiguous floor; the recovered server's floor says it was kept, so the next check starts from it.
            _streams.First(s => s.Name == snap.Name).AdoptFloor(floor);
        }

        return $"{snap.Name}: {snap.Acked.Count:N0} acknowledged before the kill, {seen:N0} read back intact, {missing:N0} missing, {mismatched:N0} different; " +
            $"state first {state.FirstSeq} last {state.LastSeq} messages {state.Messages:N0} deleted {state.NumDeleted}; ack floor {floor:N0} (confirmed before the kill: {snap.ConfirmedAckFloor:N0})";
    }

    // The restarted server may still be recovering: bounded retries of an API call.
    private static async Task<T> Retry<T>(Func<Task<T>> call, CancellationToken token)
    {
        for (var attempt = 0; ; attempt++)
        {
            try
            {
                return await call().ConfigureAwait(false);
            }
            catch (Exception e) when (attempt < 60 && e is NatsException or TimeoutException && !token.IsCancellationRequested)
            {
                await Task.Delay(500, token).ConfigureAwait(false);
            }
        }
    }

    public async ValueTask DisposeAsync() => await _nats.DisposeAsync().ConfigureAwait(false);

    /// <summary>One stream's acknowledged publishes (sequence to publish number) and confirmed acks.</summary>
    private sealed class StreamLedger(string name, string subject)
    {
        private readonly Lock _gate = new();
        private readonly Dictionary<ulong, long> _acked = [];
        private readonly SortedSet<ulong> _acksAboveFloor = [];
        private ulong _maxAcked;
        private ulong _floor;
        private long _consumed;

        public long Counter;
        public long PublishFailures;
        public long ConsumeFailures;

        public string Name { get; } = name;

        public string Subject { get; } = subject;

        public long AckedCount
        {
            get
            {
                lock (_gate)
                {
                    return _acked.Count;
                }
            }
        }

        public long ConsumedCount => Interlocked.Read(ref _consumed);

        public void Acknowledged(ulong seq, long n)
        {
            lock (_gate)
            {
                _acked[seq] = n;
                _maxAcked = Math.Max(_maxAcked, seq);
            }
        }

        public void AckConfirmed(ulong seq)
        {
            Interlocked.Increment(ref _consumed);
            lock (_gate)
            {
                if (seq <= _floor)
                {
                    return;
                }

                _acksAboveFloor.Add(seq);
                while (_acksAboveFloor.Remove(_floor + 1))
                {
                    _floor++;
                }
            }
        }

        /// <summary>Everything up to <paramref name="floor"/> is known acknowledged (the recovered server's ack floor).</summary>
        public void AdoptFloor(ulong floor)
        {
            lock (_gate)
            {
                if (floor <= _floor)
                {
                    return;
                }

                _floor = floor;
                _acksAboveFloor.RemoveWhere(seq => seq <= floor);
                while (_acksAboveFloor.Remove(_floor + 1))
                {
                    _floor++;
                }
            }
        }

        public StreamSnapshot Snapshot()
        {
            lock (_gate)
            {
                return new StreamSnapshot(Name, new Dictionary<ulong, long>(_acked), _maxAcked, _floor);
            }
        }
    }
}

/// <summary>A stream's acknowledged publishes and its consumer's contiguous confirmed ack floor at one moment.</summary>
internal sealed record StreamSnapshot(string Name, IReadOnlyDictionary<ulong, long> Acked, ulong MaxAckedSeq, ulong ConfirmedAckFloor);
