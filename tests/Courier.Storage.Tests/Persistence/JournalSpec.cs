using System.Text;
using Courier.Storage.Persistence;
using Xunit;

namespace Courier.Storage.Tests.Persistence;

/// <summary>
/// The journal contract: Akka.Persistence.TCK's <c>JournalSpec</c> ported to the engine (the TCK itself
/// cannot be restored from this project's package mirror, NU1101), plus the cases its batching, deletes
/// and metadata need. Runs against <see cref="FileJournalSpec"/> and <see cref="MemoryJournalSpec"/>.
/// Each test starts, as the TCK does, with events 1..5 of <see cref="Pid"/> written in one call as the
/// atomic writes [1] [2] [3] [4 5].
/// </summary>
public abstract class JournalSpec : IDisposable
{
    private static int _counter;

    protected JournalSpec()
    {
        Pid = "p-" + Interlocked.Increment(ref _counter);
        WriterGuid = Guid.NewGuid().ToString();
    }

    /// <summary>This test's persistence id.</summary>
    protected string Pid { get; }

    /// <summary>This test's writer (an actor incarnation's guid).</summary>
    protected string WriterGuid { get; }

    /// <summary>The journal under test, with events 1..5 of <see cref="Pid"/>.</summary>
    protected IJournalStore Journal => _journal ??= Initialize(CreateJournal());

    private IJournalStore? _journal;

    protected abstract IJournalStore CreateJournal();

