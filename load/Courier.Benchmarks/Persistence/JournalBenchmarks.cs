using System.Globalization;
using Akka.Actor;
using Akka.Configuration;
using BenchmarkDotNet.Attributes;
using Courier.Actors.Hosting;
using Courier.Benchmarks.Storage;
using Courier.Testing;
using Microsoft.Extensions.Logging.Abstractions;

namespace Courier.Benchmarks.Persistence;

/// <summary>
/// Events persisted through Courier's Akka.Persistence journal plugin (<c>courier.persistence.journal</c>)
/// by real persistent actors (<see cref="DeltaWriter"/>: <c>PersistAsync</c> of a real
/// <c>ConsumerDelta</c>, one event in flight per actor), with 1, 16 and 256 actors at once, on the
/// FileStore with fsync before ack, with sync_interval, and on the in-memory engine. Per event.
/// </summary>
/// <remarks>
/// <para>One operation is <see cref="EventsPerOperation"/> events, split evenly over the actors (so
/// <c>OperationsPerInvoke</c> is one constant and the figure is per event), and ends when every
/// actor's last handler has run. Concurrent actors' writes meet in the plugin's
/// <c>JournalWriter</c>, which group-commits them: one engine call (one write, one fsync) for
/// everything queued. <see cref="Cleanup"/> prints how many engine calls there were per event.</para>
/// <para>Bounded: after every iteration each actor deletes its events (not measured), so the journal
/// holds at most one operation's events; the whole class (9 cases) takes a few minutes on 2 cores.
/// The iteration cleanup makes BenchmarkDotNet run one operation per iteration.</para>
/// </remarks>
[MemoryDiagnoser]
[WarmupCount(3)]
[IterationCount(10)]
public class JournalBenchmarks
{
    private const int EventsPerOperation = 2048; // 2048 x 1, 128 x 16, 8 x 256 actors; ~0.2-2 s per operation with one fsync per event
    private static readonly TimeSpan RoundTimeout = TimeSpan.FromMinutes(2); // a round that takes longer has failed

    private readonly Countdown _countdown = new();
    private IActorRef[] _actors = [];
    private DeltaWriter.Protocol.Persist _persist = null!;
    private string? _directory;
    private ActorSystem _system = null!;
    private long _batchesAtStart;
    private long _events;

    /// <summary><c>FileAlways</c>: <c>sync = always</c>, Courier's durable default; <c>FileInterval</c>:
    /// <c>sync = 1s</c>; <c>Memory</c>: <c>dir = ""</c>, the in-memory engine (plugin overhead alone).</summary>
    [ParamsAllValues]
    public StoreBackend Backend { get; set; }

    /// <summary>Persistent actors persisting at once.</summary>
    [Params(1, 16, 256)]
    public int Actors { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _system = ActorSystemConfig.CreateSystem(Configure(), NullLoggerFactory.Instance);
        _actors = new IActorRef[Actors];
        for (var i = 0; i < Actors; i++)
        {
            _actors[i] = _system.ActorOf(DeltaWriter.Props($"bench-consumer-{i}", _countdown), $"writer-{i}");
        }

        _persist = new DeltaWriter.Protocol.Persist(EventsPerOperation / Actors);
        Persist(); // recovery, the first file blocks, JIT
        Truncate();
        if (Batches() < 1)
        {
            throw new InvalidOperationException("the journal made no engine call for the setup's events");
        }

        _batchesAtStart = Batches();
        _events = 0;
    }

    [Benchmark(Description = "PersistAsync ConsumerDelta (per event)", OperationsPerInvoke = EventsPerOperation)]
    public void Persist()
    {
        var round = _countdown.Start(_actors.Length);
        foreach (var actor in _actors)
        {
            actor.Tell(_persist);
        }

        Countdown.Wait(round, RoundTimeout);
        _events += EventsPerOperation;
    }

    [IterationCleanup]
    public void Truncate()
    {
        var round = _countdown.Start(_actors.Length);
        foreach (var actor in _actors)
        {
            actor.Tell(DeltaWriter.Protocol.Truncate.Instance);
        }

        Countdown.Wait(round, RoundTimeout);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        var batches = Batches() - _batchesAtStart;
        Console.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"// JournalBenchmarks Backend={Backend} Actors={Actors}: {batches:N0} group commits for {_events:N0} events = {(double)batches / Math.Max(_events, 1):F4} per event ({(double)_events / Math.Max(batches, 1):F1} events per commit)"));
        _system.Terminate().Wait(RoundTimeout);
        if (_directory is not null && Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    /// <summary>The journal's engine calls so far (its group commits).</summary>
    private long Batches()
    {
        return Akka.Persistence.Persistence.Instance.Apply(_system).JournalFor(null).GroupCommits();
    }

    private Config Configure()
    {
        var overrides = new List<string> { "akka.loglevel = WARNING" };
        if (Backend != StoreBackend.Memory)
        {
            _directory = Directory.CreateTempSubdirectory("courier-bench-journal-").FullName;
            overrides.Add($"courier.persistence.journal.dir = {ActorSystemConfig.Quote(Path.Combine(_directory, "journal"))}");
            overrides.Add($"courier.persistence.snapshot-store.dir = {ActorSystemConfig.Quote(Path.Combine(_directory, "snapshots"))}");
            overrides.Add($"courier.persistence.journal.sync = {(Backend == StoreBackend.FileAlways ? "always" : "1s")}");
        }

        return ConfigurationFactory.ParseString(string.Join('\n', overrides)).WithFallback(ActorSystemConfig.ReferenceConfig);
    }
}
