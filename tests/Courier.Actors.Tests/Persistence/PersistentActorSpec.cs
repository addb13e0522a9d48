using Courier.Actors.Persistence;
using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Courier.Storage.Persistence;
using Xunit;
using static Courier.Actors.Tests.Persistence.LedgerActor;

namespace Courier.Actors.Tests.Persistence;

/// <summary>
/// Persistent actors on the runtime: recovery from events and from a snapshot, the stash while a Persist is
/// in flight, PersistAsync and DeferAsync order, failures, and the group commit across actors. The journal
/// can be held at a gate (<see cref="TestJournal"/>) so a test knows a write is in flight.
/// </summary>
public sealed class PersistentActorSpec : PersistenceTestKit
{
    private static readonly TimeSpan Quiet = TimeSpan.FromMilliseconds(200);

    private IActorRef StartLedger(string id, TestProbe? reports = null) =>
        Sys.ActorOf(LedgerActor.Props(id, (reports ?? CreateTestProbe()).Ref));

    private void StopAndWait(IActorRef actor)
    {
        Watch(actor);
        Sys.Stop(actor);
        ExpectTerminated(actor);
    }

    [Fact]
    public void A_new_incarnation_recovers_the_state_from_the_events()
    {
        var first = StartLedger("l1", reports: null);
        first.Tell(new Add("a"), TestActor);
        first.Tell(new Add("b"), TestActor);
        first.Tell(new Add("c"), TestActor);
        ExpectMsg(new Added("a", 1));
        ExpectMsg(new Added("b", 2));
        ExpectMsg(new Added("c", 3));
        StopAndWait(first);

        var reports = CreateTestProbe();
        var second = StartLedger("l1", reports);
        reports.ExpectMsg(new Replayed("a", 1));
        reports.ExpectMsg(new Replayed("b", 2));
        reports.ExpectMsg(new Replayed("c", 3));
        Assert.Equal(["a", "b", "c"], reports.ExpectMsg<Recovered>().Items);
        second.Tell(new Add("d"), TestActor);
        ExpectMsg(new Added("d", 4)); // the sequence numbers continue
    }

    [Fact]
    public void Recovery_starts_from_the_newest_snapshot_and_replays_only_the_events_after_it()
    {
        var reports = CreateTestProbe();
        var first = StartLedger("s1", reports);
        reports.ExpectMsg<Recovered>();
        foreach (var item in new[] { "a", "b", "c" })
        {
            first.Tell(new Add(item), TestActor);
        }

        first.Tell(TakeSnapshot.Instance, TestActor);
        first.Tell(new Add("d"), TestActor);
        first.Tell(new Add("e"), TestActor);
        Assert.Equal(3, reports.ExpectMsg<SaveSnapshotSuccess>().Metadata.SequenceNr);
        ExpectMsg(new Added("a", 1));
        ExpectMsg(new Added("b", 2));
        ExpectMsg(new Added("c", 3));
        ExpectMsg(new Added("d", 4));
        ExpectMsg(new Added("e", 5));
        StopAndWait(first);

        StartLedger("s1", reports);
        var offered = reports.ExpectMsg<Offered>();
        Assert.Equal(3L, offered.SequenceNr);
        Assert.Equal(["a", "b", "c"], offered.Items);
        reports.ExpectMsg(new Replayed("d", 4)); // not a, b, c: they are in the snapshot
        reports.ExpectMsg(new Replayed("e", 5));
        var recovered = reports.ExpectMsg<Recovered>();
        Assert.Equal(["a", "b", "c", "d", "e"], recovered.Items);
        Assert.Equal(5L, recovered.LastSequenceNr);
    }

    [Fact]
    public void Commands_sent_while_a_Persist_is_in_flight_wait_for_its_handler()
    {
        var reports = CreateTestProbe();
        var ledger = StartLedger("st", reports);
        reports.ExpectMsg<Recovered>();
        Journal.Close();
        ledger.Tell(new Add("a"), TestActor);
        Journal.AwaitWriteEntered(DefaultTimeout);
        ledger.Tell(Get.Instance, TestActor);
        ExpectNoMsg(Quiet); // Get is stashed: the write has not returned

        Journal.Open();
        ExpectMsg(new Added("a", 1));
        var state = ExpectMsg<State>();
        Assert.Equal(["a"], state.Items); // Get saw the event applied
        Assert.Equal(1L, state.LastSequenceNr);
    }

