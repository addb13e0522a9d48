using Xunit;

namespace Courier.Storage.Tests;

/// <summary>
/// What is durable when: Flush is the group commit (one write and one fsync per batch). A crash is
/// simulated by abandoning a store (no Stop, no Dispose) and opening a new instance on its directory.
/// </summary>
public sealed partial class FileStoreTests
{
    [Fact]
    public void Group_commit_many_appends_and_one_flush_are_durable_with_one_write_and_one_fsync()
    {
        var (store, directory) = OpenNew(options: OneBlock);
        var payload = new byte[128];
        var writes = store.WriteCount;
        var syncs = store.SyncCount;
        for (var i = 0; i < 1000; i++)
        {
            payload[0] = (byte)i;
            Assert.True(store.Append(B($"orders.{i % 10}"), [], payload, 0).Ok);
        }

        Assert.Equal(writes, store.WriteCount); // nothing written before the flush
        store.Flush();
        Assert.Equal(writes + 1, store.WriteCount);
        Assert.Equal(syncs + 1, store.SyncCount);

        var recovered = OpenAgain(directory, options: OneBlock); // the first instance is abandoned
        var state = recovered.State();
        Assert.Equal((1000UL, 1UL, 1000UL), (state.Msgs, state.FirstSeq, state.LastSeq));
        for (ulong seq = 1; seq <= 1000; seq++)
        {
            var m = Load(recovered, seq);
            Assert.Equal((byte)(seq - 1), m.Payload.Span[0]);
            Assert.Equal($"orders.{(seq - 1) % 10}", m.Subject);
        }

        Assert.Equal(1001UL, PutOk(recovered, "orders.1"));
    }

    [Fact]
    public void Append_batch_is_durable_when_it_returns()
    {
        var (store, directory) = OpenNew();
        var batch = Enumerable.Range(0, 300).Select(i => new StoreMessage(B("foo"), default, B($"m{i}"))).ToArray();
        var results = new StoreResult[batch.Length];
        store.AppendBatch(batch, results);
        Assert.All(results, r => Assert.True(r.Ok));
        Assert.Equal(300UL, OpenAgain(directory).State().Msgs);
    }

