using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Actors.JetStream;
using Courier.Actors.Server;
using Courier.Actors.Tests.Server;
using Courier.Protocols.JetStream;
using Courier.Storage;
using Courier.Storage.FileStorage;
using Xunit;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// jetstream.sync_interval: under <see cref="SyncPolicy.Interval"/> a Flush only writes, and the stream
/// actor's timer fsyncs what was written, with no further publish.
/// </summary>
public sealed class StreamSyncTests : Akka.TestKit.Xunit2.TestKit
{
    private static readonly TimeSpan Period = TimeSpan.FromMilliseconds(100);
    private readonly string _directory = Directory.CreateTempSubdirectory("courier-sync-").FullName;

    public StreamSyncTests()
        : base(TestConfig.For(new ServerOptions { Host = "127.0.0.1" }))
    {
    }

    [Fact]
    public async Task Under_a_sync_interval_the_stream_actor_fsyncs_what_its_store_wrote_on_a_timer()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys);
        await using var client = new InProcessClient(harness.Broker.Connections);
        var store = (FileStore)StreamStores.OpenFile(_directory, new StoreConfig { Name = "S" }, new FileStoreOptions { Sync = SyncPolicy.Interval(Period) });
        var config = new StreamConfig { Name = "S", Subjects = ["sync.>"] };
        var stream = Sys.ActorOf(StreamActor.Props(client, config, DateTime.UtcNow, store, _directory, _ => false));
        try
        {
            // A Flush syncs by itself once a period has passed since the last fsync; then there is
            // nothing left for the timer. So write again until a write is fsynced with no Flush after it.
            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
            var timerSynced = false;
            while (!timerSynced && DateTime.UtcNow < deadline)
            {
                Assert.True(store.Append("sync.a"u8, default, "x"u8).Ok);
                store.Flush();
                var afterFlush = store.SyncCount;
                var waitUntil = DateTime.UtcNow + (Period * 5);
                while (!timerSynced && DateTime.UtcNow < waitUntil)
                {
                    await Task.Delay(Period / 4);
                    timerSynced = store.SyncCount > afterFlush;
                }
            }

            Assert.True(timerSynced, $"no fsync without a Flush in 10 s (syncs: {store.SyncCount})");
        }
        finally
        {
            stream.Tell(PoisonPill.Instance);
        }
    }

    protected override void AfterAll()
    {
        base.AfterAll();
        // xunit's TestKit runs AfterAll before it shuts the system down: stop the actors first, or a
        // store they close in PostStop (its index files) writes into the directory while it is deleted.
        Shutdown();
        Directory.Delete(_directory, recursive: true);
    }
}