    [Fact]
    public void PersistAsync_does_not_stash_commands_its_handlers_run_in_order_and_its_events_share_a_write()
    {
        var reports = CreateTestProbe();
        var ledger = StartLedger("as", reports);
        reports.ExpectMsg<Recovered>();
        Journal.Close();
        ledger.Tell(new AddAsync("a"), TestActor);
        Journal.AwaitWriteEntered(DefaultTimeout);
        ledger.Tell(new AddAsync("b"), TestActor);
        ledger.Tell(new AddAsync("c"), TestActor);
        ledger.Tell(Get.Instance, TestActor);
        var early = ExpectMsg<State>(); // answered at once, while "a" is still being written
        Assert.Empty(early.Items);
        Assert.Equal(0L, early.LastSequenceNr);

        var calls = Journal.Calls.Count;
        Journal.Open();
        ExpectMsg(new Added("a", 1));
        ExpectMsg(new Added("b", 2));
        ExpectMsg(new Added("c", 3));
        Assert.Equal([1, 2], Journal.Calls.Skip(calls)); // b and c waited for a's write and went as one
        ledger.Tell(Get.Instance, TestActor);
        Assert.Equal(["a", "b", "c"], ExpectMsg<State>().Items);
    }

    [Fact]
    public void DeferAsync_runs_after_the_handlers_of_what_was_persisted_before_it()
    {
        var reports = CreateTestProbe();
        var ledger = StartLedger("df", reports);
        reports.ExpectMsg<Recovered>();
        ledger.Tell(new Defer("idle"), TestActor);
        ExpectMsg(new Deferred("idle", 0)); // nothing pending: at once

        Journal.Close();
        ledger.Tell(new AddAsync("a"), TestActor);
        Journal.AwaitWriteEntered(DefaultTimeout);
        ledger.Tell(new Defer("after-a"), TestActor);
        ledger.Tell(new AddAsync("b"), TestActor);
        ledger.Tell(new Defer("after-b"), TestActor);
        ExpectNoMsg(Quiet);
        Journal.Open();
        ExpectMsg(new Added("a", 1));
        ExpectMsg(new Deferred("after-a", 1));
        ExpectMsg(new Added("b", 2));
        ExpectMsg(new Deferred("after-b", 2));
    }

    [Fact]
    public void PersistAll_writes_its_events_atomically_and_runs_every_handler_before_the_next_command()
    {
        var reports = CreateTestProbe();
        var ledger = StartLedger("pa", reports);
        reports.ExpectMsg<Recovered>();
        ledger.Tell(new AddAll(["x", "y", "z"]), TestActor);
        ledger.Tell(Get.Instance, TestActor);
        ExpectMsg(new Added("x", 1));
        ExpectMsg(new Added("y", 2));
        ExpectMsg(new Added("z", 3));
        Assert.Equal(3, ExpectMsg<State>().Items.Length);
        Assert.Equal(1, Journal.Calls[^1]); // one atomic write
        Assert.Equal([1L, 2L, 3L], StoredEvents("pa").Select(e => e.SequenceNr));

        ledger.Tell(new AddAllAsync(["u", "v"]), TestActor);
        ExpectMsg(new Added("u", 4));
        ExpectMsg(new Added("v", 5));
    }

    [Fact]
    public void Commands_that_arrive_during_recovery_are_handled_after_it()
    {
        var first = StartLedger("rc");
        first.Tell(new Add("x"), TestActor);
        first.Tell(new Add("y"), TestActor);
        ExpectMsg<Added>();
        ExpectMsg<Added>();
        StopAndWait(first);

        var second = Sys.ActorOf(LedgerActor.Props("rc", TestActor));
        second.Tell(Get.Instance, TestActor); // before recovery is done
        ExpectMsg(new Replayed("x", 1));
        ExpectMsg(new Replayed("y", 2));
        ExpectMsg<Recovered>();
        Assert.Equal(["x", "y"], ExpectMsg<State>().Items);
    }