    public virtual void Dispose()
    {
        _journal?.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>Replaces the journal under test (after a reopen).</summary>
    protected void Use(IJournalStore journal) => _journal = journal;

    protected static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    protected static string S(ReadOnlyMemory<byte> bytes) => Encoding.UTF8.GetString(bytes.Span);

    protected JournalRecord Event(long seq, string? pid = null, string? payload = null) =>
        new(pid ?? Pid, seq, B(payload ?? "a-" + seq), "string", WriterGuid);

    /// <summary>Writes <paramref name="writes"/> in one call and asserts that none was rejected.</summary>
    protected static void WriteAll(IJournalStore journal, params JournalWrite[] writes)
    {
        var rejections = new Exception?[writes.Length];
        journal.WriteMessages(writes, rejections);
        Assert.All(rejections, r => Assert.Null(r));
    }

    protected static List<JournalRecord> Replay(IJournalStore journal, string pid, long from = 1, long to = long.MaxValue, long max = long.MaxValue)
    {
        var replayed = new List<JournalRecord>();
        var count = journal.ReplayMessages(pid, from, to, max, replayed.Add);
        Assert.Equal(replayed.Count, count);
        return replayed;
    }

    /// <summary>Asserts that <paramref name="replayed"/> are this test's events <paramref name="expected"/>, in order (the TCK's IsReplayedMessage).</summary>
    protected void AssertReplayed(IReadOnlyList<JournalRecord> replayed, params long[] expected)
    {
        Assert.Equal(expected, replayed.Select(r => r.SequenceNr));
        foreach (var r in replayed)
        {
            Assert.Equal(Pid, r.PersistenceId);
            Assert.Equal("a-" + r.SequenceNr, S(r.Payload));
            Assert.Equal(WriterGuid, r.WriterGuid);
            Assert.Equal("string", r.Manifest);
        }
    }

    private IJournalStore Initialize(IJournalStore journal)
    {
        WriteAll(journal, new JournalWrite(Event(1)), new JournalWrite(Event(2)), new JournalWrite(Event(3)), new JournalWrite([Event(4), Event(5)]));
        return journal;
    }

    // ---- The TCK's JournalSpec ----

    [Fact]
    public void Journal_should_replay_all_messages()
    {
        AssertReplayed(Replay(Journal, Pid), 1, 2, 3, 4, 5);
        Assert.Equal(5, Journal.ReadHighestSequenceNr(Pid));
    }

    [Fact]
    public void Journal_should_replay_messages_using_a_lower_sequence_number_bound() =>
        AssertReplayed(Replay(Journal, Pid, from: 3), 3, 4, 5);

    [Fact]
    public void Journal_should_replay_messages_using_an_upper_sequence_number_bound() =>
        AssertReplayed(Replay(Journal, Pid, to: 3), 1, 2, 3);

    [Fact]
    public void Journal_should_replay_messages_using_a_count_limit() =>
        AssertReplayed(Replay(Journal, Pid, max: 3), 1, 2, 3);

    [Fact]
    public void Journal_should_replay_messages_using_lower_and_upper_sequence_number_bound() =>
        AssertReplayed(Replay(Journal, Pid, from: 2, to: 3), 2, 3);

    [Fact]
    public void Journal_should_replay_messages_using_lower_and_upper_sequence_number_bound_and_count_limit() =>
        AssertReplayed(Replay(Journal, Pid, from: 2, to: 5, max: 2), 2, 3);

    [Fact]
    public void Journal_should_replay_a_single_if_lower_sequence_number_bound_equals_upper_sequence_number_bound() =>
        AssertReplayed(Replay(Journal, Pid, from: 2, to: 2), 2);

    [Fact]
    public void Journal_should_replay_a_single_message_if_count_limit_is_equal_one() =>
        AssertReplayed(Replay(Journal, Pid, from: 2, to: 4, max: 1), 2);

    [Fact]
    public void Journal_should_not_replay_messages_if_count_limit_equals_zero()
    {
        Assert.Empty(Replay(Journal, Pid, from: 2, to: 4, max: 0));
        Assert.Equal(5, Journal.ReadHighestSequenceNr(Pid));
    }

    [Fact]
    public void Journal_should_not_replay_messages_if_lower_sequence_number_bound_is_greater_than_upper_sequence_number_bound()
    {
        Assert.Empty(Replay(Journal, Pid, from: 3, to: 2));
        Assert.Equal(5, Journal.ReadHighestSequenceNr(Pid));
    }

    [Fact]
    public void Journal_should_not_replay_messages_if_the_persistent_actor_has_not_yet_written_messages()
    {
        Assert.Empty(Replay(Journal, "non-existing-pid", from: 0));
        Assert.Equal(0, Journal.ReadHighestSequenceNr("non-existing-pid"));
    }

    [Fact]
    public void Journal_should_not_replay_permanently_deleted_messages_on_range_deletion()
    {
        Journal.DeleteMessagesTo(Pid, 3);
        AssertReplayed(Replay(Journal, Pid), 4, 5);
    }

    [Fact]
    public void Journal_should_not_reset_HighestSequenceNr_after_message_deletion()
    {
        AssertReplayed(Replay(Journal, Pid, from: 0), 1, 2, 3, 4, 5);
        Journal.DeleteMessagesTo(Pid, 3);
        AssertReplayed(Replay(Journal, Pid, from: 0), 4, 5);
        Assert.Equal(5, Journal.ReadHighestSequenceNr(Pid));
    }

    [Fact]
    public void Journal_should_not_reset_HighestSequenceNr_after_journal_cleanup()
    {
        AssertReplayed(Replay(Journal, Pid, from: 0), 1, 2, 3, 4, 5);
        Journal.DeleteMessagesTo(Pid, long.MaxValue);
        Assert.Empty(Replay(Journal, Pid, from: 0));
        Assert.Equal(5, Journal.ReadHighestSequenceNr(Pid));
    }

    [Fact]
    public void Journal_should_serialize_events_with_their_metadata()
    {
        var payload = new byte[] { 0, 1, 2, 255, 128, 7 };
        var timestamp = 1_700_000_000_123_456_789L;
        WriteAll(Journal, new JournalWrite(new JournalRecord(Pid, 6, payload, "tck.TestPayload", WriterGuid, timestamp)));

        var replayed = Assert.Single(Replay(Journal, Pid, from: 6));
        Assert.Equal(Pid, replayed.PersistenceId);
        Assert.Equal(6, replayed.SequenceNr);
        Assert.Equal(payload, replayed.Payload.ToArray());
        Assert.Equal("tck.TestPayload", replayed.Manifest);
        Assert.Equal(WriterGuid, replayed.WriterGuid);
        Assert.Equal(timestamp, replayed.Timestamp);
        Assert.Equal(6, Journal.ReadHighestSequenceNr(Pid));
    }

    [Fact]
    public void Journal_rejects_a_write_it_cannot_store_and_stores_the_rest_of_the_batch()
    {
        // The TCK's "optionally may reject non-serializable events": 6 and 8 are stored, 7 is rejected.
        var tooLong = new string('m', ushort.MaxValue + 1); // a manifest longer than the format's u16
        var writes = new[]
        {
            new JournalWrite(Event(6, payload: "b-6")),
            new JournalWrite(Event(7, payload: "b-7") with { Manifest = tooLong }),
            new JournalWrite(Event(8, payload: "b-8")),
        };
        var rejections = new Exception?[3];
        Journal.WriteMessages(writes, rejections);

        Assert.Null(rejections[0]);
        Assert.IsType<JournalWriteRejectedException>(rejections[1]);
        Assert.Null(rejections[2]);
        Assert.Equal(["b-6", "b-8"], Replay(Journal, Pid, from: 6).Select(r => S(r.Payload)));
    }

    // ---- Atomic writes ----

    [Fact]
    public void An_atomic_write_of_several_events_is_replayed_whole_and_in_order()
    {
        WriteAll(Journal, new JournalWrite([Event(6), Event(7), Event(8)]));
        AssertReplayed(Replay(Journal, Pid), 1, 2, 3, 4, 5, 6, 7, 8);
        Assert.Equal(8, Journal.ReadHighestSequenceNr(Pid));
    }

    [Fact]
    public void A_replay_can_start_and_stop_inside_an_atomic_write()
    {
        WriteAll(Journal, new JournalWrite([Event(6), Event(7), Event(8)]));
        AssertReplayed(Replay(Journal, Pid, from: 5, to: 7), 5, 6, 7);
        AssertReplayed(Replay(Journal, Pid, from: 7, max: 1), 7);
    }

    [Fact]
    public void A_delete_inside_an_atomic_write_hides_only_its_deleted_part()
    {
        Journal.DeleteMessagesTo(Pid, 4); // 4 and 5 are one atomic write
        AssertReplayed(Replay(Journal, Pid), 5);
        Assert.Equal(5, Journal.ReadHighestSequenceNr(Pid));
    }

    [Fact]
    public void An_atomic_write_must_hold_one_persistence_id_and_ascending_sequence_numbers()
    {
        Assert.Throws<ArgumentException>(() => new JournalWrite([Event(6), Event(7, pid: "other")]));
        Assert.Throws<ArgumentException>(() => new JournalWrite([Event(7), Event(6)]));
        Assert.Throws<ArgumentException>(() => new JournalWrite([Event(0)]));
        Assert.Throws<ArgumentException>(() => new JournalWrite(Array.Empty<JournalRecord>()));
    }

    // ---- Deletes ----

    [Fact]
    public void Deletes_are_cumulative_and_never_move_back()
    {
        Journal.DeleteMessagesTo(Pid, 3);
        Journal.DeleteMessagesTo(Pid, 2); // lower than before: no effect
        AssertReplayed(Replay(Journal, Pid), 4, 5);
        Journal.DeleteMessagesTo(Pid, 4);
        AssertReplayed(Replay(Journal, Pid), 5);
    }

    [Fact]
    public void Writes_continue_after_a_full_delete_and_only_the_new_events_replay()
    {
        Journal.DeleteMessagesTo(Pid, long.MaxValue);
        WriteAll(Journal, new JournalWrite(Event(6)), new JournalWrite(Event(7)));
        AssertReplayed(Replay(Journal, Pid), 6, 7);
        Assert.Equal(7, Journal.ReadHighestSequenceNr(Pid));
    }

    [Fact]
    public void A_delete_past_the_highest_deletes_only_what_exists()
    {
        Journal.DeleteMessagesTo(Pid, 100);
        WriteAll(Journal, new JournalWrite(Event(6)));
        AssertReplayed(Replay(Journal, Pid), 6); // 6 was not covered by the earlier delete to 100
    }

    [Fact]
    public void Deleting_an_unknown_persistence_id_is_harmless()
    {
        Journal.DeleteMessagesTo("nobody", 10);
        Assert.Equal(0, Journal.ReadHighestSequenceNr("nobody"));
        AssertReplayed(Replay(Journal, Pid), 1, 2, 3, 4, 5);
    }

    // ---- Many persistence ids in one store ----

    [Fact]
    public void Persistence_ids_are_kept_apart_and_any_string_works()
    {
        string[] ids = ["a.b.c", "*", ">", "with space", "ünïcødé/😀", "j.a", "x"];
        foreach (var id in ids)
        {
            WriteAll(Journal, new JournalWrite(new JournalRecord(id, 1, B(id), "string", WriterGuid)));
        }

        foreach (var id in ids)
        {
            var replayed = Assert.Single(Replay(Journal, id));
            Assert.Equal(id, S(replayed.Payload));
            Assert.Equal(id, replayed.PersistenceId);
        }

        AssertReplayed(Replay(Journal, Pid), 1, 2, 3, 4, 5);
        var rejections = new Exception?[1];
        Journal.WriteMessages([new JournalWrite(new JournalRecord("x", 2, B("x")))], rejections);
        Assert.Null(rejections[0]);
    }

    [Fact]
    public void An_empty_persistence_id_is_rejected() =>
        Assert.Throws<ArgumentException>(() => new JournalWrite(new JournalRecord("", 1, B("x"))));

    [Fact]
    public void Interleaved_ids_replay_their_own_events_from_any_start()
    {
        const int n = 300;
        for (var seq = 1; seq <= n; seq++)
        {
            // One call per round, as a group commit of several actors: each id's events interleave with the others'.
            WriteAll(Journal, new JournalWrite(Event(seq, pid: "left")), new JournalWrite(Event(seq, pid: "right")), new JournalWrite(Event(seq, pid: $"noise-{seq % 7}")));
        }

        foreach (var from in new long[] { 1, 2, 150, 299, 300, 301 })
        {
            var replayed = Replay(Journal, "left", from: from);
            Assert.Equal(Enumerable.Range((int)from, Math.Max(0, n - (int)from + 1)).Select(i => (long)i), replayed.Select(r => r.SequenceNr));
            Assert.All(replayed, r => Assert.Equal("left", r.PersistenceId));
        }

        Journal.DeleteMessagesTo("left", 200);
        Assert.Equal(Enumerable.Range(201, 100).Select(i => (long)i), Replay(Journal, "left").Select(r => r.SequenceNr));
        Assert.Equal(n, Replay(Journal, "right").Count);
    }

    // ---- Metadata ----

    [Fact]
    public void A_writer_that_is_not_a_guid_and_an_empty_manifest_round_trip()
    {
        WriteAll(Journal, new JournalWrite(new JournalRecord(Pid, 6, B("x"), "", "writer-1")), new JournalWrite(new JournalRecord(Pid, 7, B("y"), "m", "")));
        var replayed = Replay(Journal, Pid, from: 6);
        Assert.Equal(("", "writer-1"), (replayed[0].Manifest, replayed[0].WriterGuid));
        Assert.Equal(("m", ""), (replayed[1].Manifest, replayed[1].WriterGuid));
    }

    [Fact]
    public void An_event_without_a_timestamp_gets_the_write_time_and_events_keep_their_own()
    {
        var before = UnixNanos(DateTime.UtcNow);
        WriteAll(Journal, new JournalWrite([Event(6), Event(7) with { Timestamp = 42 }]));
        var after = UnixNanos(DateTime.UtcNow);
        var replayed = Replay(Journal, Pid, from: 6);
        Assert.InRange(replayed[0].Timestamp, before, after);
        Assert.Equal(42, replayed[1].Timestamp);
        Assert.Equal(replayed[0].Timestamp, Replay(Journal, Pid, from: 6, max: 1)[0].Timestamp);
    }

    [Fact]
    public void An_empty_payload_round_trips()
    {
        WriteAll(Journal, new JournalWrite(new JournalRecord(Pid, 6, ReadOnlyMemory<byte>.Empty, "empty", WriterGuid)));
        Assert.True(Assert.Single(Replay(Journal, Pid, from: 6)).Payload.IsEmpty);
    }

    protected static long UnixNanos(DateTime utc) => (utc.Ticks - DateTime.UnixEpoch.Ticks) * 100;
}

/// <summary>The journal contract against the journal on a MemoryStore.</summary>
public sealed class MemoryJournalSpec : JournalSpec
{
    protected override IJournalStore CreateJournal() => new MemoryJournalStore();
}
