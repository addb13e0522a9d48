using Xunit;

namespace Courier.Storage.Tests;

/// <summary>Per-subject state, filtered loads and pending counts.</summary>
public abstract partial class StreamStoreTests
{
    [Fact]
    public void Load_last_by_literal_wildcard_and_all()
    {
        var store = Create();
        PutOk(store, "orders.eu", "1");
        PutOk(store, "orders.us", "2");
        PutOk(store, "orders.eu", "3");
        PutOk(store, "payments.us", "4");
        store = Reopen(store);

        Assert.Equal(3UL, store.LoadLastMessage("orders.eu").Message!.Sequence);
        Assert.Equal(3UL, store.LoadLastMessage("orders.*").Message!.Sequence);
        Assert.Equal(4UL, store.LoadLastMessage("*.us").Message!.Sequence);
        Assert.Equal(4UL, store.LoadLastMessage(">").Message!.Sequence);
        Assert.Equal(4UL, store.LoadLastMessage(null).Message!.Sequence);
        Assert.Equal(LoadStatus.NotFound, store.LoadLastMessage("orders.asia").Status);
        Assert.Equal(LoadStatus.NotFound, store.LoadLastMessage("orders.*.x").Status);

        store.RemoveMessage(4);
        Assert.Equal(3UL, store.LoadLastMessage(">").Message!.Sequence);
        Assert.Equal(2UL, store.LoadLastMessage("*.us").Message!.Sequence);
        store.RemoveMessage(3);
        Assert.Equal(1UL, store.LoadLastMessage("orders.eu").Message!.Sequence);
    }

    [Fact]
    public void Load_next_with_a_filter_finds_the_first_match_at_or_after_start()
    {
        var store = Create();
        PutOk(store, "a.1");
        PutOk(store, "b.1");
        PutOk(store, "a.2");
        PutOk(store, "b.2");
        PutOk(store, "a.1");

        Assert.Equal(1UL, store.LoadNextMessage("a.1", 0).Message!.Sequence);
        Assert.Equal(5UL, store.LoadNextMessage("a.1", 2).Message!.Sequence);
        Assert.Equal(3UL, store.LoadNextMessage("a.*", 2).Message!.Sequence);
        Assert.Equal(2UL, store.LoadNextMessage("*.1", 2).Message!.Sequence);
        Assert.Equal(4UL, store.LoadNextMessage("b.>", 3).Message!.Sequence);
        Assert.Equal(4UL, store.LoadNextMessage(null, 4).Message!.Sequence);
        Assert.Equal(LoadStatus.EndOfStream, store.LoadNextMessage("b.*", 5).Status);
        Assert.Equal(LoadStatus.EndOfStream, store.LoadNextMessage("c.*", 1).Status);
        Assert.Equal(LoadStatus.EndOfStream, store.LoadNextMessage(">", 6).Status);

        store.RemoveMessage(3);
        Assert.Equal(5UL, store.LoadNextMessage("a.*", 2).Message!.Sequence);
        store.RemoveMessage(1);
        Assert.Equal(2UL, store.LoadNextMessage("", 1).Message!.Sequence);
    }

    [Fact]
    public void Load_next_walks_a_thousand_subjects_in_order()
    {
        var store = Create();
        for (var i = 0; i < 1000; i++)
        {
            PutOk(store, $"foo.{i}", "ZZZ");
        }

        store = Reopen(store);
        var seq = 1UL;
        for (var i = 0; i < 1000; i++)
        {
            var r = store.LoadNextMessage("foo.>", seq);
            Assert.Equal($"foo.{i}", r.Message!.Subject);
            Assert.Equal(seq, r.Message.Sequence);
            seq++;
        }

        Assert.Equal(223UL, store.LoadNextMessage("foo.222", 1).Message!.Sequence);
        Assert.Equal(LoadStatus.EndOfStream, store.LoadNextMessage("foo.222", 224).Status);
        Assert.Equal(1000UL, store.LoadNextMessage("*.999", 1).Message!.Sequence);
    }

