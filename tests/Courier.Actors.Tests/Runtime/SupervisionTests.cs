using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Runtime;

public sealed class SupervisionTests : TestKitBase
{
    [Fact]
    public void Restarted_actor_keeps_its_ref_and_queued_messages()
    {
        using var gate = new ManualResetEventSlim();
        var actor = Sys.ActorOf(Props.Create(() => new GatedFailingActor(gate)), "gated");
        actor.Tell("block", TestActor);
        ExpectMsg("blocked#1");

        // Queued while the actor is busy; "boom" fails it, the rest must survive the restart.
        actor.Tell("boom", TestActor);
        actor.Tell("a", TestActor);
        actor.Tell("b", TestActor);
        gate.Set();

        ExpectMsg("a#2");
        Assert.Same(actor, LastSender);
        ExpectMsg("b#2");
        Assert.Same(actor, LastSender);
    }

    [Fact]
    public void Default_strategy_restarts_and_the_new_instance_starts_with_fresh_state()
    {
        var counter = Sys.ActorOf(Props.Create(() => new CounterActor()));
        counter.Tell("inc", TestActor);
        counter.Tell("inc", TestActor);
        counter.Tell("boom", TestActor);
        counter.Tell("get", TestActor);
        ExpectMsg(0);
    }

    [Fact]
    public void Resume_keeps_the_instance_state_and_drops_the_failing_message()
    {
        var resuming = new OneForOneStrategy(_ => Directive.Resume);
        var parent = Sys.ActorOf(Props.Create(() => new SupervisorActor(Props.Create(() => new CounterActor()), resuming, TestActor)));
        var counter = GetChild(parent);
        counter.Tell("inc", TestActor);
        counter.Tell("inc", TestActor);
        counter.Tell("boom", TestActor);
        counter.Tell("inc", TestActor);
        counter.Tell("get", TestActor);
        ExpectMsg(3);
    }

    [Fact]
    public void Stop_directive_stops_the_failing_child()
    {
        var parent = Sys.ActorOf(Props.Create(() => new SupervisorActor(
            Props.Create(() => new CounterActor()), SupervisorStrategy.StoppingStrategy, TestActor)));
        var child = GetChild(parent);
        Watch(child);
        child.Tell("boom", TestActor);
        ExpectTerminated(child);
    }

    [Fact]
    public void Props_supervisor_strategy_overrides_the_actors_own()
    {
        var stopping = Props.Create(() => new SupervisorActor(
                Props.Create(() => new CounterActor()), SupervisorStrategy.DefaultStrategy, TestActor))
            .WithSupervisorStrategy(SupervisorStrategy.StoppingStrategy);
        var child = GetChild(Sys.ActorOf(stopping));
        Watch(child);
        child.Tell("boom", TestActor);
        ExpectTerminated(child);
    }

    [Fact]
    public void Too_many_restarts_within_the_window_stop_the_child()
    {
        var twice = new OneForOneStrategy(2, TimeSpan.FromMinutes(1), _ => Directive.Restart);
        var probe = CreateTestProbe();
        var parent = Sys.ActorOf(Props.Create(() => new SupervisorActor(
            Props.Create(() => new LifecycleActor(probe.Ref, "c")), twice, TestActor)));
        var child = GetChild(parent);
        Watch(child);
        probe.ExpectMsg("c:ctor");
        probe.ExpectMsg("c:PreStart");

        for (var restart = 1; restart <= 2; restart++)
        {
            child.Tell("boom", TestActor);
            probe.FishForMessage<string>(m => m == "c:PostRestart:boom");
        }

        child.Tell("boom", TestActor);
        ExpectTerminated(child);
    }

    [Fact]
    public void Retry_limit_without_a_window_counts_over_the_childs_life()
    {
        var once = new OneForOneStrategy(1, Timeout.InfiniteTimeSpan, _ => Directive.Restart);
        var parent = Sys.ActorOf(Props.Create(() => new SupervisorActor(Props.Create(() => new CounterActor()), once, TestActor)));
        var child = GetChild(parent);
        Watch(child);
        child.Tell("boom", TestActor);
        child.Tell("get", TestActor);
        ExpectMsg(0);
        child.Tell("boom", TestActor);
        ExpectTerminated(child);
    }

