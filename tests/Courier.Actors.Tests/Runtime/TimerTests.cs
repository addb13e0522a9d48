using Courier.Actors.Runtime;
using Courier.Actors.Runtime.Internal;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Runtime;

public sealed class TimerTests : TestKitBase
{
    private static readonly TimeSpan Short = TimeSpan.FromMilliseconds(20);

    [Fact]
    public void Single_timer_delivers_its_message_once()
    {
        var actor = Sys.ActorOf(Props.Create(() => new TimerActor(TestActor)));
        actor.Tell(new StartSingle("once", "tick", Short), TestActor);
        ExpectMsg("tick");
        ExpectNoMsg(TimeSpan.FromMilliseconds(200));
        actor.Tell(new IsActive("once"), TestActor);
        ExpectMsg(false);
    }

    [Fact]
    public void Periodic_timer_repeats_until_cancelled()
    {
        var actor = Sys.ActorOf(Props.Create(() => new TimerActor(TestActor)));
        actor.Tell(new StartPeriodic("every", "tick", Short, Short), TestActor);
        ExpectMsg("tick");
        ExpectMsg("tick");
        ExpectMsg("tick");
        actor.Tell(new IsActive("every"), TestActor);
        FishForMessage<object>(m => m is true);
        actor.Tell(new CancelTimer("every"), TestActor);
        FishForMessage<object>(m => m is "cancelled");
        ExpectNoMsg(TimeSpan.FromMilliseconds(200));
    }

    [Fact]
    public void Periodic_timer_waits_for_its_initial_delay_not_its_interval()
    {
        // A one-minute initial delay with a 20 ms interval: any tick within the window would mean the
        // interval was used as the first delay. No false failure is possible on a slow machine.
        var actor = Sys.ActorOf(Props.Create(() => new TimerActor(TestActor)));
        actor.Tell(new StartPeriodic("p", "tick", TimeSpan.FromMinutes(1), Short), TestActor);
        actor.Tell(new IsActive("p"), TestActor);
        ExpectMsg(true);
        ExpectNoMsg(TimeSpan.FromMilliseconds(200));
        actor.Tell(new CancelTimer("p"), TestActor);
        ExpectMsg("cancelled");
    }

    [Fact]
    public void Cancelled_timer_whose_tick_is_already_queued_is_not_delivered()
    {
        var actor = Sys.ActorOf(Props.Create(() => new TimerActor(TestActor)));
        actor.Tell(new StartQueuedThen("k", "tick", Then.Cancel), TestActor);
        ExpectMsg("queued");
        actor.Tell("ping", TestActor);
        ExpectMsg("pong");
        ExpectNoMsg(TimeSpan.FromMilliseconds(100));
    }

    [Fact]
    public void Restarting_a_timer_with_the_same_key_replaces_it_and_drops_its_queued_tick()
    {
        var actor = Sys.ActorOf(Props.Create(() => new TimerActor(TestActor)));
        actor.Tell(new StartQueuedThen("k", "old", Then.Replace), TestActor);
        ExpectMsg("queued");
        ExpectMsg("new");
        ExpectNoMsg(TimeSpan.FromMilliseconds(100));
    }

    [Fact]
    public void Timers_are_cancelled_on_restart_and_their_queued_ticks_dropped()
    {
        var actor = Sys.ActorOf(Props.Create(() => new TimerActor(TestActor)));
        actor.Tell(new StartPeriodic("p", "periodic", TimeSpan.FromMinutes(1), TimeSpan.FromMinutes(1)), TestActor);
        actor.Tell(new StartQueuedThen("k", "tick", Then.Throw), TestActor);
        ExpectMsg("queued");
        ExpectMsg("PostStop active=False"); // the default PreRestart calls PostStop; timers are already cancelled
        actor.Tell(new IsActive("p"), TestActor);
        ExpectMsg(false);
        actor.Tell("ping", TestActor);
        ExpectMsg("pong");
        ExpectNoMsg(TimeSpan.FromMilliseconds(100));
    }

    [Fact]
    public void Timers_are_cancelled_before_PostStop()
    {
        var actor = Sys.ActorOf(Props.Create(() => new TimerActor(TestActor)));
        actor.Tell(new StartPeriodic("p", "tick", TimeSpan.FromMinutes(1), TimeSpan.FromMinutes(1)), TestActor);
        actor.Tell(new IsActive("p"), TestActor);
        ExpectMsg(true);
        Sys.Stop(actor);
        ExpectMsg("PostStop active=False");
    }

    [Fact]
    public void Timer_ticks_arrive_with_no_sender()
    {
        var actor = Sys.ActorOf(Props.Create(() => new TimerActor(TestActor)));
        actor.Tell(new StartSingle("s", "tick", Short), TestActor);
        ExpectMsg("tick");
        actor.Tell("sender?", TestActor);
        Assert.Same(Sys.DeadLetters, ExpectMsg<IActorRef>());
    }

    private enum Then
    {
        Cancel,
        Replace,
        Throw,
    }

    private sealed record StartSingle(string Key, string Message, TimeSpan Delay);

    private sealed record StartPeriodic(string Key, string Message, TimeSpan InitialDelay, TimeSpan Interval);

    private sealed record StartQueuedThen(string Key, string Message, Then Then);

    private sealed record CancelTimer(string Key);

    private sealed record IsActive(string Key);

    private sealed class TimerActor : ReceiveActor, IWithTimers
    {
        private readonly IActorRef _probe;
        private IActorRef _lastTickSender = ActorRefs.Nobody;

        public TimerActor(IActorRef probe)
        {
            _probe = probe;
            Receive<StartSingle>(s => Timers.StartSingleTimer(s.Key, s.Message, s.Delay));
            Receive<StartPeriodic>(p => Timers.StartPeriodicTimer(p.Key, p.Message, p.InitialDelay, p.Interval));
            Receive<CancelTimer>(c =>
            {
                Timers.Cancel(c.Key);
                probe.Tell("cancelled", Self);
            });
            Receive<IsActive>(a => probe.Tell(Timers.IsTimerActive(a.Key), Self));
            Receive<StartQueuedThen>(OnStartQueuedThen);
            Receive<string>(s => s == "ping", _ => probe.Tell("pong", Self));
            Receive<string>(s => s == "sender?", _ => probe.Tell(_lastTickSender, Self));
            Receive<string>(s =>
            {
                _lastTickSender = Sender;
                probe.Tell(s, Self);
            });
        }

        public ITimerScheduler Timers { get; set; } = null!;

        protected override void PostStop() => _probe.Tell($"PostStop active={Timers.IsTimerActive("p")}", Self);

        /// <summary>Starts a zero-delay timer, waits until its tick is in the mailbox, then acts on the timer.</summary>
        private void OnStartQueuedThen(StartQueuedThen start)
        {
            Timers.StartSingleTimer(start.Key, start.Message, TimeSpan.Zero);
            var mailbox = ((LocalActorRef)Self).Cell.Mailbox;
            if (!SpinWait.SpinUntil(() => mailbox.HasUserMessages, TimeSpan.FromSeconds(5)))
            {
                _probe.Tell("tick never queued", Self);
                return;
            }

            _probe.Tell("queued", Self);
            switch (start.Then)
            {
                case Then.Cancel:
                    Timers.Cancel(start.Key);
                    break;
                case Then.Replace:
                    Timers.StartSingleTimer(start.Key, "new", TimeSpan.FromMilliseconds(50));
                    break;
                default:
                    throw new InvalidOperationException("restart with a queued tick");
            }
        }
    }
}
