using System.Collections.Immutable;
using Akka.Actor;
using Akka.Persistence;
using Akka.TestKit;
using Courier.Testing;
using Xunit;

namespace Courier.Actors.Tests.Persistence;

/// <summary>
/// Akka.Persistence.TCK's <c>JournalSpec</c>, ported (the TCK package is not restorable here: NU1101), driving
/// Courier's journal plugin through Akka's own journal protocol (WriteMessages, ReplayMessages,
/// DeleteMessagesTo and their replies), against the file and the memory engine. Each test starts with
/// events "a-1".."a-5" written as the atomic writes [1] [2] [3] [4 5] in one request.
/// </summary>
public abstract class JournalPluginSpec : PluginSpec
{
    private const int ActorInstanceId = 1;
    private static int _counter;

    private readonly TestProbe _receiver;

    protected JournalPluginSpec(bool onDisk)
        : base(onDisk, "akka.persistence.publish-plugin-commands = on")
    {
        Pid = "p-" + Interlocked.Increment(ref _counter);
        WriterGuid = Guid.NewGuid().ToString();
        _receiver = CreateTestProbe();
        WriteMessages(1, 5);
    }

    private string Pid { get; }

    private string WriterGuid { get; }

    private void WriteMessages(int from, int to)
    {
        Persistent P(long i) => new("a-" + i, i, Pid, "", false, TestActor, WriterGuid);
        var messages = Enumerable.Range(from, to - from)
            .Select(i => i == to - 1 ? new AtomicWrite(ImmutableList.Create<IPersistentRepresentation>(P(i), P(i + 1))) : new AtomicWrite(P(i)))
            .ToArray<IPersistentEnvelope>();
        var probe = CreateTestProbe();
        Journal.Tell(new WriteMessages(messages, probe.Ref, ActorInstanceId), probe.Ref);
        probe.ExpectMsg<WriteMessagesSuccessful>();
        for (var i = from; i <= to; i++)
        {
            var n = i;
            var success = probe.ExpectMsg<WriteMessageSuccess>(m => (string)m.Persistent.Payload == "a-" + n && m.Persistent.SequenceNr == n && m.Persistent.PersistenceId == Pid);
            Assert.Equal(TestActor, probe.LastSender); // each reply comes from the command's sender
            Assert.Equal(ActorInstanceId, success.ActorInstanceId);
        }
    }

    private bool IsReplayedMessage(ReplayedMessage message, long seqNr)
    {
        var p = message.Persistent;
        return (string)p.Payload == "a-" + seqNr && p.PersistenceId == Pid && p.SequenceNr == seqNr && p.WriterGuid == WriterGuid;
    }

    private void ExpectReplayed(params long[] seqNrs)
    {
        foreach (var seqNr in seqNrs)
        {
            _receiver.ExpectMsg<ReplayedMessage>(m => IsReplayedMessage(m, seqNr));
        }
    }

