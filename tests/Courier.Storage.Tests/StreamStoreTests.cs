using System.Text;
using Courier.Protocols.JetStream;
using Xunit;

namespace Courier.Storage.Tests;

/// <summary>
/// The store contract (nats-server's store_test.go / memstore_test.go behaviour), run against both
/// stores: <see cref="MemoryStoreTests"/> and <see cref="FileStoreTests"/>. Tests that call
/// <see cref="Reopen"/> also check that the FileStore recovers the same state from disk.
/// </summary>
public abstract partial class StreamStoreTests : IDisposable
{
    private readonly List<IStreamStore> _stores = [];

    /// <summary>A new, empty store with <paramref name="config"/> (no limits when null).</summary>
    protected IStreamStore Create(StoreConfig? config = null)
    {
        var store = CreateStore(config ?? new StoreConfig { Name = "TEST" });
        _stores.Add(store);
        return store;
    }

    protected abstract IStreamStore CreateStore(StoreConfig config);

    /// <summary>The same store after a clean restart (FileStore: stop and recover from disk; MemoryStore: itself).</summary>
    protected virtual IStreamStore Reopen(IStreamStore store) => store;

    /// <summary>Tracks a store so the test disposes it.</summary>
    protected IStreamStore Track(IStreamStore store)
    {
        _stores.Add(store);
        return store;
    }

    public virtual void Dispose()
    {
        foreach (var store in _stores)
        {
            store.Dispose();
        }

        GC.SuppressFinalize(this);
    }

    protected static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    protected static string S(ReadOnlyMemory<byte> bytes) => Encoding.UTF8.GetString(bytes.Span);

    protected static StoreResult Put(IStreamStore store, string subject, string payload = "ok", string headers = "", long timestamp = 0) =>
        store.Append(B(subject), B(headers), B(payload), timestamp);

    protected static ulong PutOk(IStreamStore store, string subject, string payload = "ok", long timestamp = 0)
    {
        var r = Put(store, subject, payload, timestamp: timestamp);
        Assert.True(r.Ok, $"append refused: {r.Error}");
        return r.Sequence;
    }

    /// <summary>What a message counts for in the state's bytes: nats-server's size for this store's kind.</summary>
    protected ulong Size(string subject, string payload, string headers = "") =>
        IStreamStore.CountedSize(Kind, Encoding.UTF8.GetByteCount(subject), Encoding.UTF8.GetByteCount(headers), Encoding.UTF8.GetByteCount(payload));

    /// <summary>The kind of store the suite runs against.</summary>
    protected abstract StorageType Kind { get; }

    protected static StoredMessage Load(IStreamStore store, ulong seq)
    {
        var r = store.LoadMessage(seq);
        Assert.Equal(LoadStatus.Found, r.Status);
        return r.Message!;
    }

    // ---- Appends and loads ----

    [Fact]
    public void Append_assigns_consecutive_sequences_from_one()
    {
        var store = Create();
        for (ulong i = 1; i <= 10; i++)
        {
            Assert.Equal(i, PutOk(store, "foo"));
        }

        var state = store.State();
        Assert.Equal(10UL, state.Msgs);
        Assert.Equal(1UL, state.FirstSeq);
        Assert.Equal(10UL, state.LastSeq);
        Assert.Equal(10 * Size("foo", "ok"), state.Bytes);
        Assert.Equal(1, state.NumSubjects);
        Assert.Equal(0UL, state.NumDeleted);
    }

    [Fact]
    public void Load_returns_subject_headers_payload_sequence_and_timestamp()
    {
        var store = Create();
        var r = store.Append(B("orders.new"), B("NATS/1.0\r\nk: v\r\n\r\n"), B("hello"), 1_700_000_000_123_456_789);
        Assert.True(r.Ok);
        Assert.Equal(1_700_000_000_123_456_789, r.Timestamp);

        for (var pass = 0; pass < 2; pass++, store = Reopen(store))
        {
            var m = Load(store, 1);
            Assert.Equal("orders.new", m.Subject);
            Assert.Equal("NATS/1.0\r\nk: v\r\n\r\n", S(m.Headers));
            Assert.Equal("hello", S(m.Payload));
            Assert.Equal(1UL, m.Sequence);
            Assert.Equal(1_700_000_000_123_456_789, m.Timestamp);
        }
    }