    [Fact]
    public void Subjects_state_reports_counts_first_and_last_per_subject()
    {
        var store = Create();
        PutOk(store, "a.x");
        PutOk(store, "a.y");
        PutOk(store, "a.x");
        PutOk(store, "b.x");
        PutOk(store, "a.x");
        store.RemoveMessage(3);
        store.Flush();
        store = Reopen(store);

        var all = store.SubjectsState(null);
        Assert.Equal(3, all.Count);
        Assert.Equal(new SubjectState(2, 1, 5), all["a.x"]);
        Assert.Equal(new SubjectState(1, 2, 2), all["a.y"]);
        Assert.Equal(["a.x", "a.y"], store.SubjectsState("a.*").Keys.Order());
        Assert.Equal(["a.x", "b.x"], store.SubjectsState("*.x").Keys.Order());
        Assert.Single(store.SubjectsState("b.x"));
        Assert.Empty(store.SubjectsState("c"));
    }

    [Fact]
    public void Per_subject_first_and_last_follow_removals_anywhere()
    {
        var store = Create();
        for (var i = 0; i < 30; i++)
        {
            PutOk(store, $"s.{i % 3}");
        }

        // s.0 has 1, 4, 7, ..., 28
        store.RemoveMessage(4);
        store.RemoveMessage(1);
        Assert.Equal(new SubjectState(8, 7, 28), store.SubjectsState("s.0")["s.0"]);
        store.RemoveMessage(28);
        store.RemoveMessage(25);
        Assert.Equal(new SubjectState(6, 7, 22), store.SubjectsState("s.0")["s.0"]);
        store.RemoveMessage(10);
        store.RemoveMessage(7);
        Assert.Equal(new SubjectState(4, 13, 22), store.SubjectsState("s.0")["s.0"]);
        Assert.Equal(13UL, store.LoadNextMessage("s.0", 0).Message!.Sequence);
        Assert.Equal(31UL, PutOk(store, "s.0"));
        Assert.Equal(new SubjectState(5, 13, 31), store.SubjectsState("s.0")["s.0"]);
    }

    [Fact]
    public void Filtered_state_counts_from_a_start_sequence()
    {
        var store = Create();
        for (var i = 0; i < 20; i++)
        {
            PutOk(store, i % 2 == 0 ? "even" : "odd");
        }

        Assert.Equal(new SubjectState(10, 1, 19), store.FilteredState(0, "even"));
        Assert.Equal(new SubjectState(5, 11, 19), store.FilteredState(10, "even"));
        Assert.Equal(new SubjectState(5, 12, 20), store.FilteredState(11, "odd"));
        Assert.Equal(new SubjectState(20, 1, 20), store.FilteredState(1, ">"));
        Assert.Equal(new SubjectState(6, 15, 20), store.FilteredState(15, null));
        Assert.Equal(default, store.FilteredState(21, null));
        Assert.Equal(new SubjectState(6, 15, 20), store.FilteredState(15, "*"));
        Assert.Equal(default, store.FilteredState(1, "*.*"));
    }

    [Fact]
    public void Num_pending_matches_a_brute_force_count()
    {
        var store = Create();
        var tokens = new[] { "foo", "bar", "baz" };
        var random = new Random(42);
        var subjects = new List<string>();
        for (var i = 0; i < 3000; i++)
        {
            var subject = $"{tokens[random.Next(3)]}.{tokens[random.Next(3)]}.{tokens[random.Next(3)]}.{tokens[random.Next(3)]}";
            subjects.Add(subject);
            PutOk(store, subject, "Hello World");
        }

        for (var i = 0; i < 300; i++)
        {
            store.RemoveMessage((ulong)random.Next(1, 3001));
        }

        var live = new Dictionary<ulong, string>();
        for (ulong seq = 1; seq <= 3000; seq++)
        {
            var r = store.LoadMessage(seq);
            if (r.Found)
            {
                live[seq] = r.Message!.Subject;
            }
        }

        foreach (var filter in new[] { "foo.>", "*.bar.>", "foo.bar.*.baz", "*.foo.bar.*", "foo.foo.bar.baz", ">", "nope.*", null })
        {
            foreach (var start in new ulong[] { 0, 1, 2, 200, 444, 555, 1222, 2888, 2999, 3000, 3001 })
            {
                var matching = live.Where(kv => kv.Key >= start && (filter is null || Matches(kv.Value, filter))).Select(kv => kv.Key).Order().ToList();
                var expected = new SubjectState((ulong)matching.Count, matching.Count > 0 ? matching[0] : 0, matching.Count > 0 ? matching[^1] : 0);
                Assert.Equal(expected, store.FilteredState(start, filter));
                var (total, validThrough) = store.NumPending(start, filter, lastPerSubject: false);
                Assert.Equal(expected.Msgs, total);
                Assert.Equal(3000UL, validThrough);

                var lastPerSubject = live.Where(kv => filter is null || Matches(kv.Value, filter)).GroupBy(kv => kv.Value).Count(g => g.Max(kv => kv.Key) >= start);
                Assert.Equal((ulong)lastPerSubject, store.NumPending(start, filter, lastPerSubject: true).Total);
            }
        }
    }