    [Fact]
    public void Journal_should_replay_all_messages()
    {
        Journal.Tell(new ReplayMessages(1, long.MaxValue, long.MaxValue, Pid, _receiver.Ref));
        ExpectReplayed(1, 2, 3, 4, 5);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_replay_messages_using_a_lower_sequence_number_bound()
    {
        Journal.Tell(new ReplayMessages(3, long.MaxValue, long.MaxValue, Pid, _receiver.Ref));
        ExpectReplayed(3, 4, 5);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_replay_messages_using_an_upper_sequence_number_bound()
    {
        Journal.Tell(new ReplayMessages(1, 3, long.MaxValue, Pid, _receiver.Ref));
        ExpectReplayed(1, 2, 3);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_replay_messages_using_lower_and_upper_sequence_number_bound_and_count_limit()
    {
        Journal.Tell(new ReplayMessages(2, 5, 2, Pid, _receiver.Ref));
        ExpectReplayed(2, 3);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_not_replay_messages_if_count_limit_equals_zero()
    {
        Journal.Tell(new ReplayMessages(2, 4, 0, Pid, _receiver.Ref));
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_not_replay_messages_if_lower_sequence_number_bound_is_greater_than_upper_sequence_number_bound()
    {
        Journal.Tell(new ReplayMessages(3, 2, long.MaxValue, Pid, _receiver.Ref));
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_not_replay_messages_if_the_persistent_actor_has_not_yet_written_messages()
    {
        Journal.Tell(new ReplayMessages(0, long.MaxValue, long.MaxValue, "non-existing-pid", _receiver.Ref));
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 0L);
    }

    [Fact]
    public void Journal_should_not_replay_permanently_deleted_messages_on_range_deletion()
    {
        var receiver2 = CreateTestProbe();
        var command = new DeleteMessagesTo(Pid, 3, receiver2.Ref);
        var subscriber = CreateTestProbe();
        Sys.EventStream.Subscribe(subscriber.Ref, typeof(DeleteMessagesTo));

        Journal.Tell(command);
        subscriber.ExpectMsg<DeleteMessagesTo>(cmd => cmd.PersistenceId == Pid && cmd.ToSequenceNr == 3);
        receiver2.ExpectMsg<DeleteMessagesSuccess>(m => m.ToSequenceNr == command.ToSequenceNr);

        Journal.Tell(new ReplayMessages(1, long.MaxValue, long.MaxValue, Pid, _receiver.Ref));
        ExpectReplayed(4, 5);
        receiver2.ExpectNoMsg(TimeSpan.FromMilliseconds(200));
    }

    [Fact]
    public void Journal_should_not_reset_HighestSequenceNr_after_journal_cleanup()
    {
        Journal.Tell(new DeleteMessagesTo(Pid, long.MaxValue, _receiver.Ref));
        _receiver.ExpectMsg<DeleteMessagesSuccess>(m => m.ToSequenceNr == long.MaxValue);
        Journal.Tell(new ReplayMessages(0, long.MaxValue, long.MaxValue, Pid, _receiver.Ref));
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_serialize_events()
    {
        var probe = CreateTestProbe();
        var @event = new TestPayload("payload-" + Pid);
        var write = new AtomicWrite(new Persistent(@event, 6L, Pid, "", false, null, WriterGuid));
        Journal.Tell(new WriteMessages([write], probe.Ref, ActorInstanceId));

        probe.ExpectMsg<WriteMessagesSuccessful>();
        var written = probe.ExpectMsg<WriteMessageSuccess>().Persistent;
        Assert.Equal((WriterGuid, Pid, 6L), (written.WriterGuid, written.PersistenceId, written.SequenceNr));
        Assert.Equal(@event, written.Payload);

        Journal.Tell(new ReplayMessages(6L, long.MaxValue, long.MaxValue, Pid, _receiver.Ref));
        var replayed = _receiver.ExpectMsg<ReplayedMessage>().Persistent;
        Assert.Equal((WriterGuid, Pid, 6L), (replayed.WriterGuid, replayed.PersistenceId, replayed.SequenceNr));
        Assert.True(replayed.Sender is null || replayed.Sender.IsNobody());
        Assert.Equal(@event, replayed.Payload);
        Assert.NotSame(@event, replayed.Payload); // it really went through the serializer
        Assert.Equal(6L, _receiver.ExpectMsg<RecoverySuccess>().HighestSequenceNr);
    }

    [Fact]
    public void Journal_optionally_may_reject_non_serializable_events()
    {
        // NotSerializableEvent has no binary serializer bound: Courier refuses Akka's JSON fallback.
        var messages = Enumerable.Range(6, 3).Select(i =>
        {
            object evt = i == 7 ? new NotSerializableEvent() : "b-" + i;
            return (IPersistentEnvelope)new AtomicWrite(new Persistent(evt, i, Pid, "", false, null, WriterGuid));
        }).ToArray();
        var probe = CreateTestProbe();
        Journal.Tell(new WriteMessages(messages, probe.Ref, ActorInstanceId));

        probe.ExpectMsg<WriteMessagesSuccessful>();
        probe.ExpectMsg<WriteMessageSuccess>(m => m.Persistent.SequenceNr == 6L && m.Persistent.PersistenceId == Pid && m.Persistent.WriterGuid == WriterGuid && m.Persistent.Payload.Equals("b-6"));
        var rejected = probe.ExpectMsg<WriteMessageRejected>(m => m.Persistent.SequenceNr == 7L && m.Persistent.PersistenceId == Pid && m.Persistent.Payload is NotSerializableEvent);
        Assert.IsType<NotSupportedException>(rejected.Cause);
        probe.ExpectMsg<WriteMessageSuccess>(m => m.Persistent.SequenceNr == 8L && m.Persistent.PersistenceId == Pid && m.Persistent.Payload.Equals("b-8"));

        Journal.Tell(new ReplayMessages(6, long.MaxValue, long.MaxValue, Pid, _receiver.Ref));
        _receiver.ExpectMsg<ReplayedMessage>(m => m.Persistent.SequenceNr == 6);
        _receiver.ExpectMsg<ReplayedMessage>(m => m.Persistent.SequenceNr == 8);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 8);
    }

    // ---- Beyond the TCK ----

    [Fact]
    public void Writes_of_many_actors_sent_at_once_all_succeed_and_on_disk_share_far_fewer_fsyncs()
    {
        const int Actors = 200;
        var before = Journal.GroupCommits();
        var probes = Enumerable.Range(0, Actors).Select(_ => CreateTestProbe()).ToArray();
        for (var i = 0; i < Actors; i++)
        {
            Journal.Tell(new WriteMessages([new AtomicWrite(new Persistent("y", 1, $"actor-{i}", "", false, null, WriterGuid))], probes[i].Ref, 1));
        }

        foreach (var probe in probes)
        {
            probe.ExpectMsg<WriteMessagesSuccessful>();
            probe.ExpectMsg<WriteMessageSuccess>();
        }

        var batches = Journal.GroupCommits() - before;
        if (StoreDirectory is null)
        {
            // In memory a batch takes no time, so the writer may keep up with the writes as they arrive
            // (it did, 109 batches, on a loaded CI machine): any grouping is right.
            Assert.InRange(batches, 1, Actors);
        }
        else
        {
            Assert.InRange(batches, 1, Actors / 4); // one fsync per drained queue, not one per actor
        }
        for (var i = 0; i < Actors; i += 37)
        {
            Journal.Tell(new ReplayMessages(1, long.MaxValue, long.MaxValue, $"actor-{i}", _receiver.Ref));
            _receiver.ExpectMsg<ReplayedMessage>(m => (string)m.Persistent.Payload == "y");
            _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 1);
        }
    }

    private sealed class NotSerializableEvent;
}

public sealed class MemoryJournalPluginSpec : JournalPluginSpec
{
    public MemoryJournalPluginSpec()
        : base(onDisk: false)
    {
    }
}

public sealed class FileJournalPluginSpec : JournalPluginSpec
{
    public FileJournalPluginSpec()
        : base(onDisk: true)
    {
    }
}