    [Fact]
    public void Zero_retries_turn_every_restart_into_a_stop()
    {
        var never = new OneForOneStrategy(0, TimeSpan.FromMinutes(1), _ => Directive.Restart);
        var parent = Sys.ActorOf(Props.Create(() => new SupervisorActor(Props.Create(() => new CounterActor()), never, TestActor)));
        var child = GetChild(parent);
        Watch(child);
        child.Tell("boom", TestActor);
        ExpectTerminated(child);
    }

    [Fact]
    public void Restart_hooks_run_in_order_on_the_old_and_new_instance()
    {
        var actor = Sys.ActorOf(Props.Create(() => new LifecycleActor(TestActor, "a")));
        ExpectMsg("a:ctor");
        ExpectMsg("a:PreStart");
        actor.Tell("boom", TestActor);
        ExpectMsg("a:PreRestart:boom:boom");
        ExpectMsg("a:PostStop");
        ExpectMsg("a:ctor");
        ExpectMsg("a:PostRestart:boom");
        ExpectMsg("a:PreStart");
        actor.Tell("after", TestActor);
        ExpectMsg("a:got:after");
    }

    [Fact]
    public void Restart_stops_the_children_before_the_new_instance_is_created()
    {
        var actor = Sys.ActorOf(Props.Create(() => new LifecycleActor(TestActor, "parent")));
        ExpectMsg("parent:ctor");
        ExpectMsg("parent:PreStart");
        actor.Tell(Props.Create(() => new LifecycleActor(TestActor, "child")), TestActor);
        Assert.Equal(
            new[] { "child:PreStart", "child:ctor", "parent:child-created" },
            ReceiveStrings(3).Order(StringComparer.Ordinal));

        actor.Tell("boom", TestActor);
        ExpectMsg("parent:PreRestart:boom:boom");

        // The old instance's PostStop and the child's run concurrently; both precede the new instance.
        Assert.Equal(new[] { "child:PostStop", "parent:PostStop" }, ReceiveStrings(2).Order(StringComparer.Ordinal));
        ExpectMsg("parent:ctor");
        ExpectMsg("parent:PostRestart:boom");
        ExpectMsg("parent:PreStart");

        // The child's name is free again once the restart has finished.
        actor.Tell(Props.Create(() => new LifecycleActor(TestActor, "child")), TestActor);
        Assert.Contains("parent:child-created", ReceiveStrings(3));
    }

    [Fact]
    public void Children_kept_by_PreRestart_are_restarted_after_their_parent()
    {
        var lifecycle = CreateTestProbe();
        var parent = Sys.ActorOf(Props.Create(() => new KeepingParent()));
        parent.Tell(Props.Create(() => new LifecycleActor(lifecycle.Ref, "kid")), TestActor);
        var kid = ExpectMsg<IActorRef>();
        lifecycle.ExpectMsg("kid:ctor");
        lifecycle.ExpectMsg("kid:PreStart");

        parent.Tell("boom", TestActor);

        lifecycle.ExpectMsg("kid:PreRestart:boom:");
        lifecycle.ExpectMsg("kid:PostStop");
        lifecycle.ExpectMsg("kid:ctor");
        lifecycle.ExpectMsg("kid:PostRestart:boom");
        lifecycle.ExpectMsg("kid:PreStart");
        kid.Tell("hi", TestActor);
        lifecycle.ExpectMsg("kid:got:hi");
        parent.Tell("kids?", TestActor);
        ExpectMsg(1);
    }

    [Fact]
    public void Escalate_fails_the_parent_with_the_same_exception()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var escalating = new OneForOneStrategy(_ => Directive.Escalate);
        var parent = Sys.ActorOf(Props.Create(() => new EscalatingParent(
            Props.Create(() => new LifecycleActor(TestActor, "child")), escalating, TestActor)), "parent");
        ExpectMsg("child:ctor");
        ExpectMsg("child:PreStart");
        var child = GetChild(parent);

        child.Tell("boom", TestActor);