    [Fact]
    public void Empty_headers_and_payload_round_trip()
    {
        var store = Create();
        Assert.True(store.Append(B("foo"), [], [], 0).Ok);
        var m = Load(Reopen(store), 1);
        Assert.Equal(0, m.Headers.Length);
        Assert.Equal(0, m.Payload.Length);
    }

    [Fact]
    public void A_message_larger_than_a_block_round_trips()
    {
        var store = Create();
        var big = new byte[100_000];
        new Random(7).NextBytes(big);
        PutOk(store, "a");
        Assert.True(store.Append(B("big"), [], big, 0).Ok);
        PutOk(store, "b");
        store = Reopen(store);
        Assert.Equal(big, Load(store, 2).Payload.ToArray());
        Assert.Equal("b", Load(store, 3).Subject);
    }

    [Fact]
    public void Timestamp_zero_means_now()
    {
        var store = Create();
        var before = DateTime.UtcNow;
        var r = Put(store, "foo");
        var stamped = DateTime.UnixEpoch.AddTicks(r.Timestamp / 100);
        Assert.InRange(stamped, before.AddSeconds(-1), DateTime.UtcNow.AddSeconds(1));
        Assert.Equal(r.Timestamp, store.State().FirstTime);
        Assert.Equal(r.Timestamp, store.State().LastTime);
    }

    [Fact]
    public void Loads_past_the_end_are_end_of_stream_and_below_or_deleted_are_not_found()
    {
        var store = Create();
        Assert.Equal(LoadStatus.EndOfStream, store.LoadMessage(1).Status);
        PutOk(store, "foo");
        PutOk(store, "foo");
        PutOk(store, "foo");
        Assert.Equal(LoadStatus.EndOfStream, store.LoadMessage(4).Status);
        Assert.True(store.RemoveMessage(2));
        Assert.Equal(LoadStatus.NotFound, store.LoadMessage(2).Status);
        Assert.True(store.RemoveMessage(1));
        Assert.Equal(LoadStatus.NotFound, store.LoadMessage(1).Status);
        Assert.Equal(LoadStatus.NotFound, store.LoadMessage(0).Status);
        Assert.Equal(LoadStatus.Found, store.LoadMessage(3).Status);
    }

    [Fact]
    public void Empty_and_oversized_subjects_are_refused()
    {
        var store = Create();
        Assert.Equal(StoreError.InvalidSubject, store.Append([], [], B("x"), 0).Error);
        Assert.Equal(StoreError.InvalidSubject, store.Append(new byte[70_000], [], B("x"), 0).Error);
        Assert.Equal(0UL, store.State().LastSeq);
    }

    [Fact]
    public void Append_batch_returns_one_result_per_message_and_flushes()
    {
        var store = Create(new StoreConfig { MaxMsgSize = 4 });
        var batch = new[]
        {
            new StoreMessage(B("a"), default, B("1")),
            new StoreMessage(B("b"), default, B("too big")),
            new StoreMessage(B("c"), B("h"), B("3"), 42),
        };
        var results = new StoreResult[3];
        store.AppendBatch(batch, results);
        Assert.Equal((StoreError.None, 1UL), (results[0].Error, results[0].Sequence));
        Assert.Equal(StoreError.MessageTooLarge, results[1].Error);
        Assert.Equal((StoreError.None, 2UL, 42L), (results[2].Error, results[2].Sequence, results[2].Timestamp));
        store = Reopen(store);
        Assert.Equal("c", Load(store, 2).Subject);
        Assert.Equal("h", S(Load(store, 2).Headers));
    }

