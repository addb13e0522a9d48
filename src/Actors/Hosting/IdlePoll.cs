using System.Diagnostics;
using System.Runtime.InteropServices;

namespace Courier.Actors.Hosting;

/// <summary>
/// Keeps one CPU out of its idle state for a short window after network activity, on a thread at
/// Linux's lowest scheduling class (SCHED_IDLE), so the wake-up of a connection's next read, or of
/// a client waiting for its reply, is a preemption instead of an exit from a halted CPU.
/// </summary>
/// <remarks>
/// <para>
/// A request/reply or a synchronous JetStream publish is a ping-pong of wake-ups: the server's
/// socket thread sleeps in epoll until the request, the client sleeps until the reply. On a virtual
/// machine whose guest does not poll before halting (cpuidle haltpoll with guest_halt_poll_ns=0, as
/// on the machine the side-by-side table is measured on), each wake-up of a halted vCPU costs tens
/// of microseconds in the hypervisor, more than the server's work for the message. This does in the
/// server what the guest's halt polling would do: while the server has had network activity within
/// the window, the poll thread spins (with pause), and the scheduler, which counts a CPU running only
/// SCHED_IDLE work as idle, places woken threads there.
/// </para>
/// <para>
/// SCHED_IDLE work runs only when nothing else wants the CPU and is preempted at once by any woken
/// thread, so the spin never takes CPU from the server, its clients or anything else on the machine;
/// it does show as the process's CPU time (up to one core while traffic flows) and keeps the CPU
/// powered. Off with <c>idle_poll: 0</c>; never runs where SCHED_IDLE cannot be set (not Linux).
/// Hot path: <see cref="Touch"/> is a timestamp read and, at most once per quarter window, a write.
/// </para>
/// <para>
/// Only while few connections are at it: a census counts the connections that touched in each
/// millisecond, and above two per CPU the poll rests, 10 ms at a time. With that many clients
/// exchanging at once their threads keep the CPUs busy, the wake-ups come to running CPUs, and a spin
/// only gets in the way (10 requesters over a 2-member queue group on 2 CPUs: 6% fewer requests with
/// it; resting, the poll thread ran 3 ms in a 1.3 s run of that).
/// </para>
/// </remarks>
internal static partial class IdlePoll
{
    private const int SchedIdle = 5;

    private static readonly SemaphoreSlim Wake = new(0);
    private static readonly long CensusTicks = Stopwatch.Frequency / 1000; // one census a millisecond
    private static readonly int MaxConnections = 2 * Environment.ProcessorCount;
    private static long _windowTicks;
    private static long _lastActivity;
    private static int _sleeping;
    private static int _started;
    private static int _census;          // the current census: connections are counted once per census
    private static int _censusCount;     // connections counted in the current census
    private static int _lastCensusCount; // and in the one before

    /// <summary>
    /// Sets the window (the last server configured in the process wins; zero turns polling off) and
    /// starts the poll thread the first time a window is set.
    /// </summary>
    public static void Configure(TimeSpan window)
    {
        var ticks = window <= TimeSpan.Zero ? 0 : (long)(window.TotalSeconds * Stopwatch.Frequency);
        Volatile.Write(ref _windowTicks, ticks);
        if (ticks > 0 && OperatingSystem.IsLinux() && Interlocked.Exchange(ref _started, 1) == 0)
        {
            new Thread(Run) { IsBackground = true, Name = "courier.idle-poll" }.Start();
        }
    }

    /// <summary>
    /// Notes network activity on a connection (a small read batch processed): the poll thread spins
    /// for the window from now. <paramref name="census"/> is the connection's own field, in which it is
    /// counted once per census.
    /// </summary>
    public static void Touch(ref int census)
    {
        var window = Volatile.Read(ref _windowTicks);
        if (window == 0)
        {
            return;
        }

        var current = Volatile.Read(ref _census);
        if (census != current)
        {
            census = current;
            Interlocked.Increment(ref _censusCount);
        }

        var now = Stopwatch.GetTimestamp();
        // Written at most once per quarter window: at high rates the line stays shared, not bounced between cores.
        if (now - Volatile.Read(ref _lastActivity) < window >> 2)
        {
            return;
        }

        Interlocked.Exchange(ref _lastActivity, now); // a full fence before reading _sleeping (the poll thread does the reverse)
        if (Volatile.Read(ref _sleeping) == 1 && Interlocked.Exchange(ref _sleeping, 0) == 1)
        {
            Wake.Release();
        }
    }

    private static void Run()
    {
        if (sched_setscheduler(0, SchedIdle, new SchedParam { Priority = 0 }) != 0)
        {
            Volatile.Write(ref _started, 0); // never spin at a normal priority
            return;
        }

        var censusStart = Stopwatch.GetTimestamp();
        while (true)
        {
            var now = Stopwatch.GetTimestamp();
            if (now - censusStart >= CensusTicks)
            {
                Volatile.Write(ref _lastCensusCount, Interlocked.Exchange(ref _censusCount, 0));
                Interlocked.Increment(ref _census);
                censusStart = now;
            }

            var window = Volatile.Read(ref _windowTicks);
            if (window > 0 && now - Volatile.Read(ref _lastActivity) < window)
            {
                if (Math.Max(Volatile.Read(ref _lastCensusCount), Volatile.Read(ref _censusCount)) > MaxConnections)
                {
                    Thread.Sleep(10); // many connections at once: rest, and count them again (over the 10 ms) after it
                }
                else
                {
                    Thread.SpinWait(64);
                }

                continue;
            }

            Interlocked.Exchange(ref _sleeping, 1);
            if (window > 0 && Stopwatch.GetTimestamp() - Interlocked.Read(ref _lastActivity) < window)
            {
                // Touched between the check and the flag: go on, and take back the flag (or the wake it caused).
                if (Interlocked.Exchange(ref _sleeping, 0) == 0)
                {
                    Wake.Wait();
                }

                continue;
            }

            Wake.Wait();
            // A fresh census after a sleep: the connections counted before it have gone quiet.
            Interlocked.Exchange(ref _censusCount, 0);
            Volatile.Write(ref _lastCensusCount, 0);
            Interlocked.Increment(ref _census);
            censusStart = Stopwatch.GetTimestamp();
        }
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct SchedParam
    {
        public int Priority;
    }

    [LibraryImport("libc", SetLastError = true)]
    private static partial int sched_setscheduler(int pid, int policy, in SchedParam param);
}
