using System.Buffers;
using System.Text;
using Courier.Actors.Persistence;
using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Persistence;

/// <summary>
/// Akka.Persistence.TCK's <c>JournalSpec</c> at the journal actor's protocol (WriteMessages, ReplayMessages,
/// DeleteMessagesTo and their replies), against the memory and the file journal. The TCK cannot be restored
/// (NU1101), so its cases are ported; the engine-level port is in Courier.Storage.Tests. Each test starts
/// with events "a-1".."a-5" written as the atomic writes [1] [2] [3] [4 5] in one request.
/// </summary>
public abstract class JournalActorSpec : PersistenceTestKit
{
    private const int ActorInstanceId = 1;
    private static int _counter;

    private readonly TestProbe _receiver;

    protected JournalActorSpec(bool onDisk)
        : base(onDisk)
    {
        Pid = "p-" + Interlocked.Increment(ref _counter);
        WriterGuid = Guid.NewGuid().ToString();
        Persistence.Serialization.Register("tck.TestPayload", new TestPayloadCodec());
        _receiver = CreateTestProbe();
        WriteMessages(1, 5);
    }

    private string Pid { get; }

    private string WriterGuid { get; }

    private IActorRef JournalActor => Persistence.JournalFor(null);

    private void WriteMessages(int from, int to)
    {
        Persistent P(long i) => new("a-" + i, i, Pid, "", TestActor, WriterGuid);
        var messages = Enumerable.Range(from, to - from)
            .Select(i => i == to - 1 ? new AtomicWrite([P(i), P(i + 1)]) : new AtomicWrite(P(i)))
            .ToArray<IPersistentEnvelope>();
        var probe = CreateTestProbe();
        JournalActor.Tell(new WriteMessages(messages, probe.Ref, ActorInstanceId), probe.Ref);
        probe.ExpectMsg<WriteMessagesSuccessful>();
        for (var i = from; i <= to; i++)
        {
            var n = i;
            var success = probe.ExpectMsg<WriteMessageSuccess>(m => (string)m.Persistent.Payload == "a-" + n && m.Persistent.SequenceNr == n && m.Persistent.PersistenceId == Pid);
            Assert.Same(TestActor, probe.LastSender); // each reply comes from the command's sender
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
        JournalActor.Tell(new ReplayMessages(1, long.MaxValue, long.MaxValue, Pid, _receiver.Ref), null);
        ExpectReplayed(1, 2, 3, 4, 5);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_replay_messages_using_a_lower_sequence_number_bound()
    {
        JournalActor.Tell(new ReplayMessages(3, long.MaxValue, long.MaxValue, Pid, _receiver.Ref), null);
        ExpectReplayed(3, 4, 5);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_replay_messages_using_lower_and_upper_sequence_number_bound_and_count_limit()
    {
        JournalActor.Tell(new ReplayMessages(2, 5, 2, Pid, _receiver.Ref), null);
        ExpectReplayed(2, 3);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_not_replay_messages_if_count_limit_equals_zero()
    {
        JournalActor.Tell(new ReplayMessages(2, 4, 0, Pid, _receiver.Ref), null);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_not_replay_messages_if_lower_sequence_number_bound_is_greater_than_upper_sequence_number_bound()
    {
        JournalActor.Tell(new ReplayMessages(3, 2, long.MaxValue, Pid, _receiver.Ref), null);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_not_replay_messages_if_the_persistent_actor_has_not_yet_written_messages()
    {
        JournalActor.Tell(new ReplayMessages(0, long.MaxValue, long.MaxValue, "non-existing-pid", _receiver.Ref), null);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 0L);
    }

    [Fact]
    public void Journal_should_not_replay_permanently_deleted_messages_on_range_deletion()
    {
        var receiver2 = CreateTestProbe();
        var command = new DeleteMessagesTo(Pid, 3, receiver2.Ref);
        var subscriber = CreateTestProbe();
        Sys.EventStream.Subscribe(subscriber.Ref, typeof(DeleteMessagesTo));

        JournalActor.Tell(command, null);
        subscriber.ExpectMsg<DeleteMessagesTo>(cmd => cmd.PersistenceId == Pid && cmd.ToSequenceNr == 3);
        receiver2.ExpectMsg<DeleteMessagesSuccess>(m => m.ToSequenceNr == command.ToSequenceNr);

        JournalActor.Tell(new ReplayMessages(1, long.MaxValue, long.MaxValue, Pid, _receiver.Ref), null);
        ExpectReplayed(4, 5);
        receiver2.ExpectNoMsg(TimeSpan.FromMilliseconds(200));
    }

    [Fact]
    public void Journal_should_not_reset_HighestSequenceNr_after_journal_cleanup()
    {
        JournalActor.Tell(new DeleteMessagesTo(Pid, long.MaxValue, _receiver.Ref), null);
        _receiver.ExpectMsg<DeleteMessagesSuccess>(m => m.ToSequenceNr == long.MaxValue);
        JournalActor.Tell(new ReplayMessages(0, long.MaxValue, long.MaxValue, Pid, _receiver.Ref), null);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 5L);
    }

    [Fact]
    public void Journal_should_serialize_events()
    {
        var probe = CreateTestProbe();
        var @event = new TestPayload("payload-" + Pid);
        var write = new AtomicWrite(new Persistent(@event, 6L, Pid, "", null, WriterGuid));
        JournalActor.Tell(new WriteMessages([write], probe.Ref, ActorInstanceId), null);

        probe.ExpectMsg<WriteMessagesSuccessful>();
        var written = probe.ExpectMsg<WriteMessageSuccess>().Persistent;
        Assert.Equal((WriterGuid, Pid, 6L), (written.WriterGuid, written.PersistenceId, written.SequenceNr));
        Assert.Null(written.Sender);
        Assert.Equal(@event, written.Payload);

        JournalActor.Tell(new ReplayMessages(6L, long.MaxValue, long.MaxValue, Pid, _receiver.Ref), null);
        var replayed = _receiver.ExpectMsg<ReplayedMessage>().Persistent;
        Assert.Equal((WriterGuid, Pid, 6L, "tck.TestPayload"), (replayed.WriterGuid, replayed.PersistenceId, replayed.SequenceNr, replayed.Manifest));
        Assert.Null(replayed.Sender);
        Assert.Equal(@event, replayed.Payload);
        Assert.NotSame(@event, replayed.Payload); // it really went through the codec
        Assert.Equal(6L, _receiver.ExpectMsg<RecoverySuccess>().HighestSequenceNr);
    }

    [Fact]
    public void Journal_optionally_may_reject_non_serializable_events()
    {
        var messages = Enumerable.Range(6, 3).Select(i =>
        {
            object evt = i == 7 ? new NotSerializableEvent() : "b-" + i;
            return (IPersistentEnvelope)new AtomicWrite(new Persistent(evt, i, Pid, "", null, WriterGuid));
        }).ToArray();
        var probe = CreateTestProbe();
        JournalActor.Tell(new WriteMessages(messages, probe.Ref, ActorInstanceId), null);

        probe.ExpectMsg<WriteMessagesSuccessful>();
        probe.ExpectMsg<WriteMessageSuccess>(m => m.Persistent.SequenceNr == 6L && m.Persistent.PersistenceId == Pid && m.Persistent.Sender is null && m.Persistent.WriterGuid == WriterGuid && m.Persistent.Payload.Equals("b-6"));
        probe.ExpectMsg<WriteMessageRejected>(m => m.Persistent.SequenceNr == 7L && m.Persistent.PersistenceId == Pid && m.Persistent.Sender is null && m.Persistent.WriterGuid == WriterGuid && m.Persistent.Payload is NotSerializableEvent);
        probe.ExpectMsg<WriteMessageSuccess>(m => m.Persistent.SequenceNr == 8L && m.Persistent.PersistenceId == Pid && m.Persistent.Sender is null && m.Persistent.WriterGuid == WriterGuid && m.Persistent.Payload.Equals("b-8"));

        JournalActor.Tell(new ReplayMessages(6, long.MaxValue, long.MaxValue, Pid, _receiver.Ref), null);
        _receiver.ExpectMsg<ReplayedMessage>(m => m.Persistent.SequenceNr == 6);
        _receiver.ExpectMsg<ReplayedMessage>(m => m.Persistent.SequenceNr == 8);
        _receiver.ExpectMsg<RecoverySuccess>(m => m.HighestSequenceNr == 8);
    }

    // ---- Beyond the TCK: deferred messages and the group commit ----

    [Fact]
    public void A_deferred_message_is_looped_back_between_the_writes_around_it()
    {
        var probe = CreateTestProbe();
        var other = CreateTestProbe();
        IPersistentEnvelope[] messages =
        [
            new AtomicWrite(new Persistent("b-6", 6, Pid, "", other.Ref, WriterGuid)),
            new NonPersistentMessage("deferred", other.Ref),
            new AtomicWrite(new Persistent("b-7", 7, Pid, "", other.Ref, WriterGuid)),
        ];
        JournalActor.Tell(new WriteMessages(messages, probe.Ref, ActorInstanceId), null);
        probe.ExpectMsg<WriteMessagesSuccessful>();
        probe.ExpectMsg<WriteMessageSuccess>(m => m.Persistent.SequenceNr == 6);
        Assert.Equal("deferred", probe.ExpectMsg<LoopMessageSuccess>().Message);
        Assert.Same(other.Ref, probe.LastSender);
        probe.ExpectMsg<WriteMessageSuccess>(m => m.Persistent.SequenceNr == 7);
    }

    [Fact]
    public void Writes_of_many_actors_that_queue_up_behind_a_write_are_committed_with_one_engine_call()
    {
        Journal.Close();
        var first = CreateTestProbe();
        JournalActor.Tell(new WriteMessages([new AtomicWrite(new Persistent("x", 1, "first", "", null, WriterGuid))], first.Ref, 1), null);
        Journal.AwaitWriteEntered(TimeSpan.FromSeconds(3)); // the journal actor is now inside the engine call

        var probes = Enumerable.Range(0, 50).Select(_ => CreateTestProbe()).ToArray();
        for (var i = 0; i < probes.Length; i++)
        {
            JournalActor.Tell(new WriteMessages([new AtomicWrite(new Persistent("y", 1, $"actor-{i}", "", null, WriterGuid))], probes[i].Ref, 1), null);
        }

        var calls = Journal.Calls.Count;
        Journal.Open();
        first.ExpectMsg<WriteMessagesSuccessful>();
        foreach (var probe in probes)
        {
            probe.ExpectMsg<WriteMessagesSuccessful>();
            probe.ExpectMsg<WriteMessageSuccess>();
        }

        Assert.Equal([1, 50], Journal.Calls.Skip(calls)); // the held write, then the 50 that queued behind it as one
    }

    [Fact]
    public void A_failed_engine_write_fails_every_event_of_the_batch()
    {
        Journal.FailWrites = new IOException("disk gone");
        var probe = CreateTestProbe();
        IPersistentEnvelope[] messages =
        [
            new AtomicWrite([new Persistent("b-6", 6, Pid, "", null, WriterGuid), new Persistent("b-7", 7, Pid, "", null, WriterGuid)]),
            new NonPersistentMessage("deferred", null),
        ];
        JournalActor.Tell(new WriteMessages(messages, probe.Ref, ActorInstanceId), null);
        var failed = probe.ExpectMsg<WriteMessagesFailed>();
        Assert.Equal((1, "disk gone"), (failed.WriteCount, failed.Cause.Message));
        probe.ExpectMsg<WriteMessageFailure>(m => m.Persistent.SequenceNr == 6);
        probe.ExpectMsg<WriteMessageFailure>(m => m.Persistent.SequenceNr == 7);
        probe.ExpectMsg<LoopMessageSuccess>();
    }

    private sealed record TestPayload(string Text);

    private sealed class NotSerializableEvent;

    private sealed class TestPayloadCodec : IPersistenceCodec<TestPayload>
    {
        public void Write(TestPayload value, IBufferWriter<byte> output) => Encoding.UTF8.GetBytes(value.Text, output);

        public TestPayload Read(ReadOnlyMemory<byte> bytes) => new(Encoding.UTF8.GetString(bytes.Span));
    }
}

public sealed class MemoryJournalActorSpec : JournalActorSpec
{
    public MemoryJournalActorSpec()
        : base(onDisk: false)
    {
    }
}

public sealed class FileJournalActorSpec : JournalActorSpec
{
    public FileJournalActorSpec()
        : base(onDisk: true)
    {
    }
}
