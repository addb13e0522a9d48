using Courier.Protocols.JetStream;
using Xunit;

namespace Courier.Storage.Tests;

/// <summary>Limits enforced on append, with nats-server's meanings.</summary>
public abstract partial class StreamStoreTests
{
    [Fact]
    public void Max_msgs_with_discard_old_drops_the_oldest()
    {
        var store = Create(new StoreConfig { MaxMsgs = 10 });
        for (var i = 0; i < 25; i++)
        {
            PutOk(store, "foo");
        }

        store.Flush();
        var state = Reopen(store).State();
        Assert.Equal((10UL, 16UL, 25UL), (state.Msgs, state.FirstSeq, state.LastSeq));
    }

    [Fact]
    public void Max_msgs_with_discard_new_refuses_the_new_message()
    {
        var store = Create(new StoreConfig { MaxMsgs = 10, Discard = DiscardPolicy.New });
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, "foo");
        }

        var r = Put(store, "foo");
        Assert.Equal(StoreError.MaxMsgs, r.Error);
        Assert.Equal("maximum messages exceeded", r.Error.Describe());
        Assert.Equal(0UL, r.Sequence);
        Assert.Equal((10UL, 1UL, 10UL), (store.State().Msgs, store.State().FirstSeq, store.State().LastSeq));
        store.RemoveMessage(3);
        Assert.Equal(11UL, PutOk(store, "foo"));
    }

    [Fact]
    public void Max_bytes_with_discard_old_drops_the_oldest()
    {
        var size = Size("foo", "0123456789");
        var store = Create(new StoreConfig { MaxBytes = (long)(size * 5) + 3 });
        for (var i = 0; i < 12; i++)
        {
            PutOk(store, "foo", "0123456789");
        }

        store.Flush();
        var state = Reopen(store).State();
        Assert.Equal((5UL, 8UL, 12UL, 5 * size), (state.Msgs, state.FirstSeq, state.LastSeq, state.Bytes));
    }

    [Fact]
    public void Max_bytes_with_discard_new_refuses_what_would_exceed()
    {
        var size = Size("foo", "0123456789");
        var store = Create(new StoreConfig { MaxBytes = (long)(size * 5), Discard = DiscardPolicy.New });
        for (var i = 0; i < 5; i++)
        {
            PutOk(store, "foo", "0123456789"); // exactly at the limit is allowed
        }

        Assert.Equal(StoreError.MaxBytes, Put(store, "foo", "0123456789").Error);
        Assert.Equal(StoreError.MaxBytes, Put(store, "foo", "").Error);
        Assert.Equal(5UL, store.State().Msgs);
    }

    [Fact]
    public void Max_msgs_per_subject_keeps_the_newest_of_each_subject()
    {
        var store = Create(new StoreConfig { MaxMsgsPerSubject = 3 });
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, "a", $"a{i}");
            PutOk(store, "b", $"b{i}");
        }

        store.Flush();
        store = Reopen(store);
        var subjects = store.SubjectsState(null);
        Assert.Equal(new SubjectState(3, 15, 19), subjects["a"]);
        Assert.Equal(new SubjectState(3, 16, 20), subjects["b"]);
        Assert.Equal((6UL, 15UL, 20UL, 0UL), (store.State().Msgs, store.State().FirstSeq, store.State().LastSeq, store.State().NumDeleted));
        Assert.Equal("a7", S(Load(store, 15).Payload));
    }

    [Fact]
    public void Max_msgs_per_subject_of_one_keeps_only_the_last_value()
    {
        var store = Create(new StoreConfig { MaxMsgsPerSubject = 1 });
        for (var i = 0; i < 100; i++)
        {
            PutOk(store, $"kv.{i % 10}", $"v{i}");
        }

        store.Flush();
        store = Reopen(store);
        Assert.Equal(10UL, store.State().Msgs);
        Assert.Equal(91UL, store.State().FirstSeq);
        Assert.Equal("v93", S(store.LoadLastMessage("kv.3").Message!.Payload));
        Assert.Equal(10, store.State().NumSubjects);
    }

    [Fact]
    public void An_append_over_the_subject_limit_shows_the_observer_the_message_it_removes_when_wanted()
    {
        var store = Create(new StoreConfig { MaxMsgsPerSubject = 1 });
        var observer = new RecordingObserver(wantedFrom: 2);
        store.DisplacementObserver = observer;
        PutOk(store, "kv.a", "a1"); // 1
        PutOk(store, "kv.b", "b1"); // 2
        PutOk(store, "kv.a", "a2"); // 3: removes 1, not wanted
        PutOk(store, "kv.b", "b2"); // 4: removes 2, wanted
        PutOk(store, "kv.b", "b3"); // 5: removes 4, wanted

        Assert.Equal([1UL, 2UL, 4UL], observer.Asked);
        Assert.Equal([(2UL, "kv.b", "b1"), (4UL, "kv.b", "b2")], observer.Told.Select(m => (m.Sequence, m.Subject, S(m.Payload))));
        Assert.False(store.LoadMessage(2).Found); // removed all the same
        Assert.False(store.LoadMessage(4).Found);
        Assert.Equal("b3", S(store.LoadLastMessage("kv.b").Message!.Payload));
    }

    [Fact]
    public void Removals_that_are_not_an_appends_subject_limit_are_not_shown_to_the_observer()
    {
        var store = Create(new StoreConfig { MaxMsgs = 2, MaxMsgsPerSubject = 3 });
        var observer = new RecordingObserver(wantedFrom: 0);
        store.DisplacementObserver = observer;
        for (var i = 0; i < 5; i++)
        {
            PutOk(store, "kv.a"); // max_msgs removes the oldest
        }

        store.UpdateConfig(new StoreConfig { MaxMsgs = 2, MaxMsgsPerSubject = 1 }); // a lowered limit
        store.Purge();

        Assert.Empty(observer.Asked);
        Assert.Empty(observer.Told);
    }

    private sealed class RecordingObserver(ulong wantedFrom) : IDisplacementObserver
    {
        public List<ulong> Asked { get; } = [];

        public List<StoredMessage> Told { get; } = [];

        public bool Wants(ulong sequence)
        {
            Asked.Add(sequence);
            return sequence >= wantedFrom;
        }

        public void Displaced(StoredMessage message) => Told.Add(message);
    }

    [Fact]
    public void Discard_new_per_subject_refuses_a_message_over_the_subject_limit()
    {
        var store = Create(new StoreConfig { MaxMsgsPerSubject = 2, Discard = DiscardPolicy.New, DiscardNewPerSubject = true });
        PutOk(store, "a");
        PutOk(store, "a");
        Assert.Equal(StoreError.MaxMsgsPerSubject, Put(store, "a").Error);
        PutOk(store, "b");
        Assert.Equal(3UL, store.State().Msgs);
    }

    [Fact]
    public void Discard_new_at_the_subject_limit_replaces_the_subjects_oldest_even_at_max_msgs()
    {
        var store = Create(new StoreConfig { MaxMsgs = 4, MaxMsgsPerSubject = 2, Discard = DiscardPolicy.New });
        PutOk(store, "a");
        PutOk(store, "a");
        PutOk(store, "b");
        PutOk(store, "b");
        Assert.Equal(StoreError.MaxMsgs, Put(store, "c").Error);
        Assert.Equal(5UL, PutOk(store, "a")); // replaces seq 1
        Assert.Equal((4UL, 2UL), (store.State().Msgs, store.State().FirstSeq));
    }

    [Fact]
    public void Max_msg_size_refuses_larger_headers_plus_payload()
    {
        var store = Create(new StoreConfig { MaxMsgSize = 10 });
        Assert.True(Put(store, "foo", "12345", "12345").Ok);
        var r = Put(store, "foo", "123456", "12345");
        Assert.Equal(StoreError.MessageTooLarge, r.Error);
        Assert.Equal(1UL, store.State().LastSeq);
    }

    [Fact]
    public void Expire_by_age_removes_messages_older_than_max_age_from_the_front()
    {
        var store = Create(new StoreConfig { MaxAge = TimeSpan.FromSeconds(10) });
        const long second = 1_000_000_000;
        var t0 = 1_700_000_000 * second;
        for (var i = 0; i < 10; i++)
        {
            PutOk(store, "foo", timestamp: t0 + (i * second));
        }

        Assert.Equal(0UL, store.ExpireByAge(t0 + (9 * second)));
        Assert.Equal(3UL, store.ExpireByAge(t0 + (12 * second)));
        Assert.Equal((7UL, 4UL), (store.State().Msgs, store.State().FirstSeq));
        Assert.Equal(t0 + (3 * second), store.State().FirstTime);
        store.Flush();
        store = Reopen(store);
        Assert.Equal(7UL, store.ExpireByAge(t0 + (100 * second)));
        store.Flush();
        store = Reopen(store);
        var state = store.State();
        Assert.Equal((0UL, 11UL, 10UL, 0L), (state.Msgs, state.FirstSeq, state.LastSeq, state.FirstTime));
        Assert.Equal(t0 + (9 * second), state.LastTime);
        Assert.Equal(11UL, PutOk(store, "foo"));
    }

    [Fact]
    public void Expire_by_age_without_max_age_does_nothing()
    {
        var store = Create();
        PutOk(store, "foo", timestamp: 1);
        Assert.Equal(0UL, store.ExpireByAge(long.MaxValue));
    }

    [Fact]
    public void Lowering_limits_in_an_update_enforces_them_at_once()
    {
        var store = Create(new StoreConfig { MaxMsgsPerSubject = 10 });
        store.UpdateConfig(new StoreConfig { MaxMsgsPerSubject = 50 });
        for (var i = 0; i < 22; i++)
        {
            PutOk(store, "foo");
        }

        Assert.Equal(22UL, store.SubjectsState("foo")["foo"].Msgs);
        store.UpdateConfig(new StoreConfig { MaxMsgsPerSubject = 10 });
        Assert.Equal(10UL, store.SubjectsState("foo")["foo"].Msgs);
        store.UpdateConfig(new StoreConfig { MaxMsgs = 4 });
        Assert.Equal((4UL, 19UL), (store.State().Msgs, store.State().FirstSeq));
        Assert.Equal(4, store.Config.MaxMsgs);
    }
}
