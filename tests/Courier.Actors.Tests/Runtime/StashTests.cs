using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Runtime;

public sealed class StashTests : TestKitBase
{
    [Fact]
    public void Unstashed_messages_come_before_newer_ones_in_their_order_with_their_senders()
    {
        var other = CreateTestProbe();
        var actor = Sys.ActorOf(Props.Create(() => new GateActor(TestActor)));
        actor.Tell("a", TestActor);
        actor.Tell("b", other.Ref);
        actor.Tell("c", TestActor);
        actor.Tell("open", TestActor);
        actor.Tell("d", TestActor);

        ExpectMsg("opened");
        ExpectMsg("a");
        ExpectMsg("c");
        ExpectMsg("d");
        other.ExpectMsg("b"); // replied to its own sender
    }

    [Fact]
    public void Unstash_puts_back_only_the_oldest_message()
    {
        var actor = Sys.ActorOf(Props.Create(() => new GateActor(TestActor)));
        actor.Tell("a", TestActor);
        actor.Tell("b", TestActor);
        actor.Tell("one", TestActor);
        ExpectMsg("a");
        actor.Tell("count?", TestActor);
        ExpectMsg(1); // "b" is still stashed
    }

    [Fact]
    public void Unstash_all_with_a_predicate_drops_the_messages_it_does_not_select()
    {
        var actor = Sys.ActorOf(Props.Create(() => new GateActor(TestActor)));
        actor.Tell("keep-1", TestActor);
        actor.Tell("drop", TestActor);
        actor.Tell("keep-2", TestActor);
        actor.Tell("open-keep", TestActor);
        ExpectMsg("opened");
        ExpectMsg("keep-1");
        ExpectMsg("keep-2");
        actor.Tell("count?", TestActor);
        ExpectMsg(0);
    }

    [Fact]
    public void Stashed_messages_survive_a_restart_and_reach_the_new_instance()
    {
        var restarting = new OneForOneStrategy(_ => Directive.Restart);
        var parent = Sys.ActorOf(Props.Create(() => new SupervisorActor(Props.Create(() => new GateActor(TestActor)), restarting, TestActor)));
        parent.Tell("child?", TestActor);
        var child = ExpectMsg<IActorRef>();
        child.Tell("a", TestActor);
        child.Tell("b", TestActor);
        child.Tell("boom", TestActor); // the new instance stashes them again: its gate is closed
        child.Tell("open", TestActor);
        ExpectMsg("opened");
        ExpectMsg("a");
        ExpectMsg("b");
    }

    [Fact]
    public void Stashed_messages_go_to_dead_letters_when_the_actor_stops()
    {
        var deadLetters = CreateTestProbe();
        Sys.EventStream.Subscribe(deadLetters.Ref, typeof(DeadLetter));
        var actor = Sys.ActorOf(Props.Create(() => new GateActor(TestActor)));
        actor.Tell("a", TestActor);
        actor.Tell(PoisonPill.Instance, TestActor);
        Assert.Equal("a", deadLetters.ExpectMsg<DeadLetter>().Message);
    }

    [Fact]
    public void Stashing_the_same_message_twice_fails_the_actor()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var actor = Sys.ActorOf(Props.Create(() => new GateActor(TestActor)));
        actor.Tell("twice", TestActor);
        Assert.IsType<InvalidOperationException>(failures.ExpectMsg<ActorFailure>().Cause);
    }

    /// <summary>Stashes everything until "open" (unstash all, then echo), "open-keep" (unstash those starting with
    /// "keep", then echo) or "one" (unstash one and echo just that one).</summary>
    private sealed class GateActor : ReceiveActor, IWithUnboundedStash
    {
        public GateActor(IActorRef probe)
        {
            Receive<string>(s => s == "boom", _ => throw new InvalidOperationException("boom"));
            Receive<string>(s => s == "count?", _ => probe.Tell(Stash.Count, Self));
            Receive<string>(s => s == "twice", _ =>
            {
                Stash.Stash();
                Stash.Stash();
            });
            Receive<string>(s => s == "one", _ =>
            {
                // Open for one message: the unstashed one.
                BecomeStacked(() => ReceiveAny(m =>
                {
                    Sender.Tell(m, Self);
                    UnbecomeStacked();
                }));
                Stash.Unstash();
            });
            Receive<string>(s => s == "open", _ =>
            {
                probe.Tell("opened", Self);
                Become(() => ReceiveAny(m => Sender.Tell(m, Self)));
                Stash.UnstashAll();
            });
            Receive<string>(s => s == "open-keep", _ =>
            {
                probe.Tell("opened", Self);
                Become(() =>
                {
                    Receive<string>(s => s == "count?", _ => probe.Tell(Stash.Count, Self));
                    ReceiveAny(m => Sender.Tell(m, Self));
                });
                Stash.UnstashAll(m => m is string s && s.StartsWith("keep", StringComparison.Ordinal));
            });
            ReceiveAny(_ => Stash.Stash());
        }

        public IStash Stash { get; set; } = null!;
    }
}
