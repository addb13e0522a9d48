using Akka.Actor;
using Courier.Actors.Hosting;
using Courier.Actors.Server;
using Xunit;

namespace Courier.Actors.Tests.Hosting;

/// <summary>
/// The caller-runs dispatcher (memory streams): a message told during a client reader's turn is handled
/// on the reader's thread before the tell returns; any other tell (no reader turn, or from inside an
/// actor) is handled on the pool, and the actor still handles one message at a time.
/// </summary>
public sealed class CallerRunsDispatcherTests : Akka.TestKit.Xunit2.TestKit
{
    public CallerRunsDispatcherTests()
        : base(TestConfig.For(new ServerOptions()))
    {
    }

    [Fact]
    public void A_tell_in_a_reader_turn_runs_the_actor_on_the_readers_thread_before_it_returns()
    {
        var actor = Sys.ActorOf(Props.Create(() => new ThreadRecorder()).WithDispatcher(CallerRunsExecutorConfigurator.DispatcherId));
        actor.Tell(new Ping(null), TestActor); // started and idle
        ExpectMsg<Handled>();

        // The reply above is sent from inside the actor's run: the mailbox becomes idle just after it.
        // A tell that finds it still scheduled only enqueues (that run takes it), so try a few times.
        var ranHere = false;
        for (var attempt = 0; attempt < 20 && !ranHere; attempt++)
        {
            Thread.Sleep(20);
            var ping = new Ping(new ManualResetEventSlim(), attempt);
            var readerThread = OnReaderThread(() => actor.Tell(ping, TestActor), () => ranHere = ping.Done!.IsSet); // handled before Tell returned
            var handled = ExpectMsg<Handled>();
            Assert.Equal(attempt, handled.Sequence);
            if (ranHere)
            {
                Assert.Equal(readerThread, handled.ThreadId);
            }
        }

        Assert.True(ranHere);
    }

    [Fact]
    public void A_tell_outside_a_reader_turn_is_handled_on_another_thread()
    {
        var actor = Sys.ActorOf(Props.Create(() => new ThreadRecorder()).WithDispatcher(CallerRunsExecutorConfigurator.DispatcherId));
        actor.Tell(new Ping(null), TestActor);
        ExpectMsg<Handled>();
        Thread.Sleep(100); // idle again

        // A plain thread, outside any actor and not in a reader turn: the tell only schedules the actor.
        var thread = 0;
        var plain = new Thread(() =>
        {
            thread = Environment.CurrentManagedThreadId;
            actor.Tell(new Ping(null, 1), TestActor);
        });
        plain.Start();
        plain.Join();
        Assert.NotEqual(thread, ExpectMsg<Handled>().ThreadId);
    }

    [Fact]
    public void A_tell_from_inside_another_actor_in_a_reader_turn_goes_to_the_pool_and_messages_stay_in_order()
    {
        var target = Sys.ActorOf(Props.Create(() => new ThreadRecorder()).WithDispatcher(CallerRunsExecutorConfigurator.DispatcherId));
        var relay = Sys.ActorOf(Props.Create(() => new Relay(target)).WithDispatcher(CallerRunsExecutorConfigurator.DispatcherId));
        relay.Tell(new Ping(null), TestActor);
        ExpectMsg<Handled>();

        // The relay may run on the reader's thread; its tells to the target are made inside an actor.
        var readerThread = OnReaderThread(() => relay.Tell(new Forward(100), TestActor), () => { });

        for (var i = 0; i < 100; i++)
        {
            var handled = ExpectMsg<Handled>();
            Assert.Equal(i, handled.Sequence);
            Assert.NotEqual(readerThread, handled.ThreadId);
        }
    }

    /// <summary>
    /// Tells from a thread of its own in a reader turn, as a client's read pump does (the test's own thread
    /// is the TestKit's test actor's context, so it counts as inside an actor). Returns that thread's id.
    /// </summary>
    private static int OnReaderThread(Action tell, Action afterTell)
    {
        var id = 0;
        var reader = new Thread(() =>
        {
            id = Environment.CurrentManagedThreadId;
            CallerRunsExecutorConfigurator.CallerTurn = true;
            try
            {
                tell();
            }
            finally
            {
                CallerRunsExecutorConfigurator.CallerTurn = false;
            }

            afterTell();
        });
        reader.Start();
        reader.Join();
        return id;
    }

    private sealed record Ping(ManualResetEventSlim? Done, int Sequence = 0);

    private sealed record Forward(int Count);

    private sealed record Handled(int ThreadId, int Sequence);

    private sealed class ThreadRecorder : ReceiveActor
    {
        public ThreadRecorder() => Receive<Ping>(ping =>
        {
            ping.Done?.Set();
            Sender.Tell(new Handled(Environment.CurrentManagedThreadId, ping.Sequence));
        });
    }

    private sealed class Relay : ReceiveActor
    {
        public Relay(IActorRef target)
        {
            Receive<Ping>(ping => Sender.Tell(new Handled(Environment.CurrentManagedThreadId, ping.Sequence)));
            Receive<Forward>(forward =>
            {
                for (var i = 0; i < forward.Count; i++)
                {
                    target.Tell(new Ping(null, i), Sender);
                }
            });
        }
    }
}