    [Fact]
    public void First_sequence_from_the_config_starts_a_new_stream()
    {
        var store = Create(new StoreConfig { FirstSeq = 1000 });
        Assert.Equal(1000UL, PutOk(store, "A"));
        Assert.Equal(1001UL, PutOk(store, "B"));
        var state = Reopen(store).State();
        Assert.Equal((2UL, 1000UL, 1001UL), (state.Msgs, state.FirstSeq, state.LastSeq));
    }

    [Fact]
    public void A_stopped_store_refuses_appends_and_loads()
    {
        var store = Create();
        PutOk(store, "foo");
        store.Stop();
        store.Stop();
        Assert.Equal(StoreError.Closed, Put(store, "foo").Error);
        Assert.Equal(LoadStatus.Closed, store.LoadMessage(1).Status);
        Assert.Throws<ObjectDisposedException>(() => store.State());
    }

    // ---- Deletes ----

    [Fact]
    public void Removing_an_interior_message_leaves_a_gap_that_survives_restart()
    {
        var store = Create();
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, "foo");
        }

        Assert.True(store.RemoveMessage(5));
        Assert.False(store.RemoveMessage(5));
        Assert.True(store.RemoveMessage(7));
        store.Flush();
        store = Reopen(store);

        var state = store.State();
        Assert.Equal((8UL, 1UL, 10UL, 2UL), (state.Msgs, state.FirstSeq, state.LastSeq, state.NumDeleted));
        Assert.Equal([5UL, 7UL], store.DeletedSequences());
        Assert.Equal(LoadStatus.NotFound, store.LoadMessage(5).Status);
        Assert.Equal(8 * Size("foo", "ok"), state.Bytes);
    }

    [Fact]
    public void Removing_the_first_message_moves_the_first_sequence_past_deleted_ones()
    {
        var store = Create();
        for (var i = 0; i < 5; i++)
        {
            PutOk(store, "foo");
        }

        store.RemoveMessage(2);
        store.RemoveMessage(3);
        store.RemoveMessage(1);
        store.Flush();
        store = Reopen(store);
        var state = store.State();
        Assert.Equal((2UL, 4UL, 5UL, 0UL), (state.Msgs, state.FirstSeq, state.LastSeq, state.NumDeleted));
        Assert.Empty(store.DeletedSequences());
    }

    [Fact]
    public void Removing_every_message_leaves_first_one_past_last_and_sequences_continue()
    {
        var store = Create();
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, "foo");
        }

        for (ulong seq = 1; seq <= 10; seq++)
        {
            Assert.True(store.RemoveMessage(seq));
        }

        store.Flush();
        store = Reopen(store);
        var state = store.State();
        Assert.Equal((0UL, 11UL, 10UL, 0UL, 0), (state.Msgs, state.FirstSeq, state.LastSeq, state.NumDeleted, state.NumSubjects));
        Assert.Equal(11UL, PutOk(store, "foo"));
    }

    [Fact]
    public void Removing_the_last_message_does_not_reuse_its_sequence()
    {
        var store = Create();
        PutOk(store, "a");
        PutOk(store, "b");
        Assert.True(store.RemoveMessage(2));
        store.Flush();
        store = Reopen(store);
        Assert.Equal(2UL, store.State().LastSeq);
        Assert.Equal(3UL, PutOk(store, "c"));
    }

    [Fact]
    public void Erase_removes_the_message()
    {
        var store = Create();
        PutOk(store, "foo", "secret-1");
        PutOk(store, "foo", "secret-2");
        PutOk(store, "foo", "secret-3");
        Assert.True(store.EraseMessage(2));
        Assert.False(store.EraseMessage(2));
        store = Reopen(store);
        Assert.Equal(LoadStatus.NotFound, store.LoadMessage(2).Status);
        Assert.Equal("secret-3", S(Load(store, 3).Payload));
        Assert.Equal(2UL, store.State().Msgs);
    }

    // ---- Purge, compact, truncate ----

    [Fact]
    public void Purge_removes_everything_and_keeps_the_last_sequence()
    {
        var store = Create();
        for (var i = 0; i < 100; i++)
        {
            PutOk(store, $"foo.{i % 7}");
        }

        Assert.Equal(100UL, store.Purge());
        store = Reopen(store);
        var state = store.State();
        Assert.Equal((0UL, 0UL, 101UL, 100UL, 0), (state.Msgs, state.Bytes, state.FirstSeq, state.LastSeq, state.NumSubjects));
        Assert.Equal(LoadStatus.EndOfStream, store.LoadNextMessage(null, 1).Status);
        Assert.Equal(101UL, PutOk(store, "foo.1"));
        Assert.Equal(101UL, store.State().FirstSeq);
    }

    [Fact]
    public void Purge_of_an_empty_store_starts_at_one()
    {
        var store = Create();
        Assert.Equal(0UL, store.Purge());
        Assert.Equal((1UL, 0UL), (store.State().FirstSeq, store.State().LastSeq));
        Assert.Equal(1UL, PutOk(store, "foo"));
    }

    [Fact]
    public void Purge_by_subject_removes_only_that_subject()
    {
        var store = Create();
        for (var i = 0; i < 30; i++)
        {
            PutOk(store, i % 3 == 0 ? "foo" : "bar");
        }

        Assert.Equal(10UL, store.Purge("foo", 0, 0));
        store = Reopen(store);
        Assert.Equal(20UL, store.State().Msgs);
        Assert.Empty(store.SubjectsState("foo"));
        Assert.Equal(LoadStatus.NotFound, store.LoadLastMessage("foo").Status);
        Assert.Equal(2UL, store.State().FirstSeq);
    }

    [Fact]
    public void Purge_by_wildcard_subject()
    {
        var store = Create();
        PutOk(store, "a.x");
        PutOk(store, "b.x");
        PutOk(store, "a.y");
        PutOk(store, "a.y.z");
        Assert.Equal(2UL, store.Purge("a.*", 0, 0));
        Assert.Equal(["a.y.z", "b.x"], store.SubjectsState(null).Keys.Order());
        Assert.Equal(1UL, store.Purge("a.>", 0, 0));
        Assert.Equal(1UL, Reopen(store).State().Msgs);
    }

    [Fact]
    public void Purge_by_subject_keeping_the_newest()
    {
        var store = Create();
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, "foo", $"m{i}");
            PutOk(store, "bar");
        }

        Assert.Equal(7UL, store.Purge("foo", 0, 3));
        var foo = store.SubjectsState("foo")["foo"];
        Assert.Equal((3UL, 15UL, 19UL), (foo.Msgs, foo.First, foo.Last));
        Assert.Equal(0UL, store.Purge("foo", 0, 3));
        Assert.Equal(0UL, store.Purge("foo", 0, 10));
        Assert.Equal("m9", S(store.LoadLastMessage("foo").Message!.Payload));
    }

    [Fact]
    public void Purge_by_subject_up_to_a_sequence()
    {
        var store = Create();
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, "foo");
        }

        Assert.Equal(4UL, store.Purge("foo", 5, 0));
        Assert.Equal(5UL, store.State().FirstSeq);
        Assert.Equal(6UL, store.Purge("foo", 1, 0));
    }

    [Fact]
    public void Purge_by_subject_up_to_a_sequence_and_keep()
    {
        var store = Create();
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, "foo");
        }

        // Below sequence 8 there are 7; keeping 5 of the 10 allows removing only 5.
        Assert.Equal(5UL, store.Purge("foo", 8, 5));
        Assert.Equal(6UL, store.State().FirstSeq);
    }

    [Fact]
    public void Purge_with_no_subject_and_a_sequence_compacts_over_deleted_messages()
    {
        var store = Create();
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, "foo");
        }

        store.RemoveMessage(2);
        store.RemoveMessage(9);
        Assert.Equal(7UL, store.Purge("", 9, 0));
        var state = Reopen(store).State();
        Assert.Equal((1UL, 10UL, 10UL), (state.Msgs, state.FirstSeq, state.LastSeq));
    }

    [Fact]
    public void Purge_with_no_subject_and_keep_keeps_the_newest()
    {
        var store = Create();
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, $"s.{i % 3}");
        }

        Assert.Equal(6UL, store.Purge(">", 0, 4));
        var state = store.State();
        Assert.Equal((4UL, 7UL, 10UL), (state.Msgs, state.FirstSeq, state.LastSeq));
    }

    [Fact]
    public void Compact_removes_everything_below_the_sequence()
    {
        var store = Create();
        for (var i = 0; i < 1000; i++)
        {
            PutOk(store, $"foo.{i}", "Hello World");
        }

        Assert.Equal(500UL, store.Compact(501));
        store = Reopen(store);
        var state = store.State();
        Assert.Equal((500UL, 501UL, 1000UL, 500), (state.Msgs, state.FirstSeq, state.LastSeq, state.NumSubjects));
        Assert.Equal(LoadStatus.NotFound, store.LoadMessage(500).Status);
        Assert.Equal("foo.500", Load(store, 501).Subject);
        Assert.Equal(500 * Size("foo.500", "Hello World"), state.Bytes);
    }

    [Fact]
    public void Compact_past_the_end_purges_and_the_next_append_gets_that_sequence()
    {
        var store = Create();
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, "foo");
        }

        Assert.Equal(10UL, store.Compact(100));
        store = Reopen(store);
        var state = store.State();
        Assert.Equal((0UL, 100UL, 99UL), (state.Msgs, state.FirstSeq, state.LastSeq));
        Assert.Equal(100UL, PutOk(store, "foo"));
        Assert.Equal(1UL, store.Compact(0));
        Assert.Equal((101UL, 100UL), (store.State().FirstSeq, store.State().LastSeq));
    }

    [Fact]
    public void Truncate_removes_everything_above_and_keeps_interior_deletes()
    {
        var store = Create();
        for (var i = 1; i < 50; i++)
        {
            PutOk(store, "foo");
        }

        for (var i = 50; i <= 100; i++)
        {
            PutOk(store, "bar");
        }

        Assert.Equal(StoreError.InvalidSequence, store.Truncate(101));
        Assert.Equal(StoreError.None, store.Truncate(50));
        Assert.Equal(50UL, store.State().Msgs);

        store.RemoveMessage(10);
        store.RemoveMessage(20);
        store.RemoveMessage(30);
        store.RemoveMessage(40);
        Assert.Equal(StoreError.InvalidSequence, store.Truncate(30));
        Assert.Equal(StoreError.None, store.Truncate(25));
        store = Reopen(store);
        var state = store.State();
        Assert.Equal((23UL, 1UL, 25UL, 1), (state.Msgs, state.FirstSeq, state.LastSeq, state.NumSubjects));
        Assert.Equal([10UL, 20UL], store.DeletedSequences());
        Assert.Equal(25UL, store.SubjectsState("foo")["foo"].Last);
        Assert.Equal(26UL, PutOk(store, "bar"));
        Assert.Equal(26UL, store.LoadLastMessage("bar").Message!.Sequence);
    }

    [Fact]
    public void Truncate_to_zero_resets_the_store()
    {
        var store = Create();
        for (var i = 0; i < 1000; i++)
        {
            PutOk(store, "foo", "Hello World");
        }

        Assert.Equal(StoreError.None, store.Truncate(0));
        var state = store.State();
        Assert.Equal((0UL, 0UL, 0UL, 0UL, 0), (state.Msgs, state.Bytes, state.FirstSeq, state.LastSeq, state.NumSubjects));
        for (var i = 0; i < 1000; i++)
        {
            PutOk(store, "foo", "Hello World");
        }

        store = Reopen(store);
        state = store.State();
        Assert.Equal((1000UL, 1UL, 1000UL, 1000 * Size("foo", "Hello World")), (state.Msgs, state.FirstSeq, state.LastSeq, state.Bytes));
    }
}