    [Fact]
    public void A_killed_actor_restarts_and_recovers_without_losing_or_duplicating_events()
    {
        var reports = CreateTestProbe();
        var parent = Sys.ActorOf(Courier.Actors.Runtime.Props.Create(() => new RestartingParent(LedgerActor.Props("killed", reports.Ref))));
        parent.Tell("child?", TestActor);
        var ledger = ExpectMsg<IActorRef>();
        reports.ExpectMsg<Recovered>();

        const int n = 60;
        for (var i = 1; i <= n; i++)
        {
            ledger.Tell(new Add($"e{i}"), TestActor);
            if (i == n / 2)
            {
                ledger.Tell(Kill.Instance, TestActor); // while Persists are in flight and commands are stashed
            }
        }

        ledger.Tell(Get.Instance, TestActor);
        var acks = new List<Added>();
        State? state = null;
        while (state is null)
        {
            switch (FishForMessage<object>(m => m is Added or State))
            {
                case Added added:
                    acks.Add(added);
                    break;
                case State s:
                    state = s;
                    break;
            }
        }

        var expected = Enumerable.Range(1, n).Select(i => $"e{i}").ToArray();
        Assert.Equal(expected, state.Items); // every command's event, once, in order
        Assert.Equal(n, state.LastSequenceNr);
        var stored = StoredEvents("killed");
        Assert.Equal(Enumerable.Range(1, n).Select(i => (long)i), stored.Select(e => e.SequenceNr));
        Assert.Equal(expected, stored.Select(e => System.Text.Encoding.UTF8.GetString(e.Payload.Span)));
        Assert.Equal(acks.Count, acks.Select(a => a.Item).Distinct().Count()); // no handler ran twice
        Assert.InRange(acks.Count, n - 1, n); // only a write in flight at the kill may go unacknowledged
        reports.FishForMessage<Recovered>(_ => true); // the new incarnation did recover
    }

    [Fact]
    public void An_actor_restarted_during_its_replay_ignores_the_old_replay_and_applies_each_event_once()
    {
        var first = StartLedger("rr");
        for (var i = 1; i <= 20; i++)
        {
            first.Tell(new Add($"e{i}"), TestActor);
        }

        for (var i = 1; i <= 20; i++)
        {
            ExpectMsg<Added>();
        }

        StopAndWait(first);

        var reports = CreateTestProbe();
        Journal.HoldReplays();
        var parent = Sys.ActorOf(Courier.Actors.Runtime.Props.Create(() => new RestartingParent(LedgerActor.Props("rr", reports.Ref))));
        parent.Tell("child?", TestActor);
        var ledger = ExpectMsg<IActorRef>();
        Journal.AwaitReplaysHeld(1, DefaultTimeout); // the first incarnation's replay is held
        ledger.Tell(Kill.Instance, TestActor);
        Journal.AwaitReplaysHeld(2, DefaultTimeout); // the second incarnation's replay is held too

        Journal.ReleaseReplay(0); // the dead incarnation's replay reaches the new one, which is replaying
        reports.ExpectNoMsg(Quiet); // and is ignored: no Replayed, no Recovered until its own replay runs
        Journal.ReleaseReplay(1);

        for (var i = 1; i <= 20; i++)
        {
            reports.ExpectMsg(new Replayed($"e{i}", i));
        }

        var recovered = reports.FishForMessage<Recovered>(_ => true);
        Assert.Equal(Enumerable.Range(1, 20).Select(i => $"e{i}"), recovered.Items);
        Assert.Equal(20, recovered.LastSequenceNr);
        ledger.Tell(Get.Instance, TestActor);
        Assert.Equal(20, ExpectMsg<State>().Items.Length);
        ledger.Tell(new Add("e21"), TestActor);
        ExpectMsg(new Added("e21", 21));
    }

