using Courier.Actors.Runtime;
using Courier.Actors.Runtime.TestKit;
using Xunit;

namespace Courier.Actors.Tests.Runtime;

/// <summary>
/// Bounded stress: fixed message counts, generous timeouts, and assertions on correctness only (never on
/// timing).
/// </summary>
public sealed class ConcurrencyTests : TestKitBase
{
    private const int Senders = 8;
    private const int MessagesPerSender = 100_000;
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(60);

    [Fact]
    public void Eight_senders_of_100k_messages_each_are_all_counted_in_order_per_sender()
    {
        var counter = Sys.ActorOf(Props.Create(() => new OrderCheckingCounter(Senders, Senders * MessagesPerSender, TestActor)));
        using var start = new Barrier(Senders);
        var threads = Enumerable.Range(0, Senders).Select(sender => new Thread(() =>
        {
            start.SignalAndWait();
            for (var seq = 0; seq < MessagesPerSender; seq++)
            {
                counter.Tell(new Numbered(sender, seq), null);
            }
        })).ToArray();
        foreach (var thread in threads)
        {
            thread.Start();
        }

        var result = ExpectMsg<CountResult>(Generous);
        foreach (var thread in threads)
        {
            Assert.True(thread.Join(Generous));
        }

        Assert.Equal(Senders * MessagesPerSender, result.Total);
        Assert.Equal(0, result.OutOfOrder);
        Assert.Equal(0, result.Overlaps);
    }

    [Fact]
    public void Hundred_actor_pairs_play_ping_pong_concurrently()
    {
        const int Pairs = 100;
        const int Rounds = 1_000;
        for (var i = 0; i < Pairs; i++)
        {
            var pong = Sys.ActorOf(Props.Create(() => new EchoActor()));
            var ping = Sys.ActorOf(Props.Create(() => new PingActor(pong, Rounds, TestActor)));
            ping.Tell("start", null);
        }

        for (var i = 0; i < Pairs; i++)
        {
            ExpectMsg("done", Generous);
        }
    }

    [Fact]
    public void Messages_racing_with_a_stop_are_either_processed_or_dead_lettered()
    {
        const int Threads = 4;
        const int PerThread = 20_000;
        var processed = new StrongBox();
        var deadLetterCounter = Sys.ActorOf(Props.Create(() => new DeadLetterCounter()));
        Sys.EventStream.Subscribe(deadLetterCounter, typeof(DeadLetter));
        var target = Sys.ActorOf(Props.Create(() => new CountingActor(processed)));
        using var start = new Barrier(Threads + 1);
        var threads = Enumerable.Range(0, Threads).Select(_ => new Thread(() =>
        {
            start.SignalAndWait();
            for (var i = 0; i < PerThread; i++)
            {
                target.Tell(i, null);
            }
        })).ToArray();
        foreach (var thread in threads)
        {
            thread.Start();
        }

        start.SignalAndWait();
        Sys.Stop(target);
        foreach (var thread in threads)
        {
            Assert.True(thread.Join(Generous));
        }

        AwaitAssert(
            () =>
            {
                deadLetterCounter.Tell("count?", TestActor);
                var dead = ExpectMsg<int>();
                Assert.Equal(Threads * PerThread, dead + Volatile.Read(ref processed.Value));
            },
            Generous,
            TimeSpan.FromMilliseconds(50));
    }

    [Fact]
    public async Task Top_level_actors_created_from_many_threads_get_unique_names_and_all_stop_on_terminate()
    {
        const int Threads = 4;
        const int PerThread = 250;
        var stopped = new StrongBox();
        using var start = new Barrier(Threads);
        var created = new IActorRef[Threads][];
        var threads = Enumerable.Range(0, Threads).Select(t => new Thread(() =>
        {
            start.SignalAndWait();
            created[t] = Enumerable.Range(0, PerThread)
                .Select(i => Sys.ActorOf(Props.Create(() => new StopCountingActor(stopped)), $"t{t}-{i}"))
                .ToArray();
        })).ToArray();
        foreach (var thread in threads)
        {
            thread.Start();
        }

        foreach (var thread in threads)
        {
            Assert.True(thread.Join(Generous));
        }

        Assert.Equal(Threads * PerThread, created.SelectMany(c => c).Select(a => a.Path).Distinct().Count());
        await Sys.Terminate().WaitAsync(Generous);
        Assert.Equal(Threads * PerThread, Volatile.Read(ref stopped.Value));
    }

    private sealed record Numbered(int Sender, int Seq);

    private sealed record CountResult(int Total, int OutOfOrder, int Overlaps);

    private sealed class StrongBox
    {
        public int Value;
    }

    private sealed class OrderCheckingCounter : ReceiveActor
    {
        private readonly int[] _next;
        private int _total;
        private int _outOfOrder;
        private int _inside;
        private int _overlaps;

        public OrderCheckingCounter(int senders, int expected, IActorRef probe)
        {
            _next = new int[senders];
            Receive<Numbered>(m =>
            {
                if (Interlocked.Increment(ref _inside) != 1)
                {
                    _overlaps++;
                }

                if (m.Seq != _next[m.Sender])
                {
                    _outOfOrder++;
                }

                _next[m.Sender] = m.Seq + 1;
                if (++_total == expected)
                {
                    probe.Tell(new CountResult(_total, _outOfOrder, _overlaps), Self);
                }

                Interlocked.Decrement(ref _inside);
            });
        }
    }

    private sealed class PingActor : ReceiveActor
    {
        private int _left;

        public PingActor(IActorRef pong, int rounds, IActorRef probe)
        {
            _left = rounds;
            Receive<string>(s => s == "start", _ => pong.Tell("ping"));
            Receive<string>(s => s == "ping", _ =>
            {
                if (--_left == 0)
                {
                    probe.Tell("done", Self);
                }
                else
                {
                    pong.Tell("ping");
                }
            });
        }
    }

    private sealed class CountingActor : ReceiveActor
    {
        public CountingActor(StrongBox processed) => Receive<int>(_ => Interlocked.Increment(ref processed.Value));
    }

    private sealed class DeadLetterCounter : ReceiveActor
    {
        private int _count;

        public DeadLetterCounter()
        {
            Receive<DeadLetter>(d => d.Message is int, _ => _count++);
            Receive<DeadLetter>(_ => { });
            Receive<string>(_ => Sender.Tell(_count, Self));
        }
    }

    private sealed class StopCountingActor : ReceiveActor
    {
        private readonly StrongBox _stopped;

        public StopCountingActor(StrongBox stopped) => _stopped = stopped;

        protected override void PostStop() => Interlocked.Increment(ref _stopped.Value);
    }
}
