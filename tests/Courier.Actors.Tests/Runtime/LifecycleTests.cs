using System.Collections.Concurrent;
using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Runtime;

public sealed class LifecycleTests : TestKitBase
{
    [Fact]
    public void PoisonPill_stops_the_actor_after_the_messages_already_queued()
    {
        var deadLetters = CreateTestProbe();
        Sys.EventStream.Subscribe(deadLetters.Ref, typeof(DeadLetter));
        using var gate = new ManualResetEventSlim();
        var actor = Sys.ActorOf(Props.Create(() => new GatedActor(gate, TestActor)));
        Watch(actor);
        actor.Tell("block", TestActor);
        ExpectMsg("blocked");
        actor.Tell("a", TestActor);
        actor.Tell("b", TestActor);
        actor.Tell(PoisonPill.Instance, TestActor);
        actor.Tell("c", TestActor);
        gate.Set();

        ExpectMsg("a");
        ExpectMsg("b");
        ExpectTerminated(actor);
        Assert.Equal("c", deadLetters.ExpectMsg<DeadLetter>().Message);
    }

    [Fact]
    public void Kill_stops_the_actor_through_its_supervisor()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var actor = Sys.ActorOf(Props.Create(() => new EchoActor()));
        Watch(actor);
        actor.Tell(Kill.Instance, TestActor);
        ExpectTerminated(actor);
        var failure = failures.ExpectMsg<ActorFailure>();
        Assert.IsType<ActorKilledException>(failure.Cause);
        Assert.Equal(Directive.Stop, failure.Directive);
    }

    [Fact]
    public void Kill_under_a_restarting_supervisor_restarts_the_actor()
    {
        var restarting = new OneForOneStrategy(_ => Directive.Restart);
        var parent = Sys.ActorOf(Props.Create(() => new SupervisorActor(
            Props.Create(() => new LifecycleActor(TestActor, "k")), restarting, TestActor)));
        ExpectMsg("k:ctor");
        ExpectMsg("k:PreStart");
        parent.Tell("child?", TestActor);
        var child = ExpectMsg<IActorRef>();
        child.Tell(Kill.Instance, TestActor);
        ExpectMsg("k:PreRestart:Kill:<Kill>");
        FishForMessage<string>(m => m == "k:PostRestart:Kill");
    }

    [Fact]
    public void Context_Stop_of_Self_stops_after_the_current_message()
    {
        var actor = Sys.ActorOf(Props.Create(() => new SelfStoppingActor(TestActor)));
        Watch(actor);
        actor.Tell("stop", TestActor);
        actor.Tell("after", TestActor);
        ExpectMsg("stopping");
        ExpectMsg("PostStop");
        ExpectTerminated(actor);
    }

    [Fact]
    public void Stopping_a_parent_stops_its_children_first()
    {
        var parent = Sys.ActorOf(Props.Create(() => new LifecycleActor(TestActor, "parent")));
        ExpectMsg("parent:ctor");
        ExpectMsg("parent:PreStart");
        parent.Tell(Props.Create(() => new LifecycleActor(TestActor, "child")), TestActor);
        FishForMessage<string>(m => m == "child:PreStart");
        Watch(parent);

        Sys.Stop(parent);

        FishForMessage<string>(m => m == "child:PostStop");
        ExpectMsg("parent:PostStop");
        ExpectTerminated(parent);
    }

    [Fact]
    public async Task Terminate_runs_PostStop_in_every_actor_children_before_parents()
    {
        var stopped = new ConcurrentQueue<string>();
        for (var i = 0; i < 3; i++)
        {
            Sys.ActorOf(Props.Create(() => new TreeActor(2, stopped)), $"top{i}");
        }

        // 3 top-level actors, each with 2 children, each with 2 grandchildren: 3 + 6 + 12 = 21, plus the test actor.
        AwaitCondition(() => Volatile.Read(ref TreeActor.Started) >= 21);
        await Sys.Terminate().WaitAsync(TimeSpan.FromSeconds(10));

        var order = stopped.ToArray();
        Assert.Equal(21, order.Length);
        foreach (var path in order)
        {
            var parentPath = path[..path.LastIndexOf('/')];
            var parentIndex = Array.IndexOf(order, parentPath);
            if (parentIndex >= 0)
            {
                Assert.True(Array.IndexOf(order, path) < parentIndex, $"{path} stopped after its parent");
            }
        }
    }

    [Fact]
    public async Task ActorOf_after_Terminate_throws()
    {
        await Sys.Terminate().WaitAsync(TimeSpan.FromSeconds(10));
        Assert.True(Sys.WhenTerminated.IsCompleted);
        Assert.Throws<InvalidOperationException>(() => Sys.ActorOf(Props.Create(() => new EchoActor())));
    }

    [Fact]
    public void Exception_in_PostStop_is_reported_and_the_actor_still_stops()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var actor = Sys.ActorOf(Props.Create(() => new ThrowingPostStopActor()));
        Watch(actor);
        Sys.Stop(actor);
        ExpectTerminated(actor);
        var failure = failures.ExpectMsg<ActorFailure>();
        Assert.Null(failure.Directive);
        Assert.Contains("PostStop", failure.Description, StringComparison.Ordinal);
    }

    [Fact]
    public void Duplicate_child_name_throws_and_the_name_is_free_after_the_child_stopped()
    {
        var first = Sys.ActorOf(Props.Create(() => new EchoActor()), "unique");
        Assert.Throws<InvalidActorNameException>(() => Sys.ActorOf(Props.Create(() => new EchoActor()), "unique"));
        Watch(first);
        Sys.Stop(first);
        ExpectTerminated(first);
        AwaitAssert(() =>
        {
            var second = Sys.ActorOf(Props.Create(() => new EchoActor()), "unique");
            Assert.NotSame(first, second);
        });
    }

    [Theory]
    [InlineData("")]
    [InlineData("$reserved")]
    [InlineData("a/b")]
    [InlineData("has space")]
    public void Invalid_actor_names_are_rejected(string name) =>
        Assert.Throws<InvalidActorNameException>(() => Sys.ActorOf(Props.Create(() => new EchoActor()), name));

    [Fact]
    public void Generated_names_are_unique_and_start_with_a_dollar()
    {
        var a = Sys.ActorOf(Props.Create(() => new EchoActor()));
        var b = Sys.ActorOf(Props.Create(() => new EchoActor()));
        Assert.StartsWith("akka://test/user/$", a.Path, StringComparison.Ordinal);
        Assert.NotEqual(a.Path, b.Path);
    }

    [Fact]
    public void Constructing_an_actor_directly_throws()
    {
        Assert.Throws<ActorInitializationException>(() => new EchoActor());
    }

    [Fact]
    public void Factory_returning_null_fails_creation()
    {
        var actor = Sys.ActorOf(Props.Create<ActorBase>(() => null!));
        Watch(actor);
        ExpectTerminated(actor);
    }

    [Fact]
    public void Factory_returning_its_previous_instance_on_restart_fails_the_restart()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var threeRestarts = new OneForOneStrategy(3, TimeSpan.FromMinutes(1), _ => Directive.Restart);
        EchoActor? reused = null;
        var parent = Sys.ActorOf(Props.Create(() => new SupervisorActor(
            Props.Create(() => reused ??= new EchoActor()), threeRestarts, TestActor)));
        parent.Tell("child?", TestActor);
        var child = ExpectMsg<IActorRef>();
        Watch(child);

        child.Tell(Kill.Instance, TestActor);

        var restartFailure = failures.FishForMessage<ActorFailure>(f => f.Cause is ActorInitializationException);
        Assert.Contains("did not create", restartFailure.Cause.InnerException!.Message, StringComparison.Ordinal);
        ExpectTerminated(child);
    }

    [Fact]
    public void Context_exposes_parent_children_and_props()
    {
        var parent = Sys.ActorOf(Props.Create(() => new FamilyActor()), "family");
        parent.Tell("report", TestActor);
        var report = ExpectMsg<string>();
        Assert.Equal("parent=akka://test/user;children=kid;child=akka://test/user/family/kid;missing=Nobody;props=FamilyActor", report);
    }

    private sealed class GatedActor : ReceiveActor
    {
        public GatedActor(ManualResetEventSlim gate, IActorRef probe)
        {
            Receive<string>(s => s == "block", _ =>
            {
                probe.Tell("blocked", Self);
                gate.Wait(TimeSpan.FromSeconds(10));
            });
            Receive<string>(s => probe.Tell(s, Self));
        }
    }

    private sealed class SelfStoppingActor : ReceiveActor
    {
        private readonly IActorRef _probe;

        public SelfStoppingActor(IActorRef probe)
        {
            _probe = probe;
            Receive<string>(s => s == "stop", _ =>
            {
                Context.Stop(Self);
                probe.Tell("stopping", Self);
            });
            Receive<string>(s => probe.Tell(s, Self));
        }

        protected override void PostStop() => _probe.Tell("PostStop", Self);
    }

    private sealed class TreeActor : ActorBase
    {
        public static int Started;
        private readonly ConcurrentQueue<string> _stopped;

        public TreeActor(int depth, ConcurrentQueue<string> stopped)
        {
            _stopped = stopped;
            for (var i = 0; depth > 0 && i < 2; i++)
            {
                Context.ActorOf(Props.Create(() => new TreeActor(depth - 1, stopped)), $"c{i}");
            }
        }

        protected override void PreStart() => Interlocked.Increment(ref Started);

        protected override bool Receive(object message) => false;

        protected override void PostStop() => _stopped.Enqueue(Self.Path);
    }

    private sealed class ThrowingPostStopActor : ReceiveActor
    {
        protected override void PostStop() => throw new InvalidOperationException("PostStop");
    }

    private sealed class FamilyActor : ReceiveActor
    {
        public FamilyActor()
        {
            Context.ActorOf(Props.Create(() => new EchoActor()), "kid");
            Receive<string>(_ => Sender.Tell(
                $"parent={Context.Parent.Path};children={string.Join(",", Context.GetChildren().Select(c => c.Path[(c.Path.LastIndexOf('/') + 1)..]))};" +
                $"child={Context.Child("kid").Path};missing={(ReferenceEquals(Context.Child("none"), ActorRefs.Nobody) ? "Nobody" : "?")};" +
                $"props={Context.Props.ActorType.Name}",
                Self));
        }
    }
}
