using System.Globalization;
using System.Text;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;

namespace Courier.Load.Nemesis;

/// <summary>
/// The workload, recorded op by op into the history: publishers with unique Nats-Msg-Ids into the R3 file
/// stream <see cref="Stream"/>; compare-and-set increments on a few keys of the R3 bucket <see cref="Bucket"/>;
/// one durable pull consumer that acknowledges what it is given. Each process has its own connection to
/// its own node first and every node in its server list, so it moves on when its node goes away. No
/// operation is retried: a timeout is recorded as unknown (Jepsen's :info), and the checker allows for it.
/// </summary>
internal sealed class NemesisWorkload
{
    public const string Stream = "NEM";
    public const string Subject = "nem.p";
    public const string Bucket = "NEMKV";
    public const string Durable = "nemc";
    public const int Keys = 3;
    private static readonly TimeSpan OpTimeout = TimeSpan.FromSeconds(2);   // a client's patience per request
    private readonly NemesisHistory _history;
    private readonly IReadOnlyList<NemesisNode> _nodes;
    private readonly int _publishers;
    private readonly int _kvProcesses;

    public NemesisWorkload(NemesisHistory history, IReadOnlyList<NemesisNode> nodes, int publishers, int kvProcesses)
    {
        _history = history;
        _nodes = nodes;
        _publishers = publishers;
        _kvProcesses = kvProcesses;
    }

    /// <summary>A connection that tries <paramref name="first"/> first and then every other node.</summary>
    public static NatsConnection Connect(IReadOnlyList<NemesisNode> nodes, int first, string name) => new(new NatsOpts
    {
        Url = string.Join(",", nodes.Select((_, i) => nodes[(first + i) % nodes.Count].Url)),
        NoRandomize = true,
        Name = name,
        RequestTimeout = OpTimeout,
        ConnectTimeout = OpTimeout,
        CommandTimeout = OpTimeout,
        ReconnectWaitMin = TimeSpan.FromMilliseconds(100),
        ReconnectWaitMax = TimeSpan.FromMilliseconds(500),
        MaxReconnectRetry = -1,
        PingInterval = TimeSpan.FromSeconds(2),
    });

    /// <summary>The stream, the bucket (its keys at 0) and the consumer, through node 1; each step retried (a loaded cluster may answer late).</summary>
    public async Task SetUpAsync()
    {
        await using var nats = Connect(_nodes, 0, "nemesis-setup");
        var js = new NatsJSContext(nats);
        await RetriedAsync(() => js.CreateStreamAsync(new StreamConfig(Stream, [Subject]) { Storage = StreamConfigStorage.File, NumReplicas = 3, DuplicateWindow = TimeSpan.FromMinutes(10) }).AsTask()).ConfigureAwait(false);
        await RetriedAsync(() => js.CreateOrUpdateConsumerAsync(Stream, new ConsumerConfig(Durable)
        {
            AckPolicy = ConsumerConfigAckPolicy.Explicit,
            AckWait = TimeSpan.FromSeconds(5),
            MaxAckPending = 100_000,
        }).AsTask()).ConfigureAwait(false);
        var kv = new NatsKVContext(js);
        var store = await RetriedAsync(() => kv.CreateStoreAsync(new NatsKVConfig(Bucket) { NumberOfReplicas = 3, History = 64, Storage = NatsKVStorageType.File }).AsTask()).ConfigureAwait(false);
        for (var k = 0; k < Keys; k++)
        {
            var key = $"k{k}";
            await RetriedAsync(() => store.PutAsync(key, 0L).AsTask()).ConfigureAwait(false); // a put again after a lost answer is 0 again: nothing increments yet
        }
    }

    private static async Task<T> RetriedAsync<T>(Func<Task<T>> step)
    {
        var deadline = DateTime.UtcNow.AddSeconds(90);
        while (true)
        {
            try
            {
                return await step().ConfigureAwait(false);
            }
            catch (Exception e) when (DateTime.UtcNow < deadline && e is NatsJSApiException or NatsException or TimeoutException)
            {
                await Task.Delay(500).ConfigureAwait(false); // the meta state still forming, or no answer in time
            }
        }
    }

    /// <summary>Runs every process until <paramref name="stop"/>.</summary>
    public Task RunAsync(CancellationToken stop)
    {
        var tasks = new List<Task>();
        for (var p = 0; p < _publishers; p++)
        {
            var process = p;
            tasks.Add(Task.Run(() => PublishAsync(process, stop)));
        }

        for (var p = 0; p < _kvProcesses; p++)
        {
            var process = 100 + p;
            tasks.Add(Task.Run(() => CompareAndSetAsync(process, stop)));
        }

        tasks.Add(Task.Run(() => ConsumeAsync(200, stop, drain: false)));
        return Task.WhenAll(tasks);
    }

    private async Task PublishAsync(int process, CancellationToken stop)
    {
        await using var nats = Connect(_nodes, process % _nodes.Count, $"nemesis-pub-{process}");
        var js = new NatsJSContext(nats);
        for (var n = 0; !stop.IsCancellationRequested; n++)
        {
            var id = string.Create(CultureInfo.InvariantCulture, $"p{process}-{n}");
            var start = _history.Now;
            try
            {
                var ack = await js.PublishAsync(Subject, Encoding.ASCII.GetBytes(id), opts: new NatsJSPubOpts { MsgId = id }).ConfigureAwait(false);
                ack.EnsureSuccess();
                _history.Add(new NemesisOp("pub", process, id, start, _history.Now, Outcome.Ok, 0, ack.Seq, 0, ack.Duplicate ? "duplicate" : null)); // a duplicate names the stored copy's sequence
            }
            catch (Exception e) when (e is NatsJSApiException or NatsNoRespondersException)
            {
                // The server said no, or nobody got the request: not written. (No answer after the client's
                // own retries, NatsJSPublishNoResponseException, is unknown: below.)
                _history.Add(new NemesisOp("pub", process, id, start, _history.Now, Outcome.Fail, 0, 0, 0, e.Message));
                await Task.Delay(50, CancellationToken.None).ConfigureAwait(false);
            }
            catch (Exception e) when (e is NatsException or TimeoutException or OperationCanceledException)
            {
                _history.Add(new NemesisOp("pub", process, id, start, _history.Now, Outcome.Info, 0, 0, 0, e.Message));
                await Task.Delay(50, CancellationToken.None).ConfigureAwait(false);
            }
        }
    }

