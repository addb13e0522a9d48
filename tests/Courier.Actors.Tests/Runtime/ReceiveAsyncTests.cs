using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Runtime;

public sealed class ReceiveAsyncTests : TestKitBase
{
    [Fact]
    public void ReceiveAsync_holds_later_messages_until_its_task_completes()
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var actor = Sys.ActorOf(Props.Create(() => new GatedAsyncActor(gate.Task, TestActor)));
        actor.Tell(new Start(), TestActor);
        ExpectMsg("started");
        actor.Tell("next", TestActor);
        ExpectNoMsg(TimeSpan.FromMilliseconds(200));

        gate.SetResult();
        ExpectMsg("finished");
        ExpectMsg("next");
    }

    [Fact]
    public void Code_after_await_sees_the_original_Sender_and_Self()
    {
        var actor = Sys.ActorOf(Props.Create(() => new AwaitingReplyActor()), "awaiter");
        var other = CreateTestProbe();
        actor.Tell("q1", TestActor);
        actor.Tell("q2", other.Ref);
        ExpectMsg("q1:akka://test/user/awaiter");
        other.ExpectMsg("q2:akka://test/user/awaiter");
    }

    [Fact]
    public void Sync_and_async_messages_are_processed_in_arrival_order()
    {
        var actor = Sys.ActorOf(Props.Create(() => new MixedActor(TestActor)));
        for (var i = 0; i < 100; i++)
        {
            actor.Tell(i, TestActor);
        }

        for (var i = 0; i < 100; i++)
        {
            ExpectMsg(i);
        }
    }

    [Fact]
    public async Task Continuations_never_run_concurrently_with_other_processing()
    {
        var actor = Sys.ActorOf(Props.Create(() => new ConcurrencyCheckingActor()));
        var replies = Enumerable.Range(0, 200).Select(i => actor.Ask<int>(i, TimeSpan.FromSeconds(10))).ToArray();
        Assert.Equal(Enumerable.Range(0, 200), await Task.WhenAll(replies).WaitAsync(TimeSpan.FromSeconds(20)));
        actor.Tell("overlaps?", TestActor);
        ExpectMsg(0);
    }

    [Fact]
    public void Faulted_task_fails_the_actor_like_a_throwing_handler()
    {
        var failures = CreateTestProbe();
        Sys.Failed += f => failures.Ref.Tell(f, null);
        var actor = Sys.ActorOf(Props.Create(() => new FaultingAsyncActor(TestActor)));
        ExpectMsg("PreStart");
        actor.Tell("fail-after-await", TestActor);
        var failure = failures.ExpectMsg<ActorFailure>();
        Assert.Equal("async boom", failure.Cause.Message);
        Assert.Equal(Directive.Restart, failure.Directive);
        ExpectMsg("PreRestart:fail-after-await");
        ExpectMsg("PreStart");
        actor.Tell("fail-sync", TestActor);
        Assert.Equal("sync boom", failures.ExpectMsg<ActorFailure>().Cause.Message);
        ExpectMsg("PreRestart:fail-sync");
        ExpectMsg("PreStart");
        actor.Tell("still working", TestActor);
        ExpectMsg("still working");
    }

    [Fact]
    public void Stopping_an_actor_while_its_handler_awaits_abandons_the_handler()
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var actor = Sys.ActorOf(Props.Create(() => new GatedAsyncActor(gate.Task, TestActor)));
        Watch(actor);
        actor.Tell(new Start(), TestActor);
        ExpectMsg("started");
        Sys.Stop(actor);
        ExpectTerminated(actor);
        gate.SetResult();
        ExpectNoMsg(TimeSpan.FromMilliseconds(200));
    }

    private sealed record Start;

    private sealed class GatedAsyncActor : ReceiveActor
    {
        public GatedAsyncActor(Task gate, IActorRef probe)
        {
            ReceiveAsync<Start>(async _ =>
            {
                probe.Tell("started", Self);
                await gate;
                probe.Tell("finished", Self);
            });
            Receive<string>(s => probe.Tell(s, Self));
        }
    }

    private sealed class AwaitingReplyActor : ReceiveActor
    {
        public AwaitingReplyActor() => ReceiveAsync<string>(async s =>
        {
            await Task.Delay(20);
            await Task.Yield();
            Sender.Tell($"{s}:{Self.Path}", Self);
        });
    }

    private sealed class MixedActor : ReceiveActor
    {
        public MixedActor(IActorRef probe)
        {
            ReceiveAsync<int>(i => i % 3 == 0, async i =>
            {
                await Task.Yield();
                probe.Tell(i, Self);
            });
            Receive<int>(i => probe.Tell(i, Self));
        }
    }

    private sealed class ConcurrencyCheckingActor : ReceiveActor
    {
        private int _inside;
        private int _overlaps;

        public ConcurrencyCheckingActor()
        {
            ReceiveAsync<int>(async i =>
            {
                Enter();
                await Task.Yield();
                Exit();
                Enter();
                await Task.Delay(1);
                Exit();
                Sender.Tell(i, Self);
            });
            Receive<string>(_ => Sender.Tell(Volatile.Read(ref _overlaps), Self));
        }

        private void Enter()
        {
            if (Interlocked.Increment(ref _inside) != 1)
            {
                Interlocked.Increment(ref _overlaps);
            }
        }

        private void Exit() => Interlocked.Decrement(ref _inside);
    }

    private sealed class FaultingAsyncActor : ReceiveActor
    {
        private readonly IActorRef _probe;

        public FaultingAsyncActor(IActorRef probe)
        {
            _probe = probe;
            ReceiveAsync<string>(s => s == "fail-after-await", async _ =>
            {
                await Task.Yield();
                throw new InvalidOperationException("async boom");
            });
            ReceiveAsync<string>(s => s == "fail-sync", _ => throw new InvalidOperationException("sync boom"));
            Receive<string>(s => probe.Tell(s, Self));
        }

        protected override void PreStart() => _probe.Tell("PreStart", Self);

        protected override void PreRestart(Exception reason, object? message)
        {
            _probe.Tell($"PreRestart:{message}", Self);
            base.PreRestart(reason, message);
        }
    }
}
