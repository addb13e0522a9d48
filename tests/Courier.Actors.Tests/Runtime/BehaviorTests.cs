using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Runtime;

public sealed class BehaviorTests : TestKitBase
{
    [Fact]
    public void Become_replaces_the_behaviour()
    {
        var actor = Sys.ActorOf(Props.Create(() => new SwitchActor()));
        actor.Tell("state", TestActor);
        ExpectMsg("happy");
        actor.Tell("sad", TestActor);
        actor.Tell("state", TestActor);
        ExpectMsg("sad");
        actor.Tell("happy", TestActor);
        actor.Tell("state", TestActor);
        ExpectMsg("happy");
    }

    [Fact]
    public void BecomeStacked_and_UnbecomeStacked_return_to_the_previous_behaviour()
    {
        var actor = Sys.ActorOf(Props.Create(() => new StackActor()));
        actor.Tell("push", TestActor);
        actor.Tell("push", TestActor);
        actor.Tell("depth", TestActor);
        ExpectMsg(2);
        actor.Tell("pop", TestActor);
        actor.Tell("depth", TestActor);
        ExpectMsg(1);
        actor.Tell("pop", TestActor);
        actor.Tell("depth", TestActor);
        ExpectMsg(0);
    }

    [Fact]
    public void UnbecomeStacked_at_the_bottom_returns_to_the_initial_behaviour()
    {
        var actor = Sys.ActorOf(Props.Create(() => new SwitchActor()));
        actor.Tell("sad", TestActor);
        actor.Tell("unbecome", TestActor);
        actor.Tell("state", TestActor);
        ExpectMsg("happy");
    }

    [Fact]
    public void Untyped_actor_can_become_another_receive_function()
    {
        var actor = Sys.ActorOf(Props.Create(() => new ToggleActor()));
        actor.Tell("x", TestActor);
        ExpectMsg("on:x");
        actor.Tell("x", TestActor);
        ExpectMsg("off:x");
        actor.Tell("x", TestActor);
        ExpectMsg("on:x");
    }

    [Fact]
    public void Become_in_the_constructor_sets_the_initial_behaviour()
    {
        var untyped = Sys.ActorOf(Props.Create(() => new StartsOffActor()));
        untyped.Tell("x", TestActor);
        ExpectMsg("off:x");
        untyped.Tell("x", TestActor);
        ExpectMsg("on:x");

        var typed = Sys.ActorOf(Props.Create(() => new StartsSadActor()));
        typed.Tell("state", TestActor);
        ExpectMsg("sad");
        typed.Tell("unbecome", TestActor);
        typed.Tell("state", TestActor);
        ExpectMsg("happy");
    }

    [Fact]
    public void First_matching_handler_wins_and_predicates_filter()
    {
        var actor = Sys.ActorOf(Props.Create(() => new MatchingActor()));
        actor.Tell(5, TestActor);
        ExpectMsg("small");
        actor.Tell(50, TestActor);
        ExpectMsg("big");
        actor.Tell("text", TestActor);
        ExpectMsg("any:text");
    }

    [Fact]
    public void Func_handler_returning_false_leaves_the_message_unhandled()
    {
        var unhandled = CreateTestProbe();
        Sys.EventStream.Subscribe(unhandled.Ref, typeof(UnhandledMessage));
        var actor = Sys.ActorOf(Props.Create(() => new FuncActor()));
        actor.Tell(-1, TestActor);
        Assert.Equal(-1, unhandled.ExpectMsg<UnhandledMessage>().Message);
        actor.Tell(1, TestActor);
        ExpectMsg("positive");
    }

    [Fact]
    public void Declaring_a_handler_after_construction_fails_the_actor()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var actor = Sys.ActorOf(Props.Create(() => new LateDeclaringActor()));
        actor.Tell("declare", TestActor);
        var failure = failures.ExpectMsg<ActorFailure>();
        Assert.IsType<InvalidOperationException>(failure.Cause);
        Assert.Equal(Directive.Restart, failure.Directive);
    }

    [Fact]
    public void Behaviour_is_reset_to_the_initial_one_on_restart()
    {
        var actor = Sys.ActorOf(Props.Create(() => new SwitchActor()));
        actor.Tell("sad", TestActor);
        actor.Tell("boom", TestActor);
        actor.Tell("state", TestActor);
        ExpectMsg("happy");
    }

    private sealed class SwitchActor : ReceiveActor
    {
        public SwitchActor() => Happy();

        private void Happy()
        {
            Receive<string>(s => s == "state", _ => Sender.Tell("happy", Self));
            Receive<string>(s => s == "sad", _ => Become(Sad));
            Receive<string>(s => s == "boom", _ => throw new InvalidOperationException("boom"));
        }

        private void Sad()
        {
            Receive<string>(s => s == "state", _ => Sender.Tell("sad", Self));
            Receive<string>(s => s == "happy", _ => Become(Happy));
            Receive<string>(s => s == "unbecome", _ => UnbecomeStacked());
            Receive<string>(s => s == "boom", _ => throw new InvalidOperationException("boom"));
        }
    }

    private sealed class StackActor : ReceiveActor
    {
        public StackActor() => Level(0);

        private void Level(int depth)
        {
            Receive<string>(s => s == "depth", _ => Sender.Tell(depth, Self));
            Receive<string>(s => s == "push", _ => BecomeStacked(() => Level(depth + 1)));
            Receive<string>(s => s == "pop", _ => UnbecomeStacked());
        }
    }

    private sealed class ToggleActor : ActorBase
    {
        protected override bool Receive(object message)
        {
            Sender.Tell($"on:{message}", Self);
            Become(Off);
            return true;
        }

        private bool Off(object message)
        {
            Sender.Tell($"off:{message}", Self);
            UnbecomeStacked();
            return true;
        }
    }

    private sealed class StartsOffActor : ActorBase
    {
        public StartsOffActor() => Become(Off);

        protected override bool Receive(object message)
        {
            Sender.Tell($"on:{message}", Self);
            return true;
        }

        private bool Off(object message)
        {
            Sender.Tell($"off:{message}", Self);
            UnbecomeStacked();
            return true;
        }
    }

    private sealed class StartsSadActor : ReceiveActor
    {
        public StartsSadActor()
        {
            Receive<string>(s => s == "state", _ => Sender.Tell("happy", Self));
            Become(() =>
            {
                Receive<string>(s => s == "state", _ => Sender.Tell("sad", Self));
                Receive<string>(s => s == "unbecome", _ => UnbecomeStacked());
            });
        }
    }

    private sealed class MatchingActor : ReceiveActor
    {
        public MatchingActor()
        {
            Receive<int>(i => i < 10, _ => Sender.Tell("small", Self));
            Receive<int>(_ => Sender.Tell("big", Self));
            ReceiveAny(m => Sender.Tell($"any:{m}", Self));
        }
    }

    private sealed class FuncActor : ReceiveActor
    {
        public FuncActor() => Receive<int>(i =>
        {
            if (i <= 0)
            {
                return false;
            }

            Sender.Tell("positive", Self);
            return true;
        });
    }

    private sealed class LateDeclaringActor : ReceiveActor
    {
        public LateDeclaringActor() => Receive<string>(_ => Receive<int>(_ => { }));
    }
}