    [Fact]
    public void A_failed_write_stops_the_actor()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var reports = CreateTestProbe();
        var ledger = StartLedger("wf", reports);
        reports.ExpectMsg<Recovered>();
        Watch(ledger);
        Journal.FailWrites = new IOException("disk gone");
        ledger.Tell(new Add("a"), TestActor);

        ExpectTerminated(ledger);
        var failure = failures.FishForMessage<ActorFailure>(f => f.Cause is IOException);
        Assert.Equal(Directive.Stop, failure.Directive);
        Assert.Contains("failed to persist", failure.Description, StringComparison.Ordinal);
    }

    [Fact]
    public void A_rejected_event_is_reported_its_handler_does_not_run_and_the_actor_goes_on()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var reports = CreateTestProbe();
        var ledger = StartLedger("rj", reports);
        reports.ExpectMsg<Recovered>();
        ledger.Tell(new Unserializable(), TestActor);
        var failure = failures.FishForMessage<ActorFailure>(f => f.Description.Contains("rejected", StringComparison.Ordinal));
        Assert.Null(failure.Directive);

        ledger.Tell(new Add("b"), TestActor);
        ExpectMsg(new Added("b", 2)); // sequence number 1 went to the rejected event
        reports.ExpectNoMsg(Quiet);  // "handler of a rejected event ran" never came
        Assert.Equal([2L], StoredEvents("rj").Select(e => e.SequenceNr));
    }

    [Fact]
    public void Events_of_many_actors_written_while_the_journal_is_busy_are_one_group_commit()
    {
        var ledgers = Enumerable.Range(0, 20).Select(i => StartLedger($"g{i}", reports: null)).ToArray();
        foreach (var ledger in ledgers)
        {
            ledger.Tell(Get.Instance, TestActor);
            ExpectMsg<State>(); // recovered
        }

        Journal.Close();
        var busy = StartLedger("busy");
        busy.Tell(new AddAsync("first"), TestActor);
        Journal.AwaitWriteEntered(DefaultTimeout);
        foreach (var ledger in ledgers)
        {
            ledger.Tell(new AddAsync("x"), TestActor);
            ledger.Tell(Get.Instance, TestActor);
            ExpectMsg<State>(); // its WriteMessages is in the journal's mailbox now
        }

        var calls = Journal.Calls.Count;
        Journal.Open();
        for (var i = 0; i <= ledgers.Length; i++)
        {
            ExpectMsg<Added>();
        }

        Assert.Equal([1, 20], Journal.Calls.Skip(calls)); // 20 actors, one write and one fsync
    }

    [Fact]
    public void Delete_messages_above_the_last_sequence_number_fails_without_touching_the_journal()
    {
        var reports = CreateTestProbe();
        var ledger = StartLedger("dm", reports);
        reports.ExpectMsg<Recovered>();
        ledger.Tell(new Add("a"), TestActor);
        ExpectMsg<Added>();
        ledger.Tell(new Forget(5), TestActor);
        Assert.IsType<InvalidOperationException>(reports.ExpectMsg<DeleteMessagesFailure>().Cause);
        ledger.Tell(new Forget(1), TestActor);
        Assert.Equal(1, reports.ExpectMsg<DeleteMessagesSuccess>().ToSequenceNr);
        Assert.Empty(StoredEvents("dm"));
    }

    [Fact]
    public void Recovery_fails_and_stops_the_actor_when_a_replayed_event_cannot_be_read()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var rejections = new Exception?[1];
        Journal.WriteMessages([new JournalWrite(new JournalRecord("unreadable", 1, new byte[] { 1 }, "no-such-codec"))], rejections);

        var ledger = StartLedger("unreadable");
        Watch(ledger);
        ExpectTerminated(ledger);
        var failure = failures.FishForMessage<ActorFailure>(f => f.Description.Contains("recovery", StringComparison.Ordinal));
        Assert.Equal(Directive.Stop, failure.Directive);
    }
}