    private async Task CompareAndSetAsync(int process, CancellationToken stop)
    {
        await using var nats = Connect(_nodes, process % _nodes.Count, $"nemesis-kv-{process}");
        var js = new NatsJSContext(nats);
        var random = new Random(process);
        INatsKVStore? store = null;
        while (!stop.IsCancellationRequested)
        {
            var key = string.Create(CultureInfo.InvariantCulture, $"k{random.Next(Keys)}");
            var start = _history.Now;
            try
            {
                store ??= await new NatsKVContext(js).GetStoreAsync(Bucket).ConfigureAwait(false);
                var entry = await store.GetEntryAsync<long>(key).ConfigureAwait(false);
                var read = _history.Now;
                _history.Add(new NemesisOp("read", process, key, start, read, Outcome.Ok, entry.Value, entry.Revision, 0, null));
                try
                {
                    // The bucket's own update (a publish expecting the key's last revision), sent once: the client's
                    // retry of an update whose answer was lost would fail on its own success and read as "not done".
                    var ack = await js.PublishAsync($"$KV.{Bucket}.{key}", Encoding.ASCII.GetBytes((entry.Value + 1).ToString(CultureInfo.InvariantCulture)),
                        opts: new NatsJSPubOpts { ExpectedLastSubjectSequence = entry.Revision, RetryAttempts = 1 }).ConfigureAwait(false);
                    ack.EnsureSuccess();
                    _history.Add(new NemesisOp("cas", process, key, read, _history.Now, Outcome.Ok, entry.Value + 1, ack.Seq, entry.Revision, null));
                }
                catch (Exception e) when (e is NatsJSApiException or NatsNoRespondersException)
                {
                    _history.Add(new NemesisOp("cas", process, key, read, _history.Now, Outcome.Fail, entry.Value + 1, 0, entry.Revision, e.Message));
                }
                catch (Exception e) when (e is NatsException or TimeoutException or OperationCanceledException)
                {
                    _history.Add(new NemesisOp("cas", process, key, read, _history.Now, Outcome.Info, entry.Value + 1, 0, entry.Revision, e.Message));
                    await Task.Delay(50, CancellationToken.None).ConfigureAwait(false);
                }
            }
            catch (Exception e) when (e is NatsException or TimeoutException or OperationCanceledException or NatsJSApiException)
            {
                _history.Add(new NemesisOp("read", process, key, start, _history.Now, Outcome.Fail, 0, 0, 0, e.Message)); // a read that failed changes nothing
                await Task.Delay(50, CancellationToken.None).ConfigureAwait(false);
            }
        }
    }

    /// <summary>
    /// The durable consumer: fetch, record each delivery, acknowledge. With <paramref name="drain"/> it runs
    /// until the consumer has nothing pending and nothing unacknowledged (or <paramref name="stop"/>), and
    /// returns true when it got there.
    /// </summary>
    public async Task<bool> ConsumeAsync(int process, CancellationToken stop, bool drain)
    {
        await using var nats = Connect(_nodes, process % _nodes.Count, $"nemesis-consumer-{process}");
        var js = new NatsJSContext(nats);
        INatsJSConsumer? consumer = null;
        while (!stop.IsCancellationRequested)
        {
            var got = 0;
            try
            {
                consumer ??= await js.GetConsumerAsync(Stream, Durable).ConfigureAwait(false);
                await foreach (var msg in consumer.FetchAsync<byte[]>(new NatsJSFetchOpts { MaxMsgs = 200, Expires = TimeSpan.FromSeconds(1) }, cancellationToken: stop).ConfigureAwait(false))
                {
                    got++;
                    var seq = msg.Metadata?.Sequence.Stream ?? 0;
                    var payload = msg.Data is { } data ? Encoding.ASCII.GetString(data) : "";
                    var start = _history.Now;
                    _history.Add(new NemesisOp("deliver", process, payload, start, start, Outcome.Ok, 0, seq, 0, null));
                    try
                    {
                        await msg.AckAsync(cancellationToken: stop).ConfigureAwait(false);
                        _history.Add(new NemesisOp("ack", process, payload, start, _history.Now, Outcome.Info, 0, seq, 0, null)); // a plain ack: sent, not confirmed
                    }
                    catch (Exception e) when (e is NatsException or TimeoutException)
                    {
                        _history.Add(new NemesisOp("ack", process, payload, start, _history.Now, Outcome.Fail, 0, seq, 0, e.Message));
                    }
                }

                if (drain && got == 0)
                {
                    var info = (await js.GetConsumerAsync(Stream, Durable).ConfigureAwait(false)).Info;
                    if (info.NumPending == 0 && info.NumAckPending == 0)
                    {
                        return true;
                    }
                }
            }
            catch (Exception e) when (e is NatsException or TimeoutException or NatsJSApiException or OperationCanceledException)
            {
                if (stop.IsCancellationRequested)
                {
                    break;
                }

                consumer = null;
                await Task.Delay(200, CancellationToken.None).ConfigureAwait(false);
            }
        }

        return false;
    }
}
