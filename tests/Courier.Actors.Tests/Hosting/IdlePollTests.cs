using System.Diagnostics;
using Courier.Actors.Hosting;
using Xunit;

namespace Courier.Actors.Tests.Hosting;

/// <summary>
/// The idle poll thread (process-wide): at SCHED_IDLE, runnable while activity is recent, asleep once
/// the window has passed. Observed through /proc, as an operator would (Linux only, as the thread).
/// </summary>
/// <remarks>
/// Not run beside other tests: every connection's read pump in this process touches the same poll.
/// </remarks>
[Collection(IdlePollCollection.Name)]
public sealed class IdlePollTests
{
    private const int SchedIdle = 5;

    [Fact]
    public void The_poll_thread_runs_at_sched_idle_spins_after_activity_and_sleeps_once_the_window_has_passed()
    {
        Assert.True(OperatingSystem.IsLinux(), "the idle poll is Linux-only; this test runs where CI runs");
        var window = TimeSpan.FromMilliseconds(20);
        var census = -1;
        IdlePoll.Configure(window);
        try
        {
            IdlePoll.Touch(ref census);
            var thread = WaitFor(() => FindThread(), TimeSpan.FromSeconds(10));
            Assert.Equal(SchedIdle, Stat(thread).Policy);

            // While touched it is runnable (R: running, or waiting for a CPU at the lowest priority).
            var runnable = false;
            var clock = Stopwatch.StartNew();
            while (!runnable && clock.Elapsed < TimeSpan.FromSeconds(5))
            {
                IdlePoll.Touch(ref census);
                runnable = Stat(thread).State == 'R';
                Thread.Sleep(1);
            }

            Assert.True(runnable, "the poll thread never ran while activity was recent");

            // Untouched for longer than the window: asleep (S), and it stays asleep.
            var asleep = WaitFor(() => Stat(thread).State == 'S' ? "S" : null, TimeSpan.FromSeconds(5));
            Assert.Equal("S", asleep);
            AssertMostlyAsleep(thread);
        }
        finally
        {
            IdlePoll.Configure(TimeSpan.Zero);
        }
    }

    [Fact]
    public void Touching_with_the_poll_off_does_not_wake_the_thread()
    {
        var census = -1;
        IdlePoll.Configure(TimeSpan.FromMilliseconds(20));
        IdlePoll.Touch(ref census);
        var thread = WaitFor(() => FindThread(), TimeSpan.FromSeconds(10));

        IdlePoll.Configure(TimeSpan.Zero);
        var asleep = WaitFor(() => Stat(thread).State == 'S' ? "S" : null, TimeSpan.FromSeconds(5));
        Assert.Equal("S", asleep);
        Thread.Sleep(50); // settled in its wait
        var before = Switches(thread);
        for (var i = 0; i < 100; i++)
        {
            IdlePoll.Touch(ref census);
            Thread.Sleep(2);
        }

        // Each wake would end in a sleep again (a voluntary switch), the poll being off; a stray wake elsewhere is rare.
        var woken = Switches(thread) - before;
        Assert.True(woken < 10, $"woken {woken} times by 100 touches with the poll off");
    }

    [Fact]
    public void With_more_than_two_connections_per_cpu_at_it_the_poll_rests_instead_of_spinning()
    {
        IdlePoll.Configure(TimeSpan.FromMilliseconds(20));
        try
        {
            var one = -1;
            IdlePoll.Touch(ref one);
            var thread = WaitFor(() => FindThread(), TimeSpan.FromSeconds(10));

            // One connection: it spins (never sleeps of its own accord while touched).
            var spinning = VoluntarySwitches(thread, () => IdlePoll.Touch(ref one));

            // Many: it rests a millisecond at a time, sleeping again and again.
            var many = new int[(2 * Environment.ProcessorCount) + 1];
            Array.Fill(many, -1);
            var resting = VoluntarySwitches(thread, () =>
            {
                for (var i = 0; i < many.Length; i++)
                {
                    IdlePoll.Touch(ref many[i]);
                }
            });

            Assert.True(spinning < 5, $"{spinning} voluntary switches in 500 ms while one connection was active");
            Assert.True(resting >= 5, $"{resting} voluntary switches in 500 ms while {many.Length} connections were active");
        }
        finally
        {
            IdlePoll.Configure(TimeSpan.Zero);
        }
    }

    // The thread's voluntary context switches (sleeps) over 500 ms of touching every 2 ms. Starts from
    // a census with nobody counted: waits 50 ms untouched first, so the thread sleeps and starts afresh.
    private static long VoluntarySwitches(string tid, Action touch)
    {
        Thread.Sleep(50);
        touch();
        Thread.Sleep(10); // the first census' end: from here the count is this phase's
        var before = Switches(tid);
        var clock = Stopwatch.StartNew();
        while (clock.ElapsedMilliseconds < 500)
        {
            touch();
            Thread.Sleep(2);
        }

        return Switches(tid) - before;
    }

    private static long Switches(string tid) =>
        long.Parse(File.ReadLines($"/proc/self/task/{tid}/status")
            .First(l => l.StartsWith("voluntary_ctxt_switches:", StringComparison.Ordinal))
            .Split(':')[1].Trim());

    // Sampled every 10 ms for 200 ms, the thread is asleep (S) in at least 3 of 4 samples: a spinning one is
    // runnable (R) in all of them, whether or not it gets a CPU; a stray wake (another test's connection) is brief.
    private static void AssertMostlyAsleep(string thread)
    {
        var sleeping = 0;
        for (var i = 0; i < 20; i++)
        {
            sleeping += Stat(thread).State == 'S' ? 1 : 0;
            Thread.Sleep(10);
        }

        Assert.True(sleeping >= 15, $"asleep in {sleeping} of 20 samples after the window");
    }

    private static string? FindThread()
    {
        foreach (var task in Directory.GetDirectories("/proc/self/task"))
        {
            try
            {
                if (File.ReadAllText(Path.Combine(task, "comm")).Trim() == "courier.idle-po") // comm keeps 15 characters
                {
                    return Path.GetFileName(task);
                }
            }
            catch (IOException)
            {
                // A thread that ended meanwhile.
            }
        }

        return null;
    }

    private static (char State, int Policy) Stat(string tid)
    {
        var text = File.ReadAllText($"/proc/self/task/{tid}/stat");
        // Fields after "(comm)": state is field 3, policy 41 (proc(5)).
        var fields = text[(text.LastIndexOf(')') + 2)..].Split(' ');
        return (fields[0][0], int.Parse(fields[38]));
    }

    private static T WaitFor<T>(Func<T?> probe, TimeSpan timeout)
        where T : class
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < timeout)
        {
            if (probe() is { } found)
            {
                return found;
            }

            Thread.Sleep(5);
        }

        throw new TimeoutException("the idle poll thread did not get there in time");
    }
}

[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class IdlePollCollection
{
    public const string Name = "idle poll (process-wide)";
}
