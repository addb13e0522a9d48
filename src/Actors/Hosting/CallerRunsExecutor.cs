using Akka.Actor.Internal;
using Akka.Configuration;
using Akka.Dispatch;

namespace Courier.Actors.Hosting;

/// <summary>
/// The executor of <c>courier.caller-runs-dispatcher</c> (reference.conf): a mailbox scheduled by a
/// client's read pump while it hands a read batch on (<see cref="CallerTurn"/>) is run on that thread,
/// at once; any other scheduling goes to the thread pool, as Akka's default executor does.
/// </summary>
/// <remarks>
/// <para>
/// For an actor whose messages come from the clients' read pumps and whose work never blocks (a memory
/// stream), the hand-over to a pool thread is the largest cost of a publish-to-PubAck round trip: a
/// thread woken per message. nats-server stores such a message on the reading goroutine. Running the
/// mailbox on the reader gives the same path while the actor keeps Akka's guarantees: Akka's mailbox
/// status still lets one thread at a time process it (a second reader finding it scheduled only
/// enqueues), and <see cref="Mailbox"/>'s run saves and restores the thread's current actor.
/// </para>
/// <para>
/// Only such a turn runs a mailbox: the scheduler's timer thread, the I/O dispatcher's threads and
/// the journal's continuations never do, so a timer or an fsync is never held up behind an actor's turn.
/// A thread already inside an actor (one actor telling another) or already running a mailbox here
/// (Akka reschedules a mailbox at the end of its run when more mail came) hands over to the pool, so
/// runs never nest on one stack and an actor's turn is never lengthened by another's.
/// </para>
/// </remarks>
public sealed class CallerRunsExecutorConfigurator(Config config, IDispatcherPrerequisites prerequisites)
    : ExecutorServiceConfigurator(config, prerequisites)
{
    [ThreadStatic]
    private static bool _readerTurn;

    [ThreadStatic]
    private static bool _running;

    /// <summary>The dispatcher's id in reference.conf.</summary>
    public const string DispatcherId = "courier.caller-runs-dispatcher";

    /// <summary>Set by a client's read pump while it hands a read batch on (Publisher.Flush).</summary>
    internal static bool CallerTurn
    {
        get => _readerTurn;
        set => _readerTurn = value;
    }

    public override ExecutorService Produce(string id) => new CallerRunsExecutor(id);

    private sealed class CallerRunsExecutor(string id) : ExecutorService(id)
    {
        public override void Execute(IRunnable run)
        {
            if (!_readerTurn || _running || InternalCurrentActorCellKeeper.Current is not null)
            {
                ThreadPool.UnsafeQueueUserWorkItem(run, preferLocal: false);
                return;
            }

            _running = true;
            try
            {
                run.Run();
            }
            finally
            {
                _running = false;
            }
        }

        public override void Shutdown()
        {
        }
    }
}
