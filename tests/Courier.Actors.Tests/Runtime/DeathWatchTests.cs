using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Runtime;

public sealed class DeathWatchTests : TestKitBase
{
    [Fact]
    public void Watcher_gets_Terminated_when_the_actor_stops()
    {
        var actor = Sys.ActorOf(Props.Create(() => new EchoActor()));
        Watch(actor);
        Sys.Stop(actor);
        var terminated = ExpectTerminated(actor);
        Assert.True(terminated.ExistenceConfirmed);
        Assert.Same(actor, LastSender);
    }

    [Fact]
    public void Watching_an_already_dead_actor_yields_Terminated()
    {
        var actor = Sys.ActorOf(Props.Create(() => new EchoActor()));
        var first = CreateTestProbe();
        first.Watch(actor);
        Sys.Stop(actor);
        first.ExpectTerminated(actor);

        var late = CreateTestProbe();
        late.Watch(actor);
        Assert.False(late.ExpectTerminated(actor).ExistenceConfirmed);
    }

    [Fact]
    public void Watching_Nobody_yields_Terminated()
    {
        Watch(ActorRefs.Nobody);
        ExpectTerminated(ActorRefs.Nobody);
    }

    [Fact]
    public void Unwatch_prevents_Terminated()
    {
        var watcher = Sys.ActorOf(Props.Create(() => new WatchingActor(TestActor)));
        var target = Sys.ActorOf(Props.Create(() => new EchoActor()));
        watcher.Tell(new WatchIt(target), TestActor);
        watcher.Tell(new UnwatchIt(target), TestActor);
        ExpectMsg("watching");
        ExpectMsg("unwatched");
        Sys.Stop(target);
        ExpectNoMsg(TimeSpan.FromMilliseconds(200));
    }

    [Fact]
    public void Terminated_arrives_after_the_dead_actors_last_message()
    {
        var watcher = Sys.ActorOf(Props.Create(() => new WatchingActor(TestActor)));
        var target = Sys.ActorOf(Props.Create(() => new LastWordsActor()));
        watcher.Tell(new WatchIt(target), TestActor);
        ExpectMsg("watching");
        target.Tell(new LastWords(watcher, 100), TestActor);
        for (var i = 0; i < 100; i++)
        {
            ExpectMsg(i);
        }

        ExpectMsg($"terminated:{target.Path}");
    }

    [Fact]
    public void Forwarded_Terminated_is_dropped_by_an_actor_that_does_not_watch_its_subject()
    {
        var watcher = Sys.ActorOf(Props.Create(() => new ForwardingActor(TestActor)));
        var target = Sys.ActorOf(Props.Create(() => new EchoActor()));
        watcher.Tell(new Terminated(target), TestActor);
        watcher.Tell("after", TestActor);
        ExpectMsg("after");
    }

    [Fact]
    public void Unhandled_Terminated_stops_the_watcher_with_DeathPactException()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var pact = Sys.ActorOf(Props.Create(() => new PactActor()));
        var target = Sys.ActorOf(Props.Create(() => new EchoActor()));
        Watch(pact);
        pact.Tell(target, TestActor);
        ExpectMsg("watching");
        Sys.Stop(target);
        ExpectTerminated(pact);
        Assert.IsType<DeathPactException>(failures.ExpectMsg<ActorFailure>().Cause);
    }

    [Fact]
    public void Children_are_stopped_with_their_parent_and_watchers_of_each_are_told()
    {
        var parent = Sys.ActorOf(Props.Create(() => new SupervisorActor(
            Props.Create(() => new EchoActor()), SupervisorStrategy.DefaultStrategy, TestActor)));
        parent.Tell("child?", TestActor);
        var child = ExpectMsg<IActorRef>();
        var childWatcher = CreateTestProbe();
        childWatcher.Watch(child);
        Watch(parent);
        Sys.Stop(parent);
        childWatcher.ExpectTerminated(child);
        ExpectTerminated(parent);
    }

    [Fact]
    public async Task Watching_an_ask_temp_ref_terminates_when_the_ask_completes()
    {
        var watcher = Sys.ActorOf(Props.Create(() => new WatchingActor(TestActor)));
        var probe = CreateTestProbe();
        var ask = probe.Ref.Ask<string>("question", TimeSpan.FromSeconds(3));
        probe.ExpectMsg("question");
        var temp = probe.LastSender;
        watcher.Tell(new WatchIt(temp), TestActor);
        ExpectMsg("watching");
        probe.Reply("answer");
        Assert.Equal("answer", await ask);
        ExpectMsg($"terminated:{temp.Path}");
    }

    private sealed record WatchIt(IActorRef Target);

    private sealed record UnwatchIt(IActorRef Target);

    private sealed record LastWords(IActorRef To, int Count);

    private sealed class WatchingActor : ReceiveActor
    {
        public WatchingActor(IActorRef probe)
        {
            Receive<WatchIt>(w =>
            {
                Context.Watch(w.Target);
                probe.Tell("watching", Self);
            });
            Receive<UnwatchIt>(u =>
            {
                Context.Unwatch(u.Target);
                probe.Tell("unwatched", Self);
            });
            Receive<Terminated>(t => probe.Tell($"terminated:{t.ActorRef.Path}", Self));
            ReceiveAny(m => probe.Tell(m, Sender));
        }
    }

    private sealed class LastWordsActor : ReceiveActor
    {
        public LastWordsActor() => Receive<LastWords>(w =>
        {
            for (var i = 0; i < w.Count; i++)
            {
                w.To.Tell(i, Self);
            }

            Context.Stop(Self);
        });
    }

    private sealed class PactActor : ReceiveActor
    {
        public PactActor() => Receive<IActorRef>(target =>
        {
            Context.Watch(target);
            Sender.Tell("watching", Self);
        });
    }
}