        var childFailure = failures.ExpectMsg<ActorFailure>();
        Assert.Same(child, childFailure.Actor);
        Assert.Equal(Directive.Escalate, childFailure.Directive);
        var parentFailure = failures.ExpectMsg<ActorFailure>();
        Assert.Same(parent, parentFailure.Actor);
        Assert.Same(childFailure.Cause, parentFailure.Cause);
        Assert.Equal(Directive.Restart, parentFailure.Directive);

        // The parent restarts: its default PreRestart stops the failed child, the new instance creates a new one.
        ExpectMsg("parent:PreRestart:boom");
        ExpectMsg("child:PostStop");
        ExpectMsg("child:ctor");
        ExpectMsg("child:PreStart");
    }

    [Fact]
    public void Exception_in_PreStart_stops_the_actor_with_ActorInitializationException()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var actor = Sys.ActorOf(Props.Create(() => new FailingStartActor()));
        Watch(actor);
        ExpectTerminated(actor);
        var failure = failures.ExpectMsg<ActorFailure>();
        Assert.IsType<ActorInitializationException>(failure.Cause);
        Assert.Equal(Directive.Stop, failure.Directive);
    }

    [Fact]
    public void Exception_in_the_constructor_stops_the_actor()
    {
        var actor = Sys.ActorOf(Props.Create<ActorBase>(() => throw new InvalidOperationException("ctor")));
        Watch(actor);
        ExpectTerminated(actor);
    }

    [Fact]
    public void Failed_creation_with_a_restarting_supervisor_creates_again()
    {
        var attempts = 0;
        var restarting = new OneForOneStrategy(3, TimeSpan.FromMinutes(1), _ => Directive.Restart);
        var parent = Sys.ActorOf(Props.Create(() => new SupervisorActor(
            Props.Create(() => Interlocked.Increment(ref attempts) < 3
                ? throw new InvalidOperationException("not yet")
                : new EchoActor()),
            restarting,
            TestActor)));
        var child = GetChild(parent);
        child.Tell("hello", TestActor);
        ExpectMsg("hello");
        Assert.Equal(3, Volatile.Read(ref attempts));
    }

    [Fact]
    public void Failure_of_one_child_leaves_its_siblings_alone()
    {
        var parent = Sys.ActorOf(Props.Create(() => new TwoChildrenParent()));
        parent.Tell("children?", TestActor);
        var children = ExpectMsg<IActorRef[]>();
        children[0].Tell("inc", TestActor);
        children[1].Tell("inc", TestActor);
        children[0].Tell("boom", TestActor);
        children[0].Tell("get", TestActor);
        ExpectMsg(0);
        children[1].Tell("get", TestActor);
        ExpectMsg(1);
    }

    [Fact]
    public void Failing_parent_suspends_its_children_until_its_supervisor_decides()
    {
        using var decide = new ManualResetEventSlim();
        var probe = CreateTestProbe();
        var slowResume = new OneForOneStrategy(_ =>
        {
            probe.Ref.Tell("deciding", null);
            decide.Wait(TimeSpan.FromSeconds(10));
            return Directive.Resume;
        });
        var grandParent = Sys.ActorOf(Props.Create(() => new SupervisorActor(
            Props.Create(() => new FailingParent()), slowResume, TestActor)));
        var parent = GetChild(grandParent);
        parent.Tell("child?", TestActor);
        var child = ExpectMsg<IActorRef>();
        child.Tell("inc", TestActor);
        child.Tell("get", TestActor);
        ExpectMsg(1);

        parent.Tell("boom", TestActor);
        probe.ExpectMsg("deciding");
        child.Tell("inc", TestActor);
        child.Tell("get", TestActor);
        ExpectNoMsg(TimeSpan.FromMilliseconds(200));

        decide.Set();
        ExpectMsg(2);
    }

    [Fact]
    public void Failed_event_reports_the_failure_and_the_decision()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var actor = Sys.ActorOf(Props.Create(() => new CounterActor()), "reported");
        actor.Tell("boom", TestActor);
        var failure = failures.ExpectMsg<ActorFailure>();
        Assert.Same(actor, failure.Actor);
        Assert.Equal("boom", failure.Cause.Message);
        Assert.Equal(Directive.Restart, failure.Directive);
        Assert.Contains("reported", failure.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void Default_decider_matches_akka()
    {
        var decide = SupervisorStrategy.DefaultDecider;
        Assert.Equal(Directive.Stop, decide(new ActorInitializationException(null, "x")));
        Assert.Equal(Directive.Stop, decide(new ActorKilledException("x")));
        Assert.Equal(Directive.Stop, decide(new DeathPactException(ActorRefs.Nobody)));
        Assert.Equal(Directive.Restart, decide(new InvalidOperationException()));
        Assert.Equal(Directive.Stop, SupervisorStrategy.StoppingStrategy.Decide(new InvalidOperationException()));
    }

    private string[] ReceiveStrings(int count)
    {
        var messages = new string[count];
        for (var i = 0; i < count; i++)
        {
            messages[i] = ExpectMsg<string>();
        }

        return messages;
    }

    private IActorRef GetChild(IActorRef parent)
    {
        parent.Tell("child?", TestActor);
        return ExpectMsg<IActorRef>();
    }

    private sealed class CounterActor : ReceiveActor
    {
        private int _count;

        public CounterActor()
        {
            Receive<string>(s => s == "inc", _ => _count++);
            Receive<string>(s => s == "get", _ => Sender.Tell(_count, Self));
            Receive<string>(s => s == "boom", _ => throw new InvalidOperationException("boom"));
        }
    }

    private sealed class GatedFailingActor : ReceiveActor
    {
        private static int _instances;

        public GatedFailingActor(ManualResetEventSlim gate)
        {
            var instance = Interlocked.Increment(ref _instances);
            Receive<string>(s => s == "block", _ =>
            {
                Sender.Tell($"blocked#{instance}", Self);
                gate.Wait(TimeSpan.FromSeconds(10));
            });
            Receive<string>(s => s == "boom", _ => throw new InvalidOperationException("boom"));
            Receive<string>(s => Sender.Tell($"{s}#{instance}", Self));
        }
    }

    private sealed class EscalatingParent : ReceiveActor
    {
        private readonly SupervisorStrategy _strategy;
        private readonly IActorRef _probe;

        public EscalatingParent(Props childProps, SupervisorStrategy strategy, IActorRef probe)
        {
            _strategy = strategy;
            _probe = probe;
            var child = Context.ActorOf(childProps, "child");
            Receive<string>(s => s == "child?", _ => Sender.Tell(child, Self));
        }

        protected override SupervisorStrategy SupervisorStrategy() => _strategy;

        protected override void PreRestart(Exception reason, object? message)
        {
            _probe.Tell($"parent:PreRestart:{reason.Message}", Self);
            base.PreRestart(reason, message);
        }
    }

    private sealed class KeepingParent : ReceiveActor
    {
        public KeepingParent()
        {
            Receive<Props>(p => Sender.Tell(Context.ActorOf(p, "kid"), Self));
            Receive<string>(s => s == "boom", _ => throw new InvalidOperationException("boom"));
            Receive<string>(s => s == "kids?", _ => Sender.Tell(Context.GetChildren().Count(), Self));
        }

        protected override void PreRestart(Exception reason, object? message)
        {
            // Keep the children: they are restarted once this actor has been.
        }
    }

    private sealed class FailingStartActor : ReceiveActor
    {
        protected override void PreStart() => throw new InvalidOperationException("PreStart");
    }

    private sealed class TwoChildrenParent : ReceiveActor
    {
        public TwoChildrenParent()
        {
            var first = Context.ActorOf(Props.Create(() => new CounterActor()), "first");
            var second = Context.ActorOf(Props.Create(() => new CounterActor()), "second");
            Receive<string>(_ => Sender.Tell(new[] { first, second }, Self));
        }
    }

    private sealed class FailingParent : ReceiveActor
    {
        public FailingParent()
        {
            var child = Context.ActorOf(Props.Create(() => new CounterActor()), "child");
            Receive<string>(s => s == "child?", _ => Sender.Tell(child, Self));
            Receive<string>(s => s == "boom", _ => throw new InvalidOperationException("parent failed"));
        }
    }
}