    [Fact]
    public void Appends_and_deletes_after_the_last_flush_are_not_durable()
    {
        var (store, directory) = OpenNew();
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, "foo");
        }

        store.RemoveMessage(3);
        store.Flush();
        for (var i = 0; i < 5; i++)
        {
            PutOk(store, "foo");
        }

        store.RemoveMessage(4);

        var recovered = OpenAgain(directory);
        var state = recovered.State();
        Assert.Equal((9UL, 10UL), (state.Msgs, state.LastSeq));
        Assert.Equal(LoadStatus.NotFound, recovered.LoadMessage(3).Status);
        Assert.Equal(LoadStatus.Found, recovered.LoadMessage(4).Status);
    }

    [Fact]
    public void Purge_compact_and_truncate_are_durable_when_they_return()
    {
        var (store, directory) = OpenNew();
        for (var i = 0; i < 300; i++)
        {
            PutOk(store, $"s.{i % 4}");
        }

        store.Purge("s.1", 0, 0);
        var recovered = OpenAgain(directory);
        Assert.Empty(recovered.SubjectsState("s.1"));
        Assert.Equal(225UL, recovered.State().Msgs);

        Assert.Equal(75UL, recovered.Compact(101));
        Assert.Equal(StoreError.InvalidSequence, recovered.Truncate(250)); // s.1, purged
        Assert.Equal(StoreError.None, recovered.Truncate(251));
        var again = OpenAgain(directory);
        var state = again.State();
        Assert.Equal((101UL, 251UL, 113UL), (state.FirstSeq, state.LastSeq, state.Msgs));
        Assert.Equal(252UL, PutOk(again, "s.0"));
    }

    [Fact]
    public void Sync_always_fsyncs_in_every_flush_that_wrote()
    {
        var (store, _) = OpenNew(options: OneBlock);
        var syncs = store.SyncCount;
        for (var batch = 0; batch < 5; batch++)
        {
            PutOk(store, "foo");
            store.Flush();
        }

        Assert.Equal(syncs + 5, store.SyncCount);
        store.Flush();
        Assert.Equal(syncs + 5, store.SyncCount);
    }

    [Fact]
    public void Sync_interval_writes_in_flush_and_fsyncs_when_the_owner_calls_sync()
    {
        var options = new FileStoreOptions { Sync = SyncPolicy.Interval(TimeSpan.FromHours(1)) };
        Assert.False(options.Sync.IsAlways);
        var (store, directory) = OpenNew(options: options);
        var syncs = store.SyncCount;
        for (var i = 0; i < 50; i++)
        {
            PutOk(store, "foo");
        }

        store.Flush();
        Assert.Equal(syncs, store.SyncCount);
        Assert.Equal(50UL, OpenAgain(directory, options: options).State().Msgs); // written: a process crash loses nothing

        store.Sync();
        Assert.Equal(syncs + 1, store.SyncCount);
        store.Sync();
        Assert.Equal(syncs + 1, store.SyncCount);
    }

    [Fact]
    public void Sync_interval_fsyncs_in_a_flush_once_the_period_has_passed()
    {
        var options = new FileStoreOptions { Sync = SyncPolicy.Interval(TimeSpan.FromMilliseconds(20)) };
        var (store, _) = OpenNew(options: options);
        var syncs = store.SyncCount;
        PutOk(store, "foo");
        Thread.Sleep(50);
        store.Flush();
        Assert.Equal(syncs + 1, store.SyncCount);
        Assert.Throws<ArgumentOutOfRangeException>(() => SyncPolicy.Interval(TimeSpan.Zero));
    }

    [Fact]
    public async Task Readers_on_other_threads_see_consistent_messages_while_the_owner_appends_and_flushes()
    {
        var (store, _) = OpenNew(new StoreConfig { MaxMsgs = 500 });
        using var stop = new CancellationTokenSource();
        var errors = new List<string>();
        var readers = Enumerable.Range(0, 2).Select(r => Task.Run(() =>
        {
            while (!stop.IsCancellationRequested)
            {
                var last = store.LoadLastMessage("foo");
                if (last.Found && S(last.Message!.Payload) != $"m{last.Message.Sequence}")
                {
                    lock (errors)
                    {
                        errors.Add($"last: {last.Message.Sequence}");
                    }
                }

                var first = store.State().FirstSeq;
                var next = store.LoadNextMessage("foo", first);
                if (next.Found && S(next.Message!.Payload) != $"m{next.Message.Sequence}")
                {
                    lock (errors)
                    {
                        errors.Add($"next: {next.Message.Sequence}");
                    }
                }
            }
        })).ToArray();

        for (var i = 1; i <= 5000; i++)
        {
            PutOk(store, "foo", $"m{i}");
            if (i % 64 == 0)
            {
                store.Flush();
            }
        }

        stop.Cancel();
        await Task.WhenAll(readers);
        Assert.Empty(errors);
        Assert.Empty(store.Warnings);
        Assert.Equal(500UL, store.State().Msgs);
    }

    [Theory]
    [InlineData(11)]
    [InlineData(12)]
    public void Random_operations_with_crashes_agree_with_the_memory_store(int seed)
    {
        // A message limit, not a byte limit: the two stores count a message's bytes differently (as nats-server's do).
        var config = new StoreConfig { MaxMsgsPerSubject = 6, MaxMsgs = 120 };
        var reference = Track(StreamStores.CreateMemory(config));
        var (file, directory) = OpenNew(config);
        IStreamStore store = file;
        var random = new Random(seed);
        for (var op = 0; op < 3000; op++)
        {
            var dice = random.Next(100);
            var last = reference.State().LastSeq;
            if (dice < 75)
            {
                var subject = $"k.{random.Next(30)}";
                var payload = new byte[random.Next(0, 120)];
                random.NextBytes(payload);
                var a = reference.Append(B(subject), [], payload, 1_000 + op);
                var b = store.Append(B(subject), [], payload, 1_000 + op);
                Assert.Equal(a, b);
            }
            else if (dice < 88 && last > 0)
            {
                var seq = (ulong)random.NextInt64(1, (long)last + 1);
                Assert.Equal(reference.RemoveMessage(seq), store.RemoveMessage(seq));
            }
            else if (dice < 90)
            {
                var subject = $"k.{random.Next(30)}";
                Assert.Equal(reference.Purge(subject, 0, 1), store.Purge(subject, 0, 1));
            }
            else if (dice < 91 && last > 20)
            {
                var seq = reference.State().FirstSeq + (ulong)random.Next(0, 10);
                Assert.Equal(reference.Compact(seq), store.Compact(seq));
            }
            else if (dice < 92 && last > 20)
            {
                var target = reference.LoadNextMessage(null, last - (ulong)random.Next(1, 15));
                if (target.Found)
                {
                    Assert.Equal(reference.Truncate(target.Message!.Sequence), store.Truncate(target.Message.Sequence));
                }
            }
            else if (dice < 93 && last > 0)
            {
                var seq = (ulong)random.NextInt64(1, (long)last + 1);
                Assert.Equal(reference.EraseMessage(seq), store.EraseMessage(seq));
            }
            else if (dice < 97)
            {
                store.Flush();
            }
            else
            {
                store.Flush();
                store = OpenAgain(directory, config); // crash: the old instance is abandoned
                Assert.Empty(store.Warnings);
            }
        }

        store.Flush();
        AssertSameContents(reference, OpenAgain(directory, config));
    }
}