    [Fact]
    public void Pending_counts_from_either_side_of_the_start_sequence()
    {
        // A consumer asks for its pending count near the front and near the end of a stream, with and
        // without interior deletes; each answer is checked against a count by hand.
        var store = Create();
        for (var i = 1; i <= 100; i++)
        {
            PutOk(store, i % 2 == 0 ? "even" : "odd", "x");
        }

        Assert.Equal(new SubjectState(91, 10, 100), store.FilteredState(10, null));
        Assert.Equal(new SubjectState(51, 50, 100), store.FilteredState(50, null));
        Assert.Equal(new SubjectState(11, 90, 100), store.FilteredState(90, null));
        Assert.Equal(new SubjectState(46, 10, 100), store.FilteredState(9, "even"));
        Assert.Equal(new SubjectState(5, 92, 100), store.FilteredState(91, "even"));

        store.RemoveMessage(1);
        store.RemoveMessage(10);
        store.RemoveMessage(12);
        store.RemoveMessage(95);
        Assert.Equal(new SubjectState(88, 11, 100), store.FilteredState(10, null));
        Assert.Equal(new SubjectState(10, 90, 100), store.FilteredState(90, null));
        Assert.Equal(new SubjectState(50, 50, 100), store.FilteredState(50, null));
        Assert.Equal(new SubjectState(44, 14, 100), store.FilteredState(9, "even"));
        Assert.Equal(new SubjectState(5, 92, 100), store.FilteredState(91, "even"));
        Assert.Equal(88UL, store.NumPending(10, null, lastPerSubject: false).Total);
    }

    [Fact]
    public void Sequence_from_time_finds_the_first_message_at_or_after()
    {
        var store = Create();
        Assert.Equal(1UL, store.GetSequenceFromTime(5));
        for (var i = 1; i <= 100; i++)
        {
            PutOk(store, "foo", timestamp: i * 10);
        }

        Assert.Equal(1UL, store.GetSequenceFromTime(0));
        Assert.Equal(1UL, store.GetSequenceFromTime(10));
        Assert.Equal(2UL, store.GetSequenceFromTime(11));
        Assert.Equal(50UL, store.GetSequenceFromTime(500));
        Assert.Equal(100UL, store.GetSequenceFromTime(1000));
        Assert.Equal(101UL, store.GetSequenceFromTime(1001));

        for (ulong seq = 40; seq <= 60; seq++)
        {
            store.RemoveMessage(seq);
        }

        for (ulong seq = 91; seq <= 100; seq++)
        {
            store.RemoveMessage(seq);
        }

        Assert.Equal(61UL, store.GetSequenceFromTime(450));
        Assert.Equal(39UL, store.GetSequenceFromTime(390));
        Assert.Equal(101UL, store.GetSequenceFromTime(905));
        Assert.Equal(90UL, store.GetSequenceFromTime(900));
    }

    /// <summary>NATS subject matching for the brute-force checks (independent of the store's own).</summary>
    protected static bool Matches(string subject, string? filter)
    {
        if (string.IsNullOrEmpty(filter) || filter == ">")
        {
            return true;
        }

        var s = subject.Split('.');
        var f = filter.Split('.');
        for (var i = 0; i < f.Length; i++)
        {
            if (f[i] == ">")
            {
                return s.Length > i;
            }

            if (i >= s.Length || (f[i] != "*" && f[i] != s[i]))
            {
                return false;
            }
        }

        return s.Length == f.Length;
    }
}
